"""The dense baseline's views on the Ask page: its ranked head beside the graph methods, its star
of question → passages in detail."""

from __future__ import annotations

from typing import Iterable

import pandas as pd
import streamlit as st

from memrag.app.method_views import MethodViews
from memrag.app.view_cache import drawn
from memrag.app.table_fit import fitted_table
from memrag.app.widgets import graph
from memrag.trace import Trace
from memrag.viz import palette, tables, trace_graphs


NARROW_PX = 220  # px of a quarter-width column at 1,440 px, less its padding


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    st.caption("Dense: the passages nearest the question (the graph is under details).")
    head = tables.ranked_table(trace, ids, limit=10)
    # narrow column: the rank as the index, and only what compares with the graphs beside it
    # gold as a star on the title: a narrow column has no room for a third, cut-off column
    head["title"] = [(f"{palette.GOLD_MARK} " if g else "") + t for t, g in zip(head["title"], head["gold"])]
    # titles wrap, the columns sized to a small multiple's width (the narrowest: four methods side by side)
    head["score"] = pd.to_numeric(head["score"], errors="coerce").round(2)
    fitted_table(head[["position", "title", "score"]], wrap=["title"], budget_px=NARROW_PX,
                 help={"title": f"{palette.GOLD_MARK} = a chunk of a gold passage"})


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    graph(drawn(trace_graphs.dense_graph, trace, gold_chunk_ids=gold_ids), 420, name="dense-ranking")


VIEWS = MethodViews(detail, overview, renderer=trace_graphs.dense_graph)
