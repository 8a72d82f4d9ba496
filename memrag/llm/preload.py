"""Load the embedded model in the background when the app starts, once per process.

Assembling the 1.1 GB model file from its part packages and starting the engine takes from
seconds to minutes; done on the first call, that time looked like the first chunk being slow.
`start(loader)` runs the loader in a daemon thread and `status()` tells every page where it is.
`MEMRAG_PRELOAD=0` turns preloading off (the test suite does): `start` then does nothing.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

OFF, IDLE, LOADING, READY, FAILED = "off", "idle", "loading", "ready", "failed"

_lock = threading.Lock()
_state: dict[str, Any] = {"state": IDLE, "started": None, "ended": None, "error": ""}


def enabled() -> bool:
    return os.environ.get("MEMRAG_PRELOAD", "1").strip() != "0"


def start(loader: Callable[[], Any]) -> bool:
    """Run `loader` (e.g. `EmbeddedLLM.ensure_ready`) in the background unless preloading is off
    or a load already ran or runs (a failed one is tried again only after `reset`); True when
    this call started one."""
    if not enabled():
        return False
    with _lock:
        if _state["state"] != IDLE:
            return False
        _state.update(state=LOADING, started=time.time(), ended=None, error="")

    def run() -> None:
        try:
            loader()
        except Exception as e:  # shown in the sidebar; the first call will say it again
            with _lock:
                _state.update(state=FAILED, ended=time.time(), error=str(e) or type(e).__name__)
        else:
            with _lock:
                _state.update(state=READY, ended=time.time())

    threading.Thread(target=run, name="memrag-model-preload", daemon=True).start()
    return True


def status() -> dict[str, Any]:
    """{"state": off | idle | loading | ready | failed, "elapsed_s", "error"}."""
    with _lock:
        s = dict(_state)
    if s["state"] == IDLE and not enabled():
        s["state"] = OFF
    s["elapsed_s"] = None if s["started"] is None else (s["ended"] or time.time()) - s["started"]
    return s


def wait(timeout: float | None = None) -> bool:
    """Block until no load is running (for tests and scripts); True when none is."""
    deadline = None if timeout is None else time.time() + timeout
    while status()["state"] == LOADING:
        if deadline is not None and time.time() > deadline:
            return False
        time.sleep(0.02)
    return True


def reset() -> None:
    """Forget any load (tests)."""
    with _lock:
        _state.update(state=IDLE, started=None, ended=None, error="")
