"""Pick a backend (auto / ollama / embedded) and wrap it with the response cache."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from memrag.config import Settings
from memrag.llm.ledger import Ledger
from memrag.llm.base import LLM, LLMUnavailable
from memrag.llm.cache import CachedLLM, ResponseCache


@dataclass
class BackendChoice:
    backend: str  # "ollama" | "embedded"
    model: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ollama(settings: Settings) -> LLM:
    from memrag.llm.ollama_backend import OllamaLLM
    return OllamaLLM(host=settings.ollama_host, model=settings.ollama_model, seed=settings.seed)


def _embedded(settings: Settings) -> LLM:
    from memrag.llm.embedded import EmbeddedLLM
    return EmbeddedLLM(cache_dir=settings.cache_dir, seed=settings.seed)


def choose_backend(settings: Settings) -> tuple[LLM, BackendChoice]:
    """Return the backend to use and why. Never loads the embedded model (that is lazy)."""
    if settings.backend == "embedded":
        llm = _embedded(settings)
        return llm, BackendChoice("embedded", llm.model, "embedded model chosen in settings")
    ollama = _ollama(settings)
    ok, why = ollama.check()  # type: ignore[attr-defined]
    if settings.backend == "ollama":
        if not ok:
            raise LLMUnavailable(why)
        return ollama, BackendChoice("ollama", ollama.model, why)
    if ok:
        return ollama, BackendChoice("ollama", ollama.model, f"auto: {why}")
    llm = _embedded(settings)
    return llm, BackendChoice("embedded", llm.model, f"auto: {why}; using the embedded model")


def make_llm(settings: Settings, ledger: Ledger | None = None) -> tuple[CachedLLM, BackendChoice]:
    inner, choice = choose_backend(settings)
    cache = ResponseCache(settings.data_dir / "llm_cache.sqlite") if settings.response_cache else None
    return CachedLLM(inner, cache, ledger), choice
