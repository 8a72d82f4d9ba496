"""Background jobs: long work (builds, live asks, later evaluations) that outlives a page run.

A Streamlit script run stops at any click, page switch or closed tab, so work that
takes minutes runs in a worker thread registered in one process-wide table. A page
keeps only the job's id in its session and polls the job; leaving the page and
coming back (or opening a new tab) finds the job where it is.

A job reports progress as events (`report`), knows how far it is (`done`/`total`),
estimates the time left, and can be cancelled: the worker calls `check_cancel()` between
steps (between build events, before every LLM call), and a model call made through `JobLLM`
is watched (memrag.llm.watch) — the page reads what the model is doing from the engine's own
counters, and a cancel stops the running call at its next streamed piece or socket read.
"""

from __future__ import annotations

import itertools
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from memrag.app.estimates import THROUGHPUT, seconds_text
from memrag.llm.base import LLM, Completion, Message
from memrag.llm.wrapper import WrappedLLM
from memrag.words import stage_name
from memrag.llm.watch import CallCancelled, CallState, CallWatch, watching

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
MAX_EVENTS = 2000  # per job; older events are dropped (the counters keep counting)
MAX_FINISHED = 50  # finished jobs kept in the table; the oldest are forgotten first
RAISE_TOLERANCE_S = 2.0  # a remaining time that grows by more than this (and 10 %) gets a note saying why


class JobCancelled(Exception):
    """Raised inside a worker by `check_cancel()` once a cancel was asked for."""


@dataclass
class JobEvent:
    at: float  # seconds since the job started
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class Job:
    """One piece of background work. Workers write; pages read (under the job's lock)."""

    def __init__(self, job_id: str, kind: str, label: str, *, total: int | None = None,
                 estimate_s: float | None = None, meta: dict[str, Any] | None = None) -> None:
        self.id = job_id
        self.kind = kind
        self.label = label
        self.meta = dict(meta or {})
        self.status = RUNNING
        self.started = time.time()
        self.ended: float | None = None
        self.done = 0
        self.total = total
        self.estimate_s = estimate_s  # prior guess of the whole job's duration
        self.note = ""  # what it is doing now, in words
        self.result: Any = None
        self.error = ""
        self.error_detail = ""
        self.events: list[JobEvent] = []
        self.event_count = 0
        self.state: dict[str, Any] = {}  # worker-maintained summary a page draws (e.g. the growing graph)
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._lock = threading.RLock()
        self._step_seconds: list[float] = []  # durations of steps that did real work (for the ETA)
        self._end_at: float | None = None  # projected end (clock time) from the measured steps
        self.eta_note = ""  # why the remaining time last rose, in words
        self._calls: list[CallWatch] = []  # model calls running now (several with parallel extraction)

    # ------------------------------------------------------------ worker side
    def report(self, kind: str, data: dict[str, Any] | None = None, *, done: int | None = None,
               total: int | None = None, note: str | None = None, step_seconds: float | None = None) -> None:
        """Record an event and optionally move the progress counters."""
        with self._lock:
            self.events.append(JobEvent(round(time.time() - self.started, 3), kind, dict(data or {})))
            self.event_count += 1
            if len(self.events) > MAX_EVENTS:
                del self.events[: len(self.events) - MAX_EVENTS]
            if total is not None:
                self.total = total
            if done is not None:
                self.done = done
            if note is not None:
                self.note = note
            if step_seconds is not None and step_seconds > 0:
                self._step_seconds.append(step_seconds)
                self._project_end()

    def _project_end(self) -> None:
        """Project the end from the recent steps; a later end than the one shown gets a note."""
        if self.total is None:
            return
        now = time.time()
        before = self._remaining(now)
        recent = self._step_seconds[-10:]
        self._end_at = now + max(0, self.total - self.done) * sum(recent) / len(recent)
        after = self._end_at - now
        if before is not None and after > max(before, 0.0) + max(RAISE_TOLERANCE_S, 0.1 * max(before, 0.0)):
            why = ("the model answered slower than measured so far" if len(self._step_seconds) > 1
                   else "the first step took longer than the first estimate")
            self.eta_note = f"{why}: estimate raised from {seconds_text(before)} to {seconds_text(after)}"

    def check_cancel(self) -> None:
        if self._cancel.is_set():
            raise JobCancelled(f"{self.label}: cancelled")

    def watched_call(self, stage: str) -> "_WatchedCall":
        """A block in which one model call reports its state to this job and stops on its cancel."""
        return _WatchedCall(self, stage)

    def update_state(self, fn: Callable[[dict[str, Any]], None]) -> None:
        with self._lock:
            fn(self.state)

    # ------------------------------------------------------------ reader side
    def cancel(self) -> None:
        if self.status == RUNNING:
            self._cancel.set()
            with self._lock:
                self.note = "stopping the running model call…"

    def model_calls(self) -> list[CallState]:
        """What each model call running for this job is doing now (oldest first)."""
        with self._lock:
            watches = list(self._calls)
        return [s for s in (w.state() for w in watches) if s is not None]

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (for tests and scripts); True when it did."""
        return self._finished.wait(timeout)

    def elapsed(self) -> float:
        return (self.ended or time.time()) - self.started

    def fraction(self) -> float | None:
        with self._lock:
            if self.status == DONE:
                return 1.0
            if not self.total:
                return None
            return min(1.0, self.done / self.total)

    def _remaining(self, now: float) -> float | None:
        if self._end_at is not None:
            return self._end_at - now
        if self.estimate_s is not None:
            return self.started + self.estimate_s - now
        return None

    def eta_seconds(self) -> float | None:
        """Seconds left: to the end projected from the measured steps when there are some, else
        from the prior estimate. Negative once the job runs past its estimate."""
        with self._lock:
            if self.status != RUNNING:
                return 0.0
            return self._remaining(time.time())

    def events_since(self, n: int) -> tuple[list[JobEvent], int]:
        """Events after the first `n` ever reported (those still kept), and the new count."""
        with self._lock:
            dropped = self.event_count - len(self.events)
            start = max(0, n - dropped)
            return list(self.events[start:]), self.event_count

    def snapshot(self) -> dict[str, Any]:
        """Everything a page shows about the job, read at one moment."""
        with self._lock:
            return {"id": self.id, "kind": self.kind, "label": self.label, "status": self.status,
                    "done": self.done, "total": self.total, "fraction": self.fraction(),
                    "eta_s": self.eta_seconds(), "eta_note": self.eta_note, "elapsed_s": self.elapsed(), "note": self.note,
                    "error": self.error, "cancel_requested": self.cancel_requested, "meta": dict(self.meta),
                    "model_calls": self.model_calls()}

    # ------------------------------------------------------------ ending
    def _end(self, status: str, *, result: Any = None, error: str = "", detail: str = "") -> None:
        with self._lock:
            self.status = status
            self.result = result
            self.error = error
            self.error_detail = detail
            self.ended = time.time()
            self.note = {DONE: "finished", FAILED: "failed", CANCELLED: "cancelled"}[status]
        self._finished.set()


class _WatchedCall:
    def __init__(self, job: Job, stage: str) -> None:
        self.job = job
        self.watch = CallWatch(job._cancel.is_set)
        self.block = watching(self.watch, stage)

    def __enter__(self) -> CallWatch:
        with self.job._lock:
            self.job._calls.append(self.watch)
        return self.block.__enter__()

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        with self.job._lock:
            self.job._calls.remove(self.watch)
        self.block.__exit__(kind, error, tb)
        if isinstance(error, CallCancelled):  # the job ends as cancelled, not failed
            raise JobCancelled(f"{self.job.label}: cancelled during a model call") from error


# ------------------------------------------------------------------ the table
_jobs: dict[str, Job] = {}
_table_lock = threading.Lock()
_ids = itertools.count(1)


def start_job(kind: str, label: str, work: Callable[[Job], Any], *, total: int | None = None,
              estimate_s: float | None = None, meta: dict[str, Any] | None = None) -> Job:
    """Run `work(job)` in a worker thread; its return value becomes `job.result`.

    `work` raising JobCancelled ends the job as cancelled; any other exception as
    failed, with the message kept for the page (and the traceback for the curious).
    """
    with _table_lock:
        job = Job(f"{kind}-{next(_ids)}-{int(time.time())}", kind, label, total=total,
                  estimate_s=estimate_s, meta=meta)
        _jobs[job.id] = job
        _forget_old()

    def run() -> None:
        try:
            result = work(job)
        except JobCancelled:
            job._end(CANCELLED)
        except Exception as e:  # a job's failure is shown on its page; the app keeps running
            job._end(FAILED, error=str(e) or type(e).__name__, detail=traceback.format_exc())
        else:
            job._end(DONE, result=result)

    threading.Thread(target=run, name=f"memrag-job-{job.id}", daemon=True).start()
    return job


def get_job(job_id: str | None) -> Job | None:
    if not job_id:
        return None
    with _table_lock:
        return _jobs.get(job_id)


def list_jobs(kind: str | None = None, *, running_only: bool = False) -> list[Job]:
    """Jobs, newest first."""
    with _table_lock:
        jobs = list(_jobs.values())
    jobs = [j for j in jobs if (kind is None or j.kind == kind) and (not running_only or j.status == RUNNING)]
    return sorted(jobs, key=lambda j: j.started, reverse=True)


def _forget_old() -> None:
    finished = sorted((j for j in _jobs.values() if j.finished), key=lambda j: j.started)
    for j in finished[: max(0, len(finished) - MAX_FINISHED)]:
        del _jobs[j.id]


# ------------------------------------------------------------------ LLM calls inside a job
class JobLLM(WrappedLLM):
    """Wraps the job's LLM: checks for a cancel before every call and reports each call.

    It forwards `last_key` so call records keep their response-cache keys. With `progress=False`
    the calls are reported without moving the job's counters (a job that counts other steps,
    e.g. an evaluation counting questions).
    """

    def __init__(self, inner: LLM, job: Job, expected_calls: int | None = None, *, progress: bool = True) -> None:
        super().__init__(inner)
        self.throughput = THROUGHPUT
        self.replays = getattr(inner, "replays", False)  # a replay stays named as one in a run's stamp
        self.job = job
        self.progress = progress
        self.calls = 0
        self.expected_calls = expected_calls

    @property
    def last_key(self) -> str:
        return getattr(self.inner, "last_key", "") or ""

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        self.job.check_cancel()
        self.job.report("llm_started", {"stage": stage}, note=f"LLM call: {stage_name(stage)}")
        extra = {"top_logprobs": top_logprobs} if top_logprobs else {}  # a plain call stays as it was
        with self.job.watched_call(stage):
            c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage, **extra)
        self.throughput.observe(c)  # this machine's measured speed, for later estimates
        self.calls += 1
        total = None
        if self.expected_calls is not None:
            total = max(self.expected_calls, self.calls + 1)
        data = {"stage": stage, "cached": c.cached, "seconds": round(c.seconds, 3),
                "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens}
        if not self.progress:
            self.job.report("llm_done", data)
            return c
        self.job.report("llm_done", data, done=self.calls, total=total, step_seconds=None if c.cached else c.seconds)
        return c
