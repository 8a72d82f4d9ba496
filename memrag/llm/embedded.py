"""The embedded backend: Qwen2.5-Coder-1.5B (Q4_K_M) run in-process by xllamacpp.

One engine per process. Calls are serialised through a lock (the app's
sessions, job threads and the CLI share the engine); `engine_status()` tells a
waiting caller how many calls are ahead of it. One slot plus prompt caching
means consecutive calls that share an instruction prefix skip re-evaluating it.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memrag.config import threads_setting
from memrag.llm.base import Completion, LLMError, LLMReplyError, LLMUnavailable, Message, check_request
from memrag.llm.logprobs import MalformedLogprobs, choice_positions
from memrag.llm.model_file import MODEL_FILE, MODEL_NAME, MODEL_SHA256, ensure_model

DEFAULT_N_CTX = 8192


@dataclass
class _Engine:
    server: Any
    path: Path
    n_ctx: int
    threads: int


_engine: _Engine | None = None
_engine_lock = threading.Lock()  # guards creation of the engine
_call_lock = threading.Lock()  # serialises calls into the engine
_status_lock = threading.Lock()
_status = {"busy_stage": None, "waiting": 0, "calls": 0}


def engine_status() -> dict[str, Any]:
    """{"loaded", "busy_stage", "waiting", "calls"}: for 'waiting for the model' messages."""
    with _status_lock:
        return {"loaded": _engine is not None, **_status}


def _load(path: Path, n_ctx: int, threads: int) -> _Engine:
    global _engine
    with _engine_lock:
        if _engine is not None:
            if _engine.path != path or _engine.n_ctx < n_ctx:
                raise LLMError(
                    f"an embedded engine is already loaded ({_engine.path.name}, n_ctx {_engine.n_ctx}); "
                    "one engine per process"
                )
            return _engine
        try:
            import xllamacpp
        except ImportError as e:  # pragma: no cover - depends on the install
            raise LLMUnavailable("xllamacpp is not installed: pip install xllamacpp") from e
        p = xllamacpp.CommonParams()
        p.model.path = str(path)
        p.n_ctx = n_ctx
        p.n_parallel = 1  # one slot: deterministic replies and one reusable prompt prefix
        p.cache_prompt = True
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        p.warmup = False
        if not os.environ.get("MEMRAG_LLAMA_VERBOSE"):
            p.verbosity = -1
            p.log_json = False
        try:
            server = xllamacpp.Server(p)
        except Exception as e:  # the native layer raises plain exceptions
            raise LLMUnavailable(f"could not start the embedded model ({path.name}): {e}") from e
        _engine = _Engine(server, path, n_ctx, threads)
        return _engine


def default_threads() -> int:
    return threads_setting() or max(1, os.cpu_count() or 1)


class EmbeddedLLM:
    backend = "embedded"

    def __init__(self, cache_dir: Path, seed: int = 42, n_ctx: int = DEFAULT_N_CTX,
                 threads: int | None = None) -> None:
        self.model = MODEL_NAME
        self.seed = seed
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
        self.path = Path(cache_dir) / "models" / MODEL_FILE

    def identity(self) -> dict[str, Any]:
        # n_ctx and threads do not change replies at temperature 0 with one slot; the file does.
        return {"backend": self.backend, "model": self.model, "sha256": MODEL_SHA256, "seed": self.seed}

    def logprobs_missing(self) -> str:
        return ""  # llama.cpp reports the top tokens of every position it samples

    def ensure_ready(self) -> None:
        ensure_model(self.path)
        _load(self.path, self.n_ctx, self.threads)

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        check_request(messages, schema, max_tokens, top_logprobs)
        self.ensure_ready()
        request: dict[str, Any] = {
            "messages": messages,
            "temperature": 0,
            "seed": self.seed,
            "max_tokens": max_tokens,
            "cache_prompt": True,
        }
        if schema is not None:
            request["response_format"] = {
                "type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
        if top_logprobs:
            request.update(logprobs=True, top_logprobs=top_logprobs)
        with _status_lock:
            _status["waiting"] += 1
        with _call_lock:
            with _status_lock:
                _status["waiting"] -= 1
                _status["busy_stage"] = stage
            t0 = time.perf_counter()
            try:
                reply = _engine.server.handle_chat_completions(request)  # type: ignore[union-attr]
            finally:
                with _status_lock:
                    _status["busy_stage"] = None
                    _status["calls"] += 1
            seconds = time.perf_counter() - t0
        return _to_completion(reply, seconds, self.model, stage, schema is not None, top_logprobs, max_tokens)


def _to_completion(reply: Any, seconds: float, model: str, stage: str, want_json: bool,
                   top_logprobs: int = 0, max_tokens: int = 0) -> Completion:
    if isinstance(reply, str):
        try:
            reply = json.loads(reply)
        except ValueError as e:
            raise LLMReplyError(f"embedded model returned a non-JSON envelope: {reply[:200]!r}") from e
    if not isinstance(reply, dict) or "choices" not in reply:
        err = reply.get("error") if isinstance(reply, dict) else None
        raise LLMReplyError(f"embedded model error: {err or str(reply)[:200]}")
    choice = reply["choices"][0]
    text = (choice.get("message") or {}).get("content") or ""
    usage = reply.get("usage") or {}
    timings = reply.get("timings") or {}
    c = Completion(
        text=text,
        prompt_tokens=usage.get("prompt_tokens"),
        prompt_tokens_cached=timings.get("cache_n", (usage.get("prompt_tokens_details") or {}).get("cached_tokens")),
        completion_tokens=usage.get("completion_tokens"),
        seconds=seconds,
        cached=False,
        model=model,
        backend="embedded",
        stage=stage,
        raw=reply,
    )
    if top_logprobs:  # a probability read stops at its token limit on purpose
        try:
            c.top_logprobs = choice_positions(choice, top=top_logprobs, max_positions=max_tokens)
        except MalformedLogprobs as e:
            raise LLMReplyError(f"the embedded model's token probabilities for {stage} are malformed: {e}",
                                completion=c) from e
        return c
    if choice.get("finish_reason") == "length":
        raise LLMReplyError(
            f"the reply broke off at the {stage} token limit ({c.completion_tokens} tokens)", completion=c)
    if want_json:
        try:
            json.loads(text)
        except ValueError as e:
            raise LLMReplyError(f"the reply is not valid JSON: {e}", completion=c) from e
    return c
