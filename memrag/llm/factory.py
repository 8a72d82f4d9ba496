"""Pick a backend (auto / ollama / embedded / openai) and wrap it with the response cache.

`auto` only ever chooses between Ollama and the embedded model: the OpenAI-compatible backend
sends documents to a server, so it runs only when chosen (`--backend openai`, the sidebar, or a
typed MEMRAG_OPENAI_BASE_URL, which makes it the default backend)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from memrag.config import Settings
from memrag.llm.ledger import Ledger
from memrag.llm.base import LLM, LLMUnavailable
from memrag.llm.egress import egress_notice
from memrag.llm.cache import CachedLLM, ResponseCache


@dataclass
class BackendChoice:
    backend: str  # "ollama" | "embedded" | "openai"
    model: str
    reason: str
    warning: str = ""  # shown before the first call: documents leave this machine (egress_notice)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """The line a CLI prints before its first call (and the warning under it)."""
        line = f"LLM: {self.backend} / {self.model} ({self.reason})"
        return line + (f"\nWARNING: {self.warning}" if self.warning else "")


# Backends that take several requests at once (extraction fans out to them).
CONCURRENT_BACKENDS = ("ollama", "openai")


def extraction_slots(backend: str, settings: Settings) -> int:
    """Extraction requests kept in flight: `extract_parallel` where the engine takes several, else one."""
    return max(1, settings.extract_parallel) if backend in CONCURRENT_BACKENDS else 1


def _ollama(settings: Settings) -> LLM:
    from memrag.llm.ollama_backend import OllamaLLM
    return OllamaLLM(host=settings.ollama_host, model=settings.ollama_model, seed=settings.seed)


def _embedded(settings: Settings) -> LLM:
    from memrag.llm.embedded import EmbeddedLLM
    return EmbeddedLLM(cache_dir=settings.cache_dir, seed=settings.seed)


def _openai(settings: Settings) -> LLM:
    from memrag.llm.openai_backend import OpenAICompatibleLLM
    return OpenAICompatibleLLM(base_url=settings.openai_base_url, model=settings.openai_model,
                               api_key=settings.openai_api_key or None, seed=settings.seed)


def choose_backend(settings: Settings) -> tuple[LLM, BackendChoice]:
    """Return the backend to use and why, with the notice naming every host documents go to
    (the LLM's and the embedder's). Never loads the embedded model (that is lazy).
    Raises only LLMError: bad settings are refused here with the checker's messages."""
    problems = settings.problems()
    if problems:
        raise LLMUnavailable("settings: " + "; ".join(problems))
    llm, choice = _choose(settings)
    choice.warning = egress_notice(settings, choice.backend)
    return llm, choice


def _choose(settings: Settings) -> tuple[LLM, BackendChoice]:
    if settings.backend == "openai":
        server = _openai(settings)
        ok, why = server.check()  # type: ignore[attr-defined]
        if not ok:
            raise LLMUnavailable(why)
        return server, BackendChoice("openai", server.model, why)
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
