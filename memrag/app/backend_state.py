"""The models the app runs with: the LLM backend the sidebar chose (probed once per "check
again"), a per-job LLM behind the response cache, and the embedder — process-wide
`st.cache_resource` entries, or the test doubles a test put in the session."""

from __future__ import annotations

import streamlit as st

from memrag.app import heap, room
from memrag.app.session import TEST_EMBEDDER_KEY, TEST_LLM_KEY, AppState
from memrag.config import Settings
from memrag.embed import Embedder
from memrag.llm.base import LLM, LLMError
from memrag.llm.egress import key_for_server
from memrag.llm.factory import BackendChoice

Choice = tuple[LLM | None, BackendChoice | None, str]  # (engine, choice, error)


def _key_to_send(base_url: str) -> tuple[str, str]:
    """(the key for `base_url`, why the server's key was withheld or ''): the key typed in the sidebar,
    else the server's own (OPENAI_API_KEY), which goes only where llm/egress.py allows."""
    typed = (AppState().openai_api_key or "").strip()
    return key_for_server(base_url.strip(), typed or Settings().openai_api_key.strip())


def withheld_key_note() -> str:
    """Why the server's key is not sent to the base URL typed in the sidebar ('' when it is)."""
    return _key_to_send(AppState().openai_base_url or "")[1]


def server_key_note() -> str:
    """What the key box says when the server has a key of its own: the key itself never reaches the
    page (a password box's value is in every viewer's browser), only that it is there."""
    if not Settings().openai_api_key.strip():
        return ""
    return "A key is set on the server: it is used while this box is empty, and never shown here."


def settings() -> Settings:
    """The settings with the sidebar's LLM choices applied."""
    s = AppState()
    cfg = Settings()
    cfg.backend = s.backend  # type: ignore[assignment]
    cfg.ollama_model = (s.ollama_model or "").strip() or "phi4"
    cfg.openai_base_url = (s.openai_base_url or "").strip()
    cfg.openai_model = (s.openai_model or "").strip()
    cfg.openai_api_key, _ = _key_to_send(cfg.openai_base_url)
    cfg.extract_parallel = max(1, int(s.extract_parallel or 1))
    return cfg


@st.cache_resource(show_spinner="checking the LLM backend…", max_entries=8)
def _choose(backend: str, model: str, host: str, check: int, openai_base_url: str = "", openai_model: str = "",
            openai_api_key: str = "") -> tuple[LLM | None, BackendChoice | None, str, str]:
    """(engine, choice, error, the error's kind)."""
    from memrag.llm.factory import choose_backend

    cfg = Settings(backend=backend, ollama_model=model, ollama_host=host,  # type: ignore[arg-type]
                   openai_base_url=openai_base_url, openai_model=openai_model, openai_api_key=openai_api_key)
    try:
        inner, choice = choose_backend(cfg)
    except LLMError as e:
        return None, None, str(e), type(e).__name__
    return inner, choice, "", ""


def backend_choice() -> Choice:
    """(engine, choice, error): the backend the sidebar picked, probed once per check. In room mode
    a base URL off the allow-list is refused before any request, and a server's words are hidden."""
    injected = st.session_state.get(TEST_LLM_KEY)
    if injected is not None:
        return injected, BackendChoice(injected.backend, injected.model, "test double injected by a test"), ""
    cfg, here = settings(), room.current()
    refusal = room.base_url_refusal(cfg.openai_base_url, here) if cfg.backend == "openai" else None
    if refusal:
        return None, None, refusal
    inner, choice, error, kind = _choose(cfg.backend, cfg.ollama_model, cfg.ollama_host, AppState().llm_check,
                                         cfg.openai_base_url, cfg.openai_model, cfg.openai_api_key)
    return inner, choice, room.shown_error(error, here, "The LLM backend check", kind) if error else ""


def job_llm() -> Choice:
    """An LLM for one job: the chosen engine behind the shared response cache (own wrapper per job,
    so concurrent jobs never share its last-call state)."""
    inner, choice, error = backend_choice()
    if inner is None or st.session_state.get(TEST_LLM_KEY) is not None:
        return inner, choice, error
    from memrag.llm.cache import CachedLLM, ResponseCache

    cfg = settings()
    cache = ResponseCache(cfg.data_dir / "llm_cache.sqlite") if cfg.response_cache else None
    return CachedLLM(inner, cache), choice, ""


def preload_model() -> None:
    """Start loading the embedded model in the background once the sidebar's choice is it
    (memrag.llm.preload; off with MEMRAG_PRELOAD=0)."""
    from memrag.llm import preload

    inner, choice, _ = backend_choice()
    if choice is not None and choice.backend == "embedded" and hasattr(inner, "ensure_ready"):
        preload.start(inner.ensure_ready)


def forget_failed_preload() -> None:
    """After "check again": a failed model load may be tried again."""
    from memrag.llm import preload

    if preload.status()["state"] == preload.FAILED:
        preload.reset()


def extract_parallel(backend: str) -> int:
    """Extraction requests kept in flight: the sidebar's number for Ollama or an OpenAI-compatible
    server, one for the embedded engine."""
    from memrag.llm.factory import extraction_slots

    return extraction_slots(backend, settings())


@st.cache_resource(show_spinner="loading the embedding model…")
def _shared_embedder() -> Embedder:
    from memrag.embed import get_embedder

    embedder = get_embedder()
    heap.freeze_long_lived("embedder")  # torch and the model: most of the heap, kept for the process
    _loaded.append(embedder)
    return embedder


_loaded: list[Embedder] = []  # the shared embedder once loaded (never loaded just to look)


def embedder() -> Embedder:
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    return injected if injected is not None else _shared_embedder()


def loaded_embedder() -> Embedder | None:
    """The embedder if it is loaded already, else None: work done ahead of a click must not make a
    page wait seconds for the model to load."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    return injected if injected is not None else (_shared_embedder() if _loaded else None)


def embedder_id() -> str:
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected.model_id
    from memrag.embed import DEFAULT_EMBEDDER

    return DEFAULT_EMBEDDER
