"""memrag: neuro-inspired knowledge-graph RAG made visible — NeuroPath (place cells), EcphoryRAG
(engrams), HippoRAG 2 (the hippocampal index) and a dense baseline, as a library and a Streamlit app.

The public API, imported on first use (so `import memrag` stays cheap):

- build a memory: `build_memory(path, documents, llm, embedder, IndexParams())` run through
  `run_build`, or open one with `load_memory(path)`; `Memory` is what both give;
- ask it: `memrag.ask.ask(memory, question, llm=..., embedder=..., methods=[...], params={...})`
  returns one `Trace` per method (what it retrieved, every step, its answer) — named by its module,
  since `memrag.ask` is that module once anything imported it;
- the pieces: `make_llm(Settings())` chooses a backend, `get_embedder()` the embedder;
  `registry` lists the methods (one wing each under memrag/methods/, described by a `MethodSpec`);
  `gold_fate` says where each gold passage of a question was found or lost.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name → 'module:attribute'
_PUBLIC: dict[str, str] = {
    "Trace": "memrag.trace:Trace",
    "Memory": "memrag.index.memory:Memory",
    "build_memory": "memrag.index.build:build_memory",
    "run_build": "memrag.index.build:run_build",
    "load_memory": "memrag.index.store:load",
    "Settings": "memrag.config:Settings",
    "IndexParams": "memrag.config:IndexParams",
    "make_llm": "memrag.llm.factory:make_llm",
    "get_embedder": "memrag.embed:get_embedder",
    "registry": "memrag.methods.registry:",
    "MethodSpec": "memrag.methods.spec:MethodSpec",
    "gold_fate": "memrag.eval.gold:gold_fate",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    target = _PUBLIC.get(name)
    if target is None:
        raise AttributeError(f"module 'memrag' has no attribute {name!r}")
    module, _, attr = target.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attr) if attr else loaded


def __dir__() -> list[str]:
    return sorted(__all__)
