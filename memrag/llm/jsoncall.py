"""One structured LLM call: defensive JSON parsing, one retry with the error, a record of it all.

Small models wrap JSON in fences, leave trailing commas, or answer with a bare
array. `parse_json` repairs those; `validate` (the caller's) turns the parsed
value into what the caller needs or raises ValueError with a reason the model
can act on. A reply that still fails after one retry is returned as a failure
with its raw text — callers record it and carry on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Generic, TypeVar

from memrag import jsonsafe
from memrag.llm.base import LLM, Completion, LLMCallError
from memrag.prompts import max_tokens_for, retry_messages
from memrag.textsafe import valid_text
from memrag.trace import LLMCallRecord

T = TypeVar("T")

_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.S)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")


def parse_json(text: str) -> Any:
    """Parse a model's JSON reply, repairing the usual small-model slips.

    Every string in the result is valid text (a length-capped reply can end in half a
    surrogate pair); anything unreadable, nested too deep included, raises ValueError.
    """
    return _valid_strings(_parse(text))


def _valid_strings(value: Any) -> Any:
    """The parsed value with every key and string repaired (jsonsafe bounds the depth)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [_valid_strings(v) for v in value]
    if isinstance(value, dict):
        return {valid_text(k): _valid_strings(v) for k, v in value.items()}
    return value


def _parse(text: str) -> Any:
    s = text.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1).strip()
    try:
        return jsonsafe.loads(s)
    except jsonsafe.JSONTooDeep:
        raise
    except ValueError:
        pass
    # Take the outermost object or array if prose surrounds it.
    starts = [i for i in (s.find("{"), s.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(s.rfind("}"), s.rfind("]"))
        if end > start:
            s = s[start:end + 1]
    s = _TRAILING_COMMA.sub(r"\1", s)
    return jsonsafe.loads(s)  # raises ValueError with position info


@dataclass
class JsonCallResult(Generic[T]):
    value: T | None
    calls: list[LLMCallRecord] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# What a failed call's record keeps of a reply that came back garbled (a page, an error body).
MAX_RECORDED_RAW = 20_000


def record_of(c: Completion, messages: list[dict[str, str]], key: str = "") -> LLMCallRecord:
    return LLMCallRecord(
        stage=c.stage, messages=messages, raw_reply=valid_text(c.text), **c.cost_dict(), model=c.model,
        backend=c.backend, key=key, structured=c.structured)


def failed_call_record(llm: LLM, stage: str, messages: list[dict[str, str]], raw: str) -> LLMCallRecord:
    """The record of a call that brought back no usable reply (a 5xx, a time-out, a garbled body)."""
    return LLMCallRecord(stage=stage, messages=messages, raw_reply=valid_text(raw[:MAX_RECORDED_RAW]),
                         model=getattr(llm, "model", ""), backend=getattr(llm, "backend", ""))


def call_json(llm: LLM, messages: list[dict[str, str]], schema: dict[str, Any], stage: str,
              validate: Callable[[Any], T], retries: int = 1) -> JsonCallResult[T]:
    """Call, parse, validate; on failure retry once showing the model its reply and the error.

    This is where a failure's kind decides what happens next (see memrag.llm.base):
    an `LLMCallError` fails this call only — it is recorded with what came back and the
    caller carries on (a build marks the chunk failed; a rerun retries it); every other
    LLMError (unreachable, model missing, credentials refused) propagates, because it
    is not this call's fault and the next call would fail the same way. A call that
    brought back no reply is not retried here: there is nothing to show the model.
    """
    result: JsonCallResult[T] = JsonCallResult(value=None)
    current = messages
    for attempt in range(retries + 1):
        c: Completion | None
        try:
            c = llm.complete(current, schema=schema, max_tokens=max_tokens_for(stage), stage=stage)
            raw = c.text
        except LLMCallError as e:
            c, raw, error = e.completion, e.raw, str(e)
        else:
            try:
                value = validate(parse_json(raw))
                error = None
            except (ValueError, TypeError, KeyError) as e:
                error = f"{type(e).__name__}: {e}" if not isinstance(e, ValueError) else str(e)
        key = getattr(llm, "last_key", "") or ""
        rec = record_of(c, current, key) if c is not None else failed_call_record(llm, stage, current, raw)
        rec.retries = attempt
        result.calls.append(rec)
        if error is None:
            result.value = value
            result.error = None
            return result
        rec.ok = False
        rec.parse_errors.append(error)
        result.error = error
        if c is None:
            break
        if attempt < retries:
            current = retry_messages(messages, raw, error)
    return result
