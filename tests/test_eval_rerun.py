"""An evaluation run asked again on an edited memory (memrag.explain.rerun) and the two runs compared
question by question (memrag.eval.run_diff), with scripted LLM test doubles: calls whose prompts
did not change are answered from the first run's traces, only changed calls reach the engine."""

from __future__ import annotations

import json

import pytest

from memrag.explain import rerun
from memrag.eval import run_diff
from memrag.eval.runner import run_eval, run_to_end
from memrag.eval.rundir import RESULTS, RUN, read_results
from memrag.explain.ask_again import prompt_key
from memrag.index import store
from memrag.index.edits import Edit, edit_memory, find_triples
from memrag.tracefile import record_traces
from scripted import HashEmbedder, ScriptedLLM
from test_eval_runner import sample_config, scripted

PARAMS = {"neuropath": {"seed_floor": 0.0}}  # the hash embedder's entities lie far apart: track anyway


def embedder() -> HashEmbedder:
    return HashEmbedder()


def first_run(tmp_path):
    out, mem = tmp_path / "run", tmp_path / "mem"
    run_to_end(run_eval(sample_config(out, memory=mem, params=PARAMS), llm=scripted(), embedder=embedder()))
    return out, mem, read_results(out / RESULTS), json.loads((out / RUN).read_text())


def new_engine() -> ScriptedLLM:
    """The engine for changed calls: the first run's script, but every answer is 'Ada Wright', so an
    answer that changed came from here and one that did not was reused."""
    base = scripted()
    return ScriptedLLM({**base.script, "answer": lambda m, s: {"reasoning": "", "answer": "Ada Wright", "cited": [1]}})


def edit(mem) -> None:
    memory = store.load(mem)
    triple = find_triples(memory, "The Old Mill", "mentions", "Ada Wright")[0]
    edit_memory(mem, Edit("remove-triple", {"triple": triple.triple_id}), lambda _id: embedder())


def test_a_run_asked_again_reuses_unchanged_calls_and_compares_question_by_question(tmp_path):
    before, mem, records, run = first_run(tmp_path)
    memory = store.load(mem)
    with pytest.raises(ValueError, match="edit it first"):  # nothing changed yet
        rerun.plan_rerun(before, run, records, mem, memory, tmp_path / "evals")
    edit(mem)
    memory = store.load(mem)
    plan = rerun.plan_rerun(before, run, records, mem, memory, tmp_path / "evals")
    assert plan.config.methods == tuple(run["identity"]["methods"]) and plan.config.memory == mem
    assert plan.version == store.current_version_dir(mem).name and plan.config.out.parent == tmp_path / "evals"
    rerun.write_again(plan)
    engine = new_engine()
    assert rerun.reusing_llm(records, engine).replays is False  # live new calls: a live run's stamp
    engine.replays = True
    assert rerun.reusing_llm(records, engine).replays is True  # recordings answer them: a replay's stamp
    engine.replays = False
    run_to_end(run_eval(plan.config, llm=rerun.reusing_llm(records, engine), embedder=embedder()))
    after = read_results(plan.config.out / RESULTS)
    assert [r["qid"] for r in after] == [r["qid"] for r in records]
    assert {r["memory"] for r in after} == {memory.fingerprint()} != {r["memory"] for r in records}

    # every call of the new traces: answered from the first run iff the same call was made there
    earlier = {prompt_key(c.backend, c.model, c.stage, c.messages): c.raw_reply
               for r in records for t in record_traces(r) for c in t.llm_calls}
    reused = changed = 0
    for r in after:
        for t in record_traces(r):
            for c in t.llm_calls:
                key = prompt_key(c.backend, c.model, c.stage, c.messages)
                if key in earlier:
                    assert c.cached and c.raw_reply == earlier[key], (r["qid"], t.method, c.stage)
                    reused += 1
                else:
                    changed += 1
    assert reused and changed, (reused, changed)
    assert len(engine.calls) == changed  # only changed calls reached the engine
    # an answer the edit changed came from the new engine; one it did not, from the first run
    old_answers = {(r["qid"], m): e["answer"] for r in records for m, e in r["methods"].items()}
    for r in after:
        for m, e in r["methods"].items():
            trace = next(t for t in record_traces(r) if t.method == m)
            answer_call = next(c for c in trace.llm_calls if c.stage.startswith("answer"))
            want = old_answers[(r["qid"], m)] if answer_call.cached else "Ada Wright"
            assert e["answer"] == want, (r["qid"], m)

    # the comparison: paired intervals per method and metric, and each change named
    diff = run_diff.diff_runs(records, after, list(run["identity"]["methods"]), 5)
    assert diff.shared == 2 and diff.only_before == diff.only_after == 0
    assert {(row["method"], row["metric"]) for row in diff.paired} == {
        (m, k) for m in run["identity"]["methods"] for k in run_diff.METRICS}
    for row in diff.paired:
        lo, hi = row["diff_ci95"]
        assert lo <= row["diff"] <= hi and row["wins"] + row["losses"] + row["ties"] == row["n"] == 2
        b = [r["methods"][row["method"]]["metrics"][row["metric"]] for r in records]
        a = [r["methods"][row["method"]]["metrics"][row["metric"]] for r in after]
        assert row["wins"] == sum(y > x for x, y in zip(b, a)) and row["diff"] == pytest.approx((sum(a) - sum(b)) / 2)
    # a (question, method) is listed as changed exactly when its scores, gold passages or answer moved
    moved = {(r["qid"], m) for r, ra in zip(records, after) for m in r["methods"]
             if any(r["methods"][m]["metrics"][k] != ra["methods"][m]["metrics"][k] for k in run_diff.METRICS)
             or r["methods"][m]["answer"] != ra["methods"][m]["answer"]
             or [f["rank"] for f in r["methods"][m]["gold_fate"]] != [f["rank"] for f in ra["methods"][m]["gold_fate"]]}
    assert {(c.qid, c.method) for c in diff.changes} <= moved

    # again.json names what the rerun repeats
    again = rerun.read_again(plan.config.out)
    assert again["before"] == str(before.resolve()) and again["version"] == plan.version
    assert rerun.read_again(before) is None


def test_a_run_that_cannot_be_asked_again_says_why(tmp_path):
    before, mem, records, run = first_run(tmp_path)
    edit(mem)
    memory = store.load(mem)
    per_question = {**run, "identity": {**run["identity"], "scope": "per-question"}}
    with pytest.raises(ValueError, match="only a pooled run"):
        rerun.plan_rerun(before, per_question, records, mem, memory, tmp_path)
    with pytest.raises(ValueError, match="no finished question"):
        rerun.plan_rerun(before, run, [], mem, memory, tmp_path)
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / rerun.AGAIN).write_text('{"before": 3}')
    with pytest.raises(ValueError, match="not a rerun description"):
        rerun.read_again(tmp_path / "again")


def entry(em: float, r2: float, r5: float, ranks: list[int | None], answer: str) -> dict:
    return {"metrics": {"recall@2": r2, "recall@5": r5, "em": em}, "answer": answer,
            "gold_fate": [{"unit": u, "chunk_id": i, "fate": "in the top k" if r and r <= 5 else "beyond k",
                           "detail": "", "rank": r} for i, (u, r) in enumerate(zip(("a", "b"), ranks))],
            "tokens": {"prompt_tokens": 1, "completion_tokens": 1}, "seconds": 0.1,
            "trace": {"chunks": [{"chunk_id": 0, "doc_id": "a", "title": "Alpha"},
                                 {"chunk_id": 1, "doc_id": "b", "title": "Beta"}]}}


def record(qid: str, **methods) -> dict:
    return {"qid": qid, "question": f"question {qid}", "answers": ["x"], "gold_units": ["a", "b"],
            "methods": methods}


def test_the_comparison_by_hand():
    """Four questions, one method: q1 gains its answer and Beta's passage, q2 loses Alpha's, q3 and
    q4 stay the same; q5 is in the later run only."""
    before = [record("q1", dense=entry(0, 0.5, 0.5, [1, 9], "y")), record("q2", dense=entry(1, 1, 1, [1, 2], "x")),
              record("q3", dense=entry(1, 1, 1, [2, 1], "x")), record("q4", dense=entry(0, 0, 0, [None, 7], "z"))]
    after = [record("q1", dense=entry(1, 1, 1, [1, 2], "x")), record("q2", dense=entry(1, 0.5, 0.5, [8, 2], "x")),
             record("q3", dense=entry(1, 1, 1, [2, 1], "x")), record("q4", dense=entry(0, 0, 0, [None, 7], "z")),
             record("q5", dense=entry(1, 1, 1, [1, 2], "x"))]
    diff = run_diff.diff_runs(before, after, ["dense"], k=5)
    assert (diff.shared, diff.only_before, diff.only_after) == (4, 0, 1)
    rows = {r["metric"]: r for r in diff.paired}
    assert (rows["em"]["wins"], rows["em"]["losses"], rows["em"]["ties"]) == (1, 0, 3)
    assert rows["em"]["diff"] == pytest.approx(0.25) and rows["em"]["before"] == pytest.approx(0.5)
    assert (rows["recall@2"]["wins"], rows["recall@2"]["losses"]) == (1, 1) and rows["recall@2"]["diff"] == 0
    lo, hi = rows["em"]["diff_ci95"]
    assert 0 <= lo <= 0.25 <= hi <= 1  # the paired bootstrap's interval of the mean gain
    q1, q2 = diff.changes
    assert (q1.qid, q1.found, q1.lost, q1.answer_before, q1.answer_after) == ("q1", ("Beta",), (), "y", "x")
    assert q1.scores_text() == "R@2 50 → 100 · R@5 50 → 100 · EM 0 → 100"
    assert (q2.qid, q2.found, q2.lost) == ("q2", (), ("Alpha",)) and q2.scores_text() == "R@2 100 → 50 · R@5 100 → 50"
