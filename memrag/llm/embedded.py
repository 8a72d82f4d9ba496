"""The embedded backend: Qwen2.5-Coder-1.5B (Q4_K_M) run in-process by xllamacpp.

One engine per process. Calls are serialised through a lock (the app's
sessions, job threads and the CLI share the engine); `engine_status()` tells a
waiting caller how many calls are ahead of it. One slot plus prompt caching
means consecutive calls that share an instruction prefix skip re-evaluating it.

Calls are streamed (memrag.llm.watch): the engine reports its prompt progress once per prompt
batch and every token written, and the call stops at the next piece once its watcher cancels.
The reply put together from the pieces is the reply the engine gives unstreamed, text and
counts alike (tests/test_embedded_stream.py checks it against the model); probability reads
(a token or two) stay unstreamed.
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
from memrag.llm import watch
from memrag.llm.base import Completion, LLMError, LLMReplyError, LLMUnavailable, Message, check_request
from memrag.llm.logprobs import MalformedLogprobs, choice_positions
from memrag.llm.model_file import MODEL_FILE, MODEL_NAME, MODEL_SHA256, ensure_model

DEFAULT_N_CTX = 8192
# Prompt tokens per batch, so per progress report and per chance to stop: llama.cpp's default
# logical batch is 2,048 tokens (20–30 s on a slow CPU); 512 is its physical batch, so the prompt
# is computed in the same pieces as before and replies do not change.
PROMPT_BATCH = 512


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
        p.n_batch = PROMPT_BATCH
        p.n_ubatch = PROMPT_BATCH
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
        if _engine is None:
            watch.report(phase=watch.LOADING)
        ensure_model(self.path)
        _load(self.path, self.n_ctx, self.threads)

    def request(self, messages: list[Message], schema: dict[str, Any] | None, max_tokens: int,
                top_logprobs: int = 0) -> dict[str, Any]:
        """The engine request of a call (streaming options are added when it is streamed)."""
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
        return request

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        check_request(messages, schema, max_tokens, top_logprobs)
        self.ensure_ready()
        request = self.request(messages, schema, max_tokens, top_logprobs)
        with _status_lock:
            _status["waiting"] += 1
            watch.report(phase=watch.WAITING, ahead=_status["waiting"] - 1 + int(_status["busy_stage"] is not None))
        with _call_lock:
            with _status_lock:
                _status["waiting"] -= 1
                _status["busy_stage"] = stage
            watch.report(phase=watch.PROMPT, ahead=0)
            t0 = time.perf_counter()
            try:
                server = _engine.server  # type: ignore[union-attr]
                reply = server.handle_chat_completions(request) if top_logprobs else _streamed(server, request)
            finally:
                with _status_lock:
                    _status["busy_stage"] = None
                    _status["calls"] += 1
            seconds = time.perf_counter() - t0
        return _to_completion(reply, seconds, self.model, stage, schema is not None, top_logprobs, max_tokens)


def _streamed(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The call streamed, its pieces put back into the envelope an unstreamed call returns;
    raises CallCancelled when the watcher cancelled it part-way."""
    parts: list[str] = []
    end: dict[str, Any] = {}
    watcher = watch.current() or watch.CallWatch()  # read here: the engine calls `piece` from native code

    def piece(chunk: Any) -> bool:  # returning True stops the engine
        if not isinstance(chunk, dict):
            return False
        if "choices" not in chunk:  # an error, in place of the reply
            end["error"] = chunk.get("error") or chunk
            return True
        _read_piece(chunk, parts, end, watcher)
        return watcher.cancelled()

    server.handle_chat_completions({**request, "stream": True, "return_progress": True,
                                    "timings_per_token": True, "stream_options": {"include_usage": True}}, piece)
    if watcher.cancelled() and "usage" not in end:
        raise watch.CallCancelled("the model call was stopped part-way, as asked")
    if "error" in end:
        return {"error": end["error"]}
    choice = {"index": 0, "message": {"role": "assistant", "content": "".join(parts)},
              "finish_reason": end.get("finish_reason")}
    return {"choices": [choice], "usage": end.get("usage") or {}, "timings": end.get("timings") or {}}


def _read_piece(chunk: dict[str, Any], parts: list[str], end: dict[str, Any], watcher: watch.CallWatch) -> None:
    """One streamed piece: its text, its finish reason, the engine's counters for the watcher."""
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            parts.append(delta["content"])
        if choice.get("finish_reason"):
            end["finish_reason"] = choice["finish_reason"]
    timings = chunk.get("timings") or {}
    progress = chunk.get("prompt_progress")
    if "usage" in chunk:  # the last piece: the whole call's counts
        end["usage"], end["timings"] = chunk["usage"], timings
    elif isinstance(progress, dict):
        cached = progress.get("cache") or 0
        total = progress.get("total")
        watcher.update(phase=watch.PROMPT, prompt_cached=cached,
                       prompt_total=None if total is None else total - cached,
                       prompt_done=max(0, (progress.get("processed") or 0) - cached))
    elif timings.get("predicted_n"):
        watcher.update(phase=watch.WRITING, tokens=timings["predicted_n"],
                       tokens_per_s=timings.get("predicted_per_second") or None)


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
