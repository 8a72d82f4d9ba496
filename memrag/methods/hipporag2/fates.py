"""HippoRAG 2's gold fates. A passage was reached by the graph search when a phrase in it was
seeded or it holds at least REACHED_MASS of the PageRank mass (which sums to 1 over all nodes).
Every passage has a small dense seed, so "seeded at all" cannot be the cut; 1 % is many times the
share of a passage nothing led to (about 1 / node count: under 0.1 % on a memory of 1,000 nodes
or more)."""

from __future__ import annotations

from memrag.methods.fate_kit import FateInfo, FateKind, FateRecord, FateRules, Position, dense_fate, in_top, rank_of
from memrag.methods.hipporag2.detail import HippoRAG2Detail

REACHED_MASS = 0.01


class HippoRAG2Fate(FateKind):
    """Closest to "found" first."""
    IN_TOP_K = FateInfo("in the top k", 0, "in the top k", clean=True)
    BEYOND_K = FateInfo("reached but ranked beyond k", 1)
    UNREACHED = FateInfo(f"not reached: no seeded phrase, under {REACHED_MASS:.0%} of the PageRank mass", 2)


def judge(trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    detail = trace.detail(HippoRAG2Detail)
    if detail is None:
        raise ValueError("a HippoRAG 2 trace without its detail: cannot tell gold fates")
    if detail.fallback_dense:
        return dense_fate(chunk_id, pos, k, f" (HippoRAG 2 fell back to dense ranking: {detail.fallback_reason})")
    mass = (pos[1].score or 0.0) if pos is not None else 0.0
    seeded = [s.name for s in detail.phrase_seeds if chunk_id in s.chunk_ids]
    how = (f"PageRank mass {mass:.3g} ({mass:.1%})"
           + (f"; seeded phrase(s) in it: {', '.join(seeded)}" if seeded else "; no seeded phrase in it"))
    rank = rank_of(pos)
    if in_top(pos, k):
        return FateRecord(chunk_id, HippoRAG2Fate.IN_TOP_K, f"rank {pos[0]}: {how}", rank, score=mass)
    at = f"rank {pos[0]}" if pos is not None else "not in the ranked list"
    if seeded or mass >= REACHED_MASS:
        return FateRecord(chunk_id, HippoRAG2Fate.BEYOND_K, f"{how}; {at}, beyond k = {k}", rank, score=mass)
    return FateRecord(chunk_id, HippoRAG2Fate.UNREACHED,
                      f"{how}, under the {REACHED_MASS:.0%} cut; {at}, beyond k = {k}", rank, score=mass)


RULES = FateRules(HippoRAG2Fate, judge)
