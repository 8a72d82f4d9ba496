"""Every colour a graph uses, in one place, and the one rule for which scheme a graph uses.

The rule: graphs of a memory (knowledge graph, coreference candidates, a build's growing graph)
colour entities by **type**; graphs of a retrieval (NeuroPath, EcphoryRAG and dense, on the Ask page
and on the Learn page alike) colour nodes by their **fate** — what the retrieval did with them: a
NeuroPath node by the best fate of a path through it, an EcphoryRAG entity by the round that
activated it. The type of a node in a retrieval graph is in its hover text.

Colours inside one scheme are far apart (CIE76 ΔE ≥ MIN_DELTA_E, tested), so no two legend entries
look alike.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from memrag import words

MIN_DELTA_E = 20.0
HEX_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")  # the only colour form accepted from a caller

QUESTION = "#2f2f2f"
CUE = "#5f5f5f"
CHUNK = "#a6d8ff"
GOLD = "#d4a000"
DIM = "#d9d9d9"  # dimmed nodes (pruned, dropped) and later steps
# Marks written before a label, one meaning each: ★ is a node shape (a seed entity) and no prefix.
GOLD_MARK = "⚑"  # from a gold passage
PASSAGE_MARK = "¶"  # a passage, not an entity (the two may share a name)

# Entity types the extraction prompt asks for get fixed colours.
TYPE_COLOURS: dict[str, str] = {
    "person": "#4e79a7",
    "organization": "#f28e2b",
    "location": "#59a14f",
    "date": "#b07aa1",
    "event": "#e15759",
    "work": "#76b7b2",
    "concept": "#edc948",
    "number": "#9c755f",
    "other": "#c0c080",
}
# Spellings that mean the same type share its colour.
TYPE_ALIASES = {"organisation": "organization", "place": "location", "time": "date"}
# Any other type ("plant", "material", …) gets one of these, chosen by a stable hash of its name.
SPARE_COLOURS = ("#1b3a6b", "#ff9da7", "#8b1e3f", "#00bcd4", "#6a3d9a", "#b5bd00", "#004d40", "#5c3a21")
# Nodes that are not entities.
KIND_COLOURS = {"question": QUESTION, "query": QUESTION, "cue": CUE, "chunk": CHUNK}

FATE_COLOURS: dict[str, str] = {"valid": "#1a7f37", "expanded": "#d9730d", "shown": "#2f6db5",
                                "dropped": "#a06cc8", "unlisted": "#a89f91", "pruned": DIM,
                                "untouched": "#8fd3e8"}  # a seed or candidate no drawn path passes through
FATE_WORDS = {**{fate: word.label for fate, word in words.PATH_FATES.items()},  # one vocabulary with the tables
              "untouched": "on no drawn path"}
ROUND_COLOURS: dict[str, str] = {"round 0": "#4e79a7", "round 1": "#f28e2b", "round 2": "#59a14f",
                                 "round 3": "#e15759", "round 4": "#b07aa1", "round 5": "#9c755f"}
ROUND_WORDS = {"round 0": "activated first (by the question and cues)",
               **{f"round {r}": f"activated in round {r}" for r in range(1, 6)}}

# HippoRAG 2's personalised PageRank: what seeded a node, or that only the walk reached it.
PAGERANK_COLOURS: dict[str, str] = {"seed": "#d62728", "phrase": "#4e79a7", "passage": CHUNK}
PAGERANK_WORDS = {"seed": "seeded phrase (from a kept fact)", "phrase": "phrase reached by PageRank",
                  "passage": "passage (size = PageRank mass)"}

# How a group is named in a legend, for groups whose name is not already plain.
GROUP_WORDS: dict[str, str] = {**FATE_WORDS, **ROUND_WORDS, **PAGERANK_WORDS, "question": "the question", "cue": "cue entity",
                               "chunk": "passage (chunk)", "context": "passage in the context"}


def _fixed_colour(group: str) -> str | None:
    g = TYPE_ALIASES.get(group, group)
    for scheme in (TYPE_COLOURS, KIND_COLOURS, FATE_COLOURS, ROUND_COLOURS):
        if g in scheme:
            return scheme[g]
    return None


def _spare_slot(group: str) -> int:
    return int(hashlib.md5(group.encode("utf-8")).hexdigest(), 16) % len(SPARE_COLOURS)


def group_colours(groups: Iterable[str], overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """A fill colour for each group that meets in one graph (entity type, fate, round …): fixed, never
    random. Types outside the fixed list take a spare colour by a stable hash of their name; when two
    of them in one graph hash alike, the later one (by name) takes the next free spare, so they differ."""
    out: dict[str, str] = {}
    unknown = []
    for group in dict.fromkeys(groups):
        g = (group or "other").strip().lower()
        override = (overrides or {}).get(group, "")
        fixed = (override if HEX_COLOUR.match(override) else None) or _fixed_colour(g)
        if fixed:
            out[group] = fixed
        else:
            unknown.append((g, group))
    taken: set[int] = set()
    for g, group in sorted(unknown):
        slot = _spare_slot(g)
        for step in range(len(SPARE_COLOURS)):
            if (slot + step) % len(SPARE_COLOURS) not in taken:
                slot = (slot + step) % len(SPARE_COLOURS)
                break
        taken.add(slot)
        out[group] = SPARE_COLOURS[slot]
    return out


def group_colour(group: str, overrides: Mapping[str, str] | None = None) -> str:
    """The fill colour of one group drawn on its own (see group_colours for several)."""
    return group_colours([group], overrides)[group]


def group_word(group: str) -> str:
    """A group's name as a legend shows it."""
    return GROUP_WORDS.get(group, group or "other")


# ------------------------------------------------------------------ distance (for the tests and for checks)
def _lab(hex_colour: str) -> tuple[float, float, float]:
    """sRGB hex → CIE L*a*b* (D65)."""
    rgb = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference: about 2.3 is just noticeable, above 20 clearly different."""
    la, lb = _lab(a), _lab(b)
    return sum((p - q) ** 2 for p, q in zip(la, lb)) ** 0.5


def schemes() -> dict[str, list[str]]:
    """The colours that can meet in one graph, per scheme (what the distance test checks)."""
    return {
        "type": [*TYPE_COLOURS.values(), *SPARE_COLOURS, QUESTION, CUE, CHUNK, DIM],
        "fate": [*FATE_COLOURS.values(), QUESTION],
        "round": [*ROUND_COLOURS.values(), QUESTION, CUE, CHUNK],
        "pagerank": [*PAGERANK_COLOURS.values(), QUESTION, GOLD],
    }
