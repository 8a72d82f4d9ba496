"""The one list of retrieval methods. The app, the CLI, compare mode and the evaluation read it;
adding a method means one module in methods/ (its `retrieve` returns a `Trace`) and one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memrag.config import DenseParams, EcphoryParams, HippoRAG2Params, NeuroPathParams
from memrag.methods import dense, ecphory, hipporag2, neuropath
from memrag.methods.base import QueryContext
from memrag.trace import Trace
from memrag.viz import trace_graphs


@dataclass(frozen=True)
class Method:
    name: str  # the id in traces, CLI flags and results files
    label: str  # what a reader sees
    params: type  # its parameters dataclass (config.py), with help text per field
    retrieve: Callable[[QueryContext, Any], Trace]
    renderer: Callable[..., tuple[str, str]]  # its trace's overview picture (memrag.viz), HTML + legend
    # Whether retrieval with these parameters calls the LLM (the answer step aside).
    uses_llm: Callable[[Any], bool] = lambda params: True


# Run order: dense first, so a live ask shows the baseline while the graph methods still work.
METHODS: tuple[Method, ...] = (
    Method("dense", "Dense", DenseParams, dense.retrieve, trace_graphs.dense_graph, uses_llm=lambda p: False),
    Method("neuropath", "NeuroPath", NeuroPathParams, neuropath.retrieve, trace_graphs.neuropath_overview),
    Method("ecphory", "EcphoryRAG", EcphoryParams, ecphory.retrieve, trace_graphs.ecphory_activation_graph),
    Method("hipporag2", "HippoRAG 2", HippoRAG2Params, hipporag2.retrieve, trace_graphs.hipporag2_overview,
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
