"""HippoRAG 2's retrieval as a typed picture (memrag.picture), read left to right: the question, the
phrases recognition memory's kept facts seeded (stars; the question's edge says each seed's weight),
the phrases the personalised PageRank walk reached, and the passages by their PageRank mass, each
written "#rank title". Every node is sized by its mass (`mass_weight`), the facts kept drawn bold
with their relations, a gold passage ringed wherever it ranked and an entity named like a gold
answer labelled so. After a fallback to dense retrieval the picture is dense's ranked list.

Built from what retrieval recorded into the trace's graph (memrag.methods.hipporag2.picture.draw);
the Learn page's steps (memrag.explain.learn_picture) size and name their nodes with the same
words and weights."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from memrag.methods.dense.picture import GOLD_WORDS, RANKED, context_ids, passage_id, ranked_label, ranking_picture
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode, StepLook
from memrag.trace import GraphEdge, GraphNode, Trace

PASSAGES = 10  # passages drawn from the head of the ranking (gold ones further down come on top)
GOLD_ANSWER = "gold answer"
# a node's part in the walk, as the legend says it
PAGERANK_WORDS = {"seed": "seeded phrase (from a kept fact)", "phrase": "phrase reached by PageRank",
                  "passage": "passage (size = PageRank mass)"}
CONTEXT_WORDS = "passage the answer read"
LAYERS = ("question", "seeded phrases", "reached by the walk", "passages by mass")
SEED_LAYER, REACHED_LAYER, PASSAGE_LAYER = 1, 2, 3
# the trace graph's edge kinds as the picture draws them
EDGE_KIND = {"triple": "triple", "synonymy": "coreference", "provenance": "passage", "activation": "activation"}
EDGE_WORDS = {"triple": "relation (a triple)", "coreference": "synonym edge (similar names)",
              "passage": "phrase appears in the passage", "activation": "seed: the question's weight on it"}
KEPT_WORDS = "fact kept by recognition memory"
KEPT_SAID = 3  # kept facts the note names
MISJOINED = ("This trace was recorded before a fix: its graph edges joined the wrong nodes, so only the seeds' "
             "edges are drawn (ask again for the walk's edges).")


def mass_weight(mass: float | None, top_mass: float) -> float:
    """A node's size by its PageRank mass (square root: four times the mass, twice the size); 1 when
    it has none."""
    if top_mass <= 0 or mass is None:
        return 1.0
    return 0.6 + 1.4 * (max(0.0, mass) / top_mass) ** 0.5


def top_mass(nodes: Iterable[GraphNode]) -> float:
    return max((n.score or 0.0 for n in nodes if n.kind != "query"), default=0.0)


def plain(s: str) -> str:
    return " ".join(s.casefold().split())


def picture(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None, gold_answers: Sequence[str] = (),
            passages: int = PASSAGES, narrow: bool = False) -> Picture:
    """The trace's picture (see the module); `narrow`: for a column beside other methods, without
    column heads (they would run into each other), names that must be written or the edges' legend.
    ValueError for a trace without HippoRAG 2's detail, or whose graph has an edge to a node it does
    not hold."""
    d = trace.detail(HippoRAG2Detail)
    if d is None:
        raise ValueError(f"this is a {trace.method!r} trace, not a HippoRAG 2 trace")
    gold = set(gold_chunk_ids or ())
    if d.fallback_dense:
        return ranking_picture(trace, gold_chunk_ids=gold, name="hipporag2-fallback",
                               note=f"No graph search ({d.fallback_reason}): the ranking is dense retrieval's.")
    known = {n.id for n in trace.nodes}
    loose = next(((e, end) for e in trace.edges for end in (e.source, e.target) if end not in known), None)
    if loose is not None:  # a trace its file's checks did not see: said, not drawn without the edge
        raise ValueError(f"the edge {loose[0].id!r} joins {loose[1]!r}, a node the trace does not hold")
    answers = {plain(a) for a in gold_answers if a.strip()}
    ranks = {r.chunk_id: rank for rank, r in enumerate(trace.ranked, start=1)}
    context = set(context_ids(trace))
    top = top_mass(trace.nodes)
    kept = [n for n in trace.nodes if n.kind != "chunk" or _drawn_passage(n, ranks, passages, gold, context)]
    nodes = [_node(trace, n, top, ranks, context, gold, answers) for n in kept]
    # a gold passage the walk left too little mass to be recorded: drawn at its rank all the same
    for cid in sorted(gold - {int(n.ref) for n in nodes if n.kind == "passage"}, key=lambda c: ranks.get(c, 1 << 30)):
        if cid in ranks:
            r = trace.ranked[ranks[cid] - 1]
            nodes.append(_passage_node(trace, cid, r.score, ranks[cid], top, read=cid in context, gold=True))
    # the passages listed best first: their column keeps that order (#1 on top)
    nodes.sort(key=lambda n: (n.kind == "passage", ranks.get(int(n.ref), 1 << 30) if n.kind == "passage" else 0))
    layer = {n.id: n.layer for n in nodes}
    misjoined = _misjoined(trace)
    # an edge between two reached phrases would run down their column through the nodes between
    # them: left out (a click on a phrase lists its relations)
    edges = [_edge(e) for e in trace.edges if e.source in layer and e.target in layer
             and not layer[e.source] == layer[e.target] == REACHED_LAYER and not (misjoined and e.role != "seed")]
    legend = _legend(nodes, edges)
    if narrow:  # names only where they find room: a column kept for them would squeeze the walk flat
        legend = tuple(x for x in legend if x.mark.startswith("node:"))
        nodes = [dataclasses.replace(n, labelled=False) for n in nodes]
    note = _note(d, trace, nodes, passages, narrow) + (f" {MISJOINED}" if misjoined else "")
    return Picture("hipporag2-pagerank", tuple(nodes), tuple(edges), legend, note,
                   _steps(trace, nodes, edges), () if narrow else LAYERS, listed_layers=(PASSAGE_LAYER,))


def _misjoined(trace: Trace) -> bool:
    """Whether the trace's graph edges join nodes their kind cannot join (a triple touching a passage,
    a context edge not between a phrase and a passage): a trace recorded before the subgraph's
    vertices were numbered in the graph's order, whose edges joined the wrong nodes."""
    def kinds(e: GraphEdge) -> set[str]:
        return {e.source.partition(":")[0], e.target.partition(":")[0]}
    return any(e.kind == "triple" and kinds(e) != {"e"} or e.kind == "provenance" and kinds(e) != {"e", "c"}
               for e in trace.edges)


def _drawn_passage(n: GraphNode, ranks: dict[int, int], passages: int, gold: set[int], context: set[int]) -> bool:
    cid = n.chunk_ids[0] if n.chunk_ids else None
    return cid is not None and (ranks.get(cid, 1 << 30) <= passages or cid in gold or cid in context)


def _node(trace: Trace, n: GraphNode, top: float, ranks: dict[int, int], context: set[int], gold: set[int],
          answers: set[str]) -> PictureNode:
    if n.kind == "query":
        return PictureNode(n.id, "question", kind="question", role="question", layer=0, labelled=True,
                           tooltip=n.tooltip)
    if n.kind == "chunk":
        cid = n.chunk_ids[0]
        return _passage_node(trace, cid, n.score, ranks.get(cid), top, read=cid in context, gold=cid in gold,
                             title=n.label, tip=n.tooltip)
    seed = n.role == "seed"
    named = plain(n.label) in answers
    return PictureNode(n.id, f"{n.label} ({GOLD_ANSWER})" if named else n.label, kind="entity",
                       role="seed" if seed else "phrase", weight=mass_weight(n.score, top), step=n.step,
                       layer=SEED_LAYER if seed else REACHED_LAYER, labelled=seed or named,
                       tooltip=(n.tooltip or n.label) + (f"\nnamed like the question's {GOLD_ANSWER}" if named else ""),
                       ref=n.id.partition(":")[2])


def _passage_node(trace: Trace, cid: int, mass: float | None, rank: int | None, top: float, *, read: bool,
                  gold: bool, title: str = "", tip: str = "") -> PictureNode:
    """A passage in the last column; `title` and `tip`: what retrieval wrote on it (else the trace's
    chunk and its mass say them)."""
    c = trace.chunk(cid)
    title = title or (c.title if c else f"chunk {cid}")
    tip = tip or (f"{title}: PageRank mass {mass:.3g}" if mass is not None else title)
    return PictureNode(passage_id(cid), ranked_label(rank, title) if rank else title, kind="passage",
                       role=RANKED, fate="context" if read else "",
                       weight=mass_weight(mass, top), layer=PASSAGE_LAYER, labelled=read or gold, gold=gold,
                       tooltip=(f"#{rank} · " if rank else "") + tip, ref=str(cid))


def _edge(e: GraphEdge) -> PictureEdge:
    kind = EDGE_KIND.get(e.kind, "activation")
    kept = kind == "triple" and bool(e.label)  # only a kept fact's relation is known to the trace
    relation = e.label if kept else f"seed {e.label}" if e.role == "seed" else ""
    return PictureEdge(e.id, e.source, e.target, kind=kind, relation=relation, fate="valid" if kept else "",
                       bold=kept or e.role == "seed", step=e.step, tooltip=relation or EDGE_WORDS[kind])


def _legend(nodes: Sequence[PictureNode], edges: Sequence[PictureEdge]) -> tuple[LegendEntry, ...]:
    def count(role: str, fate: str = "") -> int:
        return sum(1 for n in nodes if n.role == role and n.fate == fate)
    out = [LegendEntry("node:seed", PAGERANK_WORDS["seed"], count("seed"), ""),
           LegendEntry("node:phrase", PAGERANK_WORDS["phrase"], count("phrase"), ""),
           LegendEntry("node:passage:context", CONTEXT_WORDS, count(RANKED, "context"), ""),
           LegendEntry("node:passage", PAGERANK_WORDS["passage"], count(RANKED), "")]
    out = [x for x in out if x.count]
    if any(e.fate == "valid" for e in edges):
        out.append(LegendEntry("edge:triple:valid:bold", KEPT_WORDS))
    for kind in ("triple", "coreference", "passage"):
        if any(e.kind == kind and not e.bold for e in edges):
            out.append(LegendEntry(f"edge:{kind}", EDGE_WORDS[kind]))
    if any(n.gold for n in nodes):
        out.append(LegendEntry("node:gold", GOLD_WORDS))
    return tuple(out)


def kept_facts(d: HippoRAG2Detail, most: int = KEPT_SAID) -> str:
    """The facts recognition memory kept, as the note says them (their relations are written on the
    picture only where there is room)."""
    kept = [f for f in d.facts if f.verdict == "kept"]
    said = "; ".join(f"{f.head} —{f.relation}→ {f.tail}" for f in kept[:most])
    return f"Kept fact(s): {said}" + (f" and {len(kept) - most} more" if len(kept) > most else "") + "." if kept else ""


def _note(d: HippoRAG2Detail, trace: Trace, nodes: Sequence[PictureNode], passages: int, narrow: bool) -> str:
    drawn = sum(1 for n in nodes if n.kind == "passage")
    if narrow:  # under a quarter-width picture: what it shows, in a few lines
        return " ".join((kept_facts(d), f"{len(d.phrase_seeds)} seeded phrase(s), the phrases PageRank reached, "
                         f"{drawn} passages by mass; size by mass.")).strip()
    shown = (f"{len(d.phrase_seeds)} seeded phrase(s), the phrases holding the most PageRank mass and the top "
             f"{min(passages, len(trace.ranked))} of {len(trace.ranked)} passages by mass ({drawn} drawn, gold ones "
             "at their rank); node size by mass; edges between two reached phrases are left out (click a phrase "
             f"for its relations). {d.phrase_mass:.0%} of the mass is on phrase nodes. Graph: "
             + ", ".join(f"{v} {k}" for k, v in d.graph.items()) + ".")
    return " ".join(x for x in (kept_facts(d), shown) if x)


def _steps(trace: Trace, nodes: Sequence[PictureNode], edges: Sequence[PictureEdge]) -> tuple[StepLook, ...]:
    """The Retrieval steps that draw: the seeds (the question and its stars), the walk (the phrases it
    reached lit), the ranking (everything but the passages the answer read faded). A passage is never
    lit: the lit ring would hide its gold one."""
    seeds = {n.id for n in nodes if n.role in ("seed", "question")}
    seed_edges = {e.id for e in edges if e.source in seeds and e.target in seeds}
    reached = {n.id for n in nodes if n.kind == "entity" and n.role != "seed"}
    others = {n.id for n in nodes if n.kind in ("entity", "passage") and n.fate != "context"}
    out = []
    for s in trace.steps:
        if s.kind == "seeds":
            out.append(StepLook(s.index, s.title, frozenset(seeds | seed_edges), frozenset(seeds - {"q"})))
        elif s.kind == "pagerank":
            out.append(StepLook(s.index, s.title, frozenset(), frozenset(reached)))
        elif s.kind == "ranked":
            out.append(StepLook(s.index, s.title, frozenset(), frozenset(),
                                frozenset(others | {e.id for e in edges if e.source in others or e.target in others})))
    return tuple(out)
