"""Trace → GraphNode/GraphEdge lists → HTML: the pictures of what a retrieval did.

Every function returns `(html, note)`; `note` is plain text saying what the
picture shows and what was left out (caps). The NeuroPath view
is built from the trace's typed details, not from its generic node list, so
it does not depend on how a method chose to fill `trace.nodes`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memrag.explain import step_picture
from memrag.index.normalise import entity_key
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate
from memrag.methods.spec import step_style
from memrag.trace import GraphEdge, GraphNode, Trace
from memrag.viz.fixed_layout import FixedLayout, fit_labels
from memrag.viz.graph_html import DEFAULT_NODES, label_room, layout, legend_of, render
from memrag.viz import legend, palette
from memrag.viz import look as looks
from memrag.viz.palette import FATE_WORDS
from memrag.words import FATES, fate_rank as _fate_rank
from memrag.plain_text import clip

Result = tuple[str, str]


RANKED_HEAD = 5  # with no answer step, the ranked head counts as what the method retrieved


# The ranked-list sources that mean NeuroPath's paths (or their dense fallback) found a chunk.
PATH_SOURCES = ("path", "dense")


def _gold(gold_chunk_ids: Iterable[int] | None, trace: Trace, sources: tuple[str, ...] | None = None) -> set[int]:
    """The gold chunks this method actually retrieved: in its answer context (or ranked head) and,
    with `sources`, placed there by that part of the method. Only these get a star, so a gold
    passage that, say, only completion found is not starred on the path picture."""
    gold = set(gold_chunk_ids or ())
    if not gold:
        return gold
    head = set(trace.answer.context_chunk_ids if trace.answer else trace.ranked_ids()[:RANKED_HEAD])
    got = {r.chunk_id for r in trace.ranked if r.chunk_id in head and (sources is None or r.source in sources)}
    return gold & got


def _neuropath(trace: Trace) -> NeuroPathDetail:
    if trace.detail(NeuroPathDetail) is None:
        raise ValueError(f"this is a {trace.method!r} trace, not a NeuroPath trace")
    return trace.detail(NeuroPathDetail)


def passages_of(trace: Trace) -> dict[int, tuple[str, str]]:
    """(title, text) of the passages the trace carries, for the details panel of a node from them."""
    return {c.chunk_id: (f"{c.title} · chunk {c.chunk_id}" if c.title else f"chunk {c.chunk_id}", c.text)
            for c in trace.chunks}


def _chunk_name(trace: Trace, chunk_id: int) -> str:
    c = trace.chunk(chunk_id)
    return f"chunk {chunk_id}" + (f" ({c.title})" if c and c.title else "")


# ------------------------------------------------------------------ NeuroPath
class _PathGraph:
    """Collects entity nodes and triple edges from paths, keeping each element's best fate."""

    def __init__(self, trace: Trace, gold: set[int]) -> None:
        self.trace = trace
        self.gold = gold
        self.nodes: dict[str, GraphNode] = {}
        self.node_paths: dict[str, list[str]] = {}
        self.node_notes: dict[str, list[str]] = {}
        self.edges: dict[str, GraphEdge] = {}
        self.edge_titles: dict[str, str] = {}
        self.edge_paths: dict[str, list[str]] = {}
        self.edge_probability: dict[str, float] = {}  # the best P(yes) of a judged path through it

    def entity(self, key: str, name: str, fate: str | None = None, chunk_id: int | None = None) -> str:
        nid = f"e:{key}"
        n = self.nodes.get(nid)
        if n is None:
            n = GraphNode(nid, name, "entity", group=fate or "untouched")
            self.nodes[nid] = n
            self.node_paths[nid], self.node_notes[nid] = [], []
        if fate and (n.group == "untouched" or _fate_rank(fate) < _fate_rank(n.group)):
            n.group = fate
        if chunk_id is not None and chunk_id not in n.chunk_ids:
            n.chunk_ids.append(chunk_id)
        return nid

    def new_nodes_for(self, cand: PathCandidate) -> int:
        keys = {f"e:{entity_key(x)}" for t in cand.triples for x in (t.head, t.tail)}
        return len(keys - set(self.nodes))

    def add_path(self, cand: PathCandidate) -> None:
        number = f"#{cand.listed_as}" if cand.listed_as is not None else cand.pid
        judged = f", P(yes) {cand.probability:.2f}" if cand.probability is not None else ""
        tag = f"{number} ({FATE_WORDS.get(cand.fate, cand.fate)}{judged})"
        for t in cand.triples:
            h = self.entity(entity_key(t.head), t.head, cand.fate, t.chunk_id)
            tl = self.entity(entity_key(t.tail), t.tail, cand.fate, t.chunk_id)
            for nid in (h, tl):
                if tag not in self.node_paths[nid]:
                    self.node_paths[nid].append(tag)
            eid = f"t:{t.triple_id}"
            e = self.edges.get(eid)
            if e is None:
                star = f"{palette.GOLD_MARK} " if t.chunk_id in self.gold else ""
                e = GraphEdge(eid, h, tl, "triple", star + t.relation, chunk_id=t.chunk_id, role=cand.fate)
                self.edges[eid] = e
                self.edge_paths[eid] = []
                self.edge_titles[eid] = (f"{t.head} {t.relation} {t.tail}\nfrom {_chunk_name(self.trace, t.chunk_id)}"
                                         + ("\ngold passage" if star else ""))
            elif _fate_rank(cand.fate) < _fate_rank(e.role):
                e.role = cand.fate
            self.edge_paths[eid].append(tag)
            if cand.probability is not None:
                self.edge_probability[eid] = max(cand.probability, self.edge_probability.get(eid, 0.0))

    def add_seeds(self, detail: NeuroPathDetail) -> None:
        self.nodes.setdefault("q", GraphNode("q", "question", "query", role="query", group="question",
                                             tooltip=self.trace.question))
        for s in detail.seeds:
            if not s.accepted:
                continue
            nid = self.entity(s.key, s.name)
            self.nodes[nid].role = "seed"
            self.node_notes[nid].append(f"seed for {s.query_entity!r} (similarity {s.similarity:.2f}, {s.origin})")
            eid = f"seed:{s.key}:{s.query_entity}"
            self.edges.setdefault(eid, GraphEdge(eid, "q", nid, "activation", clip(s.query_entity, 24)))
            self.edge_titles[eid] = f"query entity {s.query_entity!r} → {s.name} ({s.similarity:.2f})"
            for m in s.coref:
                mid = self.entity(m.key, m.name)
                if self.nodes[mid].role == "":
                    self.nodes[mid].role = "coref"
                self.node_notes[mid].append(f"coreference candidate of {s.name} ({m.similarity:.2f})")
                cid = f"coref:{s.key}:{m.key}"
                self.edges.setdefault(cid, GraphEdge(cid, nid, mid, "coref", f"{m.similarity:.2f}"))
                self.edge_titles[cid] = (f"{m.name} is in {s.name}'s coreference candidate set "
                                         f"(cosine {m.similarity:.2f}; sets are per node, not merges)")

    def finish(self) -> tuple[list[GraphNode], list[GraphEdge]]:
        for nid, n in self.nodes.items():
            if n.kind != "entity":
                continue
            n.gold = bool(self.gold.intersection(n.chunk_ids))
            lines = [n.label] + self.node_notes[nid]
            paths = self.node_paths[nid]
            if paths:
                more = f" … (+{len(paths) - 12})" if len(paths) > 12 else ""
                lines.append("on paths: " + ", ".join(paths[:12]) + more)
            if n.gold:
                lines.append("touches a gold passage")
            n.tooltip = "\n".join(lines)
        for eid, prob in self.edge_probability.items():
            # the likelihood tracker's judgement leads the label, so clipping keeps it
            self.edges[eid].label = f"{prob:.2f} · {self.edges[eid].label}"
        for eid, paths in self.edge_paths.items():
            self.edge_titles[eid] += "\non paths: " + ", ".join(paths[:12]) + (" …" if len(paths) > 12 else "")
        return list(self.nodes.values()), list(self.edges.values())


def _ordered(cands: Sequence[PathCandidate]) -> list[PathCandidate]:
    return sorted(cands, key=lambda c: (_fate_rank(c.fate), c.listed_as if c.listed_as is not None else 10**9,
                                        c.rank if c.rank is not None else 10**9))


def _paths_picture(trace: Trace, cands: Sequence[PathCandidate], gold: set[int], max_nodes: int,
                   height: int, what: str) -> tuple[str, str, int]:
    """Draw paths best-fate first until the node budget is spent; returns (html, note, paths drawn)."""
    g = _PathGraph(trace, gold)
    g.add_seeds(_neuropath(trace))
    drawn, skipped = 0, 0
    for c in _ordered(cands):
        if len(g.nodes) + g.new_nodes_for(c) > max_nodes:
            skipped += 1
            continue
        g.add_path(c)
        drawn += 1
    nodes, edges = g.finish()
    counts = {f: sum(1 for c in cands if c.fate == f) for f in FATES}
    parts = [f"{n} {FATE_WORDS[f]}" for f, n in counts.items() if n]
    note = f"{what}: {len(cands)} candidate paths" + (f" ({', '.join(parts)})" if parts else "") + "."
    if skipped:
        note += f" Showing {drawn} of {len(cands)} paths (capped at {max_nodes} nodes; the least kept paths left out)."
    html = render(nodes, edges, height=height, edge_titles=g.edge_titles, passages=passages_of(trace),
                  group_heading=f"fate ({what.lower()})")
    return html, note, drawn


def _hop(detail: NeuroPathDetail, hop: int) -> NeuroPathHop:
    for h in detail.hops:
        if h.hop == hop:
            return h
    have = [h.hop for h in detail.hops]
    raise ValueError(f"this trace has no hop {hop} (hops: {have or 'none'})")


def neuropath_hop_graph(trace: Trace, hop: int, *, gold_chunk_ids: Iterable[int] | None = None,
                        max_nodes: int = DEFAULT_NODES, height: int = 560) -> Result:
    """The paths listed at one hop: valid ones green and thick, expanded orange, dropped and pruned
    grey and dashed; seeds are stars, their coreference candidates squares. Paths the likelihood
    tracker judged lead their triples' labels with their P(yes) (the best through a shared triple)
    and name it on hover."""
    detail = _neuropath(trace)
    h = _hop(detail, hop)
    html, note, _ = _paths_picture(trace, h.candidates, _gold(gold_chunk_ids, trace, ("path",)), max_nodes,
                                   height, f"Hop {hop}")
    if h.failed:
        note += f" Tracking failed at this hop: {h.failure}"
    return html, note


def neuropath_overview(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None, include_pruned: bool = False,
                       max_nodes: int = DEFAULT_NODES, height: int = 600) -> Result:
    """Every hop's paths in one picture, each path in its last recorded state."""
    detail = _neuropath(trace)
    every = [c for h in detail.hops for c in h.candidates]
    # A kept path is re-listed in the next hop as a copy (kept_from set, parent = the original):
    # draw the copy, which carries the later judgement.
    relisted = {c.parent for c in every if c.kept_from is not None and c.parent}
    cands = [c for c in every if c.pid not in relisted]
    pruned = [c for c in cands if c.fate == "pruned"]
    if not include_pruned:
        cands = [c for c in cands if c.fate != "pruned"]
    html, note, _ = _paths_picture(trace, cands, _gold(gold_chunk_ids, trace, ("path",)), max_nodes, height,
                                   f"All {len(detail.hops)} hop(s)")
    if pruned and not include_pruned:
        note += f" {len(pruned)} pruned paths not drawn."
    if detail.fallback_dense:
        note += " No seeds were found: this query fell back to dense retrieval."
    return html, note




# ------------------------------------------------------------------ step replay
def highlighted_nodes(trace: Trace, step_index: int) -> list[str]:
    """Ids of the trace's graph nodes added by steps 0..step_index, in node order."""
    step_picture.check_step(trace, step_index)
    return [n.id for n in step_picture.known_nodes(trace, step_index)]


def _step_drawing(trace: Trace, step_index: int, gold_chunk_ids: Iterable[int] | None, max_nodes: int
                  ) -> tuple[step_picture.StepPicture, dict[str, Any]]:
    """A step's picture and how it is drawn (colours, sizes, highlight): one home for both the
    step's page and the layout every step shares."""
    pic = step_picture.step_picture(trace, step_index, gold_chunk_ids=gold_chunk_ids, max_nodes=max_nodes)
    pagerank = step_style(trace.method) == "pagerank"
    return pic, {"highlight": pic.highlight, "colours": palette.PAGERANK_COLOURS if pagerank else None,
                 "sizes": mass_sizes(pic.nodes) if pagerank else None}


def step_layout(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None,
                max_nodes: int = DEFAULT_NODES) -> FixedLayout:
    """One layout for every step of the replay: positions for each node any step draws (laid out
    together, with room for each label), the box they fill and the legend lines the longest step's
    legend takes, so stepping through the trace moves no node and resizes no frame."""
    step_picture.check_step(trace, 0)
    gold = list(gold_chunk_ids or ())
    room: dict[str, tuple[str, float]] = {}
    pairs: set[tuple[str, str]] = set()
    rows = 0
    for s in range(len(trace.steps)):
        pic, how = _step_drawing(trace, s, gold, max_nodes)
        for nid, (text, radius) in label_room(pic.nodes, how["sizes"]).items():
            was = room.get(nid, ("", 0.0))  # the longest label and the largest size a node gets
            room[nid] = (max(was[0], text, key=len), max(was[1], radius))
        pairs |= {(e.source, e.target) for e in pic.edges}
        rows = max(rows, legend.rows_of(legend_of(pic.nodes, pic.edges, **how)))
    base = layout(list(room), sorted(pairs))
    return FixedLayout(fit_labels(base, room, px=looks.current().label_px), legend_rows=rows)


def step_graph(trace: Trace, step_index: int, *, gold_chunk_ids: Iterable[int] | None = None,
               max_nodes: int = DEFAULT_NODES, height: int = 560, fixed: FixedLayout | None = None) -> Result:
    """The replay at one step: only what steps 0..step_index knew (memrag.explain.step_picture: colours,
    marks, counts and the drawing cap), the newest step outlined. Coloured like the Ask page's pictures
    of the same method (by fate). Every step is drawn in one layout (`step_layout`; pass it as `fixed`
    to make it once per trace), so a node stays where the step before drew it."""
    pic, how = _step_drawing(trace, step_index, gold_chunk_ids, max_nodes)
    if fixed is None:
        fixed = step_layout(trace, gold_chunk_ids=gold_chunk_ids, max_nodes=max_nodes)
    html = render(pic.nodes, pic.edges, height=height, passages=passages_of(trace),
                  group_heading=f"at step {step_index + 1}", fixed=fixed, **how)
    return html, pic.note


# ------------------------------------------------------------------ HippoRAG 2
HIPPO_MIN_SIZE, HIPPO_MAX_SIZE = 8.0, 40.0


def mass_sizes(nodes: Sequence[GraphNode]) -> dict[str, float]:
    """Node id → drawn size growing with its PageRank mass (the node's score; square root, so a
    node with four times the mass is twice as large). The question and unscored nodes keep theirs."""
    masses = [n.score for n in nodes if n.kind != "query" and n.score is not None]
    top = max(masses, default=0.0)
    return {n.id: HIPPO_MIN_SIZE + (HIPPO_MAX_SIZE - HIPPO_MIN_SIZE) * (n.score / top) ** 0.5
            for n in nodes if n.kind != "query" and n.score is not None and top > 0}
