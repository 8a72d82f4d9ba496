"""The dense baseline's views on the Ask page: beside the graph methods its ranked head as a list that
fits a quarter of the page; in focus and in its Retrieval tab the question and its ranked passages
as a picture whose clicks open a passage's panel."""

from __future__ import annotations

from typing import Iterable

import pandas as pd
import streamlit as st

from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import TypedPicture, ranking_picture_of
from memrag.app.table_fit import fitted_table
from memrag.trace import Trace
from memrag.viz import figure, palette, tables
from memrag.viz import look as looks

DETAIL_HEIGHT = 460  # px of the Retrieval tab's picture
SIDE_PX = 210  # px of a list beside three other methods at 1,440 px (a quarter of the content, less gaps)
HEAD = 10


def side_list(trace: Trace, ids: Iterable[int] | None) -> pd.DataFrame:
    """The ranked head as the side-by-side list shows it: rank, title (a gold one starred), score."""
    head = tables.ranked_table(trace, ids, limit=HEAD)
    return pd.DataFrame({"#": head["position"],
                         "title": [(f"{palette.GOLD_MARK} " if g else "") + t for t, g in zip(head["title"], head["gold"])],
                         "score": [f"{s:.2f}" if s is not None else "" for s in head["score"]]})


def overview_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> TypedPicture | None:
    """The picture the focus layout draws (large or small); side by side the list needs none."""
    look = looks.current()
    return ranking_picture_of(trace, ids, height) if look.label_all or look.compact else None


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    picture = overview_picture(trace, ids, height)
    if picture is not None:
        picture.show(trace, height)
        return
    st.caption("Dense: the passages nearest the question (its picture is in focus and under details).")
    # three narrow columns that fit a quarter of the page: the title wraps instead of pushing the
    # score past the column's edge
    fitted_table(side_list(trace, ids), wrap=["title"], budget_px=SIDE_PX,
                 help={"title": f"{palette.GOLD_MARK} = a chunk of a gold passage"})


def first_detail_picture(trace: Trace, ids: Iterable[int] | None) -> TypedPicture:
    return ranking_picture_of(trace, ids, DETAIL_HEIGHT, figure.DESIGN_WIDTH, what="detail")


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    first_detail_picture(trace, gold_ids).show(trace, DETAIL_HEIGHT)


VIEWS = MethodViews(detail, overview, overview_picture=overview_picture, first_detail_picture=first_detail_picture)
