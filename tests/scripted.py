"""Test doubles: a scripted LLM whose replies are written in each test, and a
deterministic embedder whose vectors tests can reason about.

They drive algorithm logic in unit tests; they are never the product's behaviour.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Callable

import numpy as np

from memrag.llm.base import Completion, LLMReplyError, LLMUnavailable
from memrag.llm.logprobs import parse_positions

Reply = str | dict | list | Callable[[list[dict[str, str]], str], Any] | Exception


class ScriptedLLM:
    """Replies come from a script: either a list consumed in order, or a dict
    keyed by stage prefix (each value a list consumed in order, or a callable
    (messages, stage) -> reply). Dict/list replies are sent as JSON text; an
    Exception instance is raised. Every call is recorded in `calls`."""

    backend = "scripted"

    def __init__(self, script: list[Reply] | dict[str, Any], model: str = "scripted-1") -> None:
        self.model = model
        self.script = script
        self.calls: list[dict[str, Any]] = []

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model}

    def _next(self, messages: list[dict[str, str]], stage: str) -> Any:
        if isinstance(self.script, list):
            if not self.script:
                raise AssertionError(f"scripted LLM ran out of replies at stage {stage}")
            return self.script.pop(0)
        for prefix in sorted(self.script, key=len, reverse=True):
            if stage.startswith(prefix):
                entry = self.script[prefix]
                if callable(entry):
                    return entry(messages, stage)
                if not entry:
                    raise AssertionError(f"scripted LLM ran out of replies for {prefix}")
                return entry.pop(0)
        raise AssertionError(f"scripted LLM has no reply for stage {stage}")

    def complete(self, messages, *, schema=None, max_tokens, stage) -> Completion:
        self.calls.append({"messages": messages, "schema": schema, "max_tokens": max_tokens, "stage": stage})
        reply = self._next(messages, stage)
        if callable(reply) and not isinstance(reply, Exception):
            reply = reply(messages, stage)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return Completion(text=text, prompt_tokens=prompt_tokens, prompt_tokens_cached=0,
                          completion_tokens=len(text.split()), seconds=0.01, cached=False,
                          model=self.model, backend=self.backend, stage=stage)


# The first token's alternatives for one call: [(token, probability), ...]; None = the reply carries none.
FirstToken = Callable[[list[dict[str, str]], str], "list[tuple[str, float]] | None"]


class ProbScripted(ScriptedLLM):
    """A scripted engine that also answers probability calls: a call with `top_logprobs` gets, for
    its first token, the alternatives `first(messages, stage)` gives (cut to the number asked for,
    parsed as a server's list is), or none when that gives None."""

    def __init__(self, script: list[Reply] | dict[str, Any], first: FirstToken, model: str = "scripted-1") -> None:
        super().__init__(script, model)
        self.first = first

    def logprobs_missing(self) -> str:
        return ""

    def complete(self, messages, *, schema=None, max_tokens, stage, top_logprobs=0) -> Completion:
        c = super().complete(messages, schema=schema, max_tokens=max_tokens, stage=stage)
        alts = self.first(messages, stage) if top_logprobs else None
        if alts is not None:
            tops = [{"token": t, "logprob": math.log(p)} for t, p in alts[:top_logprobs]]
            content = [{**tops[0], "top_logprobs": tops}] if tops else [{"top_logprobs": []}]
            c.top_logprobs = parse_positions(content, top=top_logprobs, max_positions=max_tokens)
        self.calls[-1]["top_logprobs"] = top_logprobs
        return c


class HashEmbedder:
    """Deterministic bag-of-words vectors: texts sharing words are similar.
    `overrides` maps exact texts to hand-made vectors (normalised on use)."""

    def __init__(self, dim: int = 64, overrides: dict[str, list[float]] | None = None,
                 model_id: str = "hash-test") -> None:
        self.dim = dim
        self.model_id = model_id
        self.overrides = overrides or {}

    def _vec(self, text: str) -> np.ndarray:
        if text in self.overrides:
            v = np.zeros(self.dim, np.float32)
            o = np.asarray(self.overrides[text], np.float32)
            v[: len(o)] = o
        else:
            v = np.zeros(self.dim, np.float32)
            for w in text.lower().replace(":", " ").split():
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                v[h % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.vstack([self._vec(t) for t in texts]).astype(np.float32)


__all__ = ["ScriptedLLM", "ProbScripted", "HashEmbedder", "LLMReplyError", "LLMUnavailable"]
