"""`ask`: one question, one or more methods, each returning a Trace with its answer.

Used by the app, the CLI and the evaluation alike.
"""

from __future__ import annotations

import subprocess
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from memrag.methods import answer as answer_step
from memrag.embed import Embedder
from memrag.llm.base import LLM
from memrag.index.memory import Memory
from memrag.methods import registry
from memrag.methods.base import QueryContext
from memrag.index.passages_only import is_passages_only
from memrag.index.stale import explained_miss
from memrag.llm.recordings import StaleRecording
from memrag.prompts import PROMPT_VERSION
from memrag.trace import Stamp, Trace



def __getattr__(attr: str) -> Any:
    if attr == "METHODS":  # the older constant, read now: a method registered later is in it
        return registry.names()
    raise AttributeError(attr)


@lru_cache(maxsize=1)
def git_revision() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=5)
        rev = out.stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return (rev + ("+dirty" if dirty else "")) if rev else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def stamp_for(llm: LLM | None, embedder_id: str, *, params: dict[str, Any] | None = None, corpus: str = "") -> Stamp:
    """The one reproducibility stamp: code revision, LLM (and its file), embedder, prompts."""
    ident = llm.identity() if llm is not None else {}
    return Stamp(memrag_revision=git_revision(), llm_backend=getattr(llm, "backend", ""),
                 llm_model=getattr(llm, "model", ""), llm_file_sha256=ident.get("sha256"),
                 embedder=embedder_id, params=dict(params or {}), prompt_version=PROMPT_VERSION, corpus=corpus)


def make_stamp(memory: Memory, llm: LLM | None, embedder: Embedder, corpus: str = "") -> Stamp:
    """A question's stamp; the corpus is named by the memory's fingerprint unless given."""
    return stamp_for(llm, embedder.model_id, corpus=corpus or f"{memory.name or 'memory'}@{memory.fingerprint()}")


def context_size(method: str, params: Any) -> int:
    """How many chunks from the head of the ranked list the answer step reads."""
    return registry.get(method).context_size(params)


def resolve_params(method: str, params: dict[str, Any] | Any | None) -> Any:
    return registry.params_of(method, params)


def ask(memory: Memory, question: str, *, llm: LLM | None, embedder: Embedder,
        methods: tuple[str, ...] | list[str] | None = None, params: dict[str, Any] | None = None,
        answer: bool = True, corpus: str = "") -> list[Trace]:
    """Run each method on the question; `params` maps method name → params (dataclass or dict).

    The query-entity call is made once and shared between methods.
    """
    methods = registry.names() if methods is None else methods
    unknown = [m for m in methods if m not in registry.names()]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(registry.names())}")
    if is_passages_only(memory) and (answer or any(not registry.get(m).vectors_only for m in methods)):
        raise ValueError("this memory holds passages only (built for a dense evaluation, no extraction): "
                         "it supports dense retrieval without an answer step; build it with extraction "
                         "for NeuroPath, EcphoryRAG or answers")
    given = registry.params_map(params)  # every shape and value checked before any work
    ctx = QueryContext(memory, llm, embedder, question, make_stamp(memory, llm, embedder, corpus))
    return [run_method(ctx, method, given.get(method), answer=answer) for method in methods]


def run_method(ctx: QueryContext, method: str, params: dict[str, Any] | Any | None, *,
               answer: bool = True) -> Trace:
    """One method on an open query context (several runs on one context share its query-entity call)."""
    p = resolve_params(method, params)
    t0 = time.perf_counter()
    try:
        trace = registry.get(method).retrieve(ctx, p)
        if answer:
            answer_step.answer(ctx, trace, context_size(method, p), facts=trace.context_facts)
    except StaleRecording as miss:  # a replay's miss, with why when the memory changed since recording
        raise explained_miss(miss) from None
    trace.seconds = time.perf_counter() - t0
    return trace
