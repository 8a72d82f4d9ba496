"""The app's session keys, declared once, and widgets whose values survive an interrupted run.

Every `st.session_state` key the app shares is declared on `AppState` with its default, so pages
read typed attributes instead of string keys; a page with entries of its own subclasses it.

Tests may inject a scripted LLM and a test embedder by setting `TEST_LLM_KEY` /
`TEST_EMBEDDER_KEY` in the session before a run; nothing in the UI sets them.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Sequence, TypeVar

import streamlit as st

from memrag.app.ask_result import AskResult
from memrag.config import Settings
from memrag.methods import registry

TEST_LLM_KEY = "_memrag_test_llm"
TEST_EMBEDDER_KEY = "_memrag_test_embedder"
PREFIX = "memrag_"
WIDGET_PREFIX = "w_"  # widget keys are WIDGET_PREFIX + the session key that stores the value

T = TypeVar("T")


class SessionKey(Generic[T]):
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


_Key = SessionKey  # the name eval_views.py still imports


class AppState:
    """Typed view of the session; `AppState.<name>.key` is the session key of an entry."""

    backend: SessionKey[str] = SessionKey(lambda: Settings().backend)  # auto | ollama | embedded | openai
    ollama_model: SessionKey[str] = SessionKey(lambda: Settings().ollama_model)
    openai_base_url: SessionKey[str] = SessionKey(lambda: Settings().openai_base_url)
    openai_model: SessionKey[str] = SessionKey(lambda: Settings().openai_model)
    # a key typed into the sidebar, held in memory, never written; the server's own key (OPENAI_API_KEY)
    # never comes here: a widget's value reaches the browser (backend_state.settings uses it)
    openai_api_key: SessionKey[str] = SessionKey(str)
    extract_parallel: SessionKey[int] = SessionKey(lambda: Settings().extract_parallel)
    llm_check: SessionKey[int] = SessionKey(lambda: 0)  # bumped by "check again": a new backend probe
    active_memory: SessionKey[str | None] = SessionKey(lambda: None)  # memory folder path
    build_job: SessionKey[str | None] = SessionKey(lambda: None)
    memory_source: SessionKey[str | None] = SessionKey(lambda: None)  # the Memory page's source; None: not chosen yet
    memory_name: SessionKey[str] = SessionKey(lambda: "my-notes")  # the build form's memory name
    upload_box: SessionKey[int] = SessionKey(lambda: 0)  # the build form's upload box, a new one per build
    build_note: SessionKey[str] = SessionKey(str)  # a sentence for the Memory page's next run (a discarded build)
    # (upload batch key, memory folder) of the last finished build
    built_inputs: SessionKey[tuple[Any, str] | None] = SessionKey(lambda: None)
    # the Ask page's question and methods (a link's values are put here before the page draws them)
    ask_kind: SessionKey[str] = SessionKey(lambda: "Demo question")  # or "Your own question"
    ask_demo: SessionKey[int | None] = SessionKey(lambda: None)  # a demo question's index; None = the guide's pick
    ask_free: SessionKey[str] = SessionKey(str)  # your own question
    ask_methods: SessionKey[list[str]] = SessionKey(lambda: list(registry.display_order()))  # all, in display order
    ask_job: SessionKey[str | None] = SessionKey(lambda: None)
    ask_result: SessionKey[AskResult | None] = SessionKey(lambda: None)  # finished ask shown on the Ask page
    loaded_traces: SessionKey[AskResult | None] = SessionKey(lambda: None)  # traces opened from a JSON file
    graph_memo: SessionKey[dict[str, Any]] = SessionKey(dict)  # job id → (what was drawn, the build's growing graph)
    compare_job: SessionKey[str | None] = SessionKey(lambda: None)  # the Ask page's compare mode
    compare_result: SessionKey[dict[str, Any] | None] = SessionKey(lambda: None)
    upload_memo: SessionKey[dict[str, Any]] = SessionKey(dict)  # the last upload batch read: its key, report, chunks

    def __init__(self, ss: Any | None = None) -> None:
        self._ss = st.session_state if ss is None else ss

    @classmethod
    def keys(cls) -> list[str]:
        return [v.key for v in vars(cls).values() if isinstance(v, SessionKey)]


def init_state() -> AppState:
    """Give every declared key its default (once per session)."""
    s = AppState()
    for v in vars(AppState).values():
        if isinstance(v, SessionKey):
            v.__get__(s, AppState)
    return s


def _copy_widget(widget_key: str, store_key: str) -> None:
    st.session_state[store_key] = st.session_state[widget_key]


TAKES_DEFAULT = ("pills", "multiselect", "segmented_control")  # widgets that start from `default=`


def bound(widget: Callable[..., Any], label: str, store_key: str, *, options: Sequence[Any] | None = None,
          widget_key: str | None = None, **kwargs: Any) -> Any:
    """A widget whose value lives in a plain session key, not in the widget's own state.

    Every run hands the widget the stored value as its start value (`value`, `index` or
    `default`), never a value set once through the session state, for two reasons:

    - Streamlit drops a widget's state when a run does not draw it — which happens when a page
      switch interrupts the first run of a session — and the widget would come back empty.
    - A browser that never drew a run's widget (a second run followed at once, as the sidebar's
      rerun when the model finishes loading does) draws the next run's from its start value; a
      start value that is not the server's value shows one thing and asks another (issue #35).

    The widget copies every change back, and its value is stored again after each draw (also a
    value a test or a link put in its own key). `widget_key` defaults to `w_` + the store key.
    """
    widget_key = widget_key or WIDGET_PREFIX + store_key
    current = st.session_state[store_key]
    if getattr(widget, "__name__", "") in TAKES_DEFAULT:
        known = list(options or [])
        kwargs["default"] = [v for v in current if v in known] if isinstance(current, list) else \
            (current if current in known else None)
        args: tuple = (label, options)
    elif options is not None:
        kwargs["index"] = list(options).index(current) if current in options else 0
        args = (label, options)
    else:
        kwargs["value"] = current
        args = (label,)
    value = widget(*args, key=widget_key, on_change=_copy_widget, args=(widget_key, store_key), **kwargs)
    st.session_state[store_key] = value
    return value
