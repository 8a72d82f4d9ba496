"""The Learn page's replay as typed pictures (memrag.picture), one per step, drawn by memrag.viz.figure.

Each step's picture is memrag.explain.step_picture's data at that step (nothing from a later step:
its colours, counts and cap), told so that it reads:
- every step's picture holds the same node ids in the same order and the same edges (only what is
  drawn differs: StepLook.shown), so the renderer's layout puts a node where the step before did;
- a node an earlier step drew and the 40-node cap would now leave out stays, faded: a step never
  takes away what the reader has just seen (EcphoryRAG's rounds passed the cap);
- a node the step's lesson names is labelled, and the gold answer's node says so wherever it is drawn;
- NeuroPath's completion step draws what completion added: the passages the kept paths were read
  from and those the completion search found, each saying why it is there; the paths' other
  entities fade;
- a seed is a seed in the legend, not "on no drawn path".
Words are plain text (the renderer escapes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memrag.explain.step_picture import step_picture
from memrag.methods.hipporag2.mass_picture import PAGERANK_WORDS, mass_weight, top_mass
from memrag.methods.spec import step_style
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode, StepLook
from memrag.trace import GraphEdge, GraphNode, Trace
from memrag.words import FATES, PATH_FATES

MAX_NODES = 40  # drawn at full strength per step; those drawn before stay, faded
GOLD_ANSWER = "gold answer"
COMPLETION_QUERY = "completion search"
ALL = 10**9
# legend words for a node's mark (role, fate); fates in the tables' words
ROLE_WORDS = {"seed": "seed (where the search starts)", "coref": "coreference candidate of a seed",
              "cue": "cue entity", "question": "the question", "final": "final engram (recalled by the re-rank)",
              "context": "passage in the answer's context", "dp": "passage on a kept path",
              "completion": "passage found by the completion search",
              "search": "the completion search (question, chain and what it still needs)"}
ROUND_WORDS = {0: "activated first (by the question and cues)"}
# the graph layer's group key of an engram first activated in round r (a key, never a sentence read back)
ROUND_OF = {f"round {r}": r for r in range(100)}


@dataclass
class _Step:
    nodes: dict[str, PictureNode]
    edges: dict[str, PictureEdge]
    keep: set[str]  # drawn at full strength
    lit: set[str]
    note: str


def _plain(s: str) -> str:
    return " ".join(s.casefold().split())


def _fate_and_role(n: GraphNode) -> tuple[str, str]:
    """(fate, role) of a step node as the renderer reads them: fate is the colour."""
    if n.kind == "query":
        return "", "question"
    if n.kind == "cue":
        return "", "cue"
    if n.kind == "chunk":  # a passage the answer reads has a colour of its own
        role = n.role or "context"
        return ("context" if role == "context" else ""), role
    if n.group in PAGERANK_WORDS:  # HippoRAG 2: seeded phrase, phrase or passage (its size is its mass)
        return "", n.group
    if n.group in FATES:
        return n.group, n.role
    if n.role == "final":  # one colour for what is recalled (its round stays on its tooltip)
        return "final", n.role
    if n.group.startswith("round "):  # an activated engram: coloured by its round (its origin is on its tooltip)
        return n.group, ""
    return ("" if n.role in ("seed", "coref") else n.group or "untouched"), n.role


def _node(n: GraphNode, step: int, named: set[str], answers: set[str], top_mass: float) -> PictureNode:
    fate, role = _fate_and_role(n)
    kind = {"query": "question", "chunk": "passage", "cue": "entity"}.get(n.kind, "entity")
    is_answer = n.kind in ("entity", "cue") and _plain(n.label) in answers
    tip = n.tooltip or n.label
    return PictureNode(n.id, f"{n.label} ({GOLD_ANSWER})" if is_answer else n.label, kind=kind, role=role, fate=fate,
                       weight=1.6 if role == "final" else _mass_weight(n, top_mass), step=n.step, labelled=is_answer or _plain(n.label) in named,
                       gold=n.gold, tooltip=tip + (f"\nthe question's {GOLD_ANSWER}" if is_answer else ""),
                       ref=n.id.partition(":")[2])


def _mass_weight(n: GraphNode, top_mass: float) -> float:
    """A PageRank picture's node by its mass (HippoRAG 2's own sizing); 1 elsewhere."""
    return 1.0 if n.kind == "query" else mass_weight(n.score, top_mass)


def _edge(e: GraphEdge) -> PictureEdge:
    kind = {"coref": "coreference", "cooccur": "activation", "provenance": "passage"}.get(e.kind, e.kind)
    return PictureEdge(e.id, e.source, e.target, kind=kind if kind in ("triple", "coreference", "activation", "passage")
                       else "activation", relation=e.label if e.kind == "triple" else "",
                       fate="pruned" if e.role == "unlisted" else e.role, bold=e.role == "valid", step=e.step,
                       tooltip=e.label, ref=e.id.partition(":")[2])


def _completion(trace: Trace, step: int, nodes: dict[str, PictureNode], edges: dict[str, PictureEdge]
                ) -> tuple[set[str], set[str]]:
    """NeuroPath's completion: the answer's passages, each tied to what put it there: a kept path's
    entities (the passages it was read from) or the completion search (with its query). Returns (the
    ids it adds, the entities on kept paths)."""
    d = trace.detail(NeuroPathDetail)
    assert d is not None
    context = trace.answer.context_chunk_ids if trace.answer else trace.ranked_ids()[:5]
    ranked = {r.chunk_id: (pos, r) for pos, r in enumerate(trace.ranked, start=1)}
    on_paths = {e.source for e in edges.values() if e.bold} | {e.target for e in edges.values() if e.bold}
    added: set[str] = set()
    query = PictureNode("q:completion", COMPLETION_QUERY, kind="question", role="search", step=step, labelled=True,
                        tooltip=f"{COMPLETION_QUERY}: {d.de_query}" if d.de_query else COMPLETION_QUERY)
    for cid in context:
        pos, r = ranked.get(cid, (None, None))
        c = trace.chunk(cid)
        by_path = cid in d.dp_chunk_ids
        pid = f"c:{cid}"
        why = r.why if r is not None else ""
        # "#2 Port Alder": its place in the ranked list, then its title; larger, and named before the entities
        nodes[pid] = PictureNode(pid, f"#{pos} " + (c.title if c else f"chunk {cid}"),
                                 kind="passage", role="dp" if by_path else "completion",
                                 fate="valid" if by_path else "", weight=1.4, step=step, labelled=True,
                                 tooltip=f"rank {pos}: {why}" if pos else why, ref=str(cid))
        added.add(pid)
        if by_path:
            ends = sorted({end for e in edges.values() if e.bold and (trace_chunk(trace, e) == cid)
                           for end in (e.source, e.target)})
            for end in ends:
                eid = f"p:{end}|{cid}"
                edges[eid] = PictureEdge(eid, end, pid, kind="passage", step=step, tooltip="read from this passage")
                added.add(eid)
        else:
            nodes.setdefault(query.id, query)
            added.add(query.id)
            eid = f"p:q|{cid}"
            edges[eid] = PictureEdge(eid, query.id, pid, kind="activation", step=step, tooltip=why)
            added.add(eid)
    return added, on_paths


def trace_chunk(trace: Trace, edge: PictureEdge) -> int | None:
    """The chunk a triple edge was read from (the trace's graph edge carries it)."""
    found = next((e for e in trace.edges if e.id == edge.id), None)
    return found.chunk_id if found is not None else None


def _legend(nodes: Iterable[PictureNode], pagerank: bool) -> tuple[LegendEntry, ...]:
    words = {**ROLE_WORDS, **PAGERANK_WORDS} if pagerank else ROLE_WORDS
    counts: dict[tuple[str, str, str], int] = {}
    for n in nodes:
        key = (n.role if n.role in words else "", n.fate, n.kind)
        counts[key] = counts.get(key, 0) + 1
    out = []
    for (role, fate, kind), k in counts.items():
        if role in words:
            label = words[role] + (f", {PATH_FATES[fate].label}" if fate in PATH_FATES else "")
        elif fate in ROUND_OF:
            r = ROUND_OF[fate]
            label = ROUND_WORDS.get(r, f"activated in round {r}")
        else:
            label = PATH_FATES[fate].label if fate in PATH_FATES else ("on no drawn path" if fate == "untouched"
                                                                     else role or fate or "entity")
        # the mark as the renderer reads it: a passage or the question by its kind, an entity by its role
        mark = kind if kind in ("passage", "question") else role or "entity"
        out.append(LegendEntry(f"node:{mark}" + (f":{fate}" if fate else ""), label, k,
                               "node" if k == 1 else "nodes"))
    return tuple(out)


def learn_pictures(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None, gold_answers: Sequence[str] = (),
                   names: Sequence[Sequence[str]] = (), max_nodes: int = MAX_NODES) -> list[Picture]:
    """One picture per step of the trace (see the module); `names[s]`: the names step s's lesson
    quotes (memrag.methods.lesson_kit.Lesson.names)."""
    gold = list(gold_chunk_ids or ())
    answers = {_plain(a) for a in gold_answers if a.strip()}
    steps: list[_Step] = []
    pagerank = step_style(trace.method) == "pagerank"
    for s in range(len(trace.steps)):
        named = {_plain(x) for x in (names[s] if s < len(names) else [])}
        full = step_picture(trace, s, gold_chunk_ids=gold, max_nodes=ALL)
        capped = step_picture(trace, s, gold_chunk_ids=gold, max_nodes=max_nodes)
        top = top_mass(full.nodes) if pagerank else 0.0
        nodes = {n.id: _node(n, s, named, answers, top) for n in full.nodes}
        edges = {e.id: _edge(e) for e in full.edges}
        keep, lit = {n.id for n in capped.nodes}, set(capped.highlight)
        note = capped.note
        if trace.steps[s].kind == "completion" and trace.detail(NeuroPathDetail) is not None:
            added, on_paths = _completion(trace, s, nodes, edges)
            keep = (keep & on_paths) | {i for i in added if i in nodes}
            lit = added
            note += (" Completion: the answer's passages, those the kept paths were read from (green) and those "
                     "the completion search found (linked to its query); the paths' other entities fade.")
        steps.append(_Step(nodes, edges, keep, lit, note))
    return _pictures(trace, steps, pagerank)


def _pictures(trace: Trace, steps: list[_Step], pagerank: bool) -> list[Picture]:
    """The steps as pictures sharing one set of nodes and edges (one layout), each with its look."""
    order: dict[str, PictureNode] = {}
    links: dict[str, PictureEdge] = {}
    for st in steps:
        for n in st.nodes.values():
            order.setdefault(n.id, n)
        for e in st.edges.values():
            links.setdefault(e.id, e)
    out = []
    seen: set[str] = set()  # drawn at an earlier step
    for s, st in enumerate(steps):
        faded = {i for i in seen if i in st.nodes and i not in st.keep}
        drawn = st.keep | faded
        shown_edges = {e.id for e in st.edges.values() if e.source in drawn and e.target in drawn}
        faded_edges = {e for e in shown_edges if st.edges[e].source in faded or st.edges[e].target in faded}
        nodes = tuple(st.nodes.get(i, n) for i, n in order.items())
        edges = tuple(st.edges.get(i, e) for i, e in links.items())
        note = st.note + (f" {len(faded)} node(s) drawn before stay, faded." if faded else "")
        look = StepLook(s, trace.steps[s].title, frozenset(drawn | shown_edges),
                        frozenset((st.lit & (drawn | shown_edges)) - faded), frozenset(faded | faded_edges))
        out.append(Picture(f"learn-{trace.method}-step-{s + 1}", nodes, edges,
                           _legend((st.nodes[i] for i in drawn), pagerank), note, (look,)))
        seen |= drawn
    return out


__all__ = ["learn_pictures", "MAX_NODES", "GOLD_ANSWER", "COMPLETION_QUERY"]
