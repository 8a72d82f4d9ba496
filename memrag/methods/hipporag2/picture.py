"""HippoRAG 2's picture data: the question and its phrase seeds, the nodes holding the most
PageRank mass and the answer passages, each node's score its mass, with the graph's edges among
them. Built during retrieval into the trace's graph; memrag.viz draws it."""

from __future__ import annotations

from typing import Any

import numpy as np

from memrag.index.memory import Memory
from memrag.methods.hipporag2.detail import HippoRAG2Detail, PhraseSeed
from memrag.methods.picture_kit import add_edge, add_node, passage_tip
from memrag.trace import GraphEdge, GraphNode, Trace


def mass_text(m: float) -> str:
    return f"{m:.3g}"


def draw_seeds(trace: Trace, seeds: list[PhraseSeed], step: int) -> None:
    """Each phrase seed as a starred node, with an edge from the question carrying its weight."""
    for s in seeds:
        nid = f"e:{s.key}"
        add_node(trace, GraphNode(nid, s.name, "entity", step=step, chunk_ids=s.chunk_ids[:20],
                                  role="seed", group="seed", tooltip=f"{s.name}: seed weight {s.weight:.3g}"))
        trace.edges.append(GraphEdge(f"s:{nid}", "q", nid, "activation", f"{s.weight:.3g}", step=step, role="seed"))


def draw_fallback(trace: Trace, memory: Memory, answer: list[tuple[int, float]], step: int) -> None:
    """With no graph search, the passages the answer reads (by dense score) are the picture."""
    for cid, s in answer:
        c = memory.chunks[cid]
        add_node(trace, GraphNode(f"c:{cid}", c.title, "chunk", step=step, score=s, chunk_ids=[cid],
                                  role="context", tooltip=passage_tip(c.text)))


def draw(trace: Trace, memory: Memory, graph: Any, detail: HippoRAG2Detail, mass: np.ndarray,
         answer_chunks: list[int], pr_step: int, ranked_step: int) -> None:
    """The overview subgraph: seeds, the top nodes by mass and the answer passages, each node's
    score its PageRank mass, with the graph's edges among them (`graph`: the search's HippoGraph)."""
    seeded = {memory.entity_index[s.key] for s in detail.phrase_seeds}
    vids = list(dict.fromkeys([*seeded, *(memory.entity_index[n.node_id[2:]] if n.kind == "phrase"
                                           else graph.n_phrases + int(n.node_id[2:]) for n in detail.top_nodes),
                               *(graph.n_phrases + c for c in answer_chunks)]))
    by_id = {n.id: n for n in trace.nodes}
    answer = set(answer_chunks)
    for v in vids:
        if v < graph.n_phrases:
            e = memory.entities[v]
            nid = f"e:{e.key}"
            if nid in by_id:  # a seed, drawn at the seeds step
                by_id[nid].score = float(mass[v])
                by_id[nid].tooltip += f"; PageRank mass {mass_text(float(mass[v]))}"
                continue
            add_node(trace, GraphNode(nid, e.name, "entity", step=pr_step, score=float(mass[v]),
                                      chunk_ids=list(e.chunk_ids[:20]), role="phrase", group="phrase",
                                      tooltip=f"{e.name}: PageRank mass {mass_text(float(mass[v]))}"))
        else:
            cid = v - graph.n_phrases
            c = memory.chunks[cid]
            nid = f"c:{cid}"
            step = ranked_step if cid in answer else pr_step
            add_node(trace, GraphNode(nid, c.title, "chunk", step=step, score=float(mass[v]), chunk_ids=[cid],
                                      role="context" if cid in answer else "passage", group="passage",
                                      tooltip=f"{c.title}: PageRank mass {mass_text(float(mass[v]))}\n"
                                              + passage_tip(c.text)))
    relation = {tuple(sorted((f.head_key, f.tail_key))): f.relation for f in detail.facts if f.verdict == "kept"}
    sub = graph.graph.induced_subgraph(vids)
    # the subgraph numbers its vertices in the graph's order, not in the order of `vids`
    node_id = [f"e:{memory.entities[v].key}" if v < graph.n_phrases else f"c:{v - graph.n_phrases}"
               for v in sorted(vids)]
    kind_of = {"triple": "triple", "synonymy": "synonymy", "context": "provenance"}
    for e in sub.es:
        a, b = node_id[e.source], node_id[e.target]
        kind = e["kind"]
        label = (relation.get(tuple(sorted((a[2:], b[2:]))), "") if kind == "triple"
                 else "synonym" if kind == "synonymy" else "")
        eid = f"{kind}:{a}-{b}"
        add_edge(trace, GraphEdge(eid, a, b, kind_of[kind], label, step=pr_step, role=kind))
