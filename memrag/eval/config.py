"""What an evaluation run is asked to do (the CLI's flags and the Evaluate page's form make one),
and the events it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memrag.methods import registry


@dataclass
class EvalConfig:
    dataset: str
    data: Path
    out: Path
    scope: str = "pooled"
    limit: int | None = None
    methods: tuple[str, ...] = field(default_factory=registry.names)
    corpus: Path | None = None  # MuSiQue corpus file, or the sample documents folder
    import_openie: Path | None = None  # MuSiQue/HippoRAG OpenIE file: the graph without LLM extraction
    memory: Path | None = None  # pooled scopes: open or build the memory here instead of out/memory
    answer: bool = True  # False: retrieval only (no answer step, no EM/F1)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # method → parameter overrides
    fate_k: int = 5  # gold fate: "top k" cut
    extract_parallel: int = 1  # extraction requests in flight when a memory is built (Ollama)
    command: str = ""  # the command line, for the stamp


def dense_only(config: EvalConfig) -> bool:
    """A retrieval-only run of methods that read chunk vectors alone (dense), so no LLM and no graph
    are needed."""
    return not config.answer and all(registry.get(m).vectors_only for m in config.methods)


@dataclass
class EvalEvent:
    kind: str  # start | index | memory | question | done
    data: dict[str, Any] = field(default_factory=dict)
