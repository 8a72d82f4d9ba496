"""Ask again after a memory edit: the shown question re-run on the new version, where every call
whose prompt did not change is answered by the previous trace's reply and only changed calls go to
the model — with an estimate first of how many calls that is.

A call is the same when the same engine (backend and model) is asked the same stage with the same
messages; its previous reply is then given back byte for byte (marked cached: no model was asked),
so a retrieval the edit did not touch replays exactly, and the first prompt the edit changed (a
different path listing, a different set of passages for the answer) is the first call that goes to
the model. Not reused: a call that failed before (asked again) and a call that reads next-token
probabilities (a trace keeps no probabilities). The engine that answers changed calls is the
caller's: a live model, or a replay of recordings (the showcase answers offline from its own).

The estimate runs each method with a probe that answers reusable calls and stops at the first
changed one: the calls before it cost nothing, and at most the previous trace's remaining calls
follow it (the run may take another path, so this is an estimate, labelled as one), at the pace the
previous trace's calls took.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memrag.ask import ask
from memrag.embed import Embedder
from memrag.index.memory import Memory
from memrag.llm.base import LLM, Completion, Message
from memrag.llm.wrapper import WrappedLLM
from memrag.trace import LLMCallRecord, Trace


def prompt_key(backend: str, model: str, stage: str, messages: Sequence[Message]) -> str:
    """What makes two calls the same call: the engine, the stage and the exact messages."""
    blob = json.dumps([backend, model, stage, list(messages)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class PreviousReplies:
    """The replies of earlier traces' successful calls, by `prompt_key`."""

    def __init__(self, traces: Sequence[Trace]) -> None:
        self.records: dict[str, LLMCallRecord] = {}
        for t in traces:
            for r in t.llm_calls:
                if r.ok:
                    self.records.setdefault(prompt_key(r.backend, r.model, r.stage, r.messages), r)

    def get(self, backend: str, model: str, stage: str, messages: Sequence[Message]) -> LLMCallRecord | None:
        return self.records.get(prompt_key(backend, model, stage, messages))


class ReusePreviousLLM(WrappedLLM):
    """Answers a call from the previous traces when it is the same call (see the module's
    docstring); every other call goes to `inner`. Counts both, and remembers which prompts it
    answered itself (`reused_keys`), so each new trace can say which of its calls were reused."""

    def __init__(self, previous: PreviousReplies, inner: LLM) -> None:
        super().__init__(inner)
        self.previous = previous
        self.reused_keys: set[str] = set()
        self.asked_stages: list[str] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def last_key(self) -> str:
        """The response-cache key of this thread's last call (the inner engine's, '' when reused)."""
        return getattr(self._local, "key", "")

    def reusable(self, messages: Sequence[Message], stage: str, top_logprobs: int) -> LLMCallRecord | None:
        return None if top_logprobs else self.previous.get(self.backend, self.model, stage, messages)

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        hit = self.reusable(messages, stage, top_logprobs)
        if hit is None:
            with self._lock:
                self.asked_stages.append(stage)
            c = self.changed_call(messages, schema, max_tokens, stage, top_logprobs)
            self._local.key = getattr(self.inner, "last_key", "") or ""
            return c
        with self._lock:
            self.reused_keys.add(prompt_key(self.backend, self.model, stage, messages))
        self._local.key = hit.key
        return Completion(text=hit.raw_reply, prompt_tokens=hit.prompt_tokens,
                          prompt_tokens_cached=hit.prompt_tokens_cached, completion_tokens=hit.completion_tokens,
                          seconds=0.0, cached=True, model=self.model, backend=self.backend, stage=stage)

    def changed_call(self, messages: list[Message], schema: dict[str, Any] | None, max_tokens: int, stage: str,
                     top_logprobs: int) -> Completion:
        return self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage,
                                   **({"top_logprobs": top_logprobs} if top_logprobs else {}))

    def reused_in(self, trace: Trace) -> list[bool]:
        """For each of `trace`'s calls, whether this wrapper answered it from the previous traces."""
        return [prompt_key(r.backend, r.model, r.stage, r.messages) in self.reused_keys and r.cached
                for r in trace.llm_calls]


# ------------------------------------------------------------------ the estimate
class _FirstChange(BaseException):
    """Stops a probe run at the first call the edit changed (BaseException: a method's own
    `except Exception` fallbacks must not swallow it)."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


class _Probe(ReusePreviousLLM):
    def changed_call(self, messages: list[Message], schema: dict[str, Any] | None, max_tokens: int, stage: str,
                     top_logprobs: int) -> Completion:
        raise _FirstChange(stage)


def _pace(seconds: float) -> str:
    said = f"about {seconds:.0f} s" if seconds >= 1 else "under a second"
    return f"{said} at the previous trace's pace"


@dataclass(frozen=True)
class MethodEstimate:
    method: str
    reused: int  # calls answered from the previous trace before the first changed one
    first_change: str  # the stage of the first changed call ('' when no call changed)
    at_most: int  # calls that may go to the model: the previous trace's calls not yet reused (0 if none changed)
    seconds: float  # those calls' seconds in the previous trace

    def text(self) -> str:
        if not self.first_change:
            return f"{self.method}: no call changed ({self.reused} answered from the previous trace)"
        return (f"{self.method}: {self.reused} call(s) answered from the previous trace, then the {self.first_change} "
                f"call changed: 1 to about {self.at_most} call(s) go to the model ({_pace(self.seconds)})")


@dataclass(frozen=True)
class Estimate:
    methods: list[MethodEstimate]

    @property
    def calls(self) -> tuple[int, int]:
        """(at least, about at most) calls that go to the model."""
        changed = [m for m in self.methods if m.first_change]
        return len(changed), sum(m.at_most for m in changed)

    @property
    def seconds(self) -> float:
        return sum(m.seconds for m in self.methods if m.first_change)

    def text(self) -> str:
        low, high = self.calls
        if not high:
            return "No call changed: asking again answers every call from the previous trace (no model call)."
        return (f"About {low} to {high} call(s) go to the model ({_pace(self.seconds)}); every other call is "
                "answered from the previous trace.")


def _run_args(previous: Sequence[Trace]) -> tuple[str, tuple[str, ...], dict[str, Any], bool]:
    if not previous:
        raise ValueError("ask again needs the traces of a question asked before")
    question = previous[0].question
    if any(t.question != question for t in previous):
        raise ValueError("the traces given answer different questions; ask again re-runs one question")
    return (question, tuple(t.method for t in previous), {t.method: dict(t.params) for t in previous},
            any(t.answer is not None for t in previous))


def estimate(memory: Memory, previous: Sequence[Trace], *, llm: LLM, embedder: Embedder) -> Estimate:
    """How many calls asking `previous`'s question again on `memory` would send to `llm` (never
    called: a probe stops each method at its first changed call)."""
    question, methods, params, answer = _run_args(previous)
    replies = PreviousReplies(previous)
    out = []
    for t in previous:
        probe = _Probe(replies, llm)
        try:
            ask(memory, question, llm=probe, embedder=embedder, methods=(t.method,), params=params, answer=answer)
            first = ""
        except _FirstChange as e:
            first = e.stage
        reused = len(probe.reused_keys)
        remaining = [r for r in t.llm_calls if prompt_key(r.backend, r.model, r.stage, r.messages)
                     not in probe.reused_keys]
        out.append(MethodEstimate(t.method, reused, first, max(1, len(remaining)) if first else 0,
                                  sum(r.seconds for r in remaining) if first else 0.0))
    return Estimate(out)


# ------------------------------------------------------------------ asking again
@dataclass
class AskedAgain:
    traces: list[Trace]
    reused: dict[str, int] = field(default_factory=dict)  # method → calls answered from the previous trace
    asked: dict[str, int] = field(default_factory=dict)  # method → calls that went to the model

    def text(self) -> str:
        return "; ".join(f"{m}: {self.reused[m]} call(s) reused, {self.asked[m]} asked" for m in self.reused)


def ask_again(memory: Memory, previous: Sequence[Trace], *, llm: LLM, embedder: Embedder) -> AskedAgain:
    """`previous`'s question, methods and parameters on `memory`, unchanged calls answered from
    `previous` and changed ones by `llm`."""
    question, methods, params, answer = _run_args(previous)
    wrapped = ReusePreviousLLM(PreviousReplies(previous), llm)
    traces = ask(memory, question, llm=wrapped, embedder=embedder, methods=methods, params=params, answer=answer)
    done = AskedAgain(traces)
    for t in traces:
        flags = wrapped.reused_in(t)
        done.reused[t.method] = sum(flags)
        done.asked[t.method] = len(flags) - sum(flags)
    return done
