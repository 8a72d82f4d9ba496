"""EcphoryRAG retrieval: cues → initial activation → associative rounds → re-rank.

memrag implements the paper's Algorithm 1. Where the released EcphoryRAG code is
wrong or silent, this module does what the paper describes and says so:
- the released code never extracts cues: here the shared query-entity call gives
  them, and each cue activates its `cue_k` nearest engrams (a memrag addition);
- its "weighted" centroid gives every seed the same weight: here w_e ∝ sim(e, Q);
- it builds no entity–entity graph: here the seeds' co-occurrence neighbours are
  activated, capped per seed (hubs co-occur with thousands of entities);
- it ignores its own k parameters: here every parameter is used and recorded.
Algorithm 1's SelectSeeds (`seed_policy="paper"`) picks the most question-similar
engrams of E_all, which are always in E_init, so its rounds repeat the first;
`"moving"` seeds each round from what the previous round newly activated.

Query-time work is a few faiss searches and numpy operations over arrays kept per
engram; Python loops only run over what is shown (seeds, chosen neighbours, the
drawn subgraph), never over all engrams.
"""

from __future__ import annotations

import time
import weakref

import numpy as np

from memrag.fields import checked, params_dict
from memrag.methods.ecphory.params import EcphoryParams
from memrag.index.memory import Memory
from memrag.methods.base import QueryContext, fuse_ranks, new_trace, query_entities, set_ranked
from memrag.methods.dense.search import dense_ranking
from memrag.trace import RankedChunk, Trace
from memrag.methods.ecphory.detail import ORIGINS, ActivatedEngram, EcphoryDetail, EcphoryRound
from memrag.methods.ecphory.picture import draw

# Seed weights are similarities clipped at this floor: a cosine can be zero or negative, and a
# negative weight would push the centroid away from that seed (or make the weights' sum vanish).
SIM_FLOOR = 1e-3
CENTROID_SHOWN = 10  # centroid neighbours kept in the trace per round
NEW_LISTED = 200  # newly activated engrams listed per round (a hub neighbour can bring thousands)


# ------------------------------------------------------------------ parameters
def check_params(p: EcphoryParams) -> None:
    """Refuse parameter values the algorithm cannot honour, naming each one (the one validator,
    `memrag.fields.checked`, against the bounds each field declares)."""
    checked(EcphoryParams, p, what="EcphoryRAG")


# ------------------------------------------------------------------ per-memory lookup arrays
class _EntityTable:
    """Engram → entity node and engram → chunk arrays, each entity's mentions as a slice,
    and cached co-occurrence neighbour arrays. Built once per memory version (one Python
    pass over the engrams), so queries only do numpy work on them."""

    def __init__(self, memory: Memory) -> None:
        self.entities_ref = memory.entities  # rebuild_derived() replaces this list
        n = len(memory.engrams)
        self.n_engrams = n
        self.ent_of = np.fromiter((memory.entity_index[e.key] for e in memory.engrams), np.int64, count=n)
        self.chunk_of = np.fromiter((e.chunk_id for e in memory.engrams), np.int64, count=n)
        self.by_entity = np.argsort(self.ent_of, kind="stable")  # mentions grouped, engram order within
        self.counts = np.bincount(self.ent_of, minlength=len(memory.entities))
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)
        self._neighbours: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def fits(self, memory: Memory) -> bool:
        return self.entities_ref is memory.entities and self.n_engrams == len(memory.engrams)

    def mentions(self, entity: int) -> np.ndarray:
        s = self.starts[entity]
        return self.by_entity[s:s + self.counts[entity]]

    def best_similarity(self, q_sims: np.ndarray) -> np.ndarray:
        """Per entity node: the highest question similarity among its mentions."""
        return np.maximum.reduceat(q_sims[self.by_entity], self.starts)

    def neighbours(self, memory: Memory, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(entity indices, edge weights) of a node's co-occurrence neighbours."""
        if key not in self._neighbours:
            g = memory.cooccurrence_graph
            adj = g[key] if key in g else {}
            idx = np.fromiter((memory.entity_index[k] for k in adj), np.int64, count=len(adj))
            w = np.fromiter((d.get("weight", 1) for d in adj.values()), np.float64, count=len(adj))
            self._neighbours[key] = (idx, w)
        return self._neighbours[key]


_TABLES: "weakref.WeakKeyDictionary[Memory, _EntityTable]" = weakref.WeakKeyDictionary()


def _table(memory: Memory) -> _EntityTable:
    t = _TABLES.get(memory)
    if t is None or not t.fits(memory):
        t = _EntityTable(memory)
        _TABLES[memory] = t
    return t


# ------------------------------------------------------------------ activation state
class _Activation:
    """E_all as it grows, one array slot per engram: the round, origin, via text, source
    node and step of its first activation (round -1 = not active), plus the order."""

    def __init__(self, memory: Memory, q_sims: np.ndarray) -> None:
        n = len(memory.engrams)
        self.memory = memory
        self.q_sims = q_sims
        self.round_of = np.full(n, -1, np.int32)
        self.origin_of = np.zeros(n, np.int8)
        self.via_of = np.zeros(n, np.int32)
        self.source_of = np.zeros(n, np.int32)
        self.step_of = np.zeros(n, np.int32)
        self.vias: list[str] = [""]
        self.sources: list[str] = ["q"]  # graph node ids
        self._codes: dict[int, dict[str, int]] = {id(self.vias): {"": 0}, id(self.sources): {"q": 0}}
        self._parts: list[np.ndarray] = []

    def _code(self, table: list[str], text: str) -> int:
        codes = self._codes[id(table)]
        if text not in codes:
            codes[text] = len(table)
            table.append(text)
        return codes[text]

    def _coded(self, table: list[str], value: str | list[str], keep: np.ndarray) -> np.ndarray | int:
        if isinstance(value, str):
            return self._code(table, value)
        return np.array([self._code(table, value[i]) for i in keep], np.int32)

    def inactive(self, ids: np.ndarray) -> np.ndarray:
        return self.round_of[ids] < 0

    def activate(self, ids, round_: int, origin: str, via: str | list[str], source: str | list[str],
                 step: int) -> np.ndarray:
        """Activate those of `ids` not yet active, in order; `via`/`source` are one text or one per id.
        Returns the newly activated ids."""
        ids = np.asarray(ids, np.int64)
        if not len(ids):
            return ids
        _, first = np.unique(ids, return_index=True)
        keep = np.sort(first)
        keep = keep[self.inactive(ids[keep])]
        new = ids[keep]
        if len(new):
            self.round_of[new] = round_
            self.origin_of[new] = ORIGINS.index(origin)
            self.step_of[new] = step
            self.via_of[new] = self._coded(self.vias, via, keep)
            self.source_of[new] = self._coded(self.sources, source, keep)
            self._parts.append(new)
        return new

    @property
    def order(self) -> np.ndarray:
        """Every active engram, in activation order."""
        return np.concatenate(self._parts) if self._parts else np.zeros(0, np.int64)

    def record(self, eid: int) -> ActivatedEngram:
        eid = int(eid)
        e = self.memory.engrams[eid]
        return ActivatedEngram(eid, e.key, e.name, e.type, e.description, e.chunk_id, float(self.q_sims[eid]),
                               int(self.round_of[eid]), ORIGINS[self.origin_of[eid]], self.vias[self.via_of[eid]])

    def view(self, eid: int, round_: int, origin: str, via: str = "") -> ActivatedEngram:
        """A record for display that activates nothing (centroid neighbours)."""
        e = self.memory.engrams[int(eid)]
        return ActivatedEngram(int(eid), e.key, e.name, e.type, e.description, e.chunk_id,
                               float(self.q_sims[eid]), round_, origin, via)


def _top(scores: np.ndarray, pool: np.ndarray, k: int) -> np.ndarray:
    """The k members of `pool` with the highest scores, best first; ties keep pool order."""
    if not len(pool) or k <= 0:
        return pool[:0]
    s = scores[pool]
    if k < len(pool):
        cut = np.partition(-s, k - 1)[k - 1]  # the k-th best score; keep everything as good as it
        idx = np.flatnonzero(-s <= cut)
        idx = idx[np.argsort(-s[idx], kind="stable")][:k]
    else:
        idx = np.argsort(-s, kind="stable")
    return pool[idx]


def _dedupe(ids) -> list[int]:
    return list(dict.fromkeys(int(i) for i in ids))


def fact_line(e: ActivatedEngram) -> str:
    """An E_final engram as the plain-text line the answer step reads. The type is said only
    when it says something ("other" is the extractor's shrug, and imported mentions are all it)."""
    name = f"{e.name} ({e.type})" if e.type and e.type != "other" else e.name
    return f"{name}: {e.description}" if e.description else name


# ------------------------------------------------------------------ the method
def retrieve(ctx: QueryContext, params: EcphoryParams | None = None) -> Trace:
    """EcphoryRAG retrieval; the answer is added afterwards by the shared answer step."""
    params = params or EcphoryParams()
    check_params(params)
    t0 = time.perf_counter()
    memory = ctx.memory
    trace = new_trace(ctx, "ecphory", params_dict(params))
    detail = EcphoryDetail()
    trace.details[trace.method] = detail
    table = _table(memory)
    vq = np.asarray(ctx.question_vec, np.float32).reshape(1, -1)
    n_engrams = len(memory.engrams)
    if not n_engrams:
        trace.flags.append("this memory has no engrams (extraction found no entities): "
                           "only directly retrieved chunks can be used")

    # 1. cues
    cue_step = trace.add_step("cues", "Cues")
    cues = _cues(ctx, trace)
    detail.cues = cues
    searched = cues if n_engrams and params.cue_k else []
    # the question and every cue scored against all engrams in one pass over the vectors
    # (memory bandwidth is the cost: a search per cue reads 25k x 384 floats each time)
    sims = memory.engram_vecs @ np.vstack([vq, ctx.embed(searched) if searched else vq[:0]]).T
    q_sims = np.ascontiguousarray(sims[:, 0], dtype=np.float32)
    act = _Activation(memory, q_sims)
    cue_ids: list[int] = []  # cue hits in cue order, then rank
    cue_of: list[int] = []
    every = np.arange(n_engrams)
    for ci, cue in enumerate(searched):
        detail.cue_hits[cue] = [int(i) for i in _top(sims[:, 1 + ci], every, params.cue_k)]
        cue_ids += detail.cue_hits[cue]
        cue_of += [ci] * len(detail.cue_hits[cue])
    cue_step.summary = (
        (f"Cue entities from the shared query-entity call: {', '.join(cues)}. Each cue activates its "
         f"{params.cue_k} nearest engrams by cosine (a memrag addition; the released code extracts no cues).")
        if cues else "No cue entities: the initial activation comes from the question vector alone.")

    # 2. initial activation: query hits by rank, then cue hits
    init_step = trace.add_step("initial", "Initial activation")
    query_hits = _top(q_sims, np.arange(n_engrams), params.k_initial)
    initial = np.concatenate([
        act.activate(query_hits, 0, "query", "", "q", init_step.index),
        act.activate(cue_ids, 0, "cue", [cues[c] for c in cue_of], [f"cue:{c}" for c in cue_of],
                     init_step.index)])
    detail.initial = [act.record(e) for e in initial]
    dense = dense_ranking(ctx)
    chunk_cos = dict(dense)
    detail.c_assoc = _dedupe(e.chunk_id for e in detail.initial)
    detail.c_direct = [cid for cid, _ in dense[: params.direct_chunks]]
    c_init = _dedupe(detail.c_assoc + detail.c_direct)
    n_query = len(query_hits)
    init_step.summary = (
        f"E_init: the {n_query} engrams nearest the question plus {len(initial) - n_query} cue hits. "
        f"C_assoc = their {len(detail.c_assoc)} source chunks in activation order; C_direct = the "
        f"{len(detail.c_direct)} chunks nearest the question; C_init = C_assoc then C_direct "
        f"({len(c_init)} chunks, not re-sorted by chunk cosine).")

    # 3. associative rounds
    seed_steps = _rounds(ctx, params, trace, detail, act, table, initial)

    # 4. re-rank: every engram of E_all by cosine to the question, one engram per entity node
    rerank_step = trace.add_step("rerank", "Re-rank")
    order = act.order
    detail.final = [act.record(e) for e in _best_per_entity(q_sims, order, table.ent_of, params.k_final)]
    rerank_step.summary = (
        f"All {len(order)} activated engrams ranked by cosine to the question; E_final = the best "
        f"{len(detail.final)} (k_final {params.k_final}), one engram per entity node.")

    # 5. context and 6. ranked list
    context_step = trace.add_step("context", "Context")
    trace.context_facts = [fact_line(e) for e in detail.final[: params.answer_facts]]
    ranked, provenance = _ranked(params, detail, dense, chunk_cos, act, table)
    set_ranked(trace, memory, ranked, cite_top=max(20, params.context_chunks))
    detail.context_chunk_ids = [r.chunk_id for r in ranked[: params.context_chunks]]
    listed = sum(1 for r in ranked if r.source != "dense-tail")
    tail_in_context = sum(1 for r in ranked[: params.context_chunks] if r.source == "dense-tail")
    if tail_in_context:
        trace.flags.append(f"the context list has only {listed} chunks: the answer step also reads "
                           f"{tail_in_context} chunk(s) from the dense tail")
    context_step.summary = (
        f"The first {params.context_chunks} chunks of "
        + {"c_init": "C_init (C_assoc then C_direct)",
           "activated": "the chunks of E_final in re-rank order, then C_init",
           "fused": (f"the fused ranking (1/({params.fusion_k} + activation rank) + 1/({params.fusion_k} + "
                     "similarity rank))")}[params.context_source]
        + f", then {len(trace.context_facts)} E_final fact lines (answer_facts {params.answer_facts})"
        + f". The ranked list continues the context list ({listed} chunks), then the rest of the dense "
          "ranking (dense-tail) so recall@k is defined.")

    draw(trace, memory, detail, act, table, cues, provenance, seed_steps,
         (cue_step.index, init_step.index, rerank_step.index, context_step.index))
    trace.retrieval_seconds = time.perf_counter() - t0
    return trace


def _cues(ctx: QueryContext, trace: Trace) -> list[str]:
    """Cue entities from the shared query-entity call; a failed or empty call is flagged, not fatal."""
    if ctx.llm is None:
        trace.flags.append("no LLM: no cues were extracted; initial activation from the question vector only")
        return []
    cues, calls, error = query_entities(ctx)
    trace.llm_calls.extend(calls)
    if error:
        trace.flags.append(f"the cue call failed ({error}): initial activation from the question vector only")
        return []
    if not cues:
        trace.flags.append("the cue call found no entities in the question: "
                           "initial activation from the question vector only")
    return cues


def _rounds(ctx: QueryContext, params: EcphoryParams, trace: Trace, detail: EcphoryDetail,
            act: _Activation, table: _EntityTable, initial: np.ndarray) -> dict[int, list[str]]:
    """Associative search: seeds → similarity-weighted centroid → its nearest engrams (+ graph).
    Returns, per round step, the seed entity node ids."""
    memory = ctx.memory
    vecs = memory.engram_vecs
    expand = params.graph_expansion and params.graph_neighbours > 0 and len(memory.engrams) > 0
    best_sim = table.best_similarity(act.q_sims) if expand else None
    seed_steps: dict[int, list[str]] = {}
    previous_new = initial
    previous_seeds: list[int] | None = None
    for r in range(1, params.rounds + 1):
        step = trace.add_step("round", f"Round {r}")
        pool = previous_new if params.seed_policy == "moving" else act.order
        if not len(pool):
            why = (f"round {r} not run: round {r - 1} activated no new engrams (seed_policy=moving)"
                   if params.seed_policy == "moving" and r > 1 else f"round {r} not run: nothing is activated")
            detail.rounds.append(EcphoryRound(r, [], [], note=why))
            trace.flags.append(why)
            step.summary = why
            for later in range(r + 1, params.rounds + 1):
                trace.add_step("round", f"Round {later}", f"round {later} not run: the search stopped at round {r}")
            break
        seeds = _top(act.q_sims, pool, params.seeds)
        w = np.maximum(act.q_sims[seeds].astype(np.float64), SIM_FLOOR)
        w /= w.sum()
        centroid = (w[:, None] * vecs[seeds]).sum(axis=0)
        norm = float(np.linalg.norm(centroid))
        seed_ids = [int(s) for s in seeds]
        rnd = EcphoryRound(r, seed_ids, [float(x) for x in w])
        semantic = graph = np.zeros(0, np.int64)
        if norm > 0:
            centroid_sims = vecs @ (centroid / norm).astype(np.float32)
            ids = _top(centroid_sims, np.arange(len(vecs)), 3 * params.k_initial)
            scores = centroid_sims[ids]
            rnd.centroid_neighbours = [act.view(i, r, "semantic", f"round {r} centroid")
                                       for i in ids[:CENTROID_SHOWN]]
            rnd.centroid_scores = [float(s) for s in scores[:CENTROID_SHOWN]]
            fresh = ids[act.inactive(ids)]
            if len(fresh):
                # a semantic activation is drawn from the seed it lies nearest to
                nearest = seeds[np.argmax(vecs[fresh] @ vecs[seeds].T, axis=1)]
                rows = [memory.engrams[int(s)] for s in nearest]
                vias = [f"round {r} centroid (nearest seed: {e.name})" for e in rows]
                semantic = act.activate(fresh, r, "semantic", vias, [f"e:{e.key}" for e in rows], step.index)
        if best_sim is not None:
            graph = _expand(memory, table, act, seeds, best_sim, params.graph_neighbours, r, step.index)
        new = np.concatenate([semantic, graph])
        rnd.new = [act.record(e) for e in new[:NEW_LISTED]]
        rnd.new_counts = {"semantic": len(semantic), "graph": len(graph)}
        if len(new) > NEW_LISTED:
            trace.flags.append(f"round {r} newly activated {len(new)} engrams; the trace lists the first {NEW_LISTED}")
        if not len(new):
            rnd.note = (f"round {r} added nothing new: seeds identical to round {r - 1}"
                        if previous_seeds == seed_ids else f"round {r} added nothing new")
            trace.flags.append(rnd.note)
        detail.rounds.append(rnd)
        seed_steps[step.index] = [f"e:{memory.engrams[s].key}" for s in seed_ids]
        seed_text = ", ".join(f"{memory.engrams[s].name} ({x:.2f})" for s, x in zip(seed_ids, rnd.weights))
        step.summary = (
            f"Seeds ({params.seed_policy}): {seed_text}. Weights ∝ similarity to the question. "
            f"Newly activated: {len(semantic)} near the weighted centroid, {len(graph)} by co-occurrence."
            + (f" {rnd.note}." if rnd.note else ""))
        previous_new, previous_seeds = new, seed_ids
    return seed_steps


def _expand(memory: Memory, table: _EntityTable, act: _Activation, seeds: np.ndarray, best_sim: np.ndarray,
            limit: int, round_: int, step: int) -> np.ndarray:
    """Activate every mention of at most `limit` co-occurrence neighbours per seed entity."""
    new = []
    done: set[str] = set()
    for s in seeds:
        seed = memory.engrams[int(s)]
        if seed.key in done:
            continue
        done.add(seed.key)
        nbr, weight = table.neighbours(memory, seed.key)
        if not len(nbr):
            continue
        # by edge weight, then by the neighbour's best mention similarity to the question
        chosen = nbr[np.lexsort((-best_sim[nbr], -weight))[:limit]]
        ids = np.concatenate([table.mentions(int(j)) for j in chosen])
        new.append(act.activate(ids, round_, "graph", seed.name, f"e:{seed.key}", step))
    return np.concatenate(new) if new else np.zeros(0, np.int64)


def _best_per_entity(q_sims: np.ndarray, ids: np.ndarray, ent_of: np.ndarray, k: int) -> np.ndarray:
    """The k best of `ids` by question similarity, keeping only each entity node's best mention."""
    ranked = _top(q_sims, ids, len(ids))
    _, first = np.unique(ent_of[ranked], return_index=True)
    return ranked[np.sort(first)[:k]]


def activation_ranking(act: "_Activation", table: "_EntityTable") -> list[tuple[int, int]]:
    """Chunks of every activated engram (all rounds), each at its best activated engram by
    question similarity: [(chunk id, that engram id)], best first."""
    order = act.order
    if not len(order):
        return []
    best = _top(act.q_sims, order, len(order))
    chunks = table.chunk_of[best]
    _, first = np.unique(chunks, return_index=True)
    keep = np.sort(first)
    return [(int(chunks[i]), int(best[i])) for i in keep]


def _ranked(params: EcphoryParams, detail: EcphoryDetail, dense: list[tuple[int, float]],
            chunk_cos: dict[int, float], act: "_Activation | None" = None,
            table: "_EntityTable | None" = None) -> tuple[list[RankedChunk], dict[int, ActivatedEngram]]:
    """The context list continued to its end, then the dense tail; and which engram brought each chunk."""
    if params.context_source == "fused":
        assert act is not None and table is not None
        return _fused(params, dense, act, table)
    entries: dict[int, tuple[str, str]] = {}
    provenance: dict[int, ActivatedEngram] = {}

    def put(cid: int, source: str, why: str, engram: ActivatedEngram | None = None) -> None:
        if cid not in entries:
            entries[cid] = (source, why)
            if engram is not None:
                provenance[cid] = engram

    def how(e: ActivatedEngram) -> str:
        brought = {"query": "nearest the question", "cue": f"via cue '{e.via}'"}.get(
            e.origin, f"{e.origin}, round {e.round}, {e.via}")
        return f"'{e.name}' ({brought}; similarity {e.similarity:.3f})"

    if params.context_source == "activated":
        for i, e in enumerate(detail.final, start=1):
            put(e.chunk_id, "activated", f"E_final #{i}: engram {how(e)}", e)
    first_engram: dict[int, ActivatedEngram] = {}
    for e in detail.initial:
        first_engram.setdefault(e.chunk_id, e)
    for i, cid in enumerate(detail.c_assoc, start=1):
        put(cid, "c_assoc", f"C_assoc #{i}: source of engram {how(first_engram[cid])}", first_engram[cid])
    for i, cid in enumerate(detail.c_direct, start=1):
        put(cid, "c_direct", f"C_direct #{i}: chunk cosine to the question {chunk_cos[cid]:.3f}")
    ranked = [RankedChunk(cid, r, chunk_cos.get(cid), src, why) for r, (cid, (src, why)) in enumerate(entries.items())]
    tail_why = "not reached by activation: rest of the dense ranking, so recall@k is defined"
    ranked += [RankedChunk(cid, len(ranked) + r, s, "dense-tail", tail_why)
               for r, (cid, s) in enumerate((c, s) for c, s in dense if c not in entries)]
    return ranked, provenance


def _fused(params: EcphoryParams, dense: list[tuple[int, float]], act: "_Activation",
           table: "_EntityTable") -> tuple[list[RankedChunk], dict[int, ActivatedEngram]]:
    """Every chunk by reciprocal-rank fusion of where activation puts it and where its own
    similarity to the question puts it: a chunk rises when both agree, and one that only the
    associative rounds reached can still enter the context."""
    by_activation = activation_ranking(act, table)
    act_rank = {cid: (r, eid) for r, (cid, eid) in enumerate(by_activation, start=1)}
    sim_rank = {cid: r for r, (cid, _) in enumerate(dense, start=1)}
    fused = fuse_ranks([[c for c, _ in by_activation], [c for c, _ in dense]], params.fusion_k)
    chunk_cos = dict(dense)
    ranked, provenance = [], {}
    for r, (cid, score) in enumerate(fused):
        if cid in act_rank:
            ar, eid = act_rank[cid]
            e = act.record(eid)
            provenance[cid] = e
            origin = {"query": "nearest the question", "cue": f"via cue '{e.via}'"}.get(
                e.origin, f"{e.origin}, round {e.round}")
            why = (f"fused {score:.4f}: activation rank {ar} (engram '{e.name}', {origin}, similarity "
                   f"{e.similarity:.3f}) + similarity rank {sim_rank.get(cid, '–')}")
            source = "fused"
        else:
            why = f"fused {score:.4f}: not activated; similarity rank {sim_rank.get(cid, '–')}"
            source = "similarity"
        ranked.append(RankedChunk(cid, r, chunk_cos.get(cid), source, why))
    return ranked, provenance
