"""NeuroPath's gold fates: found by a path, recovered by completion, or lost at a hop (and which)."""

from __future__ import annotations

from memrag.methods.fate_kit import FateInfo, FateKind, FateRecord, FateRules, Position, dense_fate, in_top, rank_of, where
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, PathCandidate


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


def judge(trace: Trace, chunk_id: int, pos: Position | None, k: int) -> FateRecord:
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
    unknown = " (this trace predates the recorded reach)" if detail.unlisted_reach is None else ""
    return FateRecord(chunk_id, NeuroPathFate.NO_PATH,
                      f"no candidate path touches it ({len(detail.hops)} hop(s) run, stop: {why}){unknown}; "
                      f"{where(pos)}", rank, hop=last_hop)


RULES = FateRules(NeuroPathFate, judge)
