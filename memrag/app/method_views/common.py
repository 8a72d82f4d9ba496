"""Helpers every method's Ask-page views share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from memrag.app.view_cache import drawn
from memrag.app.widgets import graph
from memrag.methods import registry
from memrag.trace import Trace
from memrag.viz import trace_graphs


@dataclass(frozen=True)
class Picture:
    """One picture of a trace as a view draws it: the renderer and options `drawn` is called with
    (so a prefetch that makes it meets the same cache entry) and the name its files download as."""
    render: Callable[..., tuple[str, str]]
    name: str
    gold_chunk_ids: Iterable[int] | None
    height: int | None = None
    args: tuple[Any, ...] = ()  # after the trace: a step, a hop

    def make(self, trace: Trace) -> tuple[str, str]:
        options: dict[str, Any] = {"gold_chunk_ids": self.gold_chunk_ids}
        if self.height is not None:
            options["height"] = self.height
        return drawn(self.render, trace, *self.args, **options)

    def show(self, trace: Trace, height: int) -> None:
        graph(self.make(trace), height, name=self.name)


def method_picture_of(trace: Trace, ids: Iterable[int] | None, height: int, drawable: bool) -> Picture:
    """The method's own picture (the registry's renderer), or its ranking as a dense graph when
    the trace holds nothing to draw."""
    spec = registry.get(trace.method)
    renderer = spec.views.renderer or spec.renderer
    if drawable and renderer is not None:
        return Picture(renderer, f"{trace.method}-overview", ids, height)
    return Picture(trace_graphs.dense_graph, f"{trace.method}-ranking", ids, height)


def method_picture(trace: Trace, ids: Iterable[int] | None, height: int, drawable: bool) -> None:
    method_picture_of(trace, ids, height, drawable).show(trace, height)


def numbers(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids) or "none"
