"""Gold fate (DESIGN §8): for each gold chunk of a question, where a method found it or lost it.

Read from the trace alone, so the app (one question) and the evaluation (many) give the same
answer. A fate is one of a fixed set of phrases per method, so fates can be counted across
questions; the particulars (rank, score, hop, round) go into `detail` and `rank`.

"Top k" means the first k recall units of the ranked list when `unit_of` is given (the list is
deduplicated by unit, exactly as recall@k counts it), else the first k chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Hashable

from memrag.trace import ActivatedEngram, PathCandidate, RankedChunk, Trace

# Closest to "found" first, per method.
NEUROPATH_FATES = (
    "found by a path",
    "recovered only by completion",
    "valid but beyond k",
    "shown but not judged valid",
    "reachable but pruned",
    "no seed reaches it within max_hops",
)
# EcphoryRAG, closest to "found" first. Which step lost a chunk depends on how the context list
# was ranked (context_source): under c_init the order is C_assoc, C_direct, then the dense tail,
# so the re-rank and rounds >= 1 never move a chunk; under fused every activation counts.
ECPHORY_IN_CONTEXT = "in the context"
ECPHORY_FINAL_BEYOND = "in E_final but beyond k"
ECPHORY_ASSOC_ORDER = "lost in the C_assoc order"
ECPHORY_DIRECT_BEYOND = "directly retrieved but beyond k"
ECPHORY_NEVER = "never activated"
ECPHORY_FATES = (ECPHORY_IN_CONTEXT, ECPHORY_FINAL_BEYOND, ECPHORY_ASSOC_ORDER, ECPHORY_DIRECT_BEYOND,
                 ECPHORY_NEVER)
DENSE_FATES = ("in the top k", "beyond k")
# HippoRAG 2. A passage was reached by the graph search when a phrase in it was seeded or it holds
# at least HIPPO_REACHED_MASS of the PageRank mass (which sums to 1 over all nodes). Every passage
# has a small dense seed, so "seeded at all" cannot be the cut; 1 % is many times the share of a
# passage nothing led to (about 1 / node count: under 0.1 % on a memory of 1,000 nodes or more).
HIPPO_REACHED_MASS = 0.01
HIPPO_IN_TOP_K = "in the top k"
HIPPO_BEYOND = "reached but ranked beyond k"
HIPPO_UNREACHED = f"not reached: no seeded phrase, under {HIPPO_REACHED_MASS:.0%} of the PageRank mass"
HIPPO_FATES = (HIPPO_IN_TOP_K, HIPPO_BEYOND, HIPPO_UNREACHED)
# Not a method's doing: the evaluation found no chunk of that gold passage in the memory.
NOT_IN_MEMORY = "not in the memory"


def ecphory_outside_context(round_: int) -> str:
    """The fate of a chunk an engram of which was activated (round 0 = initial activation) but
    which the context ranking placed beyond k — for c_init: only in the dense tail, since rounds
    never enter C_init; for fused: its fused rank. The round is part of the fate: there are only
    depth + 1 of them."""
    return f"activated in round {round_} but outside the context"


def fate_order(fate: str) -> int:
    """Sort key: lower is closer to being found (for picking a passage's best chunk)."""
    if fate in NEUROPATH_FATES:
        return NEUROPATH_FATES.index(fate)
    if fate in ECPHORY_FATES[:-1]:
        return ECPHORY_FATES.index(fate)
    if fate.startswith("activated in round "):
        return 10 + int(fate.split()[3])
    if fate == ECPHORY_NEVER:
        return 1000
    if fate in HIPPO_FATES:
        return HIPPO_FATES.index(fate)
    if fate in DENSE_FATES:
        return DENSE_FATES.index(fate)
    return 10_000  # NOT_IN_MEMORY and anything unknown come last


def best_fate(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Of several chunks of one gold passage, the one that got furthest (ties: best rank)."""
    if not entries:
        raise ValueError("best_fate needs at least one entry")
    return min(entries, key=lambda e: (fate_order(e["fate"]), e["rank"] if e["rank"] is not None else 1 << 30))


def _positions(trace: Trace, unit_of: Callable[[int], Hashable] | None) -> dict[int, tuple[int, RankedChunk]]:
    """chunk id → (1-based rank counted in distinct units up to it, its first ranked entry)."""
    units: set[Hashable] = set()
    out: dict[int, tuple[int, RankedChunk]] = {}
    for r in trace.ranked:
        units.add(unit_of(r.chunk_id) if unit_of is not None else r.chunk_id)
        if r.chunk_id not in out:
            out[r.chunk_id] = (len(units), r)
    return out


def _where(pos: tuple[int, RankedChunk] | None) -> str:
    if pos is None:
        return "not in the ranked list"
    rank, r = pos
    return f"rank {rank} ({r.source}{': ' + r.why if r.why else ''})"


def _entry(chunk_id: int, fate: str, detail: str, pos: tuple[int, RankedChunk] | None) -> dict[str, Any]:
    return {"chunk_id": chunk_id, "fate": fate, "detail": detail, "rank": pos[0] if pos else None}


# ------------------------------------------------------------------ dense
def _dense(chunk_id: int, pos: tuple[int, RankedChunk] | None, k: int, note: str = "") -> dict[str, Any]:
    if pos is not None and pos[0] <= k:
        return _entry(chunk_id, "in the top k", f"rank {pos[0]}{note}", pos)
    where = f"beyond k at rank {pos[0]}" if pos is not None else "beyond k: not in the ranked list"
    return _entry(chunk_id, "beyond k", f"{where} (k = {k}){note}", pos)


# ------------------------------------------------------------------ NeuroPath
_VERDICT = {"dropped": "judged not useful", "expanded": "followed further but not judged valid",
            "shown": "never judged (the reply could not be read)"}


def _path_label(p: PathCandidate) -> str:
    return f"path '{p.text}'"


def _neuropath(trace: Trace, chunk_id: int, pos: tuple[int, RankedChunk] | None, k: int) -> dict[str, Any]:
    detail = trace.neuropath
    assert detail is not None
    touching = [(h.hop, p) for h in detail.hops for p in h.candidates if chunk_id in p.chunk_ids]
    seen = [(hop, p) for hop, p in touching if p.fate not in ("pruned", "unlisted")]
    hidden = [(hop, p) for hop, p in touching if p.fate in ("pruned", "unlisted")]

    if pos is not None and pos[0] <= k:
        if pos[1].source == "path":
            return _entry(chunk_id, "found by a path", f"rank {pos[0]}: {pos[1].why}", pos)
        also = ""
        if seen:
            hop, p = seen[0]
            also = f"; the model saw it on {_path_label(p)} (hop {hop}) but did not keep it"
        elif hidden:
            also = "; a path reached it but was pruned"
        return _entry(chunk_id, "recovered only by completion", f"rank {pos[0]} via completion{also}", pos)
    if chunk_id in detail.dp_chunk_ids:
        return _entry(chunk_id, "valid but beyond k",
                      f"on a valid path but at {_where(pos)}, beyond k = {k}", pos)
    if seen:
        hop, p = seen[-1]  # the latest judgement about it
        earlier_valid = [(h, q) for h, q in seen if q.fate == "valid"]
        if earlier_valid:
            h, q = earlier_valid[-1]
            said = f"judged valid at hop {h} ({_path_label(q)}) but not among the final valid paths"
        else:
            said = f"shown at hop {hop} as {_path_label(p)}, {_VERDICT.get(p.fate, p.fate)}"
        return _entry(chunk_id, "shown but not judged valid", f"{said}; {_where(pos)}", pos)
    if hidden:
        # the best-scored path that reached it tells how close it came to being listed
        hop, p = max(hidden, key=lambda x: x[1].score if x[1].score is not None else float("-inf"))
        if p.fate == "unlisted":
            said = f"reached at hop {hop} by {_path_label(p)} but left out of the listing (max_listed cap)"
        else:
            said = (f"reached at hop {hop} by {_path_label(p)}, pruned: score {p.score:.3f}, "
                    f"score rank {p.rank} of {_new_count(trace, hop)} new paths"
                    if p.score is not None else f"reached at hop {hop} by {_path_label(p)}, pruned")
        return _entry(chunk_id, "reachable but pruned", f"{said}; {_where(pos)}", pos)
    hops_run = len(detail.hops)
    why = detail.stop_reason or "tracking ended"
    return _entry(chunk_id, "no seed reaches it within max_hops",
                  f"no candidate path touches it ({hops_run} hop(s) run, stop: {why}); {_where(pos)}", pos)


def _new_count(trace: Trace, hop: int) -> int:
    assert trace.neuropath is not None
    for h in trace.neuropath.hops:
        if h.hop == hop:
            return h.new_count
    return 0


# ------------------------------------------------------------------ EcphoryRAG
def _ecphory(trace: Trace, chunk_id: int, pos: tuple[int, RankedChunk] | None, k: int) -> dict[str, Any]:
    detail = trace.ecphory
    assert detail is not None
    if pos is not None and pos[0] <= k:
        return _entry(chunk_id, ECPHORY_IN_CONTEXT, _where(pos), pos)
    source = pos[1].source if pos is not None else ""
    where = f"{_where(pos)}, outside the first k = {k}"
    if source == "activated":  # context_source=activated: E_final's chunks head the list
        return _entry(chunk_id, ECPHORY_FINAL_BEYOND, f"an engram of it is in E_final; chunk at {where}", pos)
    if source == "c_assoc":
        return _entry(chunk_id, ECPHORY_ASSOC_ORDER,
                      f"source chunk of an initially activated engram, placed by that engram's activation "
                      f"rank (C_assoc); chunk at {where}", pos)
    if source == "c_direct":
        return _entry(chunk_id, ECPHORY_DIRECT_BEYOND, f"in C_direct (cosine to the question); chunk at {where}", pos)
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
                + ("; an engram of it is in E_final" if in_final else "") + f"; {how}; chunk at {where}")
        return _entry(chunk_id, ecphory_outside_context(first.round), said, pos)
    cut = [r.round for r in detail.rounds if sum(r.new_counts.values()) > len(r.new)]
    note = (f"; round(s) {', '.join(map(str, cut))} list only part of what they activated" if cut else "")
    return _entry(chunk_id, ECPHORY_NEVER, f"no engram from it was activated; {_where(pos)}{note}", pos)


# ------------------------------------------------------------------ HippoRAG 2
def _hipporag2(trace: Trace, chunk_id: int, pos: tuple[int, RankedChunk] | None, k: int) -> dict[str, Any]:
    detail = trace.hipporag2
    assert detail is not None
    mass = (pos[1].score or 0.0) if pos is not None else 0.0
    seeded = [s.name for s in detail.phrase_seeds if chunk_id in s.chunk_ids]
    how = (f"PageRank mass {mass:.3g} ({mass:.1%})"
           + (f"; seeded phrase(s) in it: {', '.join(seeded)}" if seeded else "; no seeded phrase in it"))
    if pos is not None and pos[0] <= k:
        return _entry(chunk_id, HIPPO_IN_TOP_K, f"rank {pos[0]}: {how}", pos)
    where = f"rank {pos[0]}" if pos is not None else "not in the ranked list"
    if seeded or mass >= HIPPO_REACHED_MASS:
        return _entry(chunk_id, HIPPO_BEYOND, f"{how}; {where}, beyond k = {k}", pos)
    return _entry(chunk_id, HIPPO_UNREACHED,
                  f"{how}, under the {HIPPO_REACHED_MASS:.0%} cut; {where}, beyond k = {k}", pos)


# ------------------------------------------------------------------ entry point
def gold_fate(trace: Trace, gold_chunk_ids: Iterable[int], k: int = 5,
              unit_of: Callable[[int], Hashable] | None = None) -> list[dict[str, Any]]:
    """One entry per gold chunk: {"chunk_id", "fate", "detail", "rank"} (rank 1-based or None)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    positions = _positions(trace, unit_of)
    out = []
    for cid in dict.fromkeys(int(c) for c in gold_chunk_ids):
        pos = positions.get(cid)
        if trace.method == "dense":
            out.append(_dense(cid, pos, k))
        elif trace.method == "neuropath":
            if trace.neuropath is None or trace.neuropath.fallback_dense:
                out.append(_dense(cid, pos, k, " (NeuroPath fell back to dense ranking: no query entities)"))
            else:
                out.append(_neuropath(trace, cid, pos, k))
        elif trace.method == "ecphory":
            if trace.ecphory is None:
                raise ValueError("an EcphoryRAG trace without its detail: cannot tell gold fates")
            out.append(_ecphory(trace, cid, pos, k))
        elif trace.method == "hipporag2":
            if trace.hipporag2 is None:
                raise ValueError("a HippoRAG 2 trace without its detail: cannot tell gold fates")
            if trace.hipporag2.fallback_dense:
                out.append(_dense(cid, pos, k, f" (HippoRAG 2 fell back to dense ranking: "
                                               f"{trace.hipporag2.fallback_reason})"))
            else:
                out.append(_hipporag2(trace, cid, pos, k))
        else:
            raise ValueError(f"no gold-fate rules for method {trace.method!r}")
    return out
