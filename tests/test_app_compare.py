"""Compare mode on the Ask page (AppTest, scripted LLM, hash embedder) and the library behind it."""

from __future__ import annotations

import pytest

from memrag.app import jobs, param_widgets, session
from memrag.explain import ablations as compare
from memrag.methods.ecphory.params import EcphoryParams
from memrag.methods.neuropath.params import NeuroPathParams
from memrag.trace import AnswerResult, LLMCallRecord, RankedChunk, Trace
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.methods.ecphory.detail import EcphoryDetail
from test_app_pages import (QUESTION, app, assert_nothing_raw, frames, no_exception, pictures, plain, recorded,  # noqa: F401
                            scripted, table_with, tiny, home)

CMP_JOB = session.AppState.compare_job.key


def compare_page(memory_dir, llm=None, question: str = QUESTION):
    at = app(memory_dir, llm).run()
    at.switch_page("app_pages/ask.py").run()
    if question:
        at.radio(key="ask_kind").set_value("Your own question").run()
        at.text_area(key="ask_free").set_value(question).run()
    at.segmented_control(key="ask_mode").set_value("Compare parameter sets").run()
    return no_exception(at)


def run_compare(at):
    next(b for b in at.button if b.label == "Compare").click().run()
    job = jobs.get_job(at.session_state[CMP_JOB])
    assert job is not None and job.wait(60), "the compare job did not finish"
    assert job.status == jobs.DONE, job.error
    return no_exception(at.run()), job


def changed(at) -> dict[str, tuple[str, str, str]]:
    df = table_with(at, "change")
    return {r["what"]: (r["A"], r["B"], r["change"]) for _, r in df.iterrows()}


def test_compare_completion_on_off_then_max_hops_changes_the_table(tiny):
    llm = scripted()
    at = compare_page(tiny, llm)
    assert at.selectbox(key="cmp_preset_neuropath").value == "completion on / off"
    at, job = run_compare(at)
    assert [s.value for s in at.subheader][:2] == ["A · completion on", "B · completion off"]
    rows = changed(at)
    assert rows["parameter: completion"] == ("True", "False", "changed")
    assert "parameter: max_hops" not in rows
    # without completion the ranked list is only the valid paths' chunks; with it they are
    # placed among the completion ranking (dp_position), in the same order
    a, b = (v.trace for v in job.result)
    assert len(b.ranked) < len(a.ranked) and b.ranked_ids() == [c for c in a.ranked_ids() if c in b.ranked_ids()]
    assert rows["top-5 chunks"][0] == ", ".join(map(str, a.ranked_ids()[:5]))
    assert rows["LLM calls"][2] == "same"
    # one shared query-entity call for both sets
    assert [c["stage"] for c in llm.calls].count("query.entities") == 1
    # both sets' NeuroPath routes drawn as typed pictures, each with nodes
    routes = pictures(at)
    assert len(routes) >= 2 and all(routes[:2])
    assert_nothing_raw(at)

    at.selectbox(key="cmp_preset_neuropath").set_value("max hops 2 / 1").run()
    at, job = run_compare(no_exception(at))
    rows = changed(at)
    assert "parameter: completion" not in rows
    assert rows["parameter: max_hops"] == ("2", "1", "changed")
    assert rows["hops run"] == ("2", "1", "-1")
    assert rows["LLM calls"] == ("4", "3", "-1")  # entities + 2 hops + answer, against one hop


def test_editing_one_set_by_hand_is_what_runs(tiny):
    at = compare_page(tiny)
    at.segmented_control(key="cmp_method").set_value("ecphory").run()
    assert at.selectbox(key="cmp_preset_ecphory").value == "rounds 2 / 0"
    at.number_input(key=param_widgets.param_key("ecphory", "rounds", "cmp_b")).set_value(1).run()
    at.number_input(key=param_widgets.param_key("ecphory", "k_final", "cmp_b")).set_value(3).run()
    at, job = run_compare(no_exception(at))
    a, b = job.result
    assert (a.label, b.label) == ("A", "B")  # no longer the preset's pair
    assert b.params.rounds == 1 and b.params.k_final == 3 and a.params == EcphoryParams()
    rows = changed(at)
    assert rows["parameter: rounds"] == ("2", "1", "changed") and rows["parameter: k_final"] == ("20", "3", "changed")
    assert len(b.trace.detail(EcphoryDetail).rounds) == 1 and len(b.trace.detail(EcphoryDetail).final) <= 3
    # reset puts the ablation back
    next(x for x in at.button if x.label == "Reset both to the ablation").click().run()
    assert at.number_input(key=param_widgets.param_key("ecphory", "rounds", "cmp_b")).value == 0
    assert at.number_input(key=param_widgets.param_key("ecphory", "k_final", "cmp_b")).value == 20


def test_identical_sets_cannot_be_compared(tiny):
    at = compare_page(tiny)
    at.checkbox(key=param_widgets.param_key("neuropath", "completion", "cmp_b")).check().run()
    assert "The two parameter sets are the same" in plain(no_exception(at))
    assert next(b for b in at.button if b.label == "Compare").disabled


def test_recorded_question_variant_needing_new_calls_says_run_live(recorded):
    live = scripted("Grey Sea")
    at = compare_page(recorded, live, question="")
    # B lists one path at hop 2 (the kept one) where the recording listed two: a new tracking prompt
    at.checkbox(key=param_widgets.param_key("neuropath", "completion", "cmp_b")).check().run()
    at.number_input(key=param_widgets.param_key("neuropath", "max_listed", "cmp_b")).set_value(1).run()
    at, job = run_compare(no_exception(at))
    a, b = job.result
    assert live.calls == []  # replayed, not asked
    assert a.ok and a.trace.answer.answer == "Vell River"
    assert not b.ok and compare.NEEDS_LIVE in b.error and "neuropath.track.hop2" in b.error
    assert b.needs_model == ["neuropath.track.hop2"] and "neuropath.track.hop1" in b.replayed
    assert "needs 'run live'" in plain(at)
    assert changed(at)["result"] == ("ran", compare.NEEDS_LIVE, "cannot compare")
    # the same variant live runs to the end
    at.toggle(key="ask_live").set_value(True).run()
    at, job = run_compare(at)
    assert all(v.ok and v.trace.answer.answer == "Grey Sea" for v in job.result)
    stages = [c["stage"] for c in live.calls]
    assert stages.count("query.entities") == 1 and stages.count("neuropath.track.hop2") == 2
    assert job.result[1].trace.detail(NeuroPathDetail).hops[1].capped


def test_recorded_retrieval_replays_when_only_the_answer_is_new(recorded):
    """Completion off changes the answer's passages but no tracking call: retrieval replays."""
    at = compare_page(recorded, scripted("Grey Sea"), question="")
    at, job = run_compare(at)
    a, b = job.result
    assert a.ok and not a.answer_missing
    assert b.ok and b.trace.answer is None and compare.ANSWER_NOT_RECORDED in b.answer_missing
    # side B offline: its retrieval, ranked passages and recall, and which calls replayed
    assert b.replayed == ["query.entities", "neuropath.track.hop1", "neuropath.track.hop2"]
    assert b.needs_model == ["answer"] and a.needs_model == []
    page = plain(at)
    assert "answer not recorded for these settings — run live to answer" in page
    assert "Replayed from recordings: query.entities, neuropath.track.hop1, neuropath.track.hop2 · would need " \
           "the model: answer." in page
    assert "needs 'run live'" not in page
    rows = changed(at)
    assert rows["answer"] == ("Vell River", compare.NEEDS_LIVE, "differs")
    assert rows["EM"] == ("1.00", "–", "")  # no answer, no EM
    assert rows["R@2"][0] == "1.00"


# ------------------------------------------------------------------ the library alone
def _trace(ranked: list[int], answer: str, calls: int, tokens: int) -> Trace:
    t = Trace(method="neuropath", question="q")
    t.ranked = [RankedChunk(c, i, None, "path") for i, c in enumerate(ranked)]
    t.answer = AnswerResult(answer, answer)
    t.llm_calls = [LLMCallRecord("s", [], "", prompt_tokens=tokens // calls, completion_tokens=0)
                   for _ in range(calls)]
    return t


def test_what_changed_lists_differing_parameters_and_result_differences():
    a = compare.Variant("A", NeuroPathParams(), _trace([1, 2, 3, 4, 5, 6], "x", 4, 400))
    b = compare.Variant("B", NeuroPathParams(prune_top=None, max_hops=1), _trace([2, 9, 1, 3, 7], "y", 3, 300))
    rows = {r["what"]: r for r in compare.what_changed(a, b, scores=({"R@2": 0.5}, {"R@2": 1.0}))}
    assert rows["parameter: prune_top"]["B"] == "none" and rows["parameter: max_hops"]["A"] == "2"
    assert "parameter: completion" not in rows
    assert rows["answer"]["change"] == "differs"
    assert (rows["tokens"]["change"], rows["LLM calls"]["change"], rows["R@2"]["change"]) == ("-100", "-1", "+0.50")
    assert rows["gained in B's top 5"]["B"] == "9; 7" and rows["lost from A's top 5"]["A"] == "4; 5"
    fewer = {r["what"]: r for r in compare.what_changed(a, compare.Variant("B", NeuroPathParams(),
                                                                            _trace([1, 2, 3], "x", 4, 400)))}
    assert fewer["top-5 chunks"]["change"] == "differs" and fewer["lost from A's top 5"]["A"] == "4; 5"
    assert fewer["gained in B's top 5"]["B"] == "none"
    reordered = compare.what_changed(a, compare.Variant("B", NeuroPathParams(), _trace([5, 4, 3, 2, 1], "x", 4, 400)))
    assert {r["what"]: r["change"] for r in reordered}["top-5 chunks"] == "same chunks, new order"
    same = compare.what_changed(a, compare.Variant("B", NeuroPathParams(), a.trace))
    assert same[0]["change"] == "no parameter differs"
    assert {r["what"]: r["change"] for r in same}["top-5 chunks"] == "same"


@pytest.mark.parametrize("method", compare.METHODS)
def test_every_preset_changes_exactly_its_parameters(method):
    base = compare.PARAM_CLASSES[method]()
    for p in compare.PRESETS[method]:
        a, b = compare.preset_params(method, base, p)
        assert set(compare.differing(a, b)) == set(p.a) == set(p.b), p.name
