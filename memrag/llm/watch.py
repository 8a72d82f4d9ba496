"""What a running model call is doing now, and a way to stop it part-way.

A caller that wants to watch or stop its calls (a background job) opens `watching(watch)` around
them; the backends read `current()` in the thread that makes the call. The embedded engine
streams and reports the prompt tokens read and the tokens written from its own counters, and
stops at the next streamed piece once `watch.cancelled()` says so; the HTTP backends check it
between slices of their socket reads (memrag.llm.call_limits). A stopped call raises
`CallCancelled`, which is neither a backend fault nor a failed call: nothing of it is kept.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace

from memrag.llm.base import LLMError

LOADING, WAITING, PROMPT, WRITING = "loading", "waiting", "prompt", "writing"


class CallCancelled(LLMError):
    """The call was stopped part-way because its caller asked for it; nothing of it is kept."""


@dataclass(frozen=True)
class CallState:
    """One call's state as the engine last reported it (counts are the engine's own)."""
    stage: str
    phase: str  # LOADING | WAITING | PROMPT | WRITING
    started: float  # time.monotonic() when the call began
    prompt_total: int | None = None  # tokens of the prompt still to read (the cached part excluded)
    prompt_done: int | None = None
    prompt_cached: int | None = None
    tokens: int = 0  # tokens written so far
    tokens_per_s: float | None = None
    ahead: int = 0  # calls ahead of this one (one engine, one call at a time)

    def text(self) -> str:
        """'writing token 57 at 12.3 tokens/s', in words for a page."""
        if self.phase == LOADING:
            return "loading the model"
        if self.phase == WAITING:
            ahead = f" ({self.ahead} call(s) ahead)" if self.ahead else ""
            return f"waiting for the model{ahead}"
        if self.phase == PROMPT:
            if self.prompt_total is None:
                return "reading the prompt"
            cached = f" ({self.prompt_cached:,} more reused from the last call)" if self.prompt_cached else ""
            return f"reading {self.prompt_total:,} prompt tokens: {self.prompt_done or 0:,} read{cached}"
        speed = f" at {self.tokens_per_s:.1f} tokens/s" if self.tokens_per_s else ""
        return f"writing token {self.tokens:,}{speed}" if self.tokens else "writing the first token"


class CallWatch:
    """Shared by a caller (which reads `state()` and may cancel) and the calls it makes."""

    def __init__(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        self.cancelled = cancelled
        self._lock = threading.Lock()
        self._state: CallState | None = None

    def begin(self, stage: str, phase: str = WAITING) -> None:
        with self._lock:
            self._state = CallState(stage, phase, time.monotonic())

    def update(self, **changes: object) -> None:
        with self._lock:
            if self._state is not None:
                self._state = replace(self._state, **changes)  # type: ignore[arg-type]

    def end(self) -> None:
        with self._lock:
            self._state = None

    def state(self) -> CallState | None:
        with self._lock:
            return self._state


_current: ContextVar[CallWatch | None] = ContextVar("memrag_call_watch", default=None)


@contextlib.contextmanager
def watching(watch: CallWatch, stage: str) -> Iterator[CallWatch]:
    """Calls made by this thread inside the block report to `watch` and stop when it cancels."""
    token = _current.set(watch)
    watch.begin(stage)
    try:
        yield watch
    finally:
        watch.end()
        _current.reset(token)


def current() -> CallWatch | None:
    return _current.get()


def stop_requested() -> bool:
    watch = _current.get()
    return watch is not None and watch.cancelled()


def report(**changes: object) -> None:
    """Update the current call's state (no-op when nobody watches)."""
    watch = _current.get()
    if watch is not None:
        watch.update(**changes)
