"""The dense baseline's views on the Ask page: its ranked head beside the graph methods, its star
of question → passages in detail."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app.method_views import MethodViews
from memrag.app.view_cache import drawn
from memrag.app.widgets import graph
from memrag.trace import Trace
from memrag.viz import tables, trace_graphs


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    st.caption("Dense: the passages nearest the question (the graph is under details).")
    head = tables.ranked_table(trace, ids, limit=10)
    # narrow column: the rank as the index, and only what compares with the graphs beside it
    # gold as a star on the title: a narrow column has no room for a third, cut-off column
    head["title"] = [("★ " if g else "") + t for t, g in zip(head["title"], head["gold"])]
    st.dataframe(head.set_index("position")[["title", "score"]], height=height, column_config={
        "title": st.column_config.TextColumn(help="★ = a chunk of a gold passage")})


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    graph(drawn(trace_graphs.dense_graph, trace, gold_chunk_ids=gold_ids), 420, name="dense-ranking")


VIEWS = MethodViews(detail, overview)
