"""Finding misses on the Evaluate page (issue 36) and the committed runs (issue 35), under AppTest:
the filter over questions, the picker's marks, docs/runs opened read-only on any server, and a run
asked again on its edited memory, opened compared."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memrag.app import eval_views as ev, jobs
from memrag.eval import misses
from memrag.eval.rundir import RESULTS, read_results
from memrag.index import store
from memrag.index.edits import Edit, edit_memory
from memrag.methods import registry
from scripted import HashEmbedder
from test_app_evaluate import app, cli_run, click, home, hotpot_run, no_exception, texts  # noqa: F401 (home: a fixture)


def _opened(at, name: str):
    at.text_input(key="eval_folder").set_value(name).run()
    return no_exception(click(at, "Open folder"))


def _per_question(at):
    return next(d.value for d in at.dataframe if "question" in d.value.columns)


def test_the_filter_keeps_the_questions_a_method_missed_and_the_picker_marks_them(home):
    cli_run(ev.runs_dir() / "mine")
    run = ev.load_run(ev.runs_dir() / "mine")
    at = _opened(no_exception(app().run()), "mine")
    assert list(_per_question(at)["id"]) == ["hp1", "hp2"]
    seen_rules = 0
    for method in run.methods:
        at.selectbox(key="eval_filter_method").set_value(method).run()
        for rule in misses.RULES:
            at.selectbox(key="eval_filter_rule").set_value(rule).run()
            other = None
            if rule == misses.DIFFERS:
                other = next(m for m in run.methods if m != method)
                at.selectbox(key="eval_filter_other").set_value(other).run()
            want = misses.filter_questions(run.records, run.methods, 5, rule, method, other)
            shown = list(_per_question(no_exception(at))["id"])
            assert shown == want, (method, rule, shown, want)
            assert f"{len(want)} of 2 question(s)" in texts(at)
            seen_rules += bool(want)
    assert seen_rules, "the scripted run should miss something somewhere"
    # the picker names every question and marks the methods that missed one of its gold passages
    options = at.selectbox(key="eval_q").options
    for record, option in zip(run.records, options):
        missed = misses.missed_by(record, run.methods, 5)
        mark = f"missed by {', '.join(registry.label_of(m) for m in missed)}" if missed else "all gold found"
        assert option.startswith(f"{record['qid']} · {mark} — "), option


def _digest(folder) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())).hexdigest()


def test_the_committed_runs_open_read_only_on_any_server_room_mode_too(home, monkeypatch):
    committed = ev.committed_runs()
    names = [p.name for p, _ in committed]
    on_disk = sorted(p.parent.name for p in ev.COMMITTED_RUNS.glob("*/summary.json"))
    assert names == on_disk and "sample-pooled-20" in names
    before = _digest(ev.COMMITTED_RUNS)
    for room in ("0", "1"):
        monkeypatch.setenv("MEMRAG_ROOM_MODE", room)
        monkeypatch.delenv(ev.RUN_PATHS_ENV, raising=False)
        at = no_exception(app().run())
        picker = at.selectbox(key="eval_committed")
        assert [o.split(" · ")[0] for o in picker.options] == names
        picker.set_value(names.index("sample-pooled-20")).run()
        no_exception(click(at, "Open committed run"))
        shown = texts(at)
        assert "keeps the run's summary only" in shown and "sample · scope pooled" in shown, room
        scores = at.dataframe[0].value
        assert set(scores["method"]) == {"NeuroPath", "EcphoryRAG", "HippoRAG 2", "Dense"}
    assert _digest(ev.COMMITTED_RUNS) == before  # read only


def test_a_summary_only_folder_opens_only_as_a_committed_run(home, tmp_path):
    out = tmp_path / "run"
    cli_run(out)
    (out / "results.jsonl").unlink()
    run = ev.load_run(out, summary_only=True)
    assert run.records == [] and run.methods
    with pytest.raises(ValueError, match="holds no finished question"):  # a typed folder without results
        ev.load_run(out)


def test_a_run_asked_again_on_an_edited_memory_opens_compared(home):
    """A pooled run, its memory edited (one triple removed), asked again from the page: the new run
    opens with the paired comparison (intervals, wins / losses / ties) under its scores."""
    at = hotpot_run(app().run(), scope="pooled")
    click(at, "Run evaluation")
    job = jobs.get_job(at.session_state[ev.EvalState.eval_job.key])
    assert job is not None and job.wait(60) and job.status == jobs.DONE, job and job.error_detail
    no_exception(at.run())
    first = ev.load_run(job.meta["out"])
    mem = first.run["indexing"]["path"]
    assert "edit it first" in texts(at)  # the memory is still the version the run used
    triple = store.load(mem).triples[0]
    edit_memory(mem, Edit("remove-triple", {"triple": triple.triple_id}), lambda _id: HashEmbedder(64))
    no_exception(at.run())
    assert "Ask this run again" in [b.label for b in at.button], texts(at)
    click(at, "Ask this run again")
    again = jobs.get_job(at.session_state[ev.EvalState.eval_job.key])
    assert again is not None and again.id != job.id and again.wait(60), "the rerun did not finish"
    assert again.status == jobs.DONE, again.error_detail
    no_exception(at.run())
    shown = texts(at)
    assert "Compared with the run it repeats" in shown and f"before: {first.folder.name}" in shown
    paired = next(d.value for d in at.dataframe if "after − before [95% CI]" in d.value.columns)
    assert set(paired["score"]) == {"R@2", "R@5", "EM"} and set(paired["n"]) == {2}
    after = read_results(Path(again.meta["out"]) / RESULTS)
    assert [r["qid"] for r in after] == [r["qid"] for r in first.records]
    # calls whose prompts did not change were answered from the first run (cached), not asked again
    assert any(c["cached"] for r in after for e in r["methods"].values() for c in e["trace"]["llm_calls"])


def test_a_run_description_that_is_a_pipe_is_refused_not_waited_on(home, tmp_path):
    import os

    out = tmp_path / "run"
    cli_run(out)
    (out / "run.json").unlink()
    os.mkfifo(out / "run.json")
    with pytest.raises(ValueError, match="named pipe"):
        ev.load_run(out)
