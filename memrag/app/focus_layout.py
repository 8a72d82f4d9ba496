"""The Ask page's focus layout: one method's picture large with every label written, the others as
small multiples above it, each with a button that brings it into focus; a presenter switch draws
type and nodes larger for a room. Each picture is the method's own overview (its views module),
drawn under a look (`memrag.viz.look`) instead of a layout of its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from memrag.app import graph_view
from memrag.app.question_gold import Gold
from memrag.app.param_widgets import METHOD_LABELS
from memrag.trace import Trace
from memrag.viz import look as looks

FOCUS_HEIGHT = 620  # px of graph: at 1,440 × 900 it fills the screen under the buttons
SMALL_HEIGHT = 170
Draw = Callable[[Trace, Gold | None, int], None]  # a method's overview picture: trace, gold, height


def default_focus(traces: Sequence[Trace]) -> str:
    """The first method whose trace holds a graph (the baseline's ranked list has none to read)."""
    return next((t.method for t in traces if t.edges), traces[0].method)


SMALL_LOOK = looks.Look(compact=True)


def focus_look(presenter: bool) -> looks.Look:
    return looks.Look(scale=looks.PRESENTER_SCALE if presenter else 1.0, label_all=True)


def first_plan(traces: Sequence[Trace]) -> list[tuple[Trace, looks.Look, int]]:
    """What `focus_graphs` draws when results first show (the default focus, no presenter): each
    picture with its look and height, so a prefetch makes the same cache entries."""
    focused = default_focus(traces) if traces else None
    return [(t, focus_look(False), FOCUS_HEIGHT) if t.method == focused else (t, SMALL_LOOK, SMALL_HEIGHT)
            for t in traces]


def _focus_on(key: str, method: str) -> None:
    st.session_state[key] = method


def focus_graphs(traces: Sequence[Trace], gold: Gold | None, key: str, draw: Draw) -> None:
    """The pictures of `traces` in focus layout; `key` keeps the focus and the presenter switch."""
    methods = [t.method for t in traces]
    focus_key = f"{key}_focus"
    if st.session_state.get(focus_key) not in methods:
        st.session_state[focus_key] = default_focus(traces)
    focused = next(t for t in traces if t.method == st.session_state[focus_key])
    presenter = st.toggle("Presenter: larger type and nodes", key=f"{key}_presenter",
                          help="Labels and nodes about a third larger, for a projector.")
    others = [t for t in traces if t is not focused]
    if others:
        for col, t in zip(st.columns(len(others)), others):
            with col, looks.drawing(SMALL_LOOK), graph_view.results(key):
                st.button(f"Focus: {METHOD_LABELS.get(t.method, t.method)}", key=f"{key}_focus_{t.method}",
                          on_click=_focus_on, args=(focus_key, t.method), icon=":material/open_in_full:",
                          width="stretch", help="Draw this method's picture large, with every label.")
                draw(t, gold, SMALL_HEIGHT)
    st.subheader(f"{METHOD_LABELS.get(focused.method, focused.method)} in focus")
    st.caption("Click a node for its details: what it is, its relations and source passages (on NeuroPath's "
               "route, a diamond on an edge for its triples, a box to open the paths it folds).")
    with looks.drawing(focus_look(presenter)), graph_view.results(key):
        draw(focused, gold, FOCUS_HEIGHT)
