"""EcphoryRAG's gold fates. Which step lost a chunk depends on how the context list was ranked
(context_source): under c_init the order is C_assoc, C_direct, then the dense tail, so the re-rank
and rounds >= 1 never move a chunk; under fused every activation counts."""

from __future__ import annotations

from memrag.methods.fate_kit import FateInfo, FateKind, FateRecord, FateRules, Position, in_top, rank_of, where
from memrag.trace import Trace
from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail


class EcphoryFate(FateKind):
    """Closest to "found" first; the round a chunk was first activated in is part of its fate
    (there are only rounds + 1 of them)."""
    IN_CONTEXT = FateInfo("in the context", 0, "in the context", clean=True)
    FINAL_BEYOND_K = FateInfo("in E_final but beyond k", 1, "among the final engrams but ranked beyond k")
    ASSOC_ORDER = FateInfo("lost in the C_assoc order", 2, "activated but ranked beyond k")
    DIRECT_BEYOND_K = FateInfo("directly retrieved but beyond k", 3, "similar to the question but ranked beyond k")
    ACTIVATED_OUTSIDE = FateInfo("activated in round {round} but outside the context", 10,
                                 legacy=("activated in round {round} then re-ranked out",))
    NEVER_ACTIVATED = FateInfo("never activated", 1000, "never activated")


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    detail = trace.detail(EcphoryDetail)
    if detail is None:
        raise ValueError("an EcphoryRAG trace without its detail: cannot tell gold fates")
    rank = rank_of(pos)
    if in_top(pos, k):
        return FateRecord(chunk_id, EcphoryFate.IN_CONTEXT, where(pos), rank)
    source = pos[1].source if pos is not None else ""
    at = f"{where(pos)}, outside the first k = {k}"
    if source == "activated":  # context_source=activated: E_final's chunks head the list
        return FateRecord(chunk_id, EcphoryFate.FINAL_BEYOND_K, f"an engram of it is in E_final; chunk at {at}", rank)
    if source == "c_assoc":
        return FateRecord(chunk_id, EcphoryFate.ASSOC_ORDER,
                          f"source chunk of an initially activated engram, placed by that engram's activation "
                          f"rank (C_assoc); chunk at {at}", rank)
    if source == "c_direct":
        return FateRecord(chunk_id, EcphoryFate.DIRECT_BEYOND_K,
                          f"in C_direct (cosine to the question); chunk at {at}", rank)
    activated: list[ActivatedEngram] = list(detail.initial)
    for rnd in detail.rounds:
        activated.extend(rnd.new)
    mine = [e for e in activated if e.chunk_id == chunk_id and e.round >= 0]
    if mine:
        first = min(mine, key=lambda e: e.round)
        how = ("the context list (C_init) never takes a later round's activations"
               if source == "dense-tail" and first.round > 0 else
               "fused with its similarity rank, it stayed beyond k" if source == "fused"
               else "it is outside the context list")
        in_final = any(e.chunk_id == chunk_id for e in detail.final)
        said = (f"engram '{first.name}' activated in round {first.round} ({first.origin})"
                + ("; an engram of it is in E_final" if in_final else "") + f"; {how}; chunk at {at}")
        return FateRecord(chunk_id, EcphoryFate.ACTIVATED_OUTSIDE, said, rank, round=first.round,
                          score=first.similarity)
    cut = [r.round for r in detail.rounds if sum(r.new_counts.values()) > len(r.new)]
    note = f"; round(s) {', '.join(map(str, cut))} list only part of what they activated" if cut else ""
    return FateRecord(chunk_id, EcphoryFate.NEVER_ACTIVATED, f"no engram from it was activated; {where(pos)}{note}",
                      rank)


def outside_context(round_: int) -> str:
    """The sentence of a chunk activated in `round_` (0 = initial activation) but placed beyond k."""
    return FateRecord(None, EcphoryFate.ACTIVATED_OUTSIDE, round=round_).fate


RULES = FateRules(EcphoryFate, judge)
