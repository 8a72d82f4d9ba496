"""The models the app runs with: the LLM backend the sidebar chose (probed once per "check
again"), a per-job LLM behind the response cache, and the embedder — process-wide
`st.cache_resource` entries, or the test doubles a test put in the session."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from memrag.app import heap, room
from memrag.app.session import TEST_EMBEDDER_KEY, TEST_LLM_KEY, AppState
from memrag.config import Settings
from memrag.index import store
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


# ------------------------------------------------------------------ the embedder
# A memory is opened and asked with the embedder it was built with (its manifest names it) when this
# server has it; a new memory is built with MEMRAG_EMBEDDER (the shipped MiniLM when unset).
def configured_embedder() -> str:
    """The embedder setting new memories are built with (MEMRAG_EMBEDDER)."""
    from memrag.embed import DEFAULT_EMBEDDER

    return Settings().embedder.strip() or DEFAULT_EMBEDDER


def embedder_spec(model_id: str) -> str | None:
    """The embedder setting that gives a memory's recorded embedder `model_id` here, or None when this
    server has no such embedder: MiniLM (it ships), an Ollama model by name (served at OLLAMA_HOST), an
    OpenAI-compatible model when the configured embeddings server is the one its id names."""
    from memrag.embed import DEFAULT_EMBEDDER, get_embedder
    from memrag.served_embedders import OLLAMA_PREFIX, OPENAI_PREFIX

    if model_id == DEFAULT_EMBEDDER or model_id.startswith(OLLAMA_PREFIX):
        return model_id
    if model_id.startswith(OPENAI_PREFIX) and "@" in model_id:
        spec = model_id.rpartition("@")[0]  # the id adds a hash of the server's base URL to the model
        try:
            return spec if get_embedder(spec).model_id == model_id else None
        except (ValueError, LLMError):  # no embeddings server configured
            return None
    return None


def missing_embedder(model_id: str, name: str = "This memory") -> str:
    """Why a memory built with `model_id` cannot be opened here, and what would open it."""
    from memrag.served_embedders import OPENAI_PREFIX

    fix = ("start the app with MEMRAG_OPENAI_EMBED_BASE_URL (or MEMRAG_OPENAI_BASE_URL) set to the server "
           "it was built with" if model_id.startswith(OPENAI_PREFIX) else
           "only all-MiniLM-L6-v2 ships with memrag, and ollama:MODEL or openai:MODEL come from a server")
    return f"{name} was built with the embedder {model_id!r}, which this app does not have: {fix}."


def recorded_embedder(path: str | Path | None) -> str | None:
    """The embedder the memory at `path` was built with (None: no readable memory there)."""
    if path is None:
        return None
    try:
        return str(store.read_manifest(Path(path))["embedder"]["model"])
    except (store.MemoryFormatError, OSError, KeyError, TypeError):
        return None


def open_with(recorded: str, name: str = "This memory") -> str:
    """The embedder id to open memory `name`, built with `recorded` (raises ValueError saying why not)."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected.model_id  # the store refuses a mismatch in its own words
    if embedder_spec(recorded) is None:
        raise ValueError(missing_embedder(recorded, name))
    return recorded


def embedder_note(memory_embedder: str) -> str:
    """The sidebar's line on the active memory's embedder, and what new memories use when that differs."""
    configured = configured_embedder()
    other = "" if embedder_spec(memory_embedder) == configured else f"; new memories: {configured}"
    return f"embedder: {memory_embedder}{other}"


def _active_spec() -> str:
    """The active memory's embedder when this server has it, else MEMRAG_EMBEDDER's."""
    recorded = recorded_embedder(AppState().active_memory)
    return (embedder_spec(recorded) if recorded else None) or configured_embedder()


@st.cache_resource(show_spinner="loading the embedding model…")
def _shared_embedder(spec: str) -> Embedder:
    from memrag.embed import get_embedder

    embedder = get_embedder(spec)
    heap.freeze_long_lived("embedder")  # torch and the model: most of the heap, kept for the process
    _loaded[spec] = embedder
    return embedder


_loaded: dict[str, Embedder] = {}  # embedders loaded so far, by setting (never loaded just to look)


def embedder() -> Embedder:
    """The embedder of the active memory (what asks, replays and evaluations on it use)."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    return injected if injected is not None else _shared_embedder(_active_spec())


def build_embedder(path: Path) -> Embedder:
    """The embedder a build into `path` uses: the memory's there when one is, else MEMRAG_EMBEDDER's
    (raises ValueError when the memory's embedder is not on this server)."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected
    recorded = recorded_embedder(path) if store.is_memory_dir(path) else None
    spec = embedder_spec(recorded) if recorded else configured_embedder()
    if spec is None:
        raise ValueError(missing_embedder(recorded or ""))
    return _shared_embedder(spec)


def loaded_embedder() -> Embedder | None:
    """The embedder if it is loaded already, else None: work done ahead of a click must not make a
    page wait seconds for the model to load."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected
    spec = _active_spec()
    return _shared_embedder(spec) if spec in _loaded else None


def embedder_id() -> str:
    """The id of the embedder `embedder()` gives (without loading a model to learn it)."""
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected.model_id
    from memrag.embed import get_embedder
    from memrag.served_embedders import is_served

    spec = _active_spec()
    return get_embedder(spec).model_id if is_served(spec) else spec
