"""Helpers every method's Ask-page views share."""

from __future__ import annotations

from typing import Iterable, Sequence

from memrag.app.view_cache import drawn
from memrag.app.widgets import graph
from memrag.methods import registry
from memrag.trace import Trace
from memrag.viz import trace_graphs


def method_picture(trace: Trace, ids: Iterable[int] | None, height: int, drawable: bool) -> None:
    """The method's own picture (the registry's renderer), or its ranking as a dense graph when
    the trace holds nothing to draw."""
    if drawable:
        graph(drawn(registry.get(trace.method).renderer, trace, gold_chunk_ids=ids, height=height), height,
              name=f"{trace.method}-overview")
    else:
        graph(drawn(trace_graphs.dense_graph, trace, gold_chunk_ids=ids, height=height), height, name=f"{trace.method}-ranking")


def numbers(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids) or "none"
