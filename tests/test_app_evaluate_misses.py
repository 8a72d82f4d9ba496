"""Finding misses on the Evaluate page (issue 36) and the committed runs (issue 35), under AppTest:
the filter over questions, the picker's marks, and docs/runs opened read-only on any server."""

from __future__ import annotations

import hashlib

from memrag.app import eval_views as ev
from memrag.eval import misses
from memrag.methods import registry
from test_app_evaluate import app, cli_run, click, home, no_exception, texts  # noqa: F401 (home: a fixture)


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
    try:
        ev.load_run(out)
    except ValueError as e:
        assert "holds no finished question" in str(e)
    else:
        raise AssertionError("a typed folder without results should say so")
