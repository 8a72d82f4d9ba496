"""NeuroPath's gold fates: found by a path, recovered by completion, or lost at a hop (and which).

Each gold passage not found by a path has its own story, two moments read from the trace:

First miss — the earliest hop at which the tracker could have kept a path to the passage and did
not. At one hop, the closest miss wins, in this order:
  1. a path through the passage (one of its facts) listed and not kept;
  2. a kept path not extended whose growing end is an entity of the passage (extended, it would
     have reached the passage); only where extending was possible: a later hop ran, or the model
     stopped of its own accord (not at max_hops, not at a hop whose reply could not be read);
  3. a path listed and not kept whose growing end is an entity of the passage;
  4. a path through the passage pruned, or left out by the listing cap;
  5. a path pruned or left out whose growing end is an entity of the passage.
Ties: the lowest listing number, then the best score rank. "An entity of the passage" is a head or
tail of the passage's facts that some path of the trace carried (the trace holds no other facts).
A passage no path came near has the memory graph's reach as its first miss: the hop at which a
path from the seeds reaches it, or that none does within max_hops, or that no path started (no
seeds); a trace written before the reach was recorded says so.

Final loss — where the passage was lost for good: for a passage on a valid path, the merge's rank
beyond k; for one shown or pruned, the last hop that listed it (or cut it) without keeping it after
any hop that kept it; otherwise (fate_kit) its place in the ranked list beyond k.
"""

from __future__ import annotations

from dataclasses import replace

from memrag.methods.fate_kit import (FateInfo, FateKind, FateRecord, FateRules, Moment, Position, dense_fate, in_top,
                                     rank_of, where)
from memrag.index.normalise import entity_key
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate
from memrag import words


class NeuroPathFate(FateKind):
    """Closest to "found" first."""
    FOUND_BY_PATH = FateInfo("found by a path", 0, "found by a path", clean=True)
    BY_COMPLETION = FateInfo("recovered only by completion", 1, "only by completion")
    VALID_BEYOND_K = FateInfo("valid but beyond k", 2, "on a kept path but ranked beyond k")
    SHOWN_NOT_VALID = FateInfo("shown but not judged valid", 3, "shown to the model, not kept")
    PRUNED = FateInfo("reachable but pruned", 4, "reachable, pruned before the model saw it")
    NOT_FOLLOWED = FateInfo("reachable within max_hops, but tracking did not go there", 5,
                            "reachable, tracking stopped short")
    NO_PATH = FateInfo("no seed reaches it within max_hops", 6, "no path reaches it")


_VERDICT = {"dropped": "judged not useful", "expanded": "followed further but not judged valid",
            "shown": "never judged (the reply could not be read)"}


def _path_label(p: PathCandidate) -> str:
    return f"path '{p.text}'"


def _new_count(trace: Trace, hop: int) -> int:
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    return next((h.new_count for h in detail.hops if h.hop == hop), 0)


def _number(p: PathCandidate) -> str:
    return f"#{p.listed_as}" if p.listed_as is not None else f"'{p.pid}'"


def _listing(hop: int, p: PathCandidate) -> Moment:
    """'hop 1: path #2 listed, not kept, score 0.735, rank 2' (the hop table's row for the path)."""
    said = f"hop {hop}: path {_number(p)} {words.path_fate(p.fate)}"
    if p.score is not None:
        said += f", score {p.score:.3f}"
    if p.rank is not None:
        said += f", rank {p.rank}"
    return Moment(said, hop=hop, path_id=p.pid, chunk_id=None)


_NOT_KEPT = ("dropped", "shown", "pruned", "unlisted")  # listed and not kept, or never listed
_SEEN_NOT_KEPT = ("dropped", "shown")
_HIDDEN = ("pruned", "unlisted")

# A first miss's kinds within one hop, the closest to keeping the passage first (module docstring).
THROUGH_NOT_KEPT, KEPT_NOT_EXTENDED, END_NOT_KEPT, THROUGH_HIDDEN, END_HIDDEN = range(5)


def _leads_to(trace: Trace, chunk_id: int) -> set[str]:
    """Entity keys of the chunk's facts that any path of the trace carried: a path whose growing end
    stands on one of them was one hop from the passage."""
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    return {entity_key(x) for h in detail.hops for p in h.candidates for t in p.triples
            if t.chunk_id == chunk_id for x in (t.head, t.tail)}


def _could_extend(detail: NeuroPathDetail, h: NeuroPathHop) -> bool:
    """Whether the model could have extended a path it kept at hop `h`: a later hop ran, or tracking
    stopped by the model's own choice; not at max_hops, and not a hop whose reply was unreadable."""
    if h.failed:
        return False
    return h is not detail.hops[-1] or detail.stop_reason in ("model said stop", "no expandable paths")


def miss_kind(detail: NeuroPathDetail, h: NeuroPathHop, p: PathCandidate, chunk_id: int,
              ends: set[str]) -> int | None:
    """How path `p` of hop `h` missed the chunk (a kind above), or None when it did not: a path
    through the passage not kept, or one whose growing end is an entity of the passage (kept and
    extended, it would have reached the passage) left unextended or not kept."""
    through = chunk_id in p.chunk_ids
    end = not through and p.kept_from is None and p.frontier in ends
    if p.fate in _SEEN_NOT_KEPT:
        return THROUGH_NOT_KEPT if through else END_NOT_KEPT if end else None
    if p.fate == "valid" and end and _could_extend(detail, h):
        return KEPT_NOT_EXTENDED
    if p.fate in _HIDDEN:
        return THROUGH_HIDDEN if through else END_HIDDEN if end else None
    return None


def _miss_moment(h: NeuroPathHop, p: PathCandidate, kind: int, chunk_id: int) -> Moment:
    end = f"its end, {p.frontier_name}, is in the passage"
    if kind == KEPT_NOT_EXTENDED:
        extended = ", ".join(f"#{n}" for n in h.expand_ids)
        said = (f"hop {h.hop}: path {_number(p)} kept, not extended ({end}; the model extended "
                + (f"only {extended})" if extended else "none)"))
        return Moment(said, hop=h.hop, path_id=p.pid, chunk_id=chunk_id)
    m = _listing(h.hop, p)
    return replace(m, text=m.text + (f" ({end})" if kind in (END_NOT_KEPT, END_HIDDEN) else ""), chunk_id=chunk_id)


def _reach_moment(trace: Trace, detail: NeuroPathDetail, chunk_id: int) -> Moment:
    """No listed path came near the passage: what the memory graph's reach says of it."""
    if detail.stop_reason == "no seeds":
        said = "no path started: no query entity matched an entity of the memory (no seeds)"
    elif detail.unlisted_reach is None:
        said = "no listed path came near it (this trace predates the recorded reach)"
    else:
        reach = {r.chunk_id: r.hop for r in detail.unlisted_reach}
        ran = detail.hops[-1].hop if detail.hops else 0
        if chunk_id in reach:
            said = (f"no listed path came near it; the memory graph's reach: a path from the seeds reaches it "
                    f"at hop {reach[chunk_id]}" + (f", after the {ran} hop(s) run" if reach[chunk_id] > ran else ""))
        else:
            said = (f"no listed path came near it, and no path from the seeds reaches it within max_hops = "
                    f"{trace.params.get('max_hops', '?')} (the memory graph's reach: {len(reach)} more passage(s))")
    return Moment(said, chunk_id=chunk_id)


def first_miss(trace: Trace, chunk_id: int) -> Moment | None:
    """The earliest hop where the tracker could have kept a path to the chunk and did not (the
    module's rules); with none, the memory graph's reach (None: the trace has no NeuroPath detail)."""
    detail = trace.detail(NeuroPathDetail)
    if detail is None:
        return None
    ends = _leads_to(trace, chunk_id)
    for h in detail.hops:
        mine = [(kind, p) for p in h.candidates
                if (kind := miss_kind(detail, h, p, chunk_id, ends)) is not None]
        if mine:
            kind, p = min(mine, key=lambda x: (x[0], x[1].listed_as is None, x[1].listed_as or 0,
                                                x[1].rank if x[1].rank is not None else 1 << 30))
            return _miss_moment(h, p, kind, chunk_id)
    return _reach_moment(trace, detail, chunk_id)


def _final_loss(trace: Trace, chunk_id: int, kind: NeuroPathFate, rank: int | None) -> Moment | None:
    """Where the chunk was lost for good: a kept path's passage ranked beyond k by the merge, or the
    last hop that listed it and did not keep it after any hop that kept it (None: the ranked list)."""
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    touching = [(h.hop, p) for h in detail.hops for p in h.candidates if chunk_id in p.chunk_ids]
    kept = [(hop, p) for hop, p in touching if p.fate in ("valid", "expanded")]
    if kind is NeuroPathFate.VALID_BEYOND_K:
        hop = kept[-1][0] if kept else None
        said = (f"kept at hop {hop}, " if hop is not None else "on a valid path, ") + (
            f"ranked {rank} by the merge" if rank is not None else "not in the ranked list")
        return Moment(said, rank=rank, chunk_id=chunk_id)
    if kind in (NeuroPathFate.SHOWN_NOT_VALID, NeuroPathFate.PRUNED):
        last_kept = kept[-1][0] if kept else 0
        later = [(hop, p) for hop, p in touching if p.fate in _NOT_KEPT and hop > last_kept]
        if later:
            hop = later[-1][0]
            at_hop = [p for h_, p in later if h_ == hop]
            p = min(at_hop, key=lambda c: (c.fate not in ("dropped", "shown"), c.listed_as or 1 << 30))
            return replace(_listing(hop, p), chunk_id=chunk_id)
    return None


def _story(trace: Trace, record: FateRecord) -> FateRecord:
    """The record with its first miss and final loss (a passage a path found has neither)."""
    if record.clean or record.chunk_id is None:
        return record
    return replace(record, first_miss=first_miss(trace, record.chunk_id),
                   final_loss=_final_loss(trace, record.chunk_id, record.kind, record.rank))


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    record = _judge(trace, chunk_id, pos, k)
    detail = trace.detail(NeuroPathDetail)
    if detail is None or detail.fallback_dense:
        return record
    return _story(trace, record)


def _judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
    detail = trace.detail(NeuroPathDetail)
    if detail is None or detail.fallback_dense:
        return dense_fate(chunk_id, pos, k, " (NeuroPath fell back to dense ranking: no query entities)")
    touching = [(h.hop, p) for h in detail.hops for p in h.candidates if chunk_id in p.chunk_ids]
    seen = [(hop, p) for hop, p in touching if p.fate not in ("pruned", "unlisted")]
    hidden = [(hop, p) for hop, p in touching if p.fate in ("pruned", "unlisted")]
    rank = rank_of(pos)

    if in_top(pos, k):
        assert pos is not None
        if pos[1].source == "path":
            return FateRecord(chunk_id, NeuroPathFate.FOUND_BY_PATH, f"rank {pos[0]}: {pos[1].why}", rank)
        also, hop_, pid = "", None, None
        if seen:
            hop_, p = seen[0]
            pid = p.pid
            also = f"; the model saw it on {_path_label(p)} (hop {hop_}) but did not keep it"
        elif hidden:
            also = "; a path reached it but was pruned"
        return FateRecord(chunk_id, NeuroPathFate.BY_COMPLETION, f"rank {pos[0]} via completion{also}", rank,
                          hop=hop_, path_id=pid)
    if chunk_id in detail.dp_chunk_ids:
        return FateRecord(chunk_id, NeuroPathFate.VALID_BEYOND_K,
                          f"on a valid path but at {where(pos)}, beyond k = {k}", rank)
    if seen:
        hop_, p = seen[-1]  # the latest judgement about it
        earlier_valid = [(h, q) for h, q in seen if q.fate == "valid"]
        if earlier_valid:
            hop_, p = earlier_valid[-1]
            said = f"judged valid at hop {hop_} ({_path_label(p)}) but not among the final valid paths"
        else:
            said = f"shown at hop {hop_} as {_path_label(p)}, {_VERDICT.get(p.fate, p.fate)}"
        return FateRecord(chunk_id, NeuroPathFate.SHOWN_NOT_VALID, f"{said}; {where(pos)}", rank,
                          hop=hop_, path_id=p.pid, score=p.score)
    if hidden:
        # the best-scored path that reached it tells how close it came to being listed
        hop_, p = max(hidden, key=lambda x: x[1].score if x[1].score is not None else float("-inf"))
        if p.fate == "unlisted":
            said = f"reached at hop {hop_} by {_path_label(p)} but left out of the listing (max_listed cap)"
        else:
            said = (f"reached at hop {hop_} by {_path_label(p)}, pruned: score {p.score:.3f}, "
                    f"score rank {p.rank} of {_new_count(trace, hop_)} new paths"
                    if p.score is not None else f"reached at hop {hop_} by {_path_label(p)}, pruned")
        return FateRecord(chunk_id, NeuroPathFate.PRUNED, f"{said}; {where(pos)}", rank,
                          hop=hop_, path_id=p.pid, score=p.score)
    why = detail.stop_reason or "tracking ended"
    last_hop = detail.hops[-1].hop if detail.hops else None
    reach = {r.chunk_id: r.hop for r in detail.unlisted_reach or []}
    if chunk_id in reach:
        at = reach[chunk_id]
        said = (f"tracking stopped at hop {last_hop} ({why})" if last_hop is not None and at > last_hop
                else "no listed path took it (the paths towards it were not expanded, or its fact was "
                     "listed from another passage: identical paths keep the first)")
        return FateRecord(chunk_id, NeuroPathFate.NOT_FOLLOWED,
                          f"a path from the seeds could reach it at hop {at}, but {said}; {where(pos)}",
                          rank, hop=last_hop)  # "show where" opens the hop where tracking ended
    unknown = ("" if detail.unlisted_reach is not None else " (no seeds: no path could start)"
               if detail.stop_reason == "no seeds" else " (this trace predates the recorded reach)")
    return FateRecord(chunk_id, NeuroPathFate.NO_PATH,
                      f"no candidate path touches it ({len(detail.hops)} hop(s) run, stop: {why}){unknown}; "
                      f"{where(pos)}", rank, hop=last_hop)


RULES = FateRules(NeuroPathFate, judge)
