"""HippoRAG 2 retrieval ("From RAG to Memory", Gutiérrez et al., 2025) on memrag's memory.

Online retrieval only, on the graph memrag's one extraction pass already holds (no indexing calls):
1. query to fact: every distinct triple is scored by the cosine of its stored vector to the
   question, min-max normalised over all facts; the best `linking_top_k` are the retrieved facts;
2. recognition memory: one LLM call keeps the facts relevant to the question (switched off, every
   retrieved fact is kept: the retrieval-only variant). When none is kept or the call fails, the
   ranking is dense retrieval, as in the official code, and the trace says so;
3. seeds: a phrase of a kept fact gets the fact's score divided by the number of passages that
   contain the phrase, averaged over the kept facts naming it; the `linking_top_k` heaviest phrases
   stay seeds. Every passage node gets its min-max-normalised dense score × `passage_node_weight`;
4. personalised PageRank (igraph, prpack, undirected, weighted) from that reset vector;
5. passages ranked by their PageRank mass: the list covers every chunk.

The graph (phrase nodes = entity nodes, passage nodes = chunks; triple, synonymy and
passage–phrase context edges) is built once per memory and synonymy setting and cached; its
build time is recorded in the trace but kept out of `retrieval_seconds`.
"""

from __future__ import annotations

import re
import time
import weakref
from typing import Any

import igraph as ig
import numpy as np

from memrag import prompts
from memrag.fields import checked, params_dict
from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.index.memory import Memory
from memrag.llm.jsoncall import call_json
from memrag.methods.base import QueryContext, new_trace, set_ranked
from memrag.methods.dense.search import dense_ranking
from memrag.trace import RankedChunk, Trace
from memrag.methods.hipporag2.detail import HippoRAG2Detail, NodeMass, PassageSeed, PhraseSeed, RetrievedFact
from memrag.methods.hipporag2.picture import draw, draw_fallback, draw_seeds, mass_text
from memrag.methods.picture_kit import question_node

TOP_NODES = 30  # nodes listed (and drawn) by PageRank mass
PASSAGE_SEEDS_LISTED = 10  # every passage is a seed; the trace lists the heaviest
# The official code gives no synonymy edges to phrases of two letters or digits or fewer ("US", "9").
_MIN_SYNONYM_CHARS = 3
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
EDGE_KINDS = ("triple", "synonymy", "context")


# ------------------------------------------------------------------ parameters
def check_params(p: HippoRAG2Params) -> None:
    """Refuse parameter values the algorithm cannot honour, naming each one (the one validator,
    `memrag.fields.checked`, against the bounds each field declares)."""
    checked(HippoRAG2Params, p, what="HippoRAG 2")


def min_max(x: np.ndarray) -> np.ndarray:
    """Scaled to [0, 1]; all equal → all ones (the official code's rule)."""
    if not len(x):
        return x.astype(np.float64)
    lo, hi = float(x.min()), float(x.max())
    if hi == lo:
        return np.ones_like(x, dtype=np.float64)
    return (x.astype(np.float64) - lo) / (hi - lo)


# ------------------------------------------------------------------ the graph, once per memory
class HippoGraph:
    """Phrase nodes 0..P-1 (memory.entities order), passage nodes P..P+C-1 (chunk order).

    Edge weights follow the official graph, which stores each pair once per direction and runs
    PageRank undirected, so the two directions add up: a triple between two phrases counts 2 per
    extracted instance, a synonymy edge its cosine once per side that finds the other among its
    neighbours, a passage–phrase context edge 1. The facts are the memory's distinct triples
    (head key, relation, tail key), each with the vector of its first instance."""

    def __init__(self, memory: Memory, threshold: float, neighbours: int) -> None:
        t0 = time.perf_counter()
        self.entities_ref = memory.entities  # rebuild_derived() replaces this list
        self.sizes = (len(memory.chunks), len(memory.triples))
        self.n_phrases = len(memory.entities)
        self.n_nodes = self.n_phrases + len(memory.chunks)
        self._facts(memory)
        self.passage_count = np.array([len(e.chunk_ids) for e in memory.entities], np.int64)
        weight: dict[tuple[int, int], float] = {}
        kinds: dict[tuple[int, int], set[str]] = {}

        def add(a: int, b: int, w: float, kind: str) -> None:
            pair = (a, b) if a < b else (b, a)
            weight[pair] = weight.get(pair, 0.0) + w
            kinds.setdefault(pair, set()).add(kind)

        index = memory.entity_index
        for t in memory.triples:
            h, tl = index.get(t.head_key), index.get(t.tail_key)
            if h is not None and tl is not None and h != tl:
                add(h, tl, 2.0, "triple")
        for a, b, cos in self._synonyms(memory, threshold, neighbours):
            add(a, b, cos, "synonymy")
        for i, e in enumerate(memory.entities):
            for c in e.chunk_ids:
                add(i, self.n_phrases + c, 1.0, "context")
        pairs = list(weight)
        self.graph = ig.Graph(n=self.n_nodes, edges=pairs, directed=False)
        self.graph.es["weight"] = [weight[p] for p in pairs]
        # a pair that is both a triple and a synonymy edge is drawn as the triple
        self.graph.es["kind"] = [next(k for k in EDGE_KINDS if k in kinds[p]) for p in pairs]
        self.counts = {"phrase nodes": self.n_phrases, "passage nodes": len(memory.chunks),
                       "facts": len(self.fact_rows),
                       **{f"{k} edges": sum(1 for p in pairs if k in kinds[p]) for k in EDGE_KINDS}}
        self.seconds = time.perf_counter() - t0

    def _facts(self, memory: Memory) -> None:
        fact_of: dict[tuple[str, str, str], int] = {}
        self.fact_rows: list[int] = []  # the triple id standing for each fact
        self.fact_chunks: list[list[int]] = []
        for t in memory.triples:
            k = (t.head_key, " ".join(t.relation.lower().split()), t.tail_key)
            f = fact_of.setdefault(k, len(self.fact_rows))
            if f == len(self.fact_rows):
                self.fact_rows.append(t.triple_id)
                self.fact_chunks.append([])
            if t.chunk_id not in self.fact_chunks[f]:
                self.fact_chunks[f].append(t.chunk_id)
        self.fact_vecs = (np.ascontiguousarray(memory.triple_vecs[self.fact_rows], dtype=np.float32)
                          if self.fact_rows else np.zeros((0, memory.dim), np.float32))

    @staticmethod
    def _synonyms(memory: Memory, threshold: float, neighbours: int) -> list[tuple[int, int, float]]:
        """(phrase, neighbour, cosine) for each phrase's nearest other phrases by stored name
        vector, cosine ≥ threshold, at most `neighbours` each (one entry per direction). A
        coreference link a user removed (memrag.index.edits) is no synonymy edge either."""
        n = len(memory.entities)
        if not n or neighbours <= 0:
            return []
        scores, ids = memory.index("entities").search(memory.entity_vecs,
                                                       min(n, neighbours + 1 + memory.unlink_depth()))
        out = []
        for i, e in enumerate(memory.entities):
            if len(_NOT_ALNUM.sub("", e.name)) < _MIN_SYNONYM_CHARS:
                continue
            taken = 0
            for s, j in zip(scores[i], ids[i]):
                if j < 0 or s < threshold or taken >= neighbours:
                    break
                if j != i and not memory.is_unlinked(e.key, memory.entities[j].key):
                    out.append((i, int(j), float(s)))
                    taken += 1
        return out

    def fits(self, memory: Memory) -> bool:
        return self.entities_ref is memory.entities and self.sizes == (len(memory.chunks), len(memory.triples))


_GRAPHS: "weakref.WeakKeyDictionary[Memory, dict[tuple[float, int], HippoGraph]]" = weakref.WeakKeyDictionary()


def graph_for(memory: Memory, params: HippoRAG2Params) -> tuple[HippoGraph, bool]:
    """The memory's HippoRAG graph for these synonymy settings, and whether it was built just now."""
    per_memory = _GRAPHS.setdefault(memory, {})
    key = (round(float(params.synonymy_threshold), 6), int(params.synonymy_neighbours))
    g = per_memory.get(key)
    if g is not None and g.fits(memory):
        return g, False
    g = HippoGraph(memory, *key)
    per_memory[key] = g
    return g, True


# ------------------------------------------------------------------ recognition memory
def _validate_keep(n: int):
    def validate(obj: Any) -> list[int]:
        if isinstance(obj, dict):
            obj = obj.get("keep")
        if not isinstance(obj, list):
            raise ValueError('expected {"keep": [numbers of the facts to keep]}')
        out: list[int] = []
        for x in obj:
            if isinstance(x, str) and x.strip().isdigit():
                x = int(x.strip())
            if isinstance(x, bool) or not isinstance(x, int):
                raise ValueError(f"keep must list fact numbers, got {x!r}")
            if not 1 <= x <= n:
                raise ValueError(f"fact number {x} is not in the list (1 to {n})")
            if x not in out:
                out.append(x)
        return out
    return validate


def fact_line(f: RetrievedFact) -> str:
    return f"{f.head} | {f.relation} | {f.tail}"


def _recognise(ctx: QueryContext, trace: Trace, detail: HippoRAG2Detail) -> list[RetrievedFact]:
    """Mark each retrieved fact's verdict; return the kept ones (an empty list means: fall back)."""
    if not detail.recognition or not detail.facts:
        return list(detail.facts)
    if ctx.llm is None:
        raise ValueError("HippoRAG 2 with recognition memory needs an LLM (or set recognition to false)")
    res = call_json(ctx.llm, prompts.recognition_messages(ctx.question, [fact_line(f) for f in detail.facts]),
                    prompts.RECOGNITION_SCHEMA, "hipporag2.recognition", _validate_keep(len(detail.facts)))
    trace.llm_calls.extend(res.calls)
    detail.recognition_call = len(trace.llm_calls) - 1 if res.calls else None
    if res.value is None:
        detail.recognition_error = res.error or "no reply"
        for f in detail.facts:
            f.verdict = "unjudged"
        return []
    keep = res.value
    for i, f in enumerate(detail.facts, start=1):
        f.verdict = "kept" if i in keep else "dropped"
    return [detail.facts[i - 1] for i in keep]  # the model's order, as the official filter returns them


# ------------------------------------------------------------------ seeds
def phrase_seeds(memory: Memory, graph: HippoGraph, kept: list[RetrievedFact], top_k: int) -> list[PhraseSeed]:
    """Each phrase of a kept fact: the mean over those facts of (fact score / passages containing
    the phrase); the top_k heaviest stay (ties: first named first)."""
    sums: dict[int, float] = {}
    scores: dict[int, list[float]] = {}
    for f in kept:
        for key in (f.head_key, f.tail_key):
            i = memory.entity_index.get(key)
            if i is None:  # a value endpoint (a clause, a number) has no phrase node
                continue
            n = int(graph.passage_count[i])
            sums[i] = sums.get(i, 0.0) + (f.score / n if n else f.score)
            scores.setdefault(i, []).append(f.score)
    order = sorted(sums, key=lambda i: -sums[i] / len(scores[i]))[:top_k]  # stable: first named first
    out = []
    for i in order:
        e = memory.entities[i]
        out.append(PhraseSeed(e.key, e.name, sums[i] / len(scores[i]), scores[i], int(graph.passage_count[i]),
                              list(e.chunk_ids)))
    return out


# ------------------------------------------------------------------ the method
def retrieve(ctx: QueryContext, params: HippoRAG2Params | None = None) -> Trace:
    """HippoRAG 2 retrieval; the answer is added afterwards by the shared answer step."""
    params = params or HippoRAG2Params()
    check_params(params)
    memory = ctx.memory
    graph, built = graph_for(memory, params)
    t0 = time.perf_counter()
    trace = new_trace(ctx, "hipporag2", params_dict(params))
    detail = HippoRAG2Detail(recognition=params.recognition, graph=dict(graph.counts), graph_built=built,
                             graph_seconds=graph.seconds if built else 0.0)
    trace.details[trace.method] = detail
    trace.nodes.append(question_node(trace))
    dense = dense_ranking(ctx)

    # 1. query to fact
    step = trace.add_step("facts", "Query to fact")
    cos = graph.fact_vecs @ np.asarray(ctx.question_vec, np.float32)
    norm = min_max(cos)
    for f in np.argsort(-norm, kind="stable")[: params.linking_top_k]:
        t = memory.triples[graph.fact_rows[f]]
        detail.facts.append(RetrievedFact(int(f), t.head, t.relation, t.tail, t.head_key, t.tail_key,
                                          float(cos[f]), float(norm[f]), list(graph.fact_chunks[f])))
    step.summary = (f"{len(detail.facts)} of {len(graph.fact_rows)} distinct facts retrieved by the cosine of "
                    f"their triple vectors to the question (min-max normalised; linking_top_k "
                    f"{params.linking_top_k}). Graph: "
                    + ", ".join(f"{v} {k}" for k, v in graph.counts.items()) + ".")

    # 2. recognition memory
    step = trace.add_step("recognition", "Recognition memory")
    kept = _recognise(ctx, trace, detail)
    if not params.recognition:
        step.summary = "Recognition memory is off (retrieval-only variant): every retrieved fact is kept."
    elif detail.recognition_error:
        step.summary = f"The recognition call failed ({detail.recognition_error}): no fact is kept."
    else:
        step.summary = f"The model kept {len(kept)} of {len(detail.facts)} retrieved facts."

    if not kept:
        why = ("the memory has no facts" if not detail.facts else
               f"the recognition call failed: {detail.recognition_error}" if detail.recognition_error
               else "recognition memory kept no fact")
        return _fallback(ctx, trace, detail, dense, params, why, t0)

    # 3. seeds
    step = trace.add_step("seeds", "Seeds")
    detail.phrase_seeds = phrase_seeds(memory, graph, kept, params.linking_top_k)
    reset = np.zeros(graph.n_nodes, np.float64)
    for s in detail.phrase_seeds:
        reset[memory.entity_index[s.key]] = s.weight
    chunk_cos = np.empty(len(memory.chunks), np.float64)
    dense_rank = np.empty(len(memory.chunks), np.int64)
    for r, (cid, c) in enumerate(dense):
        chunk_cos[cid], dense_rank[cid] = c, r
    passage_norm = min_max(chunk_cos)
    passage_weight = passage_norm * params.passage_node_weight
    reset[graph.n_phrases:] = passage_weight
    detail.passage_seed_total = float(passage_weight.sum())
    detail.passage_seeds = [PassageSeed(cid, float(passage_norm[cid]), float(passage_weight[cid]))
                            for cid, _ in dense[:PASSAGE_SEEDS_LISTED]]
    step.summary = (f"{len(detail.phrase_seeds)} phrase seeds (fact score / passages containing the phrase, "
                    f"averaged over its kept facts): "
                    + ", ".join(f"{s.name} {s.weight:.3g}" for s in detail.phrase_seeds)
                    + f". Every passage seeds with its normalised dense score × {params.passage_node_weight} "
                    f"(together {detail.passage_seed_total:.3g}).")
    if reset.sum() <= 0:
        return _fallback(ctx, trace, detail, dense, params, "no seed has any weight", t0)
    draw_seeds(trace, detail.phrase_seeds, step.index)

    # 4. personalised PageRank
    step = trace.add_step("pagerank", "Personalised PageRank")
    mass = np.asarray(graph.graph.personalized_pagerank(
        damping=params.damping, directed=False, weights="weight", reset=reset.tolist(),
        implementation="prpack"), np.float64)
    detail.phrase_mass = float(mass[: graph.n_phrases].sum())
    for s in detail.phrase_seeds:
        s.mass = float(mass[memory.entity_index[s.key]])
    top = np.argsort(-mass, kind="stable")[:TOP_NODES]
    for v in top:
        v = int(v)
        if v < graph.n_phrases:
            e = memory.entities[v]
            detail.top_nodes.append(NodeMass(f"e:{e.key}", e.name, "phrase", float(mass[v]), float(reset[v])))
        else:
            c = memory.chunks[v - graph.n_phrases]
            detail.top_nodes.append(NodeMass(f"c:{c.chunk_id}", c.title, "passage", float(mass[v]), float(reset[v])))
    step.summary = (f"PageRank with damping {params.damping} from the seeds (igraph, undirected, weighted): "
                    f"{detail.phrase_mass:.1%} of the mass ends on phrase nodes, the rest on passages.")

    # 5. passages by mass
    ranked_step = trace.add_step("ranked", "Passages by PageRank mass")
    passage_mass = mass[graph.n_phrases:]
    order = np.lexsort((dense_rank, -passage_mass))  # ties: dense order
    seeded_in: dict[int, list[str]] = {}
    for s in detail.phrase_seeds:
        for c in s.chunk_ids:
            seeded_in.setdefault(c, []).append(s.name)
    ranked = []
    for r, cid in enumerate(order.tolist()):
        m = float(passage_mass[cid])
        names = seeded_in.get(cid)
        why = f"PageRank mass {mass_text(m)} (rank {r + 1}); " + (
            f"seeded phrase {', '.join(names)}" if names else "no seeded phrase in it")
        ranked.append(RankedChunk(cid, r, m, "pagerank", why))
    set_ranked(trace, memory, ranked, cite_top=max(20, params.answer_passages))
    ranked_step.summary = (f"All {len(ranked)} passages ranked by PageRank mass; the first "
                           f"{params.answer_passages} go to the answer step.")
    draw(trace, memory, graph, detail, mass, order[: params.answer_passages].tolist(), step.index, ranked_step.index)
    trace.retrieval_seconds = time.perf_counter() - t0
    return trace


def _fallback(ctx: QueryContext, trace: Trace, detail: HippoRAG2Detail, dense: list[tuple[int, float]],
              params: HippoRAG2Params, why: str, t0: float) -> Trace:
    """Dense ranking instead of the graph search (the official code's rule when no fact survives)."""
    detail.fallback_dense, detail.fallback_reason = True, why
    trace.flags.append(f"fallback to dense ranking: {why}")
    step = trace.add_step("ranked", "Dense fallback", f"No graph search ({why}): passages ranked by dense cosine.")
    set_ranked(trace, ctx.memory, [RankedChunk(cid, r, s, "dense", f"cosine {s:.3f} (dense fallback: {why})")
                                   for r, (cid, s) in enumerate(dense)],
               cite_top=max(20, params.answer_passages))
    draw_fallback(trace, ctx.memory, dense[: params.answer_passages], step.index)
    trace.retrieval_seconds = time.perf_counter() - t0
    return trace
