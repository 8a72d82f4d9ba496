"""The base of every LLM that wraps another (recording, reusing recordings, caching, a job's
watch): it speaks for the inner engine, so cache keys, stamps and probability checks see the engine
that answers, whatever wraps it."""

from __future__ import annotations

from typing import Any

from memrag.llm.base import LLM
from memrag.llm.logprobs import logprobs_missing


class WrappedLLM:
    """Passes identity, backend, model and `logprobs_missing` through to `inner`; a subclass
    adds its own `complete` (and whatever it keeps)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def logprobs_missing(self) -> str:
        return logprobs_missing(self.inner)
