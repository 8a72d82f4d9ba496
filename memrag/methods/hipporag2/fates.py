"""HippoRAG 2's gold fates. A passage was reached by the graph search when a phrase in it was
seeded or it holds at least REACHED_MASS of the PageRank mass (which sums to 1 over all nodes).
Every passage has a small dense seed, so "seeded at all" cannot be the cut; 1 % is many times the
share of a passage nothing led to (about 1 / node count: under 0.1 % on a memory of 1,000 nodes
or more).

A lost passage's story (issue 29):
- first miss: the one step before PageRank that could have kept the passage and did not —
  recognition memory, when it dropped a retrieved fact read from the passage (or, failing that, a
  fact naming one of the passage's phrases, as far as the trace knows them: the phrases of the
  retrieved facts read from it and the seeded phrases it contains). Kept, that fact would have
  seeded the passage's phrases. The fact is "listed, not kept"; the earliest in the listing is named.
  A passage none of whose facts was dropped has no first miss: PageRank alone placed it.
- final loss: its rank by PageRank mass, beyond k.
"""

from __future__ import annotations

from dataclasses import replace

from memrag.methods.fate_kit import (FateInfo, FateKind, FateRecord, FateRules, Moment, Position, dense_fate, in_top,
                                     rank_of)
from memrag.methods.hipporag2.detail import HippoRAG2Detail, RetrievedFact
from memrag.trace import Trace
from memrag import words

REACHED_MASS = 0.01


class HippoRAG2Fate(FateKind):
    """Closest to "found" first."""
    IN_TOP_K = FateInfo("in the top k", 0, "in the top k", clean=True)
    BEYOND_K = FateInfo("reached but ranked beyond k", 1)
    UNREACHED = FateInfo(f"not reached: no seeded phrase, under {REACHED_MASS:.0%} of the PageRank mass", 2)


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    detail = trace.detail(HippoRAG2Detail)
    if detail is None:
        raise ValueError("a HippoRAG 2 trace without its detail: cannot tell gold fates")
    if detail.fallback_dense:
        return dense_fate(chunk_id, pos, k, f" (HippoRAG 2 fell back to dense ranking: {detail.fallback_reason})")
    record = _judge(detail, chunk_id, pos, k)
    if record.clean:
        return record
    loss = (Moment(f"ranked {record.rank} by PageRank mass ({record.score:.2%}), beyond k = {k}", rank=record.rank,
                   chunk_id=chunk_id) if record.rank is not None and record.score is not None else None)
    return replace(record, first_miss=first_miss(detail, chunk_id), final_loss=loss)


# in the words of the Ask page's tables: a hop's paths, and the facts table's verdicts
_NOT_KEPT = {"dropped": f"{words.path_fate('dropped')} (dropped by recognition memory)",
             "unjudged": f"{words.path_fate('shown')} (the recognition call failed)"}


def fact_row(number: int) -> str:
    """The key of a retrieved fact's row in the Retrieval tab's facts table (its '#', 1-based):
    a string, so it never matches a chunk id of the ranked list."""
    return f"fact #{number}"


def first_miss(detail: HippoRAG2Detail, chunk_id: int) -> Moment | None:
    """The first fact of the listing that recognition memory did not keep and that was read from the
    passage, else one that names a phrase of it (see the module's docstring); None when none was."""
    phrases = ({key for f in detail.facts if chunk_id in f.chunk_ids for key in (f.head_key, f.tail_key)}
               | {s.key for s in detail.phrase_seeds if chunk_id in s.chunk_ids})
    listed = [(n, f) for n, f in enumerate(detail.facts, start=1) if f.verdict in _NOT_KEPT]
    from_it = [(n, f) for n, f in listed if chunk_id in f.chunk_ids]
    naming = [(n, f) for n, f in listed if f.head_key in phrases or f.tail_key in phrases]
    if not (from_it or naming):
        return None
    n, f = (from_it or naming)[0]
    said = f"recognition memory: fact #{n} '{_triple(f)}' {_NOT_KEPT[f.verdict]}, score {f.score:.3f}"
    if not from_it:
        shared = f.head if f.head_key in phrases else f.tail
        said += f" (read from another passage; it names {shared}, a phrase of this one)"
    return Moment(said, row=fact_row(n), chunk_id=chunk_id)


def _triple(f: RetrievedFact) -> str:
    return f"{f.head} | {f.relation} | {f.tail}"


def _judge(detail: HippoRAG2Detail, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
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
