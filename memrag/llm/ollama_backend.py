"""LLM backend that talks to an Ollama server through the official `ollama` client.

Two Ollama habits shape this module:
- a prompt longer than the context window is truncated without a word, so the
  context size (`num_ctx`) is chosen per call from the prompt's rough size;
- changing `num_ctx` makes Ollama reload the model, so the size only ever grows
  within a process: a small call after a big one keeps the big window.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import httpx
import ollama
import pydantic

from memrag.llm.base import (
    Completion,
    LLMError,
    LLMReplyError,
    LLMUnavailable,
    Message,
    ModelNotFound,
)

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "phi4"

# The context sizes we ever ask for; few rungs means few model reloads.
NUM_CTX_LADDER: tuple[int, ...] = (4096, 8192, 16384)

# Only for choosing a rung, never for accounting: ~3 characters per token
# overestimates English text a little, which errs on the side of a bigger window.
_CHARS_PER_TOKEN_ESTIMATE = 3
# Chat templates wrap each message in a few tokens of role markers.
_TEMPLATE_TOKENS_PER_MESSAGE = 8

CHECK_TIMEOUT_S = 1.5
_CONNECT_TIMEOUT_S = 5.0

# What "nobody answers at that address" looks like through the client: it turns
# httpx.ConnectError into the builtin ConnectionError; a bad scheme or a silent
# host arrive as httpx errors.
_UNREACHABLE = (ConnectionError, httpx.ConnectError, httpx.UnsupportedProtocol, httpx.ConnectTimeout)

# Largest rung sent so far per (host, model), shared by every instance in the process.
_largest_rung: dict[tuple[str, str], int] = {}
_largest_rung_lock = threading.Lock()


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


def _is_missing_model(error: ollama.ResponseError) -> bool:
    text = str(error.error).lower()
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
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.model = model.strip()
        self.seed = seed
        self.timeout = timeout
        # A short connect timeout: an unreachable host should not hold a call for minutes.
        self._client = ollama.Client(
            host=self.host,
            timeout=httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT_S)),
        )

    def close(self) -> None:
        """Close the HTTP connections this instance keeps open."""
        self._client.close()

    def identity(self) -> dict[str, Any]:
        # The host is left out on purpose: the same model and seed answer the same
        # wherever it runs, so a recording made on one machine serves another.
        return {"backend": self.backend, "model": self.model, "seed": self.seed}

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int,
        stage: str,
    ) -> Completion:
        _check_request(messages, schema, max_tokens)
        needed = estimate_prompt_tokens(messages, schema) + max_tokens
        num_ctx = choose_num_ctx(self.host, self.model, needed)
        options = {
            "temperature": 0, "seed": self.seed, "num_ctx": num_ctx, "num_predict": max_tokens
        }

        started = time.perf_counter()
        try:
            reply = self._client.chat(
                model=self.model, messages=messages, format=schema, options=options, stream=False
            )
        except ollama.ResponseError as e:
            raise self._response_error(e) from e
        except _UNREACHABLE as e:
            raise LLMUnavailable(self._unreachable_message()) from e
        except httpx.TimeoutException as e:
            raise LLMError(
                f"Ollama at {self.host} did not finish answering within {self.timeout:g} s "
                f"(model {self.model}, stage {stage}). The model may still be loading or the "
                "machine is too slow for it; try again, or raise the timeout."
            ) from e
        except httpx.TransportError as e:
            raise LLMReplyError(
                f"The reply from Ollama at {self.host} broke off before it was complete ({e}). "
                "Nothing was kept; try again."
            ) from e
        except pydantic.ValidationError as e:
            raise LLMReplyError(
                f"Ollama at {self.host} sent a reply without a chat message (stage {stage}); "
                "is OLLAMA_HOST pointing at an Ollama server?"
            ) from e
        except ValueError as e:  # the body was not JSON (json.JSONDecodeError, bad UTF-8)
            raise LLMReplyError(
                f"Ollama at {self.host} sent a reply that is not JSON (stage {stage}); "
                "is OLLAMA_HOST pointing at an Ollama server?"
            ) from e
        seconds = time.perf_counter() - started

        text = _reply_text(reply, schema, max_tokens, stage)
        raw = reply.model_dump(mode="json", exclude_none=True)
        return Completion(
            text=text,
            # Counts only as Ollama reports them; a missing count stays unknown.
            prompt_tokens=reply.prompt_eval_count,
            prompt_tokens_cached=None,  # Ollama does not say how much of the prompt it reused
            completion_tokens=reply.eval_count,
            seconds=seconds,
            cached=False,
            model=self.model,
            backend=self.backend,
            stage=stage,
            raw=raw,
        )

    def check(self) -> tuple[bool, str]:
        """Is the server up and does it have the model? Quick; never raises."""
        try:
            with ollama.Client(host=self.host, timeout=CHECK_TIMEOUT_S) as client:
                listed = client.list()
        except _UNREACHABLE:
            return False, (
                f"Ollama not reachable at {self.host} (is it running? start it with `ollama serve`)"
            )
        except httpx.TimeoutException:
            return False, f"Ollama at {self.host} did not answer within {CHECK_TIMEOUT_S:g} s"
        except ollama.ResponseError as e:
            return False, f"Ollama at {self.host} answered with an error: {e}"
        except (httpx.TransportError, ValueError) as e:  # ValueError covers bad JSON and bad shape
            return False, f"The server at {self.host} did not answer like Ollama ({type(e).__name__})"

        wanted = _model_with_tag(self.model)
        present = {_model_with_tag(m.model) for m in listed.models if m.model}
        if wanted in present:
            return True, f"Ollama at {self.host} has {self.model}"
        return False, (
            f"Ollama is running at {self.host} but {self.model} is not pulled: "
            f"run `ollama pull {self.model}`"
        )

    def _unreachable_message(self) -> str:
        return (
            f"Cannot reach Ollama at {self.host}: is Ollama running? (ollama serve) "
            "Or set OLLAMA_HOST to where it runs."
        )

    def _response_error(self, error: ollama.ResponseError) -> LLMError:
        if _is_missing_model(error):
            return ModelNotFound(
                f"Ollama at {self.host} does not have the model {self.model}: "
                f"run `ollama pull {self.model}` and try again."
            )
        if error.status_code == 404:
            return LLMUnavailable(
                f"{self.host} answered 404 to a chat request ({error.error}); "
                "is OLLAMA_HOST pointing at an Ollama server?"
            )
        return LLMError(
            f"Ollama at {self.host} refused the request for {self.model}: {error.error} "
            f"(HTTP {error.status_code})"
        )


def _check_request(
    messages: list[Message], schema: dict[str, Any] | None, max_tokens: int
) -> None:
    """Catch caller mistakes here, so errors later can be blamed on the reply."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
            raise ValueError(
                f"message {i} must be a dict with string 'role' and 'content', got {m!r:.200}"
            )
    if schema is not None and not isinstance(schema, dict):
        raise ValueError(f"schema must be a JSON schema dict or None, got {type(schema).__name__}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")


def _reply_text(
    reply: ollama.ChatResponse, schema: dict[str, Any] | None, max_tokens: int, stage: str
) -> str:
    """The reply's text, or LLMReplyError when it is incomplete or not the JSON asked for."""
    if reply.done is False:
        raise LLMReplyError(f"Ollama's reply for stage {stage} says it is not finished (done=false).")
    text = reply.message.content
    if text is None or not text.strip():
        raise LLMReplyError(
            f"Ollama's reply for stage {stage} has no text (done_reason={reply.done_reason!r})."
        )
    if schema is not None:
        try:
            json.loads(text)
        except ValueError as e:
            hint = (
                f" It stopped at the {max_tokens}-token limit before the JSON was closed."
                if reply.done_reason == "length"
                else ""
            )
            raise LLMReplyError(
                f"Ollama's reply for stage {stage} is not valid JSON although a schema was given.{hint}"
            ) from e
    return text
