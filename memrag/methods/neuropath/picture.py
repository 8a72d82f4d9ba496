"""NeuroPath's picture data: the seeds and their coreference candidates, then every hop's paths as
entity nodes and triple edges, each at the hop that listed it and in the role of its best fate,
kept near MAX_GRAPH_NODES. Built during retrieval into the trace's graph; memrag.viz draws it.

`picture` is the typed picture of a finished trace (memrag.picture): NeuroPath's route
(methods/neuropath/route.py), which memrag.viz.figure draws."""

from __future__ import annotations

from collections.abc import Iterable

from memrag.index.memory import Memory
from memrag.methods.base import QueryContext
from memrag.methods.neuropath.detail import NeuroPathDetail, PathCandidate
from memrag.methods.neuropath import route
from memrag.picture import Picture
from memrag.trace import GraphEdge, GraphNode, Trace

MAX_GRAPH_NODES = 300
# Best fate first: a triple edge takes the role of the best fate any path through it had.
_ROLE_OF_FATE = {"valid": "valid", "expanded": "expanded", "shown": "shown", "dropped": "shown",
                 "unlisted": "pruned", "pruned": "pruned"}
_ROLE_ORDER = ["valid", "expanded", "shown", "pruned"]
_NODE_ROLE_ORDER = ["seed", "coref", "frontier", "path"]
_HIDDEN = ("pruned", "unlisted")  # fates of paths the model never saw


def picture(trace: Trace, *, expanded: Iterable[str] = (), gold_chunk_ids: Iterable[int] | None = None,
            upto: int | None = None) -> Picture:
    """The trace as a route: seeds, hop 1, hop 2; `expanded`: the count nodes opened by a click;
    `upto`: as it stood after that hop."""
    return route.route(trace, expanded=expanded, gold_chunk_ids=gold_chunk_ids, upto=upto)


def subgraph(ctx: QueryContext, trace: Trace) -> None:
    """Entity nodes and triple / coreference edges, each tagged with the step it first appears in."""
    memory, detail = ctx.memory, trace.detail(NeuroPathDetail)
    assert detail is not None
    nodes: dict[str, GraphNode] = {}
    edges: dict[str, GraphEdge] = {}

    def node(key: str, role: str, step: int, score: float | None = None) -> None:
        nid = f"e:{key}"
        if nid not in nodes:
            ent = memory.entity(key)
            name, group = (ent.name, ent.type) if ent else (key, "other")
            nodes[nid] = GraphNode(nid, name, "entity", step=step, score=score, role=role, group=group,
                                   tooltip=f"{name} ({group})")
            trace.steps[step].node_ids.append(nid)
        elif _NODE_ROLE_ORDER.index(role) < _NODE_ROLE_ORDER.index(nodes[nid].role):
            nodes[nid].role = role

    def edge(e: GraphEdge) -> None:
        if e.id not in edges:
            edges[e.id] = e
            trace.steps[e.step or 0].edge_ids.append(e.id)
        elif _ROLE_ORDER.index(e.role) < _ROLE_ORDER.index(edges[e.id].role):
            edges[e.id].role = e.role

    for s in detail.seeds:
        if s.accepted:
            node(s.key, "seed", 0, s.similarity)
    for s in detail.seeds:
        for m in s.coref:
            node(m.key, "coref", 0, m.similarity)
            edge(GraphEdge(f"coref:{s.key}|{m.key}", f"e:{s.key}", f"e:{m.key}", "coref",
                           f"{m.similarity:.2f}", step=0, role="shown"))

    hop_steps = [s.index for s in trace.steps if s.kind == "hop"]
    by_pid = {p.pid: p for h in detail.hops for p in h.candidates}
    included, notes = _within_cap(memory, list(by_pid.values()), {nid[2:] for nid in nodes})
    for h, step in zip(detail.hops, hop_steps):
        for p in h.candidates:
            if p.pid not in included:
                continue
            for t in p.triples:
                row = memory.triples[t.triple_id]
                node(row.head_key, "path", step)
                node(row.tail_key, "path", step)
                edge(GraphEdge(f"t:{row.triple_id}", f"e:{row.head_key}", f"e:{row.tail_key}", "triple",
                               row.relation, step=step, chunk_id=row.chunk_id, role=_ROLE_OF_FATE[p.fate]))
            parent = by_pid.get(p.parent or "") if p.kept_from is None else None
            if parent is not None:
                last = memory.triples[p.triples[-1].triple_id]
                touched = last.head_key if last.tail_key == p.frontier else last.tail_key
                if touched != parent.frontier:
                    # This extension grew from a coreference candidate of its parent's frontier.
                    edge(GraphEdge(f"coref:{parent.frontier}|{touched}", f"e:{parent.frontier}", f"e:{touched}",
                                   "coref", "coreference", step=step, role=_ROLE_OF_FATE[p.fate]))
            if p.fate not in _HIDDEN:
                node(p.frontier, "frontier", step)
    trace.flags.extend(notes)
    trace.nodes = list(nodes.values())
    trace.edges = list(edges.values())


def _within_cap(memory: Memory, paths: list[PathCandidate], base: set[str]) -> tuple[set[str], list[str]]:
    """Which paths the subgraph draws, keeping it near MAX_GRAPH_NODES entity nodes.

    Valid and expanded paths always; then the other listed paths while they fit;
    then the pruned / unlisted ones only if all of them fit (a partial picture of
    what was pruned would mislead). Returns (pids, flags saying what was left out).
    """
    def keys(p: PathCandidate) -> set[str]:
        return {k for t in p.triples for k in (memory.triples[t.triple_id].head_key,
                                                 memory.triples[t.triple_id].tail_key)}
    have, pids = set(base), set()
    for p in paths:
        if p.fate in ("valid", "expanded"):
            have |= keys(p)
            pids.add(p.pid)
    skipped_listed = 0
    for p in paths:
        if p.fate not in _HIDDEN and p.pid not in pids:
            ks = keys(p)
            if len(have | ks) <= MAX_GRAPH_NODES:
                have |= ks
                pids.add(p.pid)
            else:
                skipped_listed += 1
    hidden = [p for p in paths if p.fate in _HIDDEN]
    hidden_keys = set().union(*(keys(p) for p in hidden)) if hidden else set()
    notes = []
    if len(have | hidden_keys) <= MAX_GRAPH_NODES:
        pids.update(p.pid for p in hidden)
    else:
        notes.append(f"subgraph: nodes of {len(hidden)} pruned or unlisted path(s) left out "
                     f"(over {MAX_GRAPH_NODES} nodes)")
    if skipped_listed:
        notes.append(f"subgraph: {skipped_listed} listed path(s) that were not kept left out "
                     f"(over {MAX_GRAPH_NODES} nodes)")
    return pids, notes
