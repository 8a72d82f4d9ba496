"""The app's session state and shared resources, in one place.

Every `st.session_state` key the app uses is declared here (`AppState`) with its
default, so pages read typed attributes instead of string keys. Models and opened
memories are process-wide `st.cache_resource` entries: the embedder, the chosen LLM
backend (re-checked on demand), memories by path and fingerprint, recordings.

Tests may inject a scripted LLM and a test embedder by setting `TEST_LLM_KEY` /
`TEST_EMBEDDER_KEY` in the session before a run; nothing in the UI sets them.
"""

from __future__ import annotations

import hashlib
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, Generic, Literal, Sequence, TypeVar, get_args, get_origin, get_type_hints

import streamlit as st

from memrag.app import jobs
from memrag.app.ask_result import AskResult
from memrag.index import store
from memrag.config import Settings, help_of
from memrag.llm.base import LLM, LLMError
from memrag.llm.factory import BackendChoice
from memrag.methods import registry
from memrag.textsafe import slug

TEST_LLM_KEY = "_memrag_test_llm"
TEST_EMBEDDER_KEY = "_memrag_test_embedder"
PREFIX = "memrag_"
WIDGET_PREFIX = "w_"  # widget keys are WIDGET_PREFIX + the session key that stores the value
PARAM_CLASSES = registry.LIVE_PARAMS  # every registered method
METHOD_LABELS = registry.LIVE_LABELS  # in display order

T = TypeVar("T")


class _Key(Generic[T]):
    """A session-state entry with a default; the attribute name is the key (prefixed)."""

    def __init__(self, default: Callable[[], T]) -> None:
        self.default = default
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = PREFIX + name

    def __get__(self, obj: "AppState | None", owner: type) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        ss = obj._ss
        if self.key not in ss:
            ss[self.key] = self.default()
        return ss[self.key]

    def __set__(self, obj: "AppState", value: T) -> None:
        obj._ss[self.key] = value


class AppState:
    """Typed view of the session; `AppState.<name>.key` is the session key of an entry."""

    backend: _Key[str] = _Key(lambda: Settings().backend)  # auto | ollama | embedded | openai (sidebar radio)
    ollama_model: _Key[str] = _Key(lambda: Settings().ollama_model)
    openai_base_url: _Key[str] = _Key(lambda: Settings().openai_base_url)
    openai_model: _Key[str] = _Key(lambda: Settings().openai_model)
    openai_api_key: _Key[str] = _Key(lambda: Settings().openai_api_key)  # held in memory, never written
    extract_parallel: _Key[int] = _Key(lambda: Settings().extract_parallel)
    llm_check: _Key[int] = _Key(lambda: 0)  # bumped by "check again": a new backend probe
    active_memory: _Key[str | None] = _Key(lambda: None)  # memory folder path
    build_job: _Key[str | None] = _Key(lambda: None)
    built_inputs: _Key[Any] = _Key(lambda: None)  # (upload batch, memory folder) of the last finished build
    ask_job: _Key[str | None] = _Key(lambda: None)
    ask_result: _Key[AskResult | None] = _Key(lambda: None)  # finished ask shown on the Ask page
    loaded_traces: _Key[AskResult | None] = _Key(lambda: None)  # traces opened from a JSON file
    graph_memo: _Key[dict[str, Any]] = _Key(dict)  # job id → (what was drawn, the build's growing graph)
    compare_job: _Key[str | None] = _Key(lambda: None)  # the Ask page's compare mode
    compare_result: _Key[dict[str, Any] | None] = _Key(lambda: None)
    upload_memo: _Key[dict[str, Any]] = _Key(dict)  # the last upload batch read: its key, report, chunks

    def __init__(self, ss: Any | None = None) -> None:
        self._ss = st.session_state if ss is None else ss

    @classmethod
    def keys(cls) -> list[str]:
        return [v.key for v in vars(cls).values() if isinstance(v, _Key)]


def init_state() -> AppState:
    """Give every declared key and every parameter its default (once per session)."""
    s = AppState()
    for v in vars(AppState).values():
        if isinstance(v, _Key):
            v.__get__(s, AppState)
    for method, cls in PARAM_CLASSES.items():
        for f in fields(cls):
            st.session_state.setdefault(value_key(method, f.name), _widget_value(f.default))
    return s


def _copy_widget(widget_key: str, store_key: str) -> None:
    st.session_state[store_key] = st.session_state[widget_key]


def bound(widget: Callable[..., Any], label: str, store_key: str, *, options: Sequence[Any] | None = None,
          **kwargs: Any) -> Any:
    """A widget whose value lives in a plain session key, not in the widget's own state.

    Streamlit drops a widget's state when a run does not draw it — which happens when a page
    switch interrupts the first run of a session — and the widget would come back empty.
    The plain key survives; the widget starts from it and copies every change back.
    """
    widget_key = WIDGET_PREFIX + store_key
    current = st.session_state[store_key]
    if options is not None:
        kwargs["index"] = list(options).index(current) if current in options else 0
        args: tuple = (label, options)
    else:
        kwargs["value"] = current
        args = (label,)
    return widget(*args, key=widget_key, on_change=_copy_widget, args=(widget_key, store_key), **kwargs)


# ------------------------------------------------------------------ settings and the LLM
def settings() -> Settings:
    s = AppState()
    cfg = Settings()
    cfg.backend = s.backend  # type: ignore[assignment]
    cfg.ollama_model = (s.ollama_model or "").strip() or "phi4"
    cfg.openai_base_url = (s.openai_base_url or "").strip()
    cfg.openai_model = (s.openai_model or "").strip()
    cfg.openai_api_key = (s.openai_api_key or "").strip()
    cfg.extract_parallel = max(1, int(s.extract_parallel or 1))
    return cfg


@st.cache_resource(show_spinner="checking the LLM backend…", max_entries=8)
def _choose(backend: str, model: str, host: str, check: int, openai_base_url: str = "", openai_model: str = "",
            openai_api_key: str = "") -> tuple[LLM | None, BackendChoice | None, str]:
    from memrag.llm.factory import choose_backend

    cfg = Settings(backend=backend, ollama_model=model, ollama_host=host,  # type: ignore[arg-type]
                   openai_base_url=openai_base_url, openai_model=openai_model, openai_api_key=openai_api_key)
    try:
        inner, choice = choose_backend(cfg)
    except LLMError as e:
        return None, None, str(e)
    return inner, choice, ""


def backend_choice() -> tuple[LLM | None, BackendChoice | None, str]:
    """(engine, choice, error): the backend the sidebar picked, probed once per check."""
    injected = st.session_state.get(TEST_LLM_KEY)
    if injected is not None:
        return injected, BackendChoice(injected.backend, injected.model, "test double injected by a test"), ""
    cfg = settings()
    return _choose(cfg.backend, cfg.ollama_model, cfg.ollama_host, AppState().llm_check,
                   cfg.openai_base_url, cfg.openai_model, cfg.openai_api_key)


def job_llm() -> tuple[LLM | None, BackendChoice | None, str]:
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
def _shared_embedder() -> Any:
    from memrag.embed import get_embedder

    return get_embedder()


def embedder() -> Any:
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    return injected if injected is not None else _shared_embedder()


def embedder_id() -> str:
    injected = st.session_state.get(TEST_EMBEDDER_KEY)
    if injected is not None:
        return injected.model_id
    from memrag.embed import DEFAULT_EMBEDDER

    return DEFAULT_EMBEDDER


# ------------------------------------------------------------------ memories
def safe_memory_name(name: str) -> str:
    """A folder name from user text: lower-case ASCII letters, digits, '-' and '_' only."""
    return slug(name, keep="a-z0-9_-", trim="-_", limit=60) or "memory"


def read_upload_batch(files: Sequence[Any], params: Any) -> tuple[Any, int]:
    """The ingest report and chunk count of uploaded files (objects with .name, .size, .getvalue()),
    read once per batch: every rerun of the page (any widget touched) would otherwise parse and
    chunk every file again. Keyed by each file's name, size and content hash, and the parameters."""
    from memrag.index.chunk import estimate_chunks
    from memrag.index.readers import read_uploads

    blobs = [(f.name, f.getvalue()) for f in files]
    key = (tuple((name, len(data), hashlib.sha256(data).hexdigest()) for name, data in blobs), repr(params))
    state = AppState()
    memo = state.upload_memo
    if memo.get("key") != key:
        report = read_uploads(blobs, params)
        memo = {"key": key, "report": report, "chunks": estimate_chunks(report.documents, params)}
        state.upload_memo = memo  # only the latest batch: an old one would hold its files in memory
    return memo["report"], memo["chunks"]


def memories_dir() -> Path:
    return settings().data_dir / "memories"


def memory_path(name: str) -> Path:
    """The folder of a saved memory called `name` (always inside the app's memories folder)."""
    root = memories_dir().resolve()
    path = (root / safe_memory_name(name)).resolve()
    if path.parent != root:  # cannot happen with a sanitised name; checked anyway
        raise ValueError(f"memory name {name!r} does not make a folder inside {root}")
    return path


def sample_memory_dir() -> Path:
    from memrag import demo

    return demo.sample_memory_dir()


def is_sample(path: str | Path | None) -> bool:
    return path is not None and Path(path).resolve() == sample_memory_dir().resolve()


def saved_memories() -> list[dict[str, Any]]:
    """Memories under the app's data folder, with their manifests (unreadable ones say why)."""
    root = memories_dir()
    out = []
    if not root.is_dir():
        return out
    for p in sorted(root.iterdir()):
        if not p.is_dir() or not store.is_memory_dir(p):
            continue
        try:
            out.append({"path": str(p), "folder": p.name, "manifest": store.check(p), "error": ""})
        except store.MemoryFormatError as e:
            out.append({"path": str(p), "folder": p.name, "manifest": {}, "error": str(e)})
    return out


def memory_label(path: str | Path) -> str:
    if is_sample(path):
        return "Sample corpus: the Varrow Coast"
    try:
        name = store.read_manifest(Path(path)).get("name") or ""
    except store.MemoryFormatError:
        name = ""
    return f"{name} ({Path(path).name})" if name and name != Path(path).name else Path(path).name


@st.cache_resource(show_spinner="opening the memory…", max_entries=6)
def _open(path: str, fingerprint: str, embedder: str) -> Any:
    return store.load(Path(path), embedder)


def open_memory(path: str | Path) -> Any:
    """The memory at `path`, opened once per (path, fingerprint) for the whole process."""
    manifest = store.read_manifest(Path(path))
    return _open(str(Path(path).resolve()), str(manifest.get("fingerprint", "")), embedder_id())


def active_memory() -> tuple[str | None, Any, str]:
    """(path, memory, error): the memory pages work on; the sample when none was chosen."""
    s = AppState()
    if s.active_memory is None and store.is_memory_dir(sample_memory_dir()):
        s.active_memory = str(sample_memory_dir())
    if s.active_memory is None:
        return None, None, ""
    try:
        return s.active_memory, open_memory(s.active_memory), ""
    except (store.MemoryFormatError, OSError, ValueError) as e:
        return s.active_memory, None, str(e)


def _recordings_mtime(path: str) -> float:
    from memrag.llm.recordings import FILE_NAME

    f = Path(path) / FILE_NAME
    return f.stat().st_mtime if f.is_file() else 0.0


@st.cache_resource(show_spinner=False, max_entries=6)
def _open_recordings(path: str, mtime: float) -> tuple[Any, str]:
    from memrag.llm.recordings import Recordings

    try:
        return Recordings.open(Path(path)), ""
    except (store.MemoryFormatError, OSError) as e:  # the message says what is wrong with the file
        return None, str(e)


def recordings(path: str | None) -> tuple[Any, str]:
    """(Recordings or None, error) for the memory folder at `path`."""
    if path is None:
        return None, ""
    return _open_recordings(str(Path(path).resolve()), _recordings_mtime(path))


def demo_questions(path: str | None) -> list[dict[str, Any]]:
    """Questions offered for a memory: the sample's gold questions, or those its recordings hold."""
    if path is None:
        return []
    if is_sample(path):
        from memrag import demo

        return demo.sample_questions()
    rec, _ = recordings(path)
    return [{"id": f"r{i + 1}", "question": q} for i, q in enumerate(rec.questions)] if rec else []


# ------------------------------------------------------------------ method parameters
def value_key(method: str, name: str, scope: str = "") -> str:
    """The session key holding a method parameter's value; `scope` names another set than the
    sidebar's (e.g. compare mode's two sets)."""
    return f"{PREFIX}p_{scope + '_' if scope else ''}{method}_{name}"


def param_key(method: str, name: str, scope: str = "") -> str:
    """The key of the widget that edits a method parameter."""
    return WIDGET_PREFIX + value_key(method, name, scope)


def _widget_value(default: Any) -> Any:
    return 0 if default is None else default  # None (e.g. no pruning) is shown as 0


def _literal_options(tp: Any) -> tuple[Any, ...] | None:
    return get_args(tp) if get_origin(tp) is Literal else None


def param_widgets(method: str, container: Any = None, scope: str = "") -> None:
    """One widget per field of the method's parameter dataclass, with the field's help text."""
    where = container or st
    cls = PARAM_CLASSES[method]
    hints = get_type_hints(cls)
    for f in fields(cls):
        key, label, tip = value_key(method, f.name, scope), f.name.replace("_", " "), help_of(cls, f.name)
        options = _literal_options(hints[f.name])
        if options:
            bound(where.selectbox, label, key, options=options, help=tip)
        elif isinstance(f.default, bool):
            bound(where.checkbox, label, key, help=tip)
        elif isinstance(f.default, float):
            bound(where.number_input, label, key, min_value=0.0, max_value=1.0, step=0.05, help=tip)
        else:  # int, or int | None where 0 means None
            extra = " (0 = none)" if f.default is None or f.name == "prune_top" else ""
            bound(where.number_input, label, key, min_value=0, max_value=1000, step=1, help=tip + extra)


def method_params(method: str, scope: str = "") -> Any:
    """The method's parameters as set in the sidebar, or in the set `scope` (dataclass instance)."""
    cls = PARAM_CLASSES[method]
    values = {}
    for f in fields(cls):
        v = st.session_state.get(value_key(method, f.name, scope), _widget_value(f.default))
        if f.name == "prune_top" and v == 0:
            v = None
        values[f.name] = v
    return cls(**values)


def set_method_params(method: str, params: Any, scope: str = "") -> None:
    """Store a whole parameter set and drop its widgets' own state, so each widget starts again
    from the stored value on the next run (e.g. when a compare preset is picked)."""
    for f in fields(params):
        st.session_state[value_key(method, f.name, scope)] = _widget_value(getattr(params, f.name))
        st.session_state.pop(param_key(method, f.name, scope), None)


def changed_params(method: str) -> dict[str, Any]:
    """The parameters that differ from the defaults (shown with results)."""
    p, d = method_params(method), PARAM_CLASSES[method]()
    return {f.name: getattr(p, f.name) for f in fields(p) if getattr(p, f.name) != getattr(d, f.name)}


__all__ = ["AppState", "TEST_LLM_KEY", "TEST_EMBEDDER_KEY", "init_state", "settings", "backend_choice", "job_llm",
           "embedder", "embedder_id", "safe_memory_name", "memories_dir", "memory_path", "sample_memory_dir",
           "is_sample", "saved_memories", "memory_label", "open_memory", "active_memory", "recordings",
           "demo_questions", "param_widgets", "method_params", "set_method_params", "changed_params", "bound", "value_key",
           "param_key", "extract_parallel", "session_id", "start_job", "visible_jobs", "read_upload_batch",
           "preload_model", "forget_failed_preload"]


# ------------------------------------------------------------------ background jobs, per browser session
def session_id() -> str:
    """This browser session's id ('' outside a Streamlit run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def _session_alive(sid: str) -> bool:
    try:
        from streamlit.runtime import Runtime

        return Runtime.instance().is_active_session(sid)
    except Exception:  # no runtime (e.g. AppTest): treat every owner as present
        return True


def start_job(kind: str, label: str, work: Any, **kw: Any) -> Any:
    """jobs.start_job, owned by this browser session (see `visible_jobs`)."""
    kw["meta"] = {**(kw.get("meta") or {}), "session": session_id()}
    return jobs.start_job(kind, label, work, **kw)


def visible_jobs(kind: str | None = None, *, running_only: bool = False) -> list[Any]:
    """The jobs this session may see: its own, and those whose tab was closed (so a build can be
    followed again from a new tab). Another open session's jobs stay private to it."""
    me = session_id()
    return [j for j in jobs.list_jobs(kind, running_only=running_only)
            if j.meta.get("session", "") in ("", me) or not _session_alive(j.meta["session"])]

