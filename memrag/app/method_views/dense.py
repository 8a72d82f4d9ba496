"""The dense baseline's views on the Ask page: its ranked head beside the graph methods, its star
of question → passages in detail."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app.method_views import MethodViews
from memrag.app.view_cache import drawn
from memrag.app.widgets import CELL_PAD_PX, LINE_PX, graph
from memrag.trace import Trace
from memrag.viz import palette, tables, trace_graphs


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    st.caption("Dense: the passages nearest the question (the graph is under details).")
    head = tables.ranked_table(trace, ids, limit=10)
    # narrow column: the rank as the index, and only what compares with the graphs beside it
    # gold as a star on the title: a narrow column has no room for a third, cut-off column
    head["title"] = [(f"{palette.GOLD_MARK} " if g else "") + t for t, g in zip(head["title"], head["gold"])]
    # titles wrap (rows of three lines, a fixed title width) instead of being cut at 1,440 px
    st.dataframe(head.set_index("position")[["title", "score"]], height=height, row_height=3 * LINE_PX + CELL_PAD_PX,
                 column_config={"title": st.column_config.TextColumn(
                     width="medium", help=f"{palette.GOLD_MARK} = a chunk of a gold passage"),
                     "score": st.column_config.NumberColumn(width="small", format="%.2f")})


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    graph(drawn(trace_graphs.dense_graph, trace, gold_chunk_ids=gold_ids), 420, name="dense-ranking")


VIEWS = MethodViews(detail, overview, renderer=trace_graphs.dense_graph)
