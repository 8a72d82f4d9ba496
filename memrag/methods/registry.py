"""The one list of retrieval methods. The app, the CLI, compare mode and the evaluation read it;
adding a method means one module in methods/ (its `retrieve` returns a `Trace`) and one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memrag.config import DenseParams, EcphoryParams, HippoRAG2Params, NeuroPathParams
from memrag.methods.base import QueryContext
from memrag.trace import Trace


def _resolve(target: str) -> Any:
    """'package.module:name' → that object, importing the module on first use."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Method:
    name: str  # the id in traces, CLI flags and results files
    label: str  # what a reader sees
    params: type  # its parameters dataclass (config.py), with help text per field
    # 'module:function' names, imported on first use: listing the methods (the CLI's flags and
    # help) must not load every algorithm and the graph-drawing stack.
    retrieve_at: str  # (QueryContext, params) -> Trace
    renderer_at: str  # its trace's overview picture (memrag.viz), HTML + legend
    # Whether retrieval with these parameters calls the LLM (the answer step aside).
    uses_llm: Callable[[Any], bool] = lambda params: True

    @property
    def retrieve(self) -> Callable[[QueryContext, Any], Trace]:
        return _resolve(self.retrieve_at)

    @property
    def renderer(self) -> Callable[..., tuple[str, str]]:
        return _resolve(self.renderer_at)


# Run order: dense first, so a live ask shows the baseline while the graph methods still work.
METHODS: tuple[Method, ...] = (
    Method("dense", "Dense", DenseParams, "memrag.methods.dense:retrieve", "memrag.viz.trace_graphs:dense_graph", uses_llm=lambda p: False),
    Method("neuropath", "NeuroPath", NeuroPathParams, "memrag.methods.neuropath:retrieve", "memrag.viz.trace_graphs:neuropath_overview"),
    Method("ecphory", "EcphoryRAG", EcphoryParams, "memrag.methods.ecphory:retrieve", "memrag.viz.trace_graphs:ecphory_activation_graph"),
    Method("hipporag2", "HippoRAG 2", HippoRAG2Params, "memrag.methods.hipporag2:retrieve", "memrag.viz.trace_graphs:hipporag2_overview",
           uses_llm=lambda p: p.recognition),
)
BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
# Display order: the graph methods side by side, the baseline after them.
DISPLAY_ORDER: tuple[str, ...] = ("neuropath", "ecphory", "hipporag2", "dense")
LABELS: dict[str, str] = {name: BY_NAME[name].label for name in DISPLAY_ORDER}


def get(name: str) -> Method:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(NAMES)}") from None
