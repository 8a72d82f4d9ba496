"""LLM backend that talks to an Ollama server through the official `ollama` client.

Two Ollama habits shape this module:
- a prompt longer than the context window is truncated without a word, so the
  context size (`num_ctx`) is chosen per call from the prompt's rough size;
- changing `num_ctx` makes Ollama reload the model, so the size only ever grows
  within a process: a small call after a big one keeps the big window.
"""

from __future__ import annotations

import inspect
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpcore
import httpx
import pydantic

from memrag import jsonsafe
from memrag.llm.call_limits import ReplyTooLarge, UnreadableReply, limited_call, limited_transport
from memrag.llm.base import (
    Completion,
    LLMCallError,
    LLMError,
    LLMRefused,
    LLMReplyError,
    LLMUnavailable,
    Message,
    ModelNotFound,
    check_request,
    token_count,
)
from memrag.llm.http_errors import never_raising, redirect_error, tls_error
from memrag.llm.logprobs import MalformedLogprobs, parse_positions
from memrag.llm.ollama_import import checked_host, ollama_module
from memrag.llm.redact import key_problem, register_secret, shown_url

T = TypeVar("T")

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "phi4"

# Ollama refuses more alternatives per token than this ("top_logprobs must be between 0 and 20"); a
# request for more (memrag's protocol allows MAX_TOP_LOGPROBS) is asked for this many.
OLLAMA_MAX_TOP_LOGPROBS = 20

# The context sizes we ever ask for; few rungs means few model reloads.
NUM_CTX_LADDER: tuple[int, ...] = (4096, 8192, 16384)

# Only for choosing a rung, never for accounting: ~3 characters per token
# overestimates English text a little, which errs on the side of a bigger window.
_CHARS_PER_TOKEN_ESTIMATE = 3
# Chat templates wrap each message in a few tokens of role markers.
_TEMPLATE_TOKENS_PER_MESSAGE = 8

CHECK_TIMEOUT_S = 1.5
_CONNECT_TIMEOUT_S = 5.0

# The most a reply may weigh: the JSON envelope plus a generous allowance per token (a token is
# a few characters, and JSON escaping can make one character twelve bytes). A server sending
# more is not answering our request, and reading it whole would only fill memory.
_REPLY_BASE_BYTES = 256 * 1024
_REPLY_BYTES_PER_TOKEN = 256
_LIST_MAX_BYTES = 4 * 1024 * 1024
# One listed alternative token with its log-probability (and the token's bytes as numbers).
_REPLY_BYTES_PER_ALTERNATIVE = 1024
# An embedding as JSON: up to a few thousand numbers of ~20 characters each.
EMBED_BYTES_PER_TEXT = 128 * 1024

# What "nobody answers at that address" looks like through the client: it turns
# httpx.ConnectError into the builtin ConnectionError; a bad scheme or a silent
# host arrive as httpx errors.
_UNREACHABLE = (ConnectionError, httpx.ConnectError, httpx.UnsupportedProtocol, httpx.ConnectTimeout)

# Largest rung sent so far per (host, model), shared by every instance in the process.
_largest_rung: dict[tuple[str, str], int] = {}
_largest_rung_lock = threading.Lock()


class _NotOllama(Exception):
    """A successful HTTP reply whose body is not a JSON object (mapped in `_call`)."""

    def __init__(self, what: str, raw: bytes) -> None:
        super().__init__(what)
        self.what = what
        self.raw = raw.decode("utf-8", "replace")


class _StatusError(Exception):
    """An HTTP error status, with the server's own words (mapped in `_call`)."""

    def __init__(self, status: int, message: str, location: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.location = location  # where a 3xx points


def _read_reply(response: httpx.Response) -> None:
    """Response hook: read and check the body before the `ollama` client sees it.

    An error status becomes `_StatusError` with the `error` field or the text (the client's
    own error parsing fails on a JSON list or deep nesting); a successful reply must be a JSON
    object, or it is not Ollama talking (the client would fail with TypeError or RecursionError).
    """
    raw = response.read()
    try:
        body = jsonsafe.loads(raw)
    except ValueError as e:
        body, problem = None, ("an empty body" if not raw.strip() else f"a body that is not JSON ({e})")
    else:
        problem = "" if isinstance(body, dict) else \
            f"a JSON {type(body).__name__.replace('NoneType', 'null')} where an object belongs"
    if not response.is_success:
        said = body.get("error") if isinstance(body, dict) else None
        text = said if isinstance(said, str) else raw.decode("utf-8", "replace")
        raise _StatusError(response.status_code, " ".join(text.split())[:2000] or response.reason_phrase,
                           response.headers.get("location", ""))
    if problem:
        raise _NotOllama(problem, raw)


def reply_byte_bound(max_tokens: int, top_logprobs: int = 0) -> int:
    """The most bytes read for a reply of at most `max_tokens` tokens (each with `top_logprobs`
    listed alternatives when those were asked for)."""
    alternatives = max_tokens * (top_logprobs + 1) if top_logprobs else 0
    return _REPLY_BASE_BYTES + _REPLY_BYTES_PER_TOKEN * max_tokens + _REPLY_BYTES_PER_ALTERNATIVE * alternatives


def estimate_prompt_tokens(messages: list[Message], schema: dict[str, Any] | None) -> int:
    """A deliberately rough, generous token estimate used only to pick `num_ctx`."""
    chars = sum(len(m.get("content", "")) for m in messages)
    if schema is not None:
        # Ollama turns the schema into a grammar, and some templates also show it to the model.
        chars += len(json.dumps(schema))
    return chars // _CHARS_PER_TOKEN_ESTIMATE + _TEMPLATE_TOKENS_PER_MESSAGE * len(messages)


def choose_num_ctx(host: str, model: str, needed_tokens: int) -> int:
    """The rung to send: big enough for `needed_tokens` and never smaller than before."""
    fitting = [rung for rung in NUM_CTX_LADDER if rung >= needed_tokens]
    if not fitting:
        raise LLMError(
            f"This request needs about {needed_tokens} tokens of context (prompt plus reply), "
            f"more than the largest window memrag asks Ollama for ({NUM_CTX_LADDER[-1]}). "
            "Ollama would silently cut the prompt, so it was not sent; "
            "use shorter documents or chunks, or fewer passages per question."
        )
    with _largest_rung_lock:
        rung = max(fitting[0], _largest_rung.get((host, model), 0))
        _largest_rung[(host, model)] = rung
    return rung


def _model_with_tag(name: str) -> str:
    """Ollama lists `phi4` as `phi4:latest`; compare names in that full form."""
    last_part = name.rsplit("/", 1)[-1]
    return name if ":" in last_part else f"{name}:latest"


def _is_missing_model(error: str) -> bool:
    text = error.lower()
    # Ollama says "model 'x' not found"; a bare "404 page not found" means a wrong host path.
    return "not found" in text and "model" in text


class OllamaLLM:
    """The `LLM` protocol over an Ollama server (temperature 0, fixed seed)."""

    backend = "ollama"

    def __init__(
        self,
        host: str | None = None,
        model: str = DEFAULT_MODEL,
        seed: int = 42,
        timeout: float = 600.0,
    ) -> None:
        if not model or not model.strip():
            raise LLMError("No Ollama model name was given (for example: phi4).")
        if timeout <= 0:
            raise LLMError(f"The Ollama timeout must be positive, got {timeout}.")
        # Checked before the `ollama` package is imported: its import and its client both parse it.
        self.host = checked_host(host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST)
        self._ollama = ollama = ollama_module()
        # How messages name the server: no password, no query (a bare host:port stays bare).
        self.shown = shown_url(self.host) if "://" in self.host else \
            shown_url(f"http://{self.host}").removeprefix("http://")
        self.model = model.strip()
        self.seed = seed
        self.timeout = timeout
        # The `ollama` client sends OLLAMA_API_KEY to this host by itself: checked and guarded like ours.
        key = os.environ.get("OLLAMA_API_KEY", "")
        problem = key_problem(key)
        if problem:
            raise LLMRefused(f"The API key for Ollama at {self.shown} (OLLAMA_API_KEY) {problem}.")
        register_secret(key)
        # A short connect timeout: an unreachable host should not hold a call for minutes.
        # Every call's total deadline and size bound come from `_call` through the transport.
        self._client = ollama.Client(
            host=self.host,
            timeout=httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S)),
            transport=limited_transport(httpx, httpcore),
            follow_redirects=False,  # a redirect is reported, never followed (it may lead elsewhere)
            event_hooks={"response": [_read_reply]},
        )

    def close(self) -> None:
        """Close the HTTP connections this instance keeps open."""
        self._client.close()

    def identity(self) -> dict[str, Any]:
        # The host is left out on purpose: the same model and seed answer the same
        # wherever it runs, so a recording made on one machine serves another.
        return {"backend": self.backend, "model": self.model, "seed": self.seed}

    def logprobs_missing(self) -> str:
        # Servers from 0.12.11 answer `logprobs`; an older one ignores it and the reading says so.
        return _client_logprobs_missing(self._ollama)

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int,
        stage: str,
        top_logprobs: int = 0,
    ) -> Completion:
        check_request(messages, schema, max_tokens, top_logprobs)
        if top_logprobs and _client_logprobs_missing(self._ollama):
            raise LLMError(_client_logprobs_missing(self._ollama))
        needed = estimate_prompt_tokens(messages, schema) + max_tokens
        num_ctx = choose_num_ctx(self.host, self.model, needed)
        options = {
            "temperature": 0, "seed": self.seed, "num_ctx": num_ctx, "num_predict": max_tokens
        }

        # Only a probability call names them: an older client takes no such arguments. Thinking is off
        # there: a thinking model's first token would be its hidden reasoning, not the answer's.
        top = min(top_logprobs, OLLAMA_MAX_TOP_LOGPROBS)
        asked = {"logprobs": True, "top_logprobs": top, "think": False} if top_logprobs else {}
        started = time.perf_counter()
        reply = self._call(
            lambda: self._client.chat(model=self.model, messages=messages, format=schema,
                                      options=options, stream=False, **asked),
            self.timeout, reply_byte_bound(max_tokens, top), f"stage {stage}")
        completion = Completion(
            text=reply.message.content or "",
            # Counts only as Ollama reports them; a missing count stays unknown.
            prompt_tokens=token_count(reply.prompt_eval_count),
            prompt_tokens_cached=None,  # Ollama does not say how much of the prompt it reused
            completion_tokens=token_count(reply.eval_count),
            seconds=time.perf_counter() - started,
            cached=False,
            model=self.model,
            backend=self.backend,
            stage=stage,
            raw=reply.model_dump(mode="json", exclude_none=True),
        )
        if top_logprobs:  # a probability read stops at its token limit on purpose, any text will do
            listed = getattr(reply, "logprobs", None)
            try:
                completion.top_logprobs = parse_positions(
                    None if listed is None else [p.model_dump() for p in listed], top=top,
                    max_positions=max_tokens)
            except MalformedLogprobs as e:
                raise LLMReplyError(f"The token probabilities from Ollama at {self.shown} for stage {stage} "
                                    f"are malformed: {e}.", completion) from e
            return completion
        _check_reply(reply, completion, schema, max_tokens, stage)
        return completion

    def embed(self, texts: list[str]) -> list[list[float]]:
        """This model's embedding vectors for `texts` (POST /api/embed), under one call's limits."""
        reply = self._call(lambda: self._client.embed(model=self.model, input=texts), self.timeout,
                           _REPLY_BASE_BYTES + EMBED_BYTES_PER_TEXT * len(texts), "embeddings")
        return [list(v) for v in reply.embeddings]

    def check(self) -> tuple[bool, str]:
        """Is the server up and does it have the model? Quick (its own short deadline); never raises."""
        return never_raising(self._check, self.shown)

    def _check(self) -> tuple[bool, str]:
        try:
            listed = self._call(self._client.list, CHECK_TIMEOUT_S, _LIST_MAX_BYTES, "the model list")
        except LLMError as e:
            return False, str(e)
        wanted = _model_with_tag(self.model)
        present = {_model_with_tag(m.model) for m in listed.models if m.model}
        if wanted in present:
            return True, f"Ollama at {self.shown} has {self.model}"
        return False, (
            f"Ollama is running at {self.shown} but {self.model} is not pulled: "
            f"run `ollama pull {self.model}`"
        )

    def _call(self, request: Callable[[], T], seconds: float, max_bytes: int, what: str) -> T:
        """One HTTP call under one total deadline and one size bound, every failure an LLMError.

        This is the only place memrag's Ollama calls are made and their failures named.
        """
        try:
            with limited_call(seconds, max_bytes):
                return request()
        except _StatusError as e:
            if 300 <= e.status < 400:
                raise redirect_error(self.shown, e.status, e.location, "OLLAMA_HOST") from e
            raise self._response_error(e.status, e.message) from e
        except self._ollama.ResponseError as e:  # not raised while `_read_reply` runs first; kept as a guard
            raise self._response_error(e.status_code, str(e.error)) from e
        except _UNREACHABLE as e:
            raise tls_error(self.shown, e) or LLMUnavailable(
                f"Ollama is not reachable at {self.shown}: is it running? Start it with `ollama serve`, "
                "or set OLLAMA_HOST to where it runs."
            ) from e
        except httpx.TimeoutException as e:
            raise LLMCallError(
                f"Ollama at {self.shown} did not finish answering within {seconds:g} s "
                f"(model {self.model}, {what}). The model may still be loading or the "
                "machine is too slow for it; try again, or raise the timeout."
            ) from e
        except ReplyTooLarge as e:
            raise LLMReplyError(
                f"The reply from {self.shown} ({what}) was larger than {max_bytes:,} bytes, far more "
                "than was asked for; it was not read further and nothing was kept."
            ) from e
        except UnreadableReply as e:
            raise LLMReplyError(f"The reply from {self.shown} ({what}) could not be read: {e}. "
                                "Nothing was kept.") from e
        except _NotOllama as e:
            raise LLMReplyError(
                f"The server at {self.shown} did not answer like Ollama ({what}): it sent {e.what}. "
                "Is OLLAMA_HOST pointing at an Ollama server?", raw=e.raw
            ) from e
        except httpx.TransportError as e:
            raise LLMReplyError(
                f"The reply from Ollama at {self.shown} broke off before it was complete ({e}). "
                "Nothing was kept; try again."
            ) from e
        except pydantic.ValidationError as e:
            raise LLMReplyError(
                f"The server at {self.shown} did not answer like Ollama ({what}): its reply lacks "
                f"what Ollama sends ({e.errors()[0].get('loc', '')}). "
                "Is OLLAMA_HOST pointing at an Ollama server?"
            ) from e

    def _response_error(self, status: int, error: str) -> LLMError:
        """An HTTP error status: which ones stop everything, which fail only this call."""
        if _is_missing_model(error):
            return ModelNotFound(
                f"Ollama at {self.shown} does not have the model {self.model}: "
                f"run `ollama pull {self.model}` and try again."
            )
        if status == 404:
            return LLMUnavailable(
                f"{self.shown} answered 404 ({error}); is OLLAMA_HOST pointing at an Ollama server?"
            )
        if status in (401, 403):
            return LLMRefused(
                f"Ollama at {self.shown} refused access (HTTP {status}: {error}); "
                "check OLLAMA_API_KEY or the proxy in front of it."
            )
        return LLMCallError(
            f"Ollama at {self.shown} refused the request for {self.model}: {error} (HTTP {status})",
            raw=error,
        )


def _client_logprobs_missing(ollama: Any) -> str:
    """'' when the installed `ollama` client can ask for log-probabilities (0.6.1 and later)."""
    if "top_logprobs" in inspect.signature(ollama.Client.chat).parameters:
        return ""
    return ("the installed ollama Python client cannot ask for token probabilities "
            "(upgrade it: pip install -U ollama)")


def _check_reply(
    reply: Any, c: Completion, schema: dict[str, Any] | None, max_tokens: int, stage: str
) -> None:
    """LLMReplyError (carrying the completion) when the reply is incomplete or not the JSON asked for."""
    if reply.done is False:
        raise LLMReplyError(f"Ollama's reply for stage {stage} says it is not finished (done=false).", c)
    if not c.text.strip():
        raise LLMReplyError(
            f"Ollama's reply for stage {stage} has no text (done_reason={reply.done_reason!r}).", c
        )
    if schema is not None:
        try:
            jsonsafe.loads(c.text)
        except ValueError as e:
            hint = (
                f" It stopped at the {max_tokens}-token limit before the JSON was closed."
                if reply.done_reason == "length"
                else ""
            )
            raise LLMReplyError(
                f"Ollama's reply for stage {stage} is not valid JSON although a schema was given.{hint}", c
            ) from e
