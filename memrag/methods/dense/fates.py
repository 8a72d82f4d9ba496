"""The dense baseline's gold fates: in the first k, or beyond."""

from __future__ import annotations

from memrag.methods.fate_kit import DenseFate, FateRecord, FateRules, Position, dense_fate
from memrag.trace import Trace


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    return dense_fate(chunk_id, pos, k)


RULES = FateRules(DenseFate, judge)
