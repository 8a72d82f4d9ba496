"""The one progress figure of a job, and the model's loading state, in words.

The sidebar and the job's panel both show `progress_figure(snapshot)` (both polled each second),
so they cannot disagree; the figure carries what the model is doing now, from the engine's own
counters (memrag.llm.watch).
While the embedded model is still being loaded, a job's time is the model's, not its first
step's: the figure then says it waits for the model instead of counting down an estimate.
No streamlit here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from memrag.app.estimates import seconds_text
from memrag.llm import preload
from memrag.llm.watch import WRITING, CallState


@dataclass(frozen=True)
class ProgressFigure:
    done: int
    total: int | None
    fraction: float
    left: str  # "about 16 s left" | "12 s over the estimate" | "waiting for the model to load …" | ""
    note: str  # why the remaining time last rose ("" when it never did)
    model: str = ""  # "writing token 57 at 12.3 tokens/s (14 s into this call)" | ""

    def line(self) -> str:
        """'1 of 4, about 16 s left'."""
        count = f"{self.done} of {self.total}" if self.total else "working"
        return count + (f", {self.left}" if self.left else "")


def model_activity(calls: list[CallState], now: float | None = None) -> str:
    """The running model call in words ('' when none runs); more in flight are counted."""
    if not calls:
        return ""
    first = calls[0]
    into = seconds_text((now if now is not None else time.monotonic()) - first.started)
    more = f"; {len(calls) - 1} more call(s) in flight" if len(calls) > 1 else ""
    return f"{first.text()} ({into} into this call{more})"


def tokens_line(written_before: int, calls: list[CallState], chunks_left: int, per_chunk: float) -> str:
    """A build's written tokens against what it is expected to write: 'Tokens written: 350 of about
    1,000 expected (250 a chunk); at 0.5 tokens/s the rest takes about 22 min.' `written_before`
    counts the finished calls, `calls` the running ones (each expected to write at least a typical
    chunk's tokens), `chunks_left` the chunks not started yet."""
    written = written_before + sum(c.tokens for c in calls)
    expected = written_before + sum(max(c.tokens, round(per_chunk)) for c in calls) + round(chunks_left * per_chunk)
    line = f"Tokens written: {written:,} of about {expected:,} expected ({per_chunk:.0f} a chunk)"
    speed = sum(c.tokens_per_s or 0 for c in calls if c.phase == WRITING)
    if speed > 0 and expected > written:
        line += f"; at {speed:.1f} tokens/s the rest takes about {seconds_text((expected - written) / speed)}"
    return line + "."


def model_loading(snapshot: dict[str, Any], model: dict[str, Any] | None = None) -> bool:
    """True while the job waits for the embedded model to be assembled and loaded."""
    if snapshot.get("meta", {}).get("backend") != "embedded" or snapshot.get("status") != "running":
        return False
    model = model if model is not None else preload.status()
    if model["state"] == preload.LOADING:
        return True
    if model["state"] == preload.OFF and not snapshot.get("done"):
        from memrag.llm.embedded import engine_status

        return not engine_status()["loaded"]  # the first call loads it
    return False


def progress_figure(snapshot: dict[str, Any], model: dict[str, Any] | None = None) -> ProgressFigure:
    """The figure shown for a job snapshot (`Job.snapshot()`)."""
    eta = snapshot.get("eta_s")
    if snapshot.get("status") != "running":
        left = ""
    elif model_loading(snapshot, model):
        left = "waiting for the model to load"
    elif eta is None:
        left = ""
    elif eta >= 1:
        left = f"about {seconds_text(eta)} left"
    else:
        left = f"{seconds_text(-eta)} over the estimate"
    running = snapshot.get("status") == "running"
    return ProgressFigure(int(snapshot.get("done") or 0), snapshot.get("total"), snapshot.get("fraction") or 0.0,
                          left, snapshot.get("eta_note") or "",
                          model_activity(snapshot.get("model_calls") or []) if running else "")


def model_state_text(model: dict[str, Any] | None = None) -> str:
    """The embedded model's preload in one line ('' when there is nothing to say)."""
    model = model if model is not None else preload.status()
    state, elapsed = model["state"], model.get("elapsed_s")
    if state == preload.LOADING:
        return f"Loading the model (assembling and starting it): {seconds_text(elapsed)} so far."
    if state == preload.READY:
        return f"Model loaded in {seconds_text(elapsed)}."
    if state == preload.FAILED:
        return f"The model could not be loaded: {model.get('error', '')}"
    return ""
