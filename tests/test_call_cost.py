"""One call's cost (memrag.trace.CallCost) is carried by every record of a call: the backend's
Completion, the trace's LLMCallRecord, the ledger's CallRecord; memory ledger rows store it flat.
Files written before the record existed still read with the same figures."""

from __future__ import annotations

import json

from memrag.demo import sample_memory_dir
from memrag.eval.memories import memory_indexing
from memrag.index import store
from memrag.llm.base import Completion
from memrag.llm.jsoncall import record_of
from memrag.llm.ledger import CallRecord, Ledger
from memrag.trace import AnswerResult, CallCost, Trace, token_totals

# An LLM call as traces stored it before CallCost (field order of that time, every field flat).
OLD_CALL = {"stage": "answer", "messages": [{"role": "user", "content": "Who?"}], "raw_reply": "{}",
            "parse_errors": [], "retries": 0, "ok": True, "prompt_tokens": 120, "prompt_tokens_cached": 64,
            "completion_tokens": 9, "seconds": 1.5, "cached": True, "model": "m1", "backend": "embedded",
            "key": "k1", "shared": False, "structured": ""}


def test_an_old_trace_json_loads_with_its_costs():
    data = Trace(method="neuropath", question="Who?", answer=AnswerResult(answer="Alder", raw_answer="")).to_dict()
    data["llm_calls"] = [OLD_CALL]
    call = Trace.from_json(json.dumps(data)).llm_calls[0]
    assert call.cost() == CallCost(prompt_tokens=120, prompt_tokens_cached=64, completion_tokens=9, seconds=1.5,
                                   cached=True)
    assert (call.stage, call.model, call.key, call.total_tokens) == ("answer", "m1", "k1", 129)
    # and it writes back the same fields, flat
    assert Trace.from_dict(data).to_dict()["llm_calls"][0] == OLD_CALL


def test_the_old_sample_memory_loads_with_its_ledger_figures():
    memory = store.load(sample_memory_dir())
    rows = memory.ledger_rows
    assert rows and all(set(CallCost.from_row(r).cost_dict()) <= set(r) for r in rows)
    figures = memory_indexing(memory)
    assert figures["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert figures["completion_tokens"] == sum(r["completion_tokens"] for r in rows)


def test_a_row_missing_a_field_reads_it_as_unknown_and_the_totals_stay_unknown():
    old = {"stage": "index.extract", "prompt_tokens": 10, "seconds": 2.0, "cached": False}
    cost = CallCost.from_row(old)
    assert cost.completion_tokens is None and cost.prompt_tokens_cached is None and cost.total_tokens is None
    assert token_totals([cost, CallCost(prompt_tokens=5, completion_tokens=1)]) == (None, None)
    assert token_totals([CallCost(prompt_tokens=5, completion_tokens=1)] * 2) == (10, 2)
    assert token_totals([]) == (0, 0)


def test_one_completion_gives_the_same_cost_to_the_trace_and_the_ledger():
    c = Completion("{}", "m1", prompt_tokens=7, prompt_tokens_cached=None, completion_tokens=3, seconds=0.2,
                   cached=True, stage="query.entities")
    assert record_of(c, []).cost() == CallRecord.of(c).cost() == c.cost()
    ledger = Ledger()
    ledger.record(c)
    totals = ledger.totals()
    assert (totals.prompt_tokens, totals.completion_tokens, totals.cached_calls, totals.fresh_prompt_tokens) == (7, 3, 1, 0)
