"""The dense baseline's gold fates: in the first k, or beyond.

Dense has one step, so a passage's rank is its whole story: it has no first miss, and its final loss
is its place beyond k (fate_kit fills it in for every method whose judge names no later step)."""

from __future__ import annotations

from memrag.methods.fate_kit import DenseFate, FateRecord, FateRules, Position, dense_fate
from memrag.trace import Trace


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    return dense_fate(chunk_id, pos, k)


RULES = FateRules(DenseFate, judge)
