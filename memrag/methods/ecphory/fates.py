"""EcphoryRAG's gold fates. Which step lost a chunk depends on how the context list was ranked
(context_source): under c_init the order is C_assoc, C_direct, then the dense tail, so the re-rank
and rounds >= 1 never move a chunk; under fused every activation counts.

A lost passage's story (issue 29):
- first miss: the earliest activation step that held the passage and could have kept it — the step
  (0 = the initial activation, r = round r) that first activated an engram of it; from there on only
  the ranking stood between it and the context ("activated, not kept"). When the context list takes
  no later round (c_init: C_assoc then C_direct), a passage first activated in round r >= 1 could
  only have been kept by the initial activation, so its first miss is step 0. A passage of which no
  engram was activated has no first miss: its one chance was its similarity rank, its final loss.
- final loss: its place in the ranked list beyond k, and which ordering put it there.
"""

from __future__ import annotations

from dataclasses import replace

from memrag.methods.fate_kit import (FateInfo, FateKind, FateRecord, FateRules, Moment, Position, in_top, rank_of,
                                     where)
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
    record = _judge(trace, chunk_id, pos, k)
    if record.clean:
        return record
    return replace(record, first_miss=first_miss(trace, chunk_id), final_loss=_final_loss(chunk_id, pos, k))


def _judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
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
    mine = passage_engrams(detail, chunk_id)
    if mine:
        first = mine[0]
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


def passage_engrams(detail: EcphoryDetail, chunk_id: int) -> list[ActivatedEngram]:
    """The activated engrams read from the chunk (as far as the trace lists them), the earliest round
    first, in activation order within a round."""
    activated = [*detail.initial, *(e for rnd in detail.rounds for e in rnd.new)]
    return sorted((e for e in activated if e.chunk_id == chunk_id and e.round >= 0), key=lambda e: e.round)


_HOW = {"query": "nearest the question", "semantic": "near the round's centroid"}
_STEP = {0: "initial activation"}
# orderings that place a chunk activated in a later round (c_init's C_assoc / C_direct do not)
_LATER_ROUNDS_COUNT = ("fused", "similarity", "activated")


def _how(e: ActivatedEngram) -> str:
    if e.origin == "cue":
        return f"via cue '{e.via}'"
    if e.origin == "graph":
        return f"co-occurs with seed '{e.via}'"
    return _HOW.get(e.origin, e.origin)


def step_words(round_: int) -> str:
    """'initial activation', 'round 2': an activation step as the fates say it."""
    return _STEP.get(round_, f"round {round_}")


def first_miss(trace: Trace, chunk_id: int) -> Moment | None:
    """The activation step that first held the passage (see the module's docstring), or None."""
    detail = trace.detail(EcphoryDetail)
    mine = passage_engrams(detail, chunk_id) if detail is not None else []
    if not mine:
        return None
    first = mine[0]
    if first.round > 0 and not any(r.source in _LATER_ROUNDS_COUNT for r in trace.ranked):
        return Moment(f"{step_words(0)}: no engram of it among the initial activation (first activated in "
                      f"{step_words(first.round)}: '{first.name}'), and the context list (C_init) takes no "
                      "later round", round=0, chunk_id=chunk_id)
    final = next((i for i, e in enumerate(detail.final, start=1) if e.chunk_id == chunk_id), None)
    kept = (f"final engram #{final} after the re-rank" if final is not None
            else f"not among the {len(detail.final)} final engrams")
    return Moment(f"{step_words(first.round)}: engram '{first.name}' activated ({_how(first)}), similarity "
                  f"{first.similarity:.3f}, {kept}; activated, not kept in the context",
                  round=first.round, chunk_id=chunk_id)


_ORDERING = {"fused": "the fusion of activation and similarity ranks", "similarity": "its similarity alone",
             "activated": "the final engrams' order", "c_assoc": "the C_assoc order",
             "c_direct": "its similarity (C_direct)", "dense-tail": "the dense tail, after the context list"}


def _final_loss(chunk_id: int, pos: Position | None, k: int) -> Moment | None:
    """Its place beyond k and the ordering that put it there (None: in the first k)."""
    if pos is None or pos[0] <= k:
        return None  # in the first k; or not in the list at all, which fate_kit says in its words
    rank, entry = pos
    by = _ORDERING.get(entry.source, entry.source)
    return Moment(f"ranked {rank} by {by}, beyond k = {k}", rank=rank, chunk_id=chunk_id)


def outside_context(round_: int) -> str:
    """The sentence of a chunk activated in `round_` (0 = initial activation) but placed beyond k."""
    return FateRecord(None, EcphoryFate.ACTIVATED_OUTSIDE, round=round_).fate


RULES = FateRules(EcphoryFate, judge)
