"""A trace's typed picture on the Ask page, drawn by memrag.viz.figure, whose clicks reach Python.

The chart and what a click opens run in their own fragment: a click reruns only them, never the
page around. A click on a count node opens (or folds) the paths it stands for; a click on any other
node or on an edge's handle opens a panel Python writes: what it is, its relations and passages
in the memory, what the trace did with it (the method's own part) and the edits it allows."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from memrag.app import edit_views, memory_state
from memrag.app.widgets import downloads, frame
from memrag.index.memory import Memory
from memrag.picture import Picture, PictureEdge, PictureNode
from memrag.plain_text import escape_markdown
from memrag.trace import Trace
from memrag.viz import figure, memory_explorer, palette
from memrag.viz.drawing import of_picture
from memrag.viz.look import Look

Make = Callable[[frozenset[str]], Picture]  # the picture with these count nodes opened
# the method's own part of a panel: (trace, the clicked node or edge, the results' key)
TracePart = Callable[[Trace, "PictureNode | PictureEdge", str], None]
RELATION_ROWS = 12
PASSAGES = 3


_results: contextvars.ContextVar[str] = contextvars.ContextVar("memrag_results_key", default="res")


@contextlib.contextmanager
def results(key: str) -> Iterator[None]:
    """Charts drawn inside the block belong to the results shown under `key` ("show where" opens there)."""
    token = _results.set(key)
    try:
        yield
    finally:
        _results.reset(token)


def results_key() -> str:
    return _results.get()


@dataclass(frozen=True)
class Chart:
    """How one picture is drawn where it is: its look, its design box, and the results it belongs to."""
    look: Look
    height: int
    width: float = figure.DESIGN_WIDTH
    results_key: str = "res"
    step: int | None = None  # the picture's step look to draw (memrag.picture.StepLook); None: all of it
    top: int = 0  # px at least above the graph for the legend (a replay's steps keep their nodes in place)


def chosen_key(key: str) -> str:
    return f"{key}_chosen"


def opened_key(key: str) -> str:
    return f"{key}_opened"


def picture_chart(trace: Trace, make: Make, key: str, chart: Chart, part: TracePart | None = None) -> None:
    """Draw the picture `make` gives; clicks choose what the panel shows (see the module)."""
    _fragment(trace, make, key, chart, part)


@st.fragment
def _fragment(trace: Trace, make: Make, key: str, chart: Chart, part: TracePart | None) -> None:
    picture = make(frozenset(st.session_state.get(opened_key(key), ())))
    drawn = figure.draw(picture, chart.look, width=chart.width, height=chart.height, step=chart.step,
                        top=chart.top)
    st.plotly_chart(drawn.figure, key=f"{key}_chart", on_select=lambda: _clicked(key, picture),
                    selection_mode="points", config={"displayModeBar": False, "scrollZoom": False})
    if picture.note and not chart.look.compact:
        st.caption(escape_markdown(picture.note))
    if not chart.look.compact:  # a small multiple's files are its focused picture's
        downloads(of_picture(picture, drawn, chart.look), picture.name, ident=key)
    target = st.session_state.pop(chosen_key(key), None)
    if target is not None:
        kind, ident = target
        found = picture.node(ident) if kind == "node" else picture.edge(ident)
        if found is not None:
            _panel(trace, picture, found, key, chart.results_key, part)


def _clicked(key: str, picture: Picture) -> None:
    """A click: a count node opens or folds; anything else is what the panel shows next."""
    event = st.session_state.get(f"{key}_chart")
    points = event.selection.points if event else []
    target = figure.target_of(points[0].get("customdata")) if points else None
    if target is None:
        return
    kind, ident = target
    node = picture.node(ident) if kind == "node" else None
    if node is not None and node.kind == "count":
        opened = set(st.session_state.get(opened_key(key), ()))
        opened ^= {ident}
        st.session_state[opened_key(key)] = tuple(sorted(opened))
        return
    st.session_state[chosen_key(key)] = target


@st.dialog("What you clicked", width="large")
def _panel(trace: Trace, picture: Picture, target: PictureNode | PictureEdge, key: str, results_key: str,
           part: TracePart | None) -> None:
    path, memory, _ = memory_state.active_memory()
    same = memory is not None and memory.fingerprint() == trace.memory_fingerprint
    with st.container(key=f"{key}_panel"):
        # what it is, then what the retrieval did with it, then what the memory holds about it
        facts = node_facts if isinstance(target, PictureNode) else edge_facts
        facts(picture, target, None)
        if part is not None:
            part(trace, target, results_key)
        if same:
            facts(picture, target, memory, heading=False)
        if not same:
            st.caption("The open memory is not the one this trace was made on: its facts and edits are not shown.")
        elif path is not None and memory is not None:
            _edits(path, memory, target, key)


ROLE_WORDS = {"seed": "seed: where the search starts", "coref": "coreference candidate",
              "path": "reached by a path", "count": "paths folded into one node",
              "final": "final engram (E_final)", "cue": "cue from the question",
              "context": "passage in the answer's context", "left out": "gold passage outside the context",
              "question": "the question"}


def _what(fate: str, role: str) -> str:
    """A node's part in words: its role, then its fate unless the role says it already."""
    said = palette.group_word(fate) if fate and fate != role else ""
    return " · ".join(x for x in (ROLE_WORDS.get(role, role), said) if x)


def node_facts(picture: Picture, node: PictureNode, memory: Memory | None, heading: bool = True) -> None:
    """A node: its name and its part in the picture (`heading`), and from `memory`, when given, its
    relations and passages."""
    if heading:
        st.subheader(escape_markdown(node.label), anchor=False)
        st.caption(escape_markdown(_what(node.fate, node.role or node.kind)
                                   + (" · from a gold passage" if node.gold else "")))
    if memory is None or node.kind != "entity" or memory.entity(node.ref) is None:
        return
    facts = memory_explorer.entity_facts(memory, node.ref, passages=PASSAGES)
    st.caption(escape_markdown(f"{facts.type} · {facts.mentions} mention(s) · {len(facts.relations)} relation(s)"))
    if facts.relations:
        st.dataframe(frame(facts.relations[:RELATION_ROWS], ["head", "relation", "tail", "passage"]),
                     hide_index=True)
    for cid, title, text in facts.passages:
        with st.expander(escape_markdown(f"{title} · chunk {cid}")):
            st.text(text)
    if facts.candidates:
        st.caption(escape_markdown("coreference candidates: " + ", ".join(facts.candidates)))


def edge_facts(picture: Picture, edge: PictureEdge, memory: Memory | None, heading: bool = True) -> None:
    """An edge: what it joins (`heading`), and from `memory`, when given, the triples it draws, each
    with its passage."""
    a, b = picture.node(edge.source), picture.node(edge.target)
    if heading:
        ends = f"{a.label if a else edge.source} — {b.label if b else edge.target}"
        st.subheader(escape_markdown(edge.relation or edge.kind), anchor=False)
        st.caption(escape_markdown(f"{edge.kind} · {ends}" + (f" · {_what(edge.fate, '')}" if edge.fate else "")))
        if edge.kind == "coreference":
            st.write(escape_markdown(f"{b.label if b else edge.target} is a coreference candidate of "
                                     f"{a.label if a else edge.source}: a path went on from it as if from "
                                     "the same thing (candidate sets are per node, not merges)."))
    if memory is None:
        return
    for tid in triple_ids(edge):
        if not 0 <= tid < len(memory.triples):
            continue
        t = memory.triples[tid]
        st.text(f"{t.head} —{t.relation}→ {t.tail}")
        c = memory.chunks[t.chunk_id]
        with st.expander(escape_markdown(f"passage: chunk {t.chunk_id}")):
            st.text(c.text)


def triple_ids(edge: PictureEdge) -> list[int]:
    """The memory's triples an edge draws (its ref: their ids, comma-separated)."""
    return [int(x) for x in edge.ref.split(",") if x.strip().isdigit()] if edge.kind == "triple" else []


def _edits(path: str, memory: Memory, target: PictureNode | PictureEdge, key: str) -> None:
    with st.expander("Edit the memory"):
        if isinstance(target, PictureNode):
            if target.kind == "entity" and memory.entity(target.ref) is not None:
                edit_views.entity_actions(path, memory, target.ref, key=f"{key}_edit")
            return
        for tid in triple_ids(target):
            edit_views.triple_actions(path, memory, tid, key=f"{key}_edit_{tid}")


WARM_KEY = "memrag_renderer_warm"


def warm_renderer() -> None:
    """An empty, hidden chart: the browser loads and compiles plotly's code (its first chart costs the
    main thread ~0.5-0.9 s) while the page is read, not after the click that brings the pictures."""
    st.html(f"<style>.st-key-{WARM_KEY} {{display: none}}</style>")
    with st.container(key=WARM_KEY):
        st.plotly_chart(go.Figure(), key=f"{WARM_KEY}_chart", config={"staticPlot": True})
