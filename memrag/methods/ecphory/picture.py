"""EcphoryRAG's picture data: the question, its cues, the activated entities (capped, E_final and
the rounds' seeds first) and the context passages, with activation and provenance edges, each at the
replay step that added it. Built during retrieval into the trace's graph.

The typed picture of a finished trace (memrag.picture), which memrag.viz.figure draws, is
memrag.methods.ecphory.recall.picture: it reads this graph."""

from __future__ import annotations

from typing import Any

import numpy as np

from memrag.index.memory import Memory
from memrag.methods.ecphory.detail import ORIGINS, ActivatedEngram, EcphoryDetail
from memrag.methods.picture_kit import add_edge, add_node, passage_tip, question_node
from memrag.trace import GraphEdge, GraphNode, Trace

SUBGRAPH_CAP = 300  # nodes drawn at most


def _first_unique(values: np.ndarray, k: int) -> list[int]:
    """The first k distinct values, in order of first appearance."""
    _, first = np.unique(values, return_index=True)
    return [int(v) for v in values[np.sort(first)[:k]]]


def draw(trace: Trace, memory: Memory, detail: EcphoryDetail, act: Any, table: Any,
         cues: list[str], provenance: dict[int, ActivatedEngram], seed_steps: dict[int, list[str]],
         step_ix: tuple[int, int, int, int]) -> None:
    """Query, cue, entity and context-chunk nodes with activation/provenance edges, capped in size.
    `act` and `table` are the search's activation record and entity table (search._Activation,
    search._EntityTable)."""
    cue_step, init_step, rerank_step, context_step = step_ix
    steps = trace.steps
    context_ids = detail.context_chunk_ids
    order = act.order
    ents = table.ent_of[order]
    _, first_pos = np.unique(ents, return_index=True)
    first_pos = np.sort(first_pos)
    in_order = ents[first_pos]  # entity nodes by first activation
    # E_final and seed entities first, then the rest in activation order, up to the budget
    budget = max(0, SUBGRAPH_CAP - 1 - len(cues) - len(context_ids))
    final_ents = [memory.entity_index[e.key] for e in detail.final]
    seed_ents = [memory.entity_index[n[2:]] for ids in seed_steps.values() for n in ids]
    head = final_ents + seed_ents + [int(j) for j in in_order[: budget + len(final_ents) + len(seed_ents)]]
    kept = np.zeros(len(memory.entities), bool)
    kept[list(dict.fromkeys(head))[:budget]] = True
    n_drawn, n_active = int(kept.sum()), len(in_order)
    if n_active > n_drawn:
        trace.flags.append(f"subgraph capped at {SUBGRAPH_CAP} nodes: {n_drawn} of {n_active} activated "
                           "entities drawn (E_final and seeds first)")
    final_rank = {e.key: i for i, e in enumerate(detail.final, start=1)}

    add_node(trace, question_node(trace, cue_step), init_step)
    for i, cue in enumerate(cues):
        nid = f"cue:{i}"
        add_node(trace, GraphNode(nid, cue, "cue", step=cue_step, role="cue",
                                  tooltip=f"cue from the question; {len(detail.cue_hits.get(cue, []))} engram hits"))
        add_edge(trace, GraphEdge(f"a:q->{nid}", "q", nid, "activation", label="cue", step=cue_step, role="cue"))
    shown = kept[in_order]
    for pos, j in zip(first_pos[shown], in_order[shown]):
        node = memory.entities[int(j)]
        mentions = table.mentions(int(j))
        on = mentions[act.round_of[mentions] >= 0]
        first_eid = int(order[pos])
        first = act.record(first_eid)
        best = act.record(on[np.argmax(act.q_sims[on])])
        tip = f"{best.name}: {best.description}" if best.description else best.name
        if node.key in final_rank:
            tip += f" | E_final #{final_rank[node.key]}"
        nid = f"e:{node.key}"
        step = int(act.step_of[first_eid])
        add_node(trace, GraphNode(nid, node.name, "entity", step=step, score=best.similarity,
                                  chunk_ids=_first_unique(table.chunk_of[on], 20) if len(on) > 1
                                  else [best.chunk_id], role=first.origin,
                                  group=node.type, round=first.round, tooltip=tip))

    # activation edges: one per (source node, target entity, step), skipping undrawn ends and self-loops
    drawable = np.array([not s.startswith("e:") or bool(kept[memory.entity_index[s[2:]]]) for s in act.sources])
    src = act.source_of[order]
    mask = kept[ents] & drawable[src]
    rows = np.flatnonzero(mask)
    triples = np.stack([src[rows], ents[rows], act.step_of[order][rows]], axis=1)
    _, first_rows = np.unique(triples, axis=0, return_index=True)
    for i in np.sort(first_rows):
        eid = int(order[rows[i]])
        source, target = act.sources[src[rows[i]]], f"e:{memory.engrams[eid].key}"
        if source == target:
            continue
        step = int(act.step_of[eid])
        origin = ORIGINS[act.origin_of[eid]]
        edge_id = f"a:{source}->{target}@{step}"
        add_edge(trace, GraphEdge(edge_id, source, target, "activation", label=origin, step=step,
                                  chunk_id=memory.engrams[eid].chunk_id, role=origin))
    for sid, nodes in seed_steps.items():
        for n in dict.fromkeys(nodes):
            if kept[memory.entity_index[n[2:]]] and n not in steps[sid].node_ids:
                steps[sid].node_ids.append(n)
    steps[rerank_step].node_ids.extend(f"e:{e.key}" for e in detail.final if kept[memory.entity_index[e.key]])

    source_of = {r.chunk_id: r.source for r in trace.ranked[: len(context_ids)]}
    for cid in context_ids:
        c = memory.chunks[cid]
        nid = f"c:{cid}"
        add_node(trace, GraphNode(nid, c.title, "chunk", step=context_step, chunk_ids=[cid],
                                  role="context", tooltip=passage_tip(c.text)))
        e = provenance.get(cid)
        src_id = f"e:{e.key}" if e is not None and kept[memory.entity_index[e.key]] else "q"
        edge_id = f"p:{src_id}->{nid}"
        add_edge(trace, GraphEdge(edge_id, src_id, nid, "provenance", label=source_of[cid], step=context_step,
                                  chunk_id=cid, role=source_of[cid]))
