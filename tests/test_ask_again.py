"""Ask again after a memory edit, with a scripted LLM (a test double whose replies are a fixed
function of the prompt, so a fresh run is the reference): unchanged calls come from the previous
trace's replies, only changed ones reach the model, the result is what asking afresh gives, the
estimate says which method's calls change before any is made, and the per-method diff names the
paths, engrams and facts that appeared or disappeared and each gold passage's rank and fate."""

from __future__ import annotations

import re

import pytest

from edit_memory import build_two
from memrag.ask import ask
from memrag.explain.ask_again import ask_again, estimate, prompt_key
from memrag.explain.trace_diff import diff_method, diff_traces
from memrag.index import edits
from memrag.index.edits import Edit
from scripted import HashEmbedder, ScriptedLLM

QUESTION = "Which company did Ada Brennick found?"
METHODS = ("neuropath", "ecphory", "hipporag2", "dense")
PARAMS = {"neuropath": {"coref_threshold": 0.6}}


def _numbers(messages) -> list[int]:
    return [int(n) for n in re.findall(r"^\s*(\d+)[.:]", messages[-1]["content"], re.M)][:10]


def _track(hops: int):
    def reply(messages, stage):
        hop = int(re.search(r"Hop (\d+)\.", messages[-1]["content"]).group(1))
        ids = _numbers(messages)
        more = hop < hops
        expandable = [int(n) for n in re.findall(r"^(\d+):.*\[expandable", messages[-1]["content"], re.M)]
        return {"reasoning_chain": "kept what is listed", "valid_ids": ids, "expansion_requirement": "more" if more
                else "", "expand_ids": expandable[:10] if more else [], "continue": int(more)}
    return reply


def policy(hops: int = 1) -> ScriptedLLM:
    """Keeps every listed path and fact, follows every expandable path for `hops` hops, answers from
    the passages it is given."""
    def answer(messages, stage):
        found = "founded Varrow Coast Lines" in messages[-1]["content"]
        return {"reasoning": "from the passages", "answer": "Varrow Coast Lines" if found else "unknown",
                "cited": [1]}
    return ScriptedLLM({
        "query.entities": lambda m, s: {"entities": ["Ada Brennick"]},
        "neuropath.track": _track(hops),
        "hipporag2.recognition": lambda m, s: {"keep": _numbers(m)},
        "answer": answer,
    })


class NoModel(ScriptedLLM):
    """An engine that must not be asked."""

    def __init__(self) -> None:
        super().__init__({})

    def complete(self, messages, **kw):
        pytest.fail(f"the model was asked ({kw.get('stage')}) though no prompt changed")


def prompts(llm: ScriptedLLM) -> list[str]:
    return [prompt_key(llm.backend, llm.model, c["stage"], c["messages"]) for c in llm.calls]


def summary(traces) -> list[tuple]:
    return [(t.method, t.ranked_ids(), t.answer.answer, [(r.stage, r.raw_reply) for r in t.llm_calls])
            for t in traces]


@pytest.fixture
def before():
    memory = build_two(None)
    first = policy()
    traces = ask(memory, QUESTION, llm=first, embedder=HashEmbedder(), methods=METHODS, params=PARAMS)
    return memory, traces, first


def test_on_the_same_memory_every_call_is_answered_from_the_previous_trace(before):
    memory, traces, _ = before
    assert estimate(memory, traces, llm=NoModel(), embedder=HashEmbedder()).calls == (0, 0)
    again = ask_again(memory, traces, llm=NoModel(), embedder=HashEmbedder())
    assert summary(again.traces) == summary(traces)
    assert again.asked == {m: 0 for m in METHODS} and again.reused["neuropath"] >= 3
    assert all(r.cached for t in again.traces for r in t.llm_calls)
    assert all(not d.changed for d in diff_traces(traces, again.traces, [0]))


def test_after_an_edit_only_changed_calls_reach_the_model_and_the_result_is_a_fresh_asks(before):
    memory, traces, first = before
    edited, _ = edits.apply(memory, Edit("remove-triple", {"triple": 1}), HashEmbedder())  # Ada founded VCL
    fresh_llm = policy()
    fresh = ask(edited, QUESTION, llm=fresh_llm, embedder=HashEmbedder(), methods=METHODS, params=PARAMS)
    model = policy()
    again = ask_again(edited, traces, llm=model, embedder=HashEmbedder())
    assert summary(again.traces) == summary(fresh)
    old = set(prompts(first))
    changed = [k for k in prompts(fresh_llm) if k not in old]
    assert changed and prompts(model) == changed  # the model saw exactly the prompts the edit changed
    assert {c["stage"] for c in model.calls} >= {"neuropath.track.hop1", "hipporag2.recognition"}
    assert again.asked["dense"] == 0 and again.asked["neuropath"] >= 1
    assert sum(again.asked.values()) == len(model.calls)


def test_the_estimate_names_the_first_changed_call_without_calling_the_model(before):
    memory, traces, _ = before
    edited, _ = edits.apply(memory, Edit("remove-triple", {"triple": 1}), HashEmbedder())
    est = estimate(edited, traces, llm=NoModel(), embedder=HashEmbedder())
    by = {m.method: m for m in est.methods}
    assert by["neuropath"].first_change == "neuropath.track.hop1" and by["neuropath"].reused == 1
    assert by["hipporag2"].first_change == "hipporag2.recognition"
    assert by["dense"].first_change == "" and by["dense"].at_most == 0
    low, high = est.calls
    assert low == sum(1 for m in est.methods if m.first_change) and high >= low
    assert "go to the model" in est.text() and "neuropath.track.hop1 call changed" in by["neuropath"].text()


def test_the_diff_names_what_appeared_and_disappeared_step_by_step(before):
    memory, traces, _ = before
    edited, _ = edits.apply(memory, Edit("remove-triple", {"triple": 1}), HashEmbedder())
    again = ask_again(edited, traces, llm=policy(), embedder=HashEmbedder())
    diffs = {d.method: d for d in diff_traces(traces, again.traces, gold_chunk_ids=[0])}
    founded = "Ada Brennick → founded → Varrow Coast Lines"
    np_steps = {s.label: s for s in diffs["neuropath"].steps}
    assert founded in np_steps["hop 1: paths kept"].disappeared and not np_steps["hop 1: paths kept"].appeared
    hippo = {s.label: s for s in diffs["hipporag2"].steps}
    assert founded in hippo["facts retrieved"].disappeared
    assert not diffs["dense"].changed and diffs["dense"].lines() == ["Dense: nothing changed"]
    assert any(line.startswith("hop 1: paths kept: - " + founded) for line in diffs["neuropath"].lines())
    gold = diffs["neuropath"].gold[0]
    assert gold.chunk_id == 0 and gold.title == "Ada Brennick" and gold.fate_before


def test_a_merge_opens_a_second_hop_and_the_diff_says_so():
    memory = build_two(None)
    params = {"neuropath": {"coref_threshold": 0.99}}  # no coreference help: each name its own node
    traces = ask(memory, QUESTION, llm=policy(hops=2), embedder=HashEmbedder(), methods=("neuropath",),
                 params=params)
    edited, _ = edits.apply(memory, Edit("merge", {"entity": "Varrow Coast", "into": "Varrow Coast Lines"}),
                            HashEmbedder())
    again = ask_again(edited, traces, llm=policy(hops=2), embedder=HashEmbedder())
    d = diff_method(traces[0], again.traces[0], gold_chunk_ids=[0, 1])
    steps = {s.label: s for s in d.steps}
    assert "Ada Brennick → founded → Varrow Coast Lines ⇒ Varrow Coast → ran ferries from → Port Alder" in \
        steps["hop 2: paths kept"].appeared
    assert again.asked["neuropath"] >= 1 and again.reused["neuropath"] >= 2  # entities, hop 1 replayed


def test_traces_of_differently_numbered_memories_are_not_compared(before):
    _, traces, _ = before
    t = traces[-1]
    moved = type(t)(**{**t.__dict__, "chunks": [type(c)(**{**c.__dict__, "text": "another"}) for c in t.chunks]})
    with pytest.raises(ValueError, match="number passages differently"):
        diff_method(t, moved)
