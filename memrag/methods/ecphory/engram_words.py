"""How an activated engram is said on hover and in a panel, one way for the Ask page's picture and
the Learn page's replay: how it was activated, when, how similar it is to the question, and its
place among the final engrams."""

from __future__ import annotations

from memrag.methods.ecphory.detail import ActivatedEngram

ORIGIN_WORDS = {"query": "similar to the question", "cue": "near a cue entity",
                "semantic": "near the round's centroid", "graph": "co-occurs with a seed"}
DESCRIPTION_CHARS = 300


def when(round_: int) -> str:
    """'the initial activation', 'round 2'."""
    return "the initial activation" if round_ == 0 else f"round {round_}"


def origin_words(origin: str) -> str:
    return ORIGIN_WORDS.get(origin, origin)


def engram_lines(label: str, group: str, round_: int, first: ActivatedEngram | None,
                 final_rank: int | None) -> list[str]:
    """An activated entity's hover lines: its name and type, when and how it was first activated,
    its similarity to the question and description (from `first`, its first listed activation),
    and its rank among the final engrams (None: not recalled, or not re-ranked yet)."""
    lines = [f"{label} ({group})" if group else label,
             f"activated in {when(round_)}" + (f": {origin_words(first.origin)}" if first else "")]
    if first is not None:
        lines.append(f"similarity to the question {first.similarity:.3f}")
        if first.description:
            lines.append(first.description[:DESCRIPTION_CHARS])
    if final_rank is not None:
        lines.append(f"final engram #{final_rank}")
    return lines
