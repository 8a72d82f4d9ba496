"""Response cache and ledger: repeated calls come back recorded, with their original counts."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from memrag.llm.ledger import Ledger
from memrag.llm.base import Completion, LLMReplyError
from memrag.llm.cache import CachedLLM, ResponseCache
from scripted import ScriptedLLM

MSG = [{"role": "user", "content": "hello"}]
SCHEMA = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}}}


def _cached(tmp_path: Path, script, model="m1", version="v1"):
    inner = ScriptedLLM(script, model=model)
    return CachedLLM(inner, ResponseCache(tmp_path / "c.sqlite"), Ledger(), version), inner


def test_repeat_call_is_cached_with_original_counts_and_no_engine_call(tmp_path):
    llm, inner = _cached(tmp_path, [{"a": "x"}])
    first = llm.complete(MSG, schema=SCHEMA, max_tokens=10, stage="s")
    second = llm.complete(MSG, schema=SCHEMA, max_tokens=10, stage="s")
    assert len(inner.calls) == 1  # the script had one reply: a second engine call would fail
    assert second.cached and not first.cached
    assert (second.text, second.prompt_tokens, second.completion_tokens, second.seconds) == \
        (first.text, first.prompt_tokens, first.completion_tokens, first.seconds)
    totals = llm.ledger.totals()
    assert totals.calls == 2 and totals.cached_calls == 1
    assert totals.fresh_prompt_tokens == first.prompt_tokens
    assert totals.prompt_tokens == 2 * first.prompt_tokens  # recorded work is still counted


@pytest.mark.parametrize("change", ["model", "schema", "max_tokens", "messages", "prompt_version"])
def test_any_change_of_the_call_misses(tmp_path, change):
    llm, inner = _cached(tmp_path, [{"a": "x"}])
    llm.complete(MSG, schema=SCHEMA, max_tokens=10, stage="s")
    kwargs = {"schema": SCHEMA, "max_tokens": 10}
    msgs = MSG
    if change == "model":
        llm, inner = _cached(tmp_path, [{"a": "y"}], model="m2")
    elif change == "prompt_version":
        llm, inner = _cached(tmp_path, [{"a": "y"}], version="v2")
    else:
        inner.script.append({"a": "y"})
        if change == "schema":
            kwargs["schema"] = {"type": "object"}
        elif change == "max_tokens":
            kwargs["max_tokens"] = 11
        else:
            msgs = [{"role": "user", "content": "hello!"}]
    c = llm.complete(msgs, stage="s", **kwargs)
    assert not c.cached and c.text == '{"a": "y"}'


def test_broken_reply_is_not_cached(tmp_path):
    broken = Completion("{", "m1", prompt_tokens=3, prompt_tokens_cached=0, completion_tokens=1, seconds=0.1)
    llm, inner = _cached(tmp_path, [LLMReplyError("broke off", completion=broken), {"a": "ok"}])
    with pytest.raises(LLMReplyError):
        llm.complete(MSG, max_tokens=10, stage="s")
    c = llm.complete(MSG, max_tokens=10, stage="s")
    assert not c.cached and c.text == '{"a": "ok"}'
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 1


def test_unknown_counts_stay_unknown_in_totals():
    led = Ledger()
    led.record(Completion("x", "m", prompt_tokens=None, prompt_tokens_cached=None, completion_tokens=5, seconds=0.1, stage="a"))
    led.record(Completion("x", "m", prompt_tokens=4, prompt_tokens_cached=0, completion_tokens=5, seconds=0.1, stage="a"))
    t = led.totals()
    assert t.prompt_tokens is None and t.completion_tokens == 10 and t.calls == 2


def _writer(path: str, start: int, n: int, q) -> None:
    try:
        cache = ResponseCache(path)
        for i in range(start, start + n):
            cache.put(f"k{i}", Completion(f"t{i}", "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.01, stage="s"))
            cache.put("shared", Completion("same", "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.01, stage="s"))
        q.put("ok")
    except Exception as e:  # reported to the parent, which fails the test
        q.put(repr(e))


def test_two_processes_writing_at_once_both_succeed(tmp_path):
    path = str(tmp_path / "c.sqlite")
    ResponseCache(path)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, s, 200, q)) for s in (0, 1000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert sorted(q.get(timeout=5) for _ in procs) == ["ok", "ok"]
    cache = ResponseCache(path)
    assert len(cache) == 401
    assert cache.get("k1199").text == "t1199" and cache.get("shared").cached
