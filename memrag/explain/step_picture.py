"""What the Learn page's replay draws at step s, computed from the trace up to step s only.

A replay teaches what happened in order, so nothing at step s may depend on a later step: not a
colour (a NeuroPath triple takes the fate of its latest judgement so far, never the best fate over
the whole trace), not a mark (no faint "ghosts" of nodes a later step adds, no gold star because the
passage was retrieved in the end, no "E_final" before the re-rank, no PageRank mass before PageRank
ran), not a count (no "of N nodes" of the whole trace) and not the drawing cap (the nodes that
matter most among those known so far). `tests/test_step_picture.py` truncates each recorded sample
trace after every step and checks that the picture of that step is the same.

The words are the tables' and legends' (memrag.words): a NeuroPath path listed to the model and
not kept is "listed, not kept" here too. Returns data; memrag.explain.learn_picture makes it a typed
picture that memrag.viz.figure draws.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail
from memrag.methods.ecphory.engram_words import engram_lines
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop
from memrag.methods.spec import step_style
from memrag.trace import GraphEdge, GraphNode, Step, Trace
from memrag import words
from memrag.words import FATES, fate_rank

# How a NeuroPath fate looks on an edge (the renderer has no look of its own for "unlisted").
_EDGE_ROLE = {"unlisted": "pruned"}
_HIDDEN = ("pruned", "unlisted")  # paths the model never saw


@dataclass
class StepPicture:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    highlight: set[str]  # ids of the nodes and edges this step added
    note: str
    known: int  # nodes known at this step (drawn or left out by the cap)
    counts: dict[str, int] = field(default_factory=dict)  # NeuroPath: this hop's paths by fate


def check_step(trace: Trace, step_index: int) -> None:
    if not trace.steps:
        raise ValueError("this trace records no steps to replay")
    if not 0 <= step_index < len(trace.steps):
        raise ValueError(f"step_index must be between 0 and {len(trace.steps) - 1}, got {step_index}")


def reached(trace: Trace, step_index: int, kind: str) -> int:
    """How many steps of `kind` steps 0..step_index hold (hops run, rounds run so far)."""
    return sum(1 for s in trace.steps[: step_index + 1] if s.kind == kind)


def known_nodes(trace: Trace, step_index: int) -> list[GraphNode]:
    """The trace's nodes that steps 0..step_index added, first occurrence of each id, in node order."""
    named = {nid for s in trace.steps[: step_index + 1] for nid in s.node_ids}
    out: dict[str, GraphNode] = {}
    for n in trace.nodes:
        if n.id not in out and (n.id in named or (n.step is not None and n.step <= step_index)):
            out[n.id] = n
    return list(out.values())


def known_edges(trace: Trace, step_index: int, ids: set[str]) -> list[GraphEdge]:
    """Edges that steps 0..step_index added between known nodes, first occurrence of each id."""
    named = {eid for s in trace.steps[: step_index + 1] for eid in s.edge_ids}
    out: dict[str, GraphEdge] = {}
    for e in trace.edges:
        if e.id in out or e.source not in ids or e.target not in ids:
            continue
        if e.id in named or (e.step is not None and e.step <= step_index) or e.step is None:
            out[e.id] = e
    return list(out.values())


# ------------------------------------------------------------------ NeuroPath
def _np_hops(trace: Trace, step_index: int) -> list[NeuroPathHop]:
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    return detail.hops[: reached(trace, step_index, "hop")]


def neuropath_fates(trace: Trace, step_index: int) -> dict[str, str]:
    """Edge id → a NeuroPath fate as known at the step: a triple by its latest hop so far (the best fate
    among that hop's paths through it); a coreference link grown from a path's frontier by that path."""
    hops = _np_hops(trace, step_index)
    by_pid = {p.pid: p for h in hops for p in h.candidates}
    ends = {e.id: (e.source, e.target) for e in trace.edges if e.kind == "triple"}
    fates: dict[str, str] = {}
    for h in hops:  # later hops overwrite earlier ones: the latest judgement counts
        now: dict[str, str] = {}
        for p in h.candidates:
            for t in p.triples:
                eid = f"t:{t.triple_id}"
                if eid not in now or fate_rank(p.fate) < fate_rank(now[eid]):
                    now[eid] = p.fate
            parent = by_pid.get(p.parent or "") if p.kept_from is None else None
            last = ends.get(f"t:{p.triples[-1].triple_id}") if p.triples else None
            if parent is not None and last is not None:
                touched = last[0] if last[1] == f"e:{p.frontier}" else last[1]
                cid = f"coref:{parent.frontier}|{touched[2:]}"
                if cid not in now or fate_rank(p.fate) < fate_rank(now[cid]):
                    now[cid] = p.fate
        fates.update(now)
    return fates


def _neuropath_look(trace: Trace, step_index: int, nodes: list[GraphNode], edges: list[GraphEdge]
                    ) -> tuple[list[GraphNode], list[GraphEdge], dict[str, int]]:
    detail = trace.detail(NeuroPathDetail)
    assert detail is not None
    fates = neuropath_fates(trace, step_index)
    hops = _np_hops(trace, step_index)
    seeds = {f"e:{s.key}" for s in detail.seeds if s.accepted}
    corefs = {f"e:{m.key}" for s in detail.seeds for m in s.coref}
    frontiers = {f"e:{p.frontier}" for h in hops for p in h.candidates if p.fate not in _HIDDEN}
    best: dict[str, str] = {}
    chunks: dict[str, list[int]] = {}
    out_edges = []
    for e in edges:
        fate = fates.get(e.id)
        if e.kind == "triple" and fate is not None:
            for end in (e.source, e.target):
                if fate_rank(fate) < fate_rank(best.get(end, "")):
                    best[end] = fate
                if e.chunk_id is not None and e.chunk_id not in chunks.setdefault(end, []):
                    chunks[end].append(e.chunk_id)
        # a seed's coreference link is no path's: drawn in its own look
        out_edges.append(dataclasses.replace(e, role=_EDGE_ROLE.get(fate, fate) if fate else ""))
    out_nodes = []
    for n in nodes:
        if n.kind != "entity":
            out_nodes.append(n)
            continue
        role = ("seed" if n.id in seeds else "coref" if n.id in corefs else
                "frontier" if n.id in frontiers else "path")
        out_nodes.append(dataclasses.replace(n, group=best.get(n.id, "untouched"), role=role,
                                             chunk_ids=sorted(set(n.chunk_ids) | set(chunks.get(n.id, []))),
                                             tooltip=f"{n.label}\ntype: {n.group}" if n.group else n.label))
    counts: dict[str, int] = {}
    if hops and trace.steps[step_index].kind == "hop":
        for p in hops[-1].candidates:
            counts[p.fate] = counts.get(p.fate, 0) + 1
    return out_nodes, out_edges, counts


# ------------------------------------------------------------------ EcphoryRAG
def _activated(trace: Trace, step_index: int) -> dict[str, ActivatedEngram]:
    """Entity key → its first listed activation among the steps so far."""
    d = trace.detail(EcphoryDetail)
    assert d is not None
    engrams = (list(d.initial) if reached(trace, step_index, "initial") else []) + [
        a for r in d.rounds[: reached(trace, step_index, "round")] for a in r.new]
    first: dict[str, ActivatedEngram] = {}
    for a in engrams:
        first.setdefault(a.key, a)
    return first


def _ecphory_look(trace: Trace, step_index: int, nodes: list[GraphNode]) -> list[GraphNode]:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    first = _activated(trace, step_index)
    d_chunks: dict[str, list[int]] = {}
    for a in [*(d.initial if reached(trace, step_index, "initial") else []),
              *(a for r in d.rounds[: reached(trace, step_index, "round")] for a in r.new)]:
        d_chunks.setdefault(a.key, [])
        if a.chunk_id not in d_chunks[a.key]:
            d_chunks[a.key].append(a.chunk_id)
    reranked = reached(trace, step_index, "rerank") > 0
    final = {a.key: i for i, a in enumerate(d.final, start=1)} if reranked else {}
    out = []
    for n in nodes:
        if n.kind != "entity" or n.round is None:
            out.append(n)
            continue
        key = n.id[2:]
        a = first.get(key)
        lines = engram_lines(n.label, n.group, n.round, a, final.get(key))
        out.append(dataclasses.replace(n, group=f"round {n.round}", role="final" if key in final else n.role,
                                       score=a.similarity if a else None, chunk_ids=d_chunks.get(key, []),
                                       tooltip="\n".join(lines)))
    return out


# ------------------------------------------------------------------ HippoRAG 2
def _hipporag2_look(trace: Trace, step_index: int, nodes: list[GraphNode]) -> list[GraphNode]:
    """Before PageRank ran, seeds by their reset weight and no mass anywhere (no sizes, no mass on hover)."""
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    if reached(trace, step_index, "pagerank"):
        return [dataclasses.replace(n, group=n.group or n.kind) for n in nodes]
    weight = {f"e:{s.key}": s.weight for s in d.phrase_seeds}
    return [dataclasses.replace(n, group=n.group or n.kind, score=None,
                                tooltip=(f"{n.label}: seed weight {weight[n.id]:.3f}" if n.id in weight else
                                         n.label if n.kind != "query" else n.tooltip)) for n in nodes]


# ------------------------------------------------------------------ the picture
def _importance(nodes: list[GraphNode], edges: list[GraphEdge]) -> list[str]:
    """Known node ids, those that matter most first: the question and cues, final engrams, seeds and
    context passages, nodes on valid then expanded paths, then by degree (all as known now)."""
    degree: dict[str, int] = {}
    for e in edges:
        for end in (e.source, e.target):
            degree[end] = degree.get(end, 0) + 1
    tiers = {"question": 0, "cue": 0}
    roles = {"final": 1, "seed": 1, "context": 2}
    order = {n.id: i for i, n in enumerate(nodes)}

    def key(n: GraphNode) -> tuple[int, int, int]:
        tier = min(tiers.get(n.group, 9), roles.get(n.role, 9), 3 + fate_rank(n.group) if n.group in FATES else 9)
        return tier, -degree.get(n.id, 0), order[n.id]

    return [n.id for n in sorted(nodes, key=key)]


def _kinds_line(nodes: Iterable[GraphNode]) -> str:
    kinds: dict[str, int] = {}
    for n in nodes:
        kinds[n.kind] = kinds.get(n.kind, 0) + 1
    return ", ".join(words.counted(v, k) for k, v in kinds.items())


def step_picture(trace: Trace, step_index: int, *, gold_chunk_ids: Iterable[int] | None = None,
                 max_nodes: int = 40) -> StepPicture:
    """The nodes, edges, highlight and note of the replay at `step_index`, from steps 0..step_index only.
    A node is starred when a gold passage is among the chunks known for it so far."""
    check_step(trace, step_index)
    step: Step = trace.steps[step_index]
    nodes = known_nodes(trace, step_index)
    edges = known_edges(trace, step_index, {n.id for n in nodes})
    counts: dict[str, int] = {}
    style = step_style(trace.method)  # the spec's (memrag.methods.spec.STEP_STYLES)
    if style == "paths" and trace.detail(NeuroPathDetail) is not None:
        nodes, edges, counts = _neuropath_look(trace, step_index, nodes, edges)
    elif style == "rounds" and trace.detail(EcphoryDetail) is not None:
        nodes = _ecphory_look(trace, step_index, nodes)
    elif style == "pagerank" and trace.detail(HippoRAG2Detail) is not None:
        nodes = _hipporag2_look(trace, step_index, nodes)
    if style != "pagerank":  # the question and passages in their kind's colour (HippoRAG 2 has its own)
        nodes = [dataclasses.replace(n, group="question" if n.kind == "query" else n.kind)
                 if n.kind in ("query", "cue", "chunk") else n for n in nodes]
    gold = set(gold_chunk_ids or ())
    nodes = [dataclasses.replace(n, gold=bool(gold.intersection(n.chunk_ids))) for n in nodes]
    keep = set(_importance(nodes, edges)[:max_nodes])
    drawn = [n for n in nodes if n.id in keep]
    drawn_edges = [e for e in edges if e.source in keep and e.target in keep]
    new = set(step.node_ids) | {n.id for n in nodes if n.step == step_index}
    new |= set(step.edge_ids) | {e.id for e in edges if e.step == step_index}
    note = (f"Step {step_index + 1}: {step.title}. {len(nodes)} node{'' if len(nodes) == 1 else 's'} added so far: "
            f"{_kinds_line(nodes)}.")
    if counts:
        note += f" This hop's paths: {words.path_counts(counts)}."
    if len(drawn) < len(nodes):
        note += (f" Drawing {len(drawn)} of the {len(nodes)} nodes known so far: the ones that matter most "
                 f"now, capped at {max_nodes}.")
    return StepPicture(drawn, drawn_edges, new & (keep | {e.id for e in drawn_edges}), note, len(nodes), counts)


__all__ = ["StepPicture", "step_picture", "known_nodes", "known_edges", "neuropath_fates",
           "check_step", "reached"]
