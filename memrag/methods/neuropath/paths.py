"""NeuroPath's paths: chains of triple instances that start at a seed and grow at their far end.

A path is kept as a `PathCandidate` (the trace's own record), so what the
method works with is exactly what the trace shows. Helpers here build paths,
extend them by one triple, score them against a goal vector, write the lines
the tracking prompt lists, and clean what the model says.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import numpy as np

from memrag.index.memory import Memory, TripleRow
from memrag.index.normalise import entity_key
from memrag.methods.neuropath.detail import PathCandidate, PathTriple

ARROW = " → "


def triple_line(t: TripleRow) -> str:
    return f"{t.head}{ARROW}{t.relation}{ARROW}{t.tail}"


def triple_ids(path: PathCandidate) -> list[int]:
    return [pt.triple_id for pt in path.triples]


def far_end(t: TripleRow, near: str, frontier: str | None = None) -> tuple[str, str]:
    """(key, surface name) of the end of `t` away from `near`.

    When both ends qualify as near (a triple between a frontier and one of its
    coreference candidates), the end that is not the frontier itself is the far one.
    """
    if frontier is not None and t.head_key != t.tail_key:
        if t.head_key == frontier:
            return t.tail_key, t.tail
        if t.tail_key == frontier:
            return t.head_key, t.head
    if t.head_key == near:
        return t.tail_key, t.tail
    return t.head_key, t.head


def grow(prefix: PathCandidate | None, t: TripleRow, line: str, pid: str, hop: int,
         frontier: tuple[str, str]) -> PathCandidate:
    """A new path: `prefix` (None at hop 1) followed by triple `t` (whose text is `line`)."""
    step = PathTriple(t.triple_id, t.head, t.relation, t.tail, t.chunk_id)
    if prefix is None:
        return PathCandidate(pid=pid, hop=hop, triples=[step], frontier=frontier[0], frontier_name=frontier[1],
                             chunk_ids=[t.chunk_id], text=line)
    chunks = prefix.chunk_ids if t.chunk_id in prefix.chunk_ids else prefix.chunk_ids + [t.chunk_id]
    return PathCandidate(pid=pid, hop=hop, triples=prefix.triples + [step], frontier=frontier[0],
                         frontier_name=frontier[1], chunk_ids=list(chunks), text=f"{prefix.text}; {line}",
                         parent=prefix.pid)


def first_hop_paths(memory: Memory, seed_keys: Iterable[str], seen: set[str]) -> list[PathCandidate]:
    """Every triple instance touching a seed is a one-step path; identical texts keep the first."""
    out: list[PathCandidate] = []
    for key in seed_keys:
        for tid in memory.triples_of.get(key, []):
            t = memory.triples[tid]
            text = triple_line(t)
            if text in seen:
                continue
            seen.add(text)
            out.append(grow(None, t, text, f"h1.{len(out) + 1}", 1, far_end(t, key)))
    return out


def extend_path(memory: Memory, path: PathCandidate, touch: list[str], hop: int, seen: set[str],
                start: int) -> list[PathCandidate]:
    """One-triple extensions of `path` at its frontier or any key in `touch` (its coreference
    candidates), never re-using a triple already on the path — neither the same instance nor
    the same fact from another chunk (that would only walk back). pids continue from `start`."""
    used_ids = {pt.triple_id for pt in path.triples}
    used_lines = {triple_line(memory.triples[i]) for i in used_ids}
    out: list[PathCandidate] = []
    for key in touch:
        for tid in memory.triples_of.get(key, []):
            t = memory.triples[tid]
            line = triple_line(t)
            if tid in used_ids or line in used_lines:
                continue
            text = f"{path.text}; {line}"
            if text in seen:
                continue
            seen.add(text)
            out.append(grow(path, t, line, f"h{hop}.{start + len(out) + 1}", hop, far_end(t, key, path.frontier)))
    return out


def grow_paths(memory: Memory, paths: Iterable[PathCandidate], hop: int, seen: set[str], coref_top: int,
               coref_threshold: float) -> list[PathCandidate]:
    """The next hop's new paths: each of `paths` extended at its frontier or the frontier's
    coreference candidates (`extend_path`), pids numbered on across them."""
    grown: list[PathCandidate] = []
    for p in paths:
        touch = [p.frontier] + [m.key for m in memory.coref_of(p.frontier, coref_top, coref_threshold)]
        grown.extend(extend_path(memory, p, touch, hop, seen, len(grown)))
    return grown


def kept_numbers(valid: Iterable[int], expand: Iterable[int]) -> list[int]:
    """The paths a judgement keeps into the next hop: valid ∪ expand, valid ones first (most helpful
    first), each number once."""
    return list(dict.fromkeys([*valid, *expand]))


def best_first(scores: np.ndarray) -> list[int]:
    """Indices of paths by descending score; ties keep creation order (the listing's order)."""
    return np.argsort(-scores, kind="stable").tolist()


def path_scores(memory: Memory, paths: list[PathCandidate], goal: np.ndarray) -> np.ndarray:
    """Cosine of each path's vector (normalised sum of its triples' vectors) to the goal.

    Dot products only: no text is embedded for a path at query time.
    """
    if not paths:
        return np.zeros(0, np.float32)
    vecs = np.zeros((len(paths), memory.triple_vecs.shape[1]), np.float32)
    by_length: dict[int, list[int]] = {}
    for i, p in enumerate(paths):
        by_length.setdefault(len(p.triples), []).append(i)
    for rows in by_length.values():  # one gather per path length (a hop's new paths share one)
        ids = np.array([triple_ids(paths[i]) for i in rows], np.int64)
        vecs[rows] = memory.triple_vecs[ids].sum(axis=1)
    norms = np.linalg.norm(vecs, axis=1)
    norms[norms == 0] = 1.0
    return (vecs / norms[:, None]) @ np.asarray(goal, np.float32).reshape(-1)


def listing_line(number: int, path: PathCandidate) -> str:
    if path.kept_from is not None:
        return f"{number}: {path.text}   [kept from hop {path.kept_from}]"
    return f"{number}: {path.text}   [expandable at: {path.frontier_name}]"


# ---------------------------------------------------------------- what the model says
_PATH_REFS = re.compile(
    r"\b(?P<word>paths?|ids?)\s*#?\d+(?:\s*(?:,|and|&|or|to|-|–)\s*#?\d+)*", re.I)


def strip_path_refs(text: str) -> str:
    """Drop "path 3" / "paths 1, 4 and 5" references: the next prompt renumbers, so old ids mislead."""
    def repl(m: re.Match[str]) -> str:
        word = m.group("word")
        plural = word.lower().endswith("s") and len(word) > 2 or bool(re.search(r"\d\D+\d", m.group(0)))
        out = "some paths" if plural else "a path"
        return out[0].upper() + out[1:] if word[0].isupper() else out
    return " ".join(_PATH_REFS.sub(repl, text).split())


_ID_TEXT = re.compile(r"^\s*(?:path\s*)?#?(\d+)\s*$", re.I)


def id_list(value: Any, name: str) -> list[int]:
    """A list of path numbers; "3", 3.0 and "path 3" are read as 3."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list of path numbers")
    out: list[int] = []
    for x in value:
        if isinstance(x, bool):
            raise ValueError(f"{name} must hold path numbers, not {x!r}")
        if isinstance(x, int):
            out.append(x)
        elif isinstance(x, float) and x.is_integer():
            out.append(int(x))
        elif isinstance(x, str) and _ID_TEXT.match(x):
            out.append(int(_ID_TEXT.match(x).group(1)))  # type: ignore[union-attr]
        else:
            raise ValueError(f"{name} must hold path numbers, not {x!r}")
    return out


# ---------------------------------------------------------------- verbatim seeds
_TOKEN_EDGE = "\"'“”‘’`()[]{}?!,;:."


def verbatim_keys(question: str, entity_index: dict[str, int], longest: int = 8) -> list[tuple[str, str]]:
    """Graph entity keys named verbatim in the question by a capitalised span.

    A span must start and end with a capitalised word ("University of Paris",
    "Tekezé River"); all-lowercase matches are common nouns that flood the seed
    list. Longest spans win and spans do not overlap. Returns (span, key) pairs.
    """
    words = [w.strip(_TOKEN_EDGE) for w in question.split()]
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        found = None
        if words[i][:1].isupper():
            for j in range(min(len(words), i + longest), i, -1):
                last = words[j - 1]
                if not last[:1].isupper():
                    continue
                span = " ".join(w for w in words[i:j] if w)
                key = entity_key(span)
                if key and key in entity_index:
                    found = (span, key, j)
                    break
        if found:
            out.append((found[0], found[1]))
            i = found[2]
        else:
            i += 1
    return out
