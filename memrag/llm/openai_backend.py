"""LLM backend for any OpenAI-compatible server (vLLM, llama.cpp's server, LM Studio, OpenAI),
through the official `openai` client.

What shapes this module:
- servers differ in structured output: `response_format` with a JSON schema where the server
  takes it, else JSON mode, else plain text — memrag's parser reads the last two. The server's
  own reply decides (a 400/422 naming `response_format` moves one step down, remembered per
  server and model for the process), and every completion says which mode served it;
- the API key is a secret: it goes in the Authorization header to the one base URL it was given
  for and nowhere else — not in the identity (cache keys, stamps, recordings), not in messages
  (every error passes `memrag.llm.redact`), not in a trace; it is checked when the backend is
  built. A server's identity is the model id plus a hash of its base URL, so two servers that
  both call their model "default" never share cached replies;
- the same deadlines, size bounds and error families as the Ollama backend
  (`memrag.llm.call_limits`, `memrag.llm.base`).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpcore2
import httpx2
import openai

from memrag import jsonsafe
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
from memrag.llm.call_limits import ReplyTooLarge, UnreadableReply, limited_call, limited_transport
from memrag.llm.watch import CallCancelled
from memrag.llm.http_errors import never_raising, redirect_error, tls_error
from memrag.llm.jsoncall import parse_json
from memrag.llm.logprobs import MalformedLogprobs, choice_positions
from memrag.llm.ollama_backend import EMBED_BYTES_PER_TEXT, reply_byte_bound
from memrag.llm.redact import key_problem, register_secret, scrub, shown_url

T = TypeVar("T")

BACKEND = "openai"
CHECK_TIMEOUT_S = 5.0  # a remote API is further away than a local Ollama
_CONNECT_TIMEOUT_S = 5.0
_LIST_MAX_BYTES = 4 * 1024 * 1024
# llama.cpp and vLLM need no key, but the client insists on one; this one says so if it shows up.
_NO_KEY = "no-key-set"
# The settings each key comes from (a key belongs to one base URL: memrag.llm.egress.embed_server).
LLM_KEY_NAME = "OPENAI_API_KEY"
EMBED_KEY_NAME = "MEMRAG_OPENAI_EMBED_API_KEY"
# A 429 asks us to wait; waits that fit in the call's deadline are taken, this many at most.
_RATE_LIMIT_WAITS = 3
_MAX_RATE_LIMIT_WAIT_S = 60.0

# Structured-output modes, strongest first. "json_schema": the server constrains the reply to the
# schema; "json_object": JSON mode (valid JSON, any shape); "text": no response_format at all.
STRUCTURED_MODES: tuple[str, ...] = ("json_schema", "json_object", "text")
_mode_of: dict[tuple[str, str], int] = {}  # (base URL, model) -> index into STRUCTURED_MODES
_mode_lock = threading.Lock()

# What "nobody answers at that address" looks like under the openai client's APIConnectionError.
_UNREACHABLE = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.UnsupportedProtocol)


def normalise_base_url(url: str) -> str:
    """The base URL as the client needs it: no trailing slash; a bare host gets `/v1`."""
    url = (url or "").strip().rstrip("/")
    if not url:
        raise LLMError("No base URL was given for the OpenAI-compatible server "
                       "(for example http://127.0.0.1:8080/v1; MEMRAG_OPENAI_BASE_URL).")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMError(f"The OpenAI-compatible base URL must start with http:// or https:// and "
                       f"name a host, got {shown_url(url)!r}.")
    return url if parts.path not in ("", "/") else url + "/v1"


def base_url_hash(url: str) -> str:
    """Short, stable stand-in for a base URL in identities (the URL may carry a tenant name)."""
    return hashlib.sha256(normalise_base_url(url).encode("utf-8")).hexdigest()[:16]


class OpenAICompatibleLLM:
    """The `LLM` protocol over an OpenAI-compatible chat-completions API (temperature 0, fixed seed)."""

    backend = BACKEND

    def __init__(self, base_url: str, model: str = "", api_key: str | None = None, seed: int = 42,
                 timeout: float = 600.0, key_name: str = LLM_KEY_NAME) -> None:
        """`api_key` goes to `base_url` and nowhere else (none is read from the environment here:
        the settings pair each key with its server); `key_name` is the setting it came from."""
        if timeout <= 0:
            raise LLMError(f"The OpenAI-compatible server's timeout must be positive, got {timeout}.")
        self.base_url = normalise_base_url(base_url)
        self.shown = shown_url(self.base_url)  # how messages name the server: no password, no query
        self.model = (model or "").strip()
        self.seed = seed
        self.timeout = timeout
        self.key_name = key_name
        key = api_key or ""
        problem = key_problem(key)
        if problem:
            raise LLMRefused(f"The API key for {self.shown} ({key_name}) {problem}.")
        register_secret(key)
        # No retries inside the client: every wait (429) is taken here, inside the call's deadline.
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=key or _NO_KEY, max_retries=0,
            timeout=httpx2.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S)),
            http_client=httpx2.Client(transport=limited_transport(httpx2, httpcore2),
                                      timeout=httpx2.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S))),
        )

    def __repr__(self) -> str:  # never the key
        return f"OpenAICompatibleLLM(base_url={self.shown!r}, model={self.model!r})"

    def close(self) -> None:
        self._client.close()

    def identity(self) -> dict[str, Any]:
        # The base URL as a hash: two servers' "default" models are different engines.
        return {"backend": self.backend, "model": self.model, "server": base_url_hash(self.base_url),
                "seed": self.seed}

    def structured_mode(self) -> str:
        """The structured-output mode the next schema call will try first."""
        with _mode_lock:
            return STRUCTURED_MODES[_mode_of.get((self.base_url, self.model), 0)]

    def logprobs_missing(self) -> str:
        # Asked for on every probability call; a server that ignores the request sends none,
        # and the reading says so then.
        return ""

    # ------------------------------------------------------------------ calls
    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        check_request(messages, schema, max_tokens, top_logprobs)
        if not self.model:
            raise LLMError(f"No model was named for the OpenAI-compatible server at {self.shown} "
                           "(MEMRAG_OPENAI_MODEL, --model, or the sidebar).")
        started = time.perf_counter()
        deadline = time.monotonic() + self.timeout
        while True:
            mode = self.structured_mode() if schema is not None else "text"
            request = {"model": self.model, "messages": messages, "temperature": 0, "seed": self.seed,
                       "max_tokens": max_tokens, **_response_format(mode, schema)}
            if top_logprobs:
                request.update(logprobs=True, top_logprobs=top_logprobs)
            try:
                body = self._call(lambda: self._client.chat.completions.with_raw_response.create(**request),
                                  deadline, reply_byte_bound(max_tokens, top_logprobs), f"stage {stage}")
            except _StructuredRefused:
                self._step_down(mode)
                continue
            break
        completion = _to_completion(body, time.perf_counter() - started, self.model, stage, mode,
                                    self.shown)
        if top_logprobs:  # a probability read stops at its token limit on purpose, any text will do
            try:
                completion.top_logprobs = choice_positions(_first_choice(body), top=top_logprobs,
                                                           max_positions=max_tokens)
            except MalformedLogprobs as e:
                raise LLMReplyError(f"The token probabilities from {self.shown} for stage {stage} are "
                                    f"malformed: {e}.", completion) from e
            return completion
        _check_reply(body, completion, schema, mode, max_tokens, stage, self.shown)
        return completion

    def _step_down(self, mode: str) -> None:
        """The server refused `mode`: the next call (this one's retry included) asks for less."""
        with _mode_lock:
            key = (self.base_url, self.model)
            _mode_of[key] = max(_mode_of.get(key, 0), STRUCTURED_MODES.index(mode) + 1)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """This model's embedding vectors for `texts` (POST /embeddings), under one call's limits."""
        deadline = time.monotonic() + self.timeout
        body = self._call(lambda: self._client.embeddings.with_raw_response.create(
            model=self.model, input=texts, encoding_format="float"),
            deadline, reply_byte_bound(0) + EMBED_BYTES_PER_TEXT * len(texts), "embeddings")
        data = body.get("data")
        rows = sorted((d for d in data if isinstance(d, dict)), key=lambda d: d.get("index", 0)) \
            if isinstance(data, list) else []
        vectors = [d.get("embedding") for d in rows]
        if len(vectors) != len(texts) or not all(isinstance(v, list) and v for v in vectors):
            raise LLMReplyError(f"The server at {self.shown} sent {len(vectors)} embeddings for "
                                f"{len(texts)} texts, or empty ones; is {self.model} an embedding model?")
        return vectors  # type: ignore[return-value]

    def list_models(self) -> list[str] | None:
        """Model ids the server lists; None when it does not offer a list (404). Raises LLMError."""
        deadline = time.monotonic() + CHECK_TIMEOUT_S
        try:
            body = self._call(self._client.models.with_raw_response.list, deadline, _LIST_MAX_BYTES,
                              "the model list", listing=True)
        except _NoModelList:
            return None
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise LLMReplyError(f"The server at {self.shown} did not answer GET /models like an "
                                "OpenAI-compatible server (no 'data' list). Is the base URL right?")
        return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]

    def check(self) -> tuple[bool, str]:
        """Is the server up and does it serve the model? Quick (its own short deadline); never raises.

        A server that serves exactly one model and was given none uses that one."""
        return never_raising(self._check, self.shown)

    def _check(self) -> tuple[bool, str]:
        try:
            ids = self.list_models()
        except LLMError as e:
            return False, str(e)
        if ids is None:
            if not self.model:
                return False, (f"The server at {self.shown} does not list its models; name the model "
                               "(MEMRAG_OPENAI_MODEL, --model, or the sidebar).")
            return True, f"{self.shown} answers (it does not list models; using {self.model})"
        if not self.model:
            if len(ids) == 1:
                self.model = ids[0]
                return True, f"{self.shown} serves one model, {self.model}: using it"
            return False, (f"The server at {self.shown} serves {_listing(ids)}; name the one to use "
                           "(MEMRAG_OPENAI_MODEL, --model, or the sidebar).")
        if self.model in ids:
            return True, f"{self.shown} serves {self.model}"
        return False, (f"The server at {self.shown} does not serve the model {self.model}; it serves "
                       f"{_listing(ids)}. Set MEMRAG_OPENAI_MODEL (or --model) to one of them.")

    def _call(self, request: Callable[[], Any], deadline: float, max_bytes: int, what: str,
              listing: bool = False) -> Any:
        """One request under the call's deadline and size bound; 429 waits taken inside the
        deadline. Returns the reply's JSON object; every failure is an LLMError (or a mode refusal).

        This is the only place memrag's OpenAI-compatible calls are made and their failures named.
        """
        waits = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._too_slow(what)
            try:
                with limited_call(left, max_bytes):
                    raw = request()
                    content = raw.http_response.content
                return self._json_object(content, what)
            except openai.RateLimitError as e:
                wait = _retry_after_s(e.response)
                if _is_quota(e):
                    raise LLMRefused(f"The server at {self.shown} says the account's quota is used up "
                                     f"(HTTP 429: {self._said(e)}); check the plan and billing of the "
                                     "API key.") from e
                fits = wait is not None and wait <= _MAX_RATE_LIMIT_WAIT_S and time.monotonic() + wait < deadline
                if waits < _RATE_LIMIT_WAITS and fits:
                    waits += 1
                    time.sleep(wait)  # type: ignore[arg-type]
                    continue
                after = f"; it asks to wait {wait:g} s before the next request" if wait is not None else ""
                raise LLMCallError(
                    f"The server at {self.shown} is limiting requests (HTTP 429: {self._said(e)}){after}. "
                    "Try again later, or keep fewer requests in flight (--parallel).", raw=self._said(e)) from e
            except openai.APIStatusError as e:
                said = self._said(e)
                if not listing and e.status_code in (400, 422) and _names_response_format(said):
                    raise _StructuredRefused() from e
                if listing and e.status_code in (404, 405):
                    raise _NoModelList() from e
                if 300 <= e.status_code < 400:
                    raise redirect_error(self.shown, e.status_code, e.response.headers.get("location", ""),
                                         "MEMRAG_OPENAI_BASE_URL") from e
                raise self._status_error(e.status_code, said) from e
            except openai.APITimeoutError as e:
                if isinstance(e.__cause__, httpx2.ConnectTimeout):
                    raise self._unreachable() from e
                raise self._too_slow(what) from e
            except openai.APIConnectionError as e:
                if isinstance(e.__cause__, CallCancelled):  # the caller's cancel, not the server's fault
                    raise e.__cause__ from None
                if isinstance(e.__cause__, _UNREACHABLE):
                    raise tls_error(self.shown, e) or self._unreachable() from e
                raise LLMReplyError(
                    f"The reply from the server at {self.shown} broke off before it was complete "
                    f"({type(e.__cause__).__name__}). Nothing was kept; try again.") from e
            except UnreadableReply as e:
                raise LLMReplyError(f"The reply from {self.shown} ({what}) could not be read: {e}. "
                                    "Nothing was kept.") from e
            except ReplyTooLarge as e:
                raise LLMReplyError(
                    f"The reply from {self.shown} ({what}) was larger than {max_bytes:,} bytes, far more "
                    "than was asked for; it was not read further and nothing was kept.") from e

    def _json_object(self, content: bytes, what: str) -> dict[str, Any]:
        try:
            body = jsonsafe.loads(content)
        except ValueError as e:
            problem = "an empty body" if not content.strip() else f"a body that is not JSON ({e})"
        else:
            if isinstance(body, dict):
                return body
            problem = f"a JSON {type(body).__name__.replace('NoneType', 'null')} where an object belongs"
        raise LLMReplyError(
            f"The server at {self.shown} did not answer like an OpenAI-compatible server ({what}): "
            f"it sent {problem}. Is the base URL right (it usually ends in /v1)?",
            raw=content.decode("utf-8", "replace"))

    def _said(self, e: openai.APIStatusError) -> str:
        """The server's own words for an error status: its error message, else the body's text."""
        body = e.body
        said = body.get("message") if isinstance(body, dict) else None
        if isinstance(body, dict) and isinstance(body.get("error"), (dict, str)):
            err = body["error"]
            said = err.get("message") if isinstance(err, dict) else err
        if not isinstance(said, str):
            try:
                said = e.response.text
            except Exception:  # noqa: BLE001 - an undecodable body: say what status it was
                said = ""
        return scrub(" ".join(said.split())[:2000]) or e.response.reason_phrase or "no reason given"

    def _unreachable(self) -> LLMUnavailable:
        return LLMUnavailable(
            f"The OpenAI-compatible server is not reachable at {self.shown}: is it running? "
            "Start it (for example `vllm serve MODEL` or `llama-server -m FILE`), or set "
            "MEMRAG_OPENAI_BASE_URL to where it runs.")

    def _too_slow(self, what: str) -> LLMCallError:
        return LLMCallError(
            f"The server at {self.shown} did not finish answering within {self.timeout:g} s "
            f"(model {self.model}, {what}). The server may be overloaded or the model still loading; "
            "try again, or raise the timeout.")

    def _status_error(self, status: int, said: str) -> LLMError:
        """An HTTP error status: which ones stop everything, which fail only this call."""
        if status == 404 and "model" in said.lower():
            return ModelNotFound(
                f"The server at {self.shown} does not have the model {self.model} ({said}): check the "
                "model name (GET /models lists what it serves) and MEMRAG_OPENAI_MODEL.")
        if status == 404:
            return LLMUnavailable(f"{self.shown} answered 404 ({said}); is the base URL right "
                                  "(it usually ends in /v1)?")
        if status in (401, 403):
            return LLMRefused(f"The server at {self.shown} refused access (HTTP {status}: {said}); "
                              f"check {self.key_name} (or the key typed in the sidebar).")
        return LLMCallError(f"The server at {self.shown} refused the request for {self.model}: {said} "
                            f"(HTTP {status})", raw=said)


class _StructuredRefused(Exception):
    """The server refused the `response_format` asked for (handled in `complete`)."""


class _NoModelList(Exception):
    """GET /models is not offered by this server (handled in `list_models`)."""


def _response_format(mode: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    if schema is None or mode == "text":
        return {}
    if mode == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "reply", "schema": schema, "strict": False}}}


def _names_response_format(said: str) -> bool:
    text = said.lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "response format"))


def _is_quota(e: openai.RateLimitError) -> bool:
    body = e.body if isinstance(e.body, dict) else {}
    err = body.get("error") if isinstance(body.get("error"), dict) else body
    return isinstance(err, dict) and err.get("code") == "insufficient_quota"


def _retry_after_s(response: Any) -> float | None:
    """Seconds the server asks us to wait (`retry-after-ms`, `retry-after` in seconds); None if unsaid."""
    headers = getattr(response, "headers", {}) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP date: too rare from these servers to be worth parsing
        if seconds >= 0:
            return seconds
    return None


def _listing(ids: list[str]) -> str:
    if not ids:
        return "no models"
    shown = ", ".join(i if len(i) <= 100 else i[:100] + "…" for i in ids[:8])
    return shown + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")


def _first_choice(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    return choice if isinstance(choice, dict) else {}


def _content_text(content: Any) -> str | None:
    """The reply's text: a string as it is, a list of parts as its text parts joined; None if neither."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def _to_completion(body: dict[str, Any], seconds: float, model: str, stage: str, mode: str,
                   base_url: str) -> Completion:
    choice = _first_choice(body)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise LLMReplyError(f"The server at {base_url} did not answer like an OpenAI-compatible server "
                            f"(stage {stage}): its reply has no choices[0].message.", raw=str(body)[:2000])
    text = _content_text(message.get("content"))
    if text is None:
        content = message.get("content")
        what = (f"a list of {len(content)} parts, none of them text" if isinstance(content, list)
                else f"a JSON {type(content).__name__}")
        raise LLMReplyError(f"The server at {base_url} sent choices[0].message.content as {what}, where "
                            f"text belongs (stage {stage}).", raw=str(body)[:2000])
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
    return Completion(
        text=text,
        # Counts only as the server reports them: the whole prompt, and the part it reused.
        prompt_tokens=token_count(usage.get("prompt_tokens")),
        prompt_tokens_cached=token_count(details.get("cached_tokens")),
        completion_tokens=token_count(usage.get("completion_tokens")),
        seconds=seconds, cached=False, model=model, backend=BACKEND, stage=stage, raw=body,
        structured=mode)


def _check_reply(body: dict[str, Any], c: Completion, schema: dict[str, Any] | None, mode: str,
                 max_tokens: int, stage: str, base_url: str) -> None:
    """LLMReplyError (carrying the completion) when the reply is cut off or not the JSON asked for."""
    finish = _first_choice(body).get("finish_reason")
    if finish == "length":
        raise LLMReplyError(f"The reply from {base_url} for stage {stage} stopped at the {max_tokens}-token "
                            "limit before it was finished (finish_reason=length).", c)
    if not c.text.strip():
        raise LLMReplyError(f"The reply from {base_url} for stage {stage} has no text "
                            f"(finish_reason={finish!r}).", c)
    if schema is None:
        return
    try:
        # A schema-constrained reply must be JSON as it stands; JSON mode and plain text get
        # memrag's forgiving parser (fences, trailing commas), as the callers will.
        jsonsafe.loads(c.text) if mode == "json_schema" else parse_json(c.text)
    except ValueError as e:
        raise LLMReplyError(f"The reply from {base_url} for stage {stage} is not valid JSON although a "
                            f"schema was asked for ({mode} mode).", c) from e
