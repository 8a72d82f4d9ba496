"""The answer step every method shares: a short answer from the head of its ranked list."""

from __future__ import annotations

import math
import re
from typing import Any

from memrag import prompts
from memrag.llm.jsoncall import call_json
from memrag.methods.base import QueryContext, cite_chunks
from memrag.trace import AnswerResult, Trace

_ANSWER_MARKER = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*", re.I)
_QUOTES = "\"'“”‘’`"


def clean_answer(raw: str) -> str:
    """The only clean-ups memrag applies to a model's answer (listed in the README's deviations table):
    a leading "Answer:" marker, surrounding quotes, and a final period."""
    s = " ".join(raw.split())
    s = _ANSWER_MARKER.sub("", s)
    if len(s) >= 2 and s[0] in _QUOTES and s[-1] in _QUOTES:
        s = s[1:-1].strip()
    if s.endswith(".") and not s.endswith(".."):
        s = s[:-1].rstrip()
    return s


def _validate(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict) or not isinstance(obj.get("answer"), (str, int, float)):
        raise ValueError("expected {\"reasoning\", \"answer\", \"cited\"}")
    cited = obj.get("cited") or []
    if not isinstance(cited, list):
        cited = []
    return {"answer": str(obj["answer"]), "reasoning": str(obj.get("reasoning") or ""),
            "cited": [int(c) for c in cited if _is_number(c)]}


def _is_number(c: Any) -> bool:
    """A usable citation number (a reply may hold true, NaN or 1e999, which parses as infinity)."""
    return isinstance(c, int) and not isinstance(c, bool) or isinstance(c, float) and math.isfinite(c)


def capped_fields(value: dict[str, Any]) -> list[str]:
    """The reply's text fields that reached their maxLength: the schema cut them, maybe mid-thought."""
    caps = {k: v.get("maxLength") for k, v in prompts.ANSWER_SCHEMA["properties"].items()}
    return [k for k in ("reasoning", "answer") if caps.get(k) and len(value.get(k, "")) >= caps[k]]


def answer(ctx: QueryContext, trace: Trace, passages: int, facts: list[str] | None = None) -> AnswerResult:
    """Ask the LLM with the first `passages` chunks of `trace.ranked` (and optional fact lines)."""
    ids = [r.chunk_id for r in trace.ranked[:passages]]
    cite_chunks(trace, ctx.memory, ids)
    texts = [ctx.memory.chunk_title_text(i) for i in ids]
    if ctx.llm is None:
        raise ValueError("answering needs an LLM")
    res = call_json(ctx.llm, prompts.answer_messages(ctx.question, texts, facts),
                    prompts.ANSWER_SCHEMA, "answer", _validate)
    trace.llm_calls.extend(res.calls)
    if res.value is None:
        result = AnswerResult(answer="", raw_answer=res.calls[-1].raw_reply if res.calls else "",
                              context_chunk_ids=ids, facts=list(facts or []),
                              error=f"the answer could not be read: {res.error}")
    else:
        v = res.value
        cited = [ids[n - 1] for n in v["cited"] if 1 <= n <= len(ids)]
        result = AnswerResult(answer=clean_answer(v["answer"]), raw_answer=v["answer"], reasoning=v["reasoning"],
                              cited_chunk_ids=cited, context_chunk_ids=ids, facts=list(facts or []),
                              capped=capped_fields(v))
    trace.answer = result
    return result
