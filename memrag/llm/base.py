"""The LLM protocol every backend implements, and the errors they raise.

Token counts come from the engine, never from text length; an unknown count is
None, not 0. `prompt_tokens` is the whole prompt even when the engine reused a
cached prefix (that part is `prompt_tokens_cached`).

A call may ask for the next-token log-probabilities (`top_logprobs=N`, no schema): the reply's
`Completion.top_logprobs` then lists, per generated token, the N likeliest tokens (None when the
engine gave none). Engines say whether they can with `logprobs_missing()`; memrag.llm.logprobs
reads and folds them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from memrag.llm.redact import scrub
from memrag.trace import CallCost

Message = dict[str, str]

# The most alternatives per position a call may ask for (OpenAI's own API stops at 20, llama.cpp
# goes further); also the bound a stored or served list is checked against.
MAX_TOP_LOGPROBS = 100


@dataclass(frozen=True)
class TokenLogprob:
    """One candidate next token and its natural-log probability (<= 0)."""
    token: str
    logprob: float

    @property
    def probability(self) -> float:
        return math.exp(self.logprob)


@dataclass
class Completion(CallCost):
    """An engine's reply and its cost (CallCost's fields, given by name)."""
    text: str
    model: str
    backend: str = ""
    stage: str = ""
    raw: dict[str, Any] | None = field(default=None, repr=False)
    # How the reply's JSON was obtained where a server offers several ways (OpenAI-compatible:
    # json_schema / json_object / text); "" where there is one way or it is not known (a cache hit).
    structured: str = ""
    # Asked for with `top_logprobs=N`: per generated token, the N likeliest tokens, likeliest first.
    top_logprobs: list[list[TokenLogprob]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLMError(RuntimeError):
    """Base of every error an LLM backend raises; the message is meant for users.

    Two families say what a caller should do next (`call_json` is where that is decided):
    `LLMBackendError` — no call can succeed now (stop, keep what is done); `LLMCallError` —
    this one call failed and the next may well succeed (record it and go on). A plain
    LLMError is neither and is treated like the first.
    """


class LLMBackendError(LLMError):
    """The engine cannot serve calls: unreachable, without the model, or refusing us."""


class LLMUnavailable(LLMBackendError):
    """The engine cannot be reached (Ollama down, model file missing)."""


class ModelNotFound(LLMBackendError):
    """The engine answers but does not have the model."""


class LLMRefused(LLMBackendError):
    """The engine refuses our credentials or access (HTTP 401/403)."""


class LLMCallError(LLMError):
    """This call failed (server error, time limit, a reply broken, garbled or too large).

    `completion` carries a reply that did come back whole (text and counts), so callers can
    show it to the model on a retry and bill its tokens; `raw` is whatever else came back
    (an error body, a garbled page), kept for the record.
    """

    def __init__(self, message: str, completion: "Completion | None" = None, raw: str = "") -> None:
        super().__init__(message)
        self.completion = completion
        self.raw = scrub(completion.text if completion is not None and not raw else raw)


class LLMReplyError(LLMCallError):
    """The engine's reply broke off or was malformed; nothing is cached."""


# A token count outside this range is not a count a server could have made (no engine holds a
# billion tokens in one call): unknown, not a number.
MAX_TOKEN_COUNT = 10**9
# A call that took longer than a week was not timed by memrag (every call has a deadline of minutes).
MAX_CALL_SECONDS = 7 * 24 * 3600.0
# The longest text one token decodes to is a few dozen characters (a run of spaces or dashes); a reply
# longer than this per token asked for was not written by the engine for that call.
MAX_CHARS_PER_TOKEN = 128
# The most text any stored reply holds, whatever its call asked for (the largest budget is ~1,000 tokens).
MAX_REPLY_CHARS = 500_000


def token_count(value: Any) -> int | None:
    """A token count as the server gave it; anything else (missing, negative, absurd) is None."""
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT
    return value if ok else None


def reply_problem(text: Any, seconds: Any, *counts: Any, max_tokens: int | None = None) -> str:
    """Why a stored reply (a cache row, a recordings line) holds values no run writes — '' when it
    holds none: text that is not text or longer than its call could write, seconds that are not a
    finite duration from 0 to a week, token counts that are not whole numbers from 0 to a billion
    (None, unknown, is fine). Checked where stored replies are read, so none reaches a trace."""
    if not isinstance(text, str):
        return f"its text is a {type(text).__name__}"
    bound = MAX_REPLY_CHARS if max_tokens is None else min(MAX_REPLY_CHARS, max_tokens * MAX_CHARS_PER_TOKEN)
    if len(text) > bound:
        asked = "" if max_tokens is None else f" (the call asked for at most {max_tokens} tokens)"
        return f"its text is {len(text):,} characters, more than the {bound:,} a reply can hold{asked}"
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not (0 <= seconds <= MAX_CALL_SECONDS):  # NaN fails every comparison; huge ints compare exactly
        return f"its seconds are {str(seconds)[:40]}, not a duration from 0 to {MAX_CALL_SECONDS:g}"
    for value in counts:
        if value is not None and token_count(value) is None:
            return f"a token count is {str(value)[:40]}, not a whole number from 0 to {MAX_TOKEN_COUNT:,}"
    return ""


def check_request(messages: list[Message], schema: dict[str, Any] | None, max_tokens: int,
                  top_logprobs: int = 0) -> None:
    """Catch caller mistakes before a call, so errors later can be blamed on the reply."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
            raise ValueError(f"message {i} must be a dict with string 'role' and 'content', got {m!r:.200}")
    if schema is not None and not isinstance(schema, dict):
        raise ValueError(f"schema must be a JSON schema dict or None, got {type(schema).__name__}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if isinstance(top_logprobs, bool) or not isinstance(top_logprobs, int) \
            or not 0 <= top_logprobs <= MAX_TOP_LOGPROBS:
        raise ValueError(f"top_logprobs must be an int from 0 to {MAX_TOP_LOGPROBS}, got {top_logprobs!r}")
    if top_logprobs and schema is not None:  # a grammar bends the probabilities it is meant to show
        raise ValueError("probabilities are read without a schema: pass schema=None with top_logprobs")


@runtime_checkable
class LLM(Protocol):
    backend: str
    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int,
        stage: str,
        top_logprobs: int = 0,
    ) -> Completion: ...

    def identity(self) -> dict[str, Any]:
        """What makes this engine's replies what they are (for cache keys and stamps)."""
        ...
