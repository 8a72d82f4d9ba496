"""Token and latency accounting per stage: every LLM call lands here once.

A response-cache hit keeps its original counts and seconds (it is shown as
"recorded", never as free work); `fresh_*` totals count only engine work done now.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any

from memrag.llm.base import Completion
from memrag.trace import CallCost, token_sum


@dataclass
class CallRecord(CallCost):
    stage: str
    model: str
    backend: str

    @classmethod
    def of(cls, c: Completion) -> "CallRecord":
        return cls(c.stage, c.model, c.backend, **c.cost_dict())


def _add(total: int | None, value: int | None) -> int | None:
    return token_sum((total, value))


@dataclass
class StageTotals:
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int | None = 0
    prompt_tokens_cached: int | None = 0
    completion_tokens: int | None = 0
    seconds: float = 0.0
    fresh_prompt_tokens: int | None = 0
    fresh_completion_tokens: int | None = 0
    fresh_seconds: float = 0.0

    def add(self, r: CallCost) -> None:
        self.calls += 1
        self.prompt_tokens = _add(self.prompt_tokens, r.prompt_tokens)
        self.prompt_tokens_cached = _add(self.prompt_tokens_cached, r.prompt_tokens_cached)
        self.completion_tokens = _add(self.completion_tokens, r.completion_tokens)
        self.seconds += r.seconds
        if r.cached:
            self.cached_calls += 1
        else:
            self.fresh_prompt_tokens = _add(self.fresh_prompt_tokens, r.prompt_tokens)
            self.fresh_completion_tokens = _add(self.fresh_completion_tokens, r.completion_tokens)
            self.fresh_seconds += r.seconds

    @property
    def total_tokens(self) -> int | None:
        return _add(self.prompt_tokens, self.completion_tokens)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["total_tokens"] = self.total_tokens
        return d


class Ledger:
    """Thread-safe list of call records with per-stage totals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[CallRecord] = []

    def record(self, c: Completion) -> None:
        with self._lock:
            self.records.append(CallRecord.of(c))

    def extend(self, records: list[CallRecord]) -> None:
        with self._lock:
            self.records.extend(records)

    def mark(self) -> int:
        """Position to pass to `since` to get the calls made after now."""
        with self._lock:
            return len(self.records)

    def since(self, mark: int) -> list[CallRecord]:
        with self._lock:
            return list(self.records[mark:])

    def by_stage(self, records: list[CallRecord] | None = None) -> dict[str, StageTotals]:
        out: dict[str, StageTotals] = {}
        for r in self.records if records is None else records:
            out.setdefault(r.stage, StageTotals()).add(r)
        return out

    def totals(self, records: list[CallRecord] | None = None) -> StageTotals:
        t = StageTotals()
        for r in self.records if records is None else records:
            t.add(r)
        return t
