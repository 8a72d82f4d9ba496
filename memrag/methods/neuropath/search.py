"""NeuroPath retrieval: goal-directed path tracking over triples, then completion.

Seeds from the query entities (and their coreference candidates) start one-step
paths; each hop prunes the new paths by similarity to its goal — the previous hop's
expansion requirement (what the model said it still needs), the question at hop 1 —
(`NeuroPathHop.goal` in the trace), lists them for the model, and grows the paths
it asks to expand by one triple. The chunks of the last judgement's valid paths
come first; dense retrieval on the question plus the model's chain and
requirement fills the rest ("replay").

Which listed paths are kept is the generative call's valid_ids (the paper's tracker) or,
with `tracker="likelihood"` (a deviation, likelihood.py), each path's probability of
"yes" to a one-path question; the chain, requirement and continue are generative either way.

Everything the method decides is written into the trace: seeds, every
candidate path with its score and fate, each prompt, the completion query, and
why each ranked chunk is there.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, get_args

import numpy as np

from memrag import prompts
from memrag.fields import params_dict
from memrag.methods.neuropath import likelihood
from memrag.methods.neuropath.params import DpPosition, NeuroPathParams, Tracker
from memrag.llm.jsoncall import call_json
from memrag.index.memory import Memory
from memrag.methods.base import QueryContext, cite_chunks, fuse_ranks, new_trace, query_entities, set_ranked
from memrag.methods.dense.search import dense_ranking
from memrag.methods.neuropath.reach import unlisted_reach
from memrag.methods.neuropath.paths import (best_first, first_hop_paths, grow_paths, id_list, kept_numbers,
                                  listing_line, path_scores, strip_path_refs, verbatim_keys)
from memrag.trace import RankedChunk, Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, NeuroPathSeed, PathCandidate
from memrag.methods.neuropath.picture import subgraph


@dataclass
class Judgement:
    reasoning_chain: str
    valid_ids: list[int]
    expansion_requirement: str
    expand_ids: list[int]
    cont: int


def _validate_track(obj: Any) -> Judgement:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with reasoning_chain, valid_ids, expansion_requirement, "
                         "expand_ids and continue")
    if "valid_ids" not in obj:
        raise ValueError("valid_ids is missing")
    cont = obj.get("continue", 0)
    if isinstance(cont, str) and cont.strip() in ("0", "1"):
        cont = int(cont.strip())
    if isinstance(cont, bool):
        cont = int(cont)
    if cont not in (0, 1):
        raise ValueError("continue must be 0 or 1")
    chain, req = obj.get("reasoning_chain") or "", obj.get("expansion_requirement") or ""
    if not isinstance(chain, str) or not isinstance(req, str):
        raise ValueError("reasoning_chain and expansion_requirement must be text")
    return Judgement(" ".join(chain.split()), id_list(obj.get("valid_ids"), "valid_ids"),
                     " ".join(req.split()), id_list(obj.get("expand_ids"), "expand_ids"), int(cont))


def _check(params: NeuroPathParams) -> None:
    if params.max_hops < 1:
        raise ValueError("max_hops must be at least 1")
    if params.prune_top is not None and params.prune_top < 1:
        raise ValueError("prune_top must be at least 1, or None for no pruning")
    if params.max_listed < 1:
        raise ValueError("max_listed must be at least 1")
    if params.answer_passages < 1:
        raise ValueError("answer_passages must be at least 1")
    if params.dp_position not in DP_POSITIONS:
        raise ValueError(f"dp_position must be one of {', '.join(DP_POSITIONS)} (got {params.dp_position!r})")
    if isinstance(params.dp_fusion_k, bool) or not isinstance(params.dp_fusion_k, int) or params.dp_fusion_k < 1:
        raise ValueError(f"dp_fusion_k must be a whole number ≥ 1 (got {params.dp_fusion_k!r})")
    if isinstance(params.dp_head, bool) or not isinstance(params.dp_head, int) or params.dp_head < 0:
        raise ValueError(f"dp_head must be a whole number ≥ 0 (got {params.dp_head!r})")
    if params.tracker not in TRACKERS:
        raise ValueError(f"tracker must be one of {', '.join(TRACKERS)} (got {params.tracker!r})")
    if isinstance(params.keep_threshold, bool) or not isinstance(params.keep_threshold, (int, float)) \
            or not 0.0 <= params.keep_threshold <= 1.0:
        raise ValueError(f"keep_threshold must be a probability from 0 to 1 (got {params.keep_threshold!r})")
    if params.keep_top is not None and (isinstance(params.keep_top, bool) or not isinstance(params.keep_top, int)
                                        or params.keep_top < 1):
        raise ValueError(f"keep_top must be a whole number ≥ 1, or None for no cap (got {params.keep_top!r})")


DP_POSITIONS: tuple[str, ...] = get_args(DpPosition)
TRACKERS: tuple[str, ...] = get_args(Tracker)


# ---------------------------------------------------------------- the method
def retrieve(ctx: QueryContext, params: NeuroPathParams | None = None) -> Trace:
    params = params or NeuroPathParams()
    _check(params)
    if len(ctx.memory.triple_vecs) != len(ctx.memory.triples):
        raise ValueError(f"this memory has {len(ctx.memory.triples)} triples but "
                         f"{len(ctx.memory.triple_vecs)} triple vectors: rebuild or re-embed it before using NeuroPath")
    t0 = time.perf_counter()
    trace = new_trace(ctx, "neuropath", params_dict(params))
    detail = trace.details[trace.method] = NeuroPathDetail()

    entities, calls, error = query_entities(ctx)
    trace.llm_calls.extend(calls)
    detail.query_entities = entities
    if not entities:
        _dense_fallback(ctx, trace, params, error)
        trace.retrieval_seconds = time.perf_counter() - t0
        return trace

    seed_keys = _seeds(ctx, trace, params)
    valid: list[PathCandidate] = []
    chain = requirement = ""
    if not seed_keys:
        detail.stop_reason = "no seeds"
        trace.flags.append("no seeds: ranked by completion only")
    else:
        valid, chain, requirement = _track(ctx, trace, params, seed_keys)
        listed_chunks = {c for h in detail.hops for p in h.candidates for c in p.chunk_ids}
        detail.unlisted_reach = unlisted_reach(ctx.memory, seed_keys, params.max_hops, params.coref_top,
                                               params.coref_threshold, listed_chunks)
    _complete(ctx, trace, params, valid, chain, requirement)
    subgraph(ctx, trace)
    cite_chunks(trace, ctx.memory, [c for h in detail.hops for p in h.candidates
                                    if p.fate in ("valid", "expanded") for c in p.chunk_ids])
    trace.retrieval_seconds = time.perf_counter() - t0
    return trace


def _dense_fallback(ctx: QueryContext, trace: Trace, params: NeuroPathParams, error: str | None) -> None:
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    detail.fallback_dense = True
    detail.stop_reason = "no query entities"
    trace.flags.append("fallback: no query entities")
    if error:
        trace.flags.append(f"query-entity call failed: {error}")
    trace.add_step("fallback", "Dense retrieval (fallback)",
                   "The query-entity call gave no entities, so there are no seeds; chunks are ranked "
                   "by cosine to the question.")
    set_ranked(trace, ctx.memory, [RankedChunk(cid, r, s, "dense", f"dense fallback, cosine {s:.3f}")
                                   for r, (cid, s) in enumerate(dense_ranking(ctx))],
               cite_top=max(20, params.answer_passages))


def is_class_word(query_entity: str) -> bool:
    """'country', 'city of birth': letters, none of them upper case, in a script that has case.
    Names are capitalised in the questions NeuroPath answers; a lower-case span names a kind."""
    letters = [c for c in query_entity if c.isalpha()]
    return bool(letters) and any(c.lower() != c.upper() for c in letters) and not any(c.isupper() for c in letters)


def names_nest(query_entity: str, name: str) -> bool:
    """One name's words all within the other's ('Nets' / 'New York Nets', 'Nicholas I' / 'Nicholas I
    of Russia'): a longer or shorter name of the same thing, not a sibling that differs by a word
    ('26th Chess Olympiad' / '36th Chess Olympiad', 'AD 43' / 'AD 41')."""
    a, b = set(re.findall(r"\w+", query_entity.lower())), set(re.findall(r"\w+", name.lower()))
    return bool(a and b) and (a <= b or b <= a)


def _seeds(ctx: QueryContext, trace: Trace, params: NeuroPathParams) -> list[str]:
    """Seed records into the trace; returns the seed set (seeds, then their coreference members)."""
    memory, detail = ctx.memory, trace.detail(NeuroPathDetail)
    assert detail is not None
    step = trace.add_step("seeds", "Seeds")
    if len(memory.entities):
        k = min(params.seed_top, len(memory.entities))
        scores, ids = memory.index("entities").search(ctx.embed(detail.query_entities), k)
        for qe, row_s, row_i in zip(detail.query_entities, scores, ids):
            for link, (s, i) in enumerate(zip(row_s[:k], row_i[:k]), start=1):
                node = memory.entities[int(i)]
                accepted = (params.seed_floor <= 0 or float(s) >= params.seed_floor) and \
                    not (params.skip_class_words and is_class_word(qe)) and (link == 1 or names_nest(qe, node.name))
                detail.seeds.append(NeuroPathSeed(qe, node.key, node.name, float(s), accepted=accepted, link=link))
        if params.verbatim_seeds:
            taken = {s.key for s in detail.seeds if s.accepted}
            for span, key in verbatim_keys(ctx.question, memory.entity_index):
                if key not in taken:
                    taken.add(key)
                    detail.seeds.append(NeuroPathSeed(span, key, memory.entity(key).name, 1.0,  # type: ignore[union-attr]
                                                      origin="verbatim"))
    order: list[str] = []
    for s in detail.seeds:
        if s.accepted:
            s.coref = memory.coref_of(s.key, params.coref_top, params.coref_threshold)
            if s.key not in order:
                order.append(s.key)
    for s in detail.seeds:
        for m in s.coref:
            if m.key not in order:
                order.append(m.key)
    accepted = [s for s in detail.seeds if s.accepted]
    kinds = [s for s in detail.seeds if not s.accepted and params.skip_class_words and is_class_word(s.query_entity)]
    other = [s for s in detail.seeds if not s.accepted and s not in kinds and s.link > 1
             and not names_nest(s.query_entity, s.name)]
    low = len(detail.seeds) - len(accepted) - len(kinds) - len(other)
    step.summary = (f"{len(detail.query_entities)} query entities → {len(accepted)} seeds"
                    + (f" (each linked to its {params.seed_top} nearest graph nodes)" if params.seed_top > 1 else "")
                    + (f" ({low} below the similarity floor {params.seed_floor})" if low else "")
                    + (f" ({len(other)} further link(s) naming another thing: the names do not nest)" if other else "")
                    + (f" ({len(kinds)} written in lower case, a kind of thing rather than an entity: "
                       f"{', '.join(repr(s.query_entity) for s in kinds)})" if kinds else "")
                    + f"; {len(order) - len({s.key for s in accepted})} coreference members added.")
    return order


# ---------------------------------------------------------------- tracking
def _track(ctx: QueryContext, trace: Trace, params: NeuroPathParams, seed_keys: list[str]
           ) -> tuple[list[PathCandidate], str, str]:
    """The hop loop; returns (the final valid paths in order, last chain, last requirement)."""
    memory, detail = ctx.memory, trace.detail(NeuroPathDetail)
    assert detail is not None
    seen: set[str] = set()
    new = first_hop_paths(memory, seed_keys, seen)
    kept: list[PathCandidate] = []
    chain = requirement = ""
    hop = 1
    if not new:
        detail.stop_reason = "no paths from seeds"
        trace.flags.append("no paths: the seeds have no triples; ranked by completion only")
        return [], chain, requirement
    while True:
        # pruning target: the last expansion requirement (the question before the model said any)
        target = requirement or ctx.question
        target_vec = ctx.question_vec if target == ctx.question else ctx.embed([target])[0]
        h = NeuroPathHop(hop=hop, goal=target, new_count=len(new))
        detail.hops.append(h)
        step = trace.add_step("hop", f"Hop {hop}")
        listed = _prune_and_list(memory, h, kept, new, target_vec, params, trace)
        lines = [listing_line(n, p) for n, p in enumerate(listed, start=1)]
        msgs = prompts.track_messages(ctx.question, hop, lines, strip_path_refs(chain),
                                      strip_path_refs(requirement), carry=params.hop_prompt == "carry")
        res = call_json(ctx.llm, msgs, prompts.TRACK_SCHEMA, f"neuropath.track.hop{hop}", _validate_track)
        h.call_index = len(trace.llm_calls)
        trace.llm_calls.extend(res.calls)
        if res.value is None:
            # Deviation ("Tracking failure" in the deviations table): the official code drops everything
            # here; memrag keeps what earlier judgements kept and lets completion run on the last good chain.
            h.failed, h.failure = True, res.error or "unreadable reply"
            detail.tracking_failed = True
            detail.stop_reason = "tracking failed"
            trace.flags.append(f"tracking failed at hop {hop} ({h.failure}); "
                               f"{len(kept)} path(s) kept so far count as valid")
            for p in kept:
                p.fate = "valid"
            step.summary = (f"{h.new_count} new paths ({h.pruned_count} pruned), {len(listed)} listed; "
                            f"the reply could not be read after one retry.")
            return kept, chain, requirement
        j = res.value
        by_number = {p.listed_as: p for p in listed}
        valid_n, expand_n = _judge(h, by_number, j)
        generated = len(valid_n)
        if params.tracker == "likelihood":
            valid_n, expand_n = likelihood.decide(ctx, trace, h, listed, (valid_n, expand_n), params)
            _set_fates(by_number, valid_n)
        if hop > 1 and (chain or requirement) and (j.reasoning_chain, j.expansion_requirement) == (chain, requirement):
            trace.flags.append(f"hop {hop} repeated hop {hop - 1}'s reasoning chain and expansion requirement "
                               f"word for word" + (" (both were in its prompt)" if params.hop_prompt == "carry" else ""))
        chain, requirement = j.reasoning_chain, j.expansion_requirement
        step.summary = (f"{h.new_count} new paths ({h.pruned_count} pruned), {len(listed)} listed; "
                        + (f"kept by likelihood: {len(valid_n)} (the generative call picked {generated}), "
                           if h.tracker == "likelihood" else f"model: {len(valid_n)} valid, ")
                        + f"{len(expand_n)} to expand, continue={j.cont}"
                        + (f"; {len(h.invalid_ids)} unusable id(s) ignored" if h.invalid_ids else "")
                        + (f"; {h.tracker_note}" if h.tracker_note else "") + ".")
        if params.expand_kept:  # the model's expand_ids stay in the trace; every kept new path grows
            expand_n = [n for n in kept_numbers(valid_n, expand_n) if by_number[n].kept_from is None]
            step.summary += f" Growing every kept path (expand_kept): {len(expand_n)}."
        valid = [by_number[n] for n in valid_n]
        if j.cont == 0 and not params.force_hops:
            detail.stop_reason = "model said stop"
            return valid, chain, requirement
        if hop >= params.max_hops:
            detail.stop_reason = "max_hops reached"
            return valid, chain, requirement
        hop += 1
        grown = grow_paths(memory, [by_number[n] for n in expand_n], hop, seen, params.coref_top,
                           params.coref_threshold)
        if not grown:
            detail.stop_reason = "no expandable paths"
            return valid, chain, requirement
        for n in expand_n:
            if by_number[n].fate != "valid":
                by_number[n].fate = "expanded"
        # Kept = valid ∪ expand, most helpful first: they count as valid if the next judgement fails.
        kept = [_kept_copy(by_number[n], hop) for n in kept_numbers(valid_n, expand_n)]
        new = grown


def _judge(h: NeuroPathHop, by_number: dict[int | None, PathCandidate], j: Judgement
           ) -> tuple[list[int], list[int]]:
    """Apply one judgement to the listed paths: ids outside the list, and expand ids naming a kept
    (not expandable) path, are ignored and counted; repeats count once. Returns (valid, expand)."""
    valid_n: list[int] = []
    expand_n: list[int] = []
    invalid: list[int] = []
    for n in j.valid_ids:
        if n not in by_number:
            invalid.append(n)
        elif n not in valid_n:
            valid_n.append(n)
    for n in j.expand_ids:
        if n not in by_number or by_number[n].kept_from is not None:
            invalid.append(n)
        elif n not in expand_n:
            expand_n.append(n)
    h.reasoning_chain, h.expansion_requirement, h.continue_ = j.reasoning_chain, j.expansion_requirement, j.cont
    h.valid_ids, h.expand_ids, h.invalid_ids = valid_n, expand_n, invalid
    _set_fates(by_number, valid_n)
    return valid_n, expand_n


def _set_fates(by_number: dict[int | None, PathCandidate], valid_n: list[int]) -> None:
    for n, p in by_number.items():
        # "expanded" is set later, only if the expansion actually runs.
        p.fate = "valid" if n in valid_n else "dropped"


def _kept_copy(p: PathCandidate, hop: int) -> PathCandidate:
    """The re-listing of a kept path in the next hop: judged again by the generative tracker (the
    likelihood tracker keeps its probability), never expanded again."""
    return PathCandidate(pid=f"{p.pid.split('@')[0]}@h{hop}", hop=p.hop, triples=list(p.triples),
                         frontier=p.frontier, frontier_name=p.frontier_name, chunk_ids=list(p.chunk_ids),
                         text=p.text, score=None, rank=None, fate="shown", parent=p.pid, kept_from=hop - 1,
                         probability=p.probability)


def _prune_and_list(memory: Memory, h: NeuroPathHop, kept: list[PathCandidate], new: list[PathCandidate],
                    target_vec: np.ndarray, params: NeuroPathParams, trace: Trace) -> list[PathCandidate]:
    """Score the new paths, prune them, cap the listing; numbers the listed paths 1..n.

    New paths are listed best first; kept paths are never pruned and come first.
    """
    scores = path_scores(memory, new, target_vec)
    order = best_first(scores)
    values = scores.tolist()
    for rank, i in enumerate(order, start=1):
        new[i].score, new[i].rank = values[i], rank
    ranked_new = [new[i] for i in order]
    if params.prune_top is not None and len(ranked_new) > params.prune_top:
        for p in ranked_new[params.prune_top:]:
            p.fate = "pruned"
        h.pruned_count = len(ranked_new) - params.prune_top
        ranked_new = ranked_new[: params.prune_top]
    listed = kept + ranked_new
    if len(listed) > params.max_listed:
        for p in listed[params.max_listed:]:
            p.fate = "unlisted"
        listed = listed[: params.max_listed]
        h.capped = True
        if "capped at max_listed" not in trace.flags:
            trace.flags.append("capped at max_listed")
    for n, p in enumerate(listed, start=1):
        p.listed_as = n
        p.fate = "shown"
    h.candidates = kept + new
    return listed


# ---------------------------------------------------------------- completion
def _complete(ctx: QueryContext, trace: Trace, params: NeuroPathParams, valid: list[PathCandidate],
              chain: str, requirement: str) -> None:
    """D_p (valid paths' chunks) then, with completion, the dense ranking for question + chain + requirement."""
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    dp: list[RankedChunk] = []
    for vrank, p in enumerate(valid, start=1):
        for cid in p.chunk_ids:
            if cid not in detail.dp_chunk_ids:
                detail.dp_chunk_ids.append(cid)
                what = ("kept path (counted valid: tracking failed)" if detail.tracking_failed
                        else f"valid #{vrank}" + (f", P(yes) {p.probability:.2f}" if p.probability is not None
                                                  else ""))
                dp.append(RankedChunk(cid, 0, None, "path",
                                      f"path {p.listed_as} of hop {detail.hops[-1].hop} ({what}): {p.text}"))
    detail.de_query = " ".join(x for x in (ctx.question, chain, requirement) if x.strip())
    step = trace.add_step("completion", "Completion")
    de: list[RankedChunk] = []
    if params.completion:
        vec = ctx.question_vec if detail.de_query == ctx.question else ctx.embed([detail.de_query])[0]
        in_dp = set(detail.dp_chunk_ids)
        completion = dense_ranking(ctx, vec)
        for r, (cid, s) in enumerate(completion, start=1):
            if cid not in in_dp:
                de.append(RankedChunk(cid, 0, s, "completion",
                                      f"completion (dense on question + chain + requirement), rank {r}"))
        placement = {"first": "first", "after_head": f"after the first {params.dp_head} completion chunk(s)",
                     "interleave": "alternating with completion, completion first",
                     "fused": f"by reciprocal-rank fusion (k {params.dp_fusion_k}) of path order and "
                              f"completion rank"}[params.dp_position]
        step.summary = (f"{len(detail.dp_chunk_ids)} chunk(s) from valid paths placed {placement} "
                        f"(dp_position={params.dp_position}) in the dense ranking for: {detail.de_query}")
    else:
        completion = []
        step.summary = f"{len(detail.dp_chunk_ids)} chunk(s) from valid paths; completion is off."
    ranked = place_dp(dp, de, params.dp_position, params.dp_head,
                      completion_order=[cid for cid, _ in completion], fusion_k=params.dp_fusion_k,
                      floor=params.dp_floor)
    for r, x in enumerate(ranked):
        x.rank = r
    if not ranked:
        trace.flags.append("no chunks retrieved: no valid paths and completion is off")
    set_ranked(trace, ctx.memory, ranked, cite_top=max(20, params.answer_passages))


def place_dp(dp: list, de: list, position: str, head: int = 2, *,
             completion_order: list[int] | None = None, fusion_k: int = 5, floor: bool = True) -> list:
    """The ranked list from D_p (valid paths' chunks) and D_e (completion minus D_p).

    first: D_p then D_e (the paper and the official code). after_head: the first `head` of
    D_e, then D_p, then the rest of D_e. interleave: D_e and D_p alternate, D_e first, so the
    completion ranking's head and the tracker's best picks both reach the top ranks whatever
    the size of D_p (a small tracker marks most listed paths valid). fused: by evidence
    (`fuse_dp`), which needs the completion ranking of every chunk (`completion_order`, D_p's
    included; D_e's order when not given; `floor` as there)."""
    if position not in DP_POSITIONS:
        raise ValueError(f"dp_position must be one of {', '.join(DP_POSITIONS)} (got {position!r})")
    if position == "first" or not de:
        return list(dp) + list(de)
    if position == "after_head":
        return list(de[:head]) + list(dp) + list(de[head:])
    if position == "interleave":
        out = []
        for i in range(max(len(dp), len(de))):
            out += de[i:i + 1] + dp[i:i + 1]
        return out
    order = completion_order if completion_order is not None else [x.chunk_id for x in de]
    return fuse_dp(dp, de, order, fusion_k, head, floor)


def fuse_dp(dp: list[RankedChunk], de: list[RankedChunk], completion_order: list[int],
            k: int, head: int = 2, floor: bool = True) -> list[RankedChunk]:
    """D_p placed by evidence: reciprocal-rank fusion of the path order (D_p's order; a chunk no
    valid path carries is tied past its end) and the completion ranking (every chunk, D_p's
    included). A valid path whose chunk completion also ranks high leads; a lone tracker pick
    competes with completion's head instead of displacing it.

    Fusion may lift a kept path's chunk, never bury it: the i-th chunk of D_p ranks no lower than
    after_head puts it (after `head` completion chunks and D_p's first i - 1). Fusion alone gave
    every other chunk the score of D_p's end + 1, so with a short D_p a kept passage that
    completion ranked low fell below completion's head by that default score (MuSiQue, the
    CARICOM question: the kept passage at rank 19). floor=False: fusion alone (runs made before
    2026-12-02 replay with it)."""
    by_id = {x.chunk_id: x for x in list(dp) + list(de)}
    comp_rank = {cid: r for r, cid in enumerate(completion_order, start=1)}
    fused = []
    for cid, _ in fuse_ranks([[x.chunk_id for x in dp], completion_order], k):
        x = by_id.get(cid)
        if x is None:
            continue
        if x.source == "path" and cid in comp_rank:
            x.why += f"; completion rank {comp_rank[cid]}"
        fused.append(x)
    if not floor:
        return fused
    latest = {x.chunk_id: head + i for i, x in enumerate(dp)}  # the last index each D_p chunk may take
    out: list[RankedChunk] = []
    placed: set[int] = set()
    waiting = iter(x for x in dp)
    due = next(waiting, None)
    for x in fused:
        while due is not None and (due.chunk_id in placed or latest[due.chunk_id] <= len(out)):
            if due.chunk_id not in placed:
                due.why += f"; lifted to rank {len(out) + 1} (a kept path's chunk ranks no lower than after_head)"
                out.append(due)
                placed.add(due.chunk_id)
            due = next(waiting, None)
        if x.chunk_id not in placed:
            out.append(x)
            placed.add(x.chunk_id)
    return out
