"""The Evaluate page under streamlit's AppTest, with a scripted LLM and a hash embedder, plus the
library functions behind it (memrag.app.eval_views).

A tiny HotpotQA-format file stands in for ../shared/bench (MEMRAG_BENCH points at a temporary
folder); runs go to the app's data folder under a temporary MEMRAG_HOME. Nothing here loads the
embedded model or the sentence-transformers embedder.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memrag.app import estimates, eval_views as ev, jobs, session
from memrag.eval import report
from memrag.eval.config import EvalConfig
from memrag.eval.rundir import RESULTS
from memrag.eval.runner import run_eval, run_to_end
from scripted import HashEmbedder
from test_eval_runner import FIX, scripted
from test_app_pages import pictures

APP = str(Path(__file__).resolve().parent.parent / "app.py")
HOTPOT = FIX / "hotpotqa.jsonl"


@pytest.fixture()
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    bench = tmp_path / "bench"
    (bench / "hotpotqa").mkdir(parents=True)
    shutil.copy(HOTPOT, bench / "hotpotqa" / "hotpotqa_subset.jsonl")
    monkeypatch.setenv(ev.BENCH_ENV, str(bench))
    return tmp_path / "home"


def embedder() -> HashEmbedder:
    return HashEmbedder(64)


def app(llm=None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[session.TEST_LLM_KEY] = llm or scripted()
    at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
    at.switch_page("app_pages/evaluate.py")
    return at


def no_exception(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, label: str) -> AppTest:
    return next(b for b in at.button if b.label == label).click().run()


def texts(at: AppTest) -> str:
    """What the page's text elements display (markdown escapes removed)."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [getattr(e, "value", "") for kind in ("error", "warning", "info", "success") for e in at.get(kind)]
    return re.sub(r"\\(.)", r"\1", "\n".join(str(p) for p in parts))


def plan_info(at: AppTest) -> str:
    """The estimate shown before a run, as displayed (markdown escapes removed)."""
    return next(i.value for i in at.info).replace("\\", "")


def hotpot_run(at: AppTest, scope: str = "per-question") -> AppTest:
    at.radio(key="eval_source").set_value("Benchmark file").run()
    at.radio(key="eval_scope").set_value(scope).run()
    return no_exception(at)


def cli_run(out: Path) -> dict:
    config = EvalConfig(dataset="hotpotqa", data=HOTPOT, out=out, scope="per-question", limit=2)
    return run_to_end(run_eval(config, llm=scripted(), embedder=embedder()))


# ================================================================== the page
def test_the_page_offers_the_sample_and_says_what_a_run_costs(home):
    at = no_exception(app().run())
    assert at.title[0].value == "Evaluate"
    info = plan_info(at)
    if at.get("toggle") and at.toggle(key="eval_recorded").value:  # the checkout's sample has recordings
        assert "no LLM time" in info and at.number_input(key="eval_n_sample_True").max >= 3
    else:
        assert "Roughly" in info
    # a shared benchmark: building per-question memories with the LLM is priced per passage
    hotpot_run(at)
    # hp1 has 3 passages, hp2 lists one of its 3 twice: 5 distinct passages to read
    assert "first a memory is built: 5 passage(s) read by the LLM" in plan_info(at)
    # fewer questions → fewer passages to read
    at.number_input(key="eval_n_hotpotqa_False").set_value(1).run()
    assert "first a memory is built: 3 passage(s)" in plan_info(at)


def test_a_scripted_evaluation_runs_as_a_job_and_shows_scores_charts_and_traces(home):
    at = hotpot_run(app().run())
    click(at, "Run evaluation")
    job = jobs.get_job(at.session_state[ev.EvalState.eval_job.key])
    assert job is not None and job.wait(60), "the evaluation job did not finish"
    assert job.status == jobs.DONE, job.error_detail
    at.run()
    no_exception(at)
    assert "finished in" in texts(at)
    scores = at.dataframe[0].value
    assert list(scores["method"]) == ["NeuroPath", "EcphoryRAG", "HippoRAG 2", "Dense"]  # display names
    assert set(scores["n"]) == {"2"}
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # recall@k, answers, cost, gold fates
    titles = [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in charts]
    assert "Recall@k" in titles and "Answers" in titles
    per_q = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert list(per_q["id"]) == ["hp1", "hp2"]
    # compact: one column per method (gold found, EM, each missed passage with its fate)
    assert list(per_q.columns) == ["id", "question", "gold answer", "NeuroPath", "EcphoryRAG", "HippoRAG 2", "Dense"]
    assert all(re.match(r"^\d/\d( · EM [✓✗])?( — .+)?$", v) for v in per_q["Dense"]), list(per_q["Dense"])
    at.toggle(key="eval_full").set_value(True).run()  # every column, as the export holds them
    per_q = next(d.value for d in no_exception(at).dataframe if "question" in d.value.columns)
    assert {"NeuroPath R@5", "EcphoryRAG F1", "HippoRAG 2 R@5", "HippoRAG 2 gold fates", "Dense answer",
            "Dense gold fates"} <= set(per_q.columns)
    assert len(at.get("download_button")) == 2
    # a question opens the Ask page's views of its stored traces
    at.selectbox(key="eval_q").set_value("hp2").run()
    no_exception(at)
    assert "When did the periodical edited by T.S. Arthur end?" in texts(at)
    assert sum("**Answer:**" in m.value for m in at.markdown) == 4
    # NeuroPath's route (focus and its Retrieval tab), EcphoryRAG's, HippoRAG 2's and Dense's pictures are
    # typed ones (plotly): no pyvis frame
    assert len(at.get("iframe")) == 0 and len(pictures(at)) >= 5


def test_the_first_questions_graphs_are_made_before_they_are_opened(home, monkeypatch):
    """Opening an evaluated question lays out none of its side-by-side graphs in the click's run:
    they were made in the background while the run's scores were shown (a layout is most of
    opening a question, bench/app_bench.py)."""
    from memrag.app import view_cache
    from memrag.viz import layout as picture_layout

    view_cache.MEMO.clear()
    picture_layout._laid_out.clear()
    layouts: list[str] = []  # the thread that laid out each picture
    real_typed = picture_layout.lay_out

    def typed(picture, *a, **k):  # HippoRAG 2's and EcphoryRAG's (NeuroPath's route is laid out when shown)
        if picture.name.startswith(("hipporag2", "ecphory")):
            layouts.append(threading.current_thread().name)
        return real_typed(picture, *a, **k)

    monkeypatch.setattr(picture_layout, "lay_out", typed)
    at = hotpot_run(app().run(), scope="pooled")
    click(at, "Run evaluation")
    job = jobs.get_job(at.session_state[ev.EvalState.eval_job.key])
    assert job is not None and job.wait(60) and job.status == jobs.DONE
    at.run()
    for t in threading.enumerate():
        if t.name == "memrag-prefetch":
            t.join(60)
    ahead = list(layouts)
    # the layouts of hp1 and hp2: EcphoryRAG's and HippoRAG 2's typed pictures side by side
    # (NeuroPath's routes, beside them and in its Retrieval tab, are laid out when shown)
    assert ahead.count("memrag-prefetch") == 2 * 2, ahead
    for qid in ("hp1", "hp2"):
        before = len(layouts)
        at.selectbox(key="eval_q").set_value(qid).run()
        no_exception(at)
        assert [who for who in layouts[before:] if who != "memrag-prefetch"] == [], (qid, layouts[before:])
    assert sum("**Answer:**" in m.value for m in at.markdown) == 4 and len(at.get("iframe")) == 0


def test_a_finished_out_folder_opens_without_rerunning(home, tmp_path, monkeypatch):
    monkeypatch.setenv(ev.RUN_PATHS_ENV, "1")  # a folder outside the app's own run folders
    out = tmp_path / "cli-run"
    summary = cli_run(out)
    lines_before = (out / RESULTS).read_bytes()
    at = no_exception(app(llm=scripted()).run())
    at.text_input(key="eval_folder").set_value(str(out)).run()
    click(at, "Open folder")
    no_exception(at)
    assert "hotpotqa · scope per-question" in texts(at)
    scores = at.dataframe[0].value
    r5 = summary["methods"]["dense"]["recall@5"]
    assert scores.set_index("method").loc["Dense", "R@5"].startswith(f"{100 * r5:.1f}")
    # the path tracker's precision, per hop then over all hops, beside the list order
    tracker = next(d.value for d in at.dataframe if "tracker %" in d.value.columns)
    assert set(tracker["method"]) == {"NeuroPath"} and list(tracker["hop"])[-1] == "all"
    assert "not better than list order" in texts(at)  # the note states the flag's rule
    assert (out / RESULTS).read_bytes() == lines_before  # nothing was rerun or rewritten
    assert not jobs.list_jobs("eval", running_only=True)


def test_a_folder_that_is_no_run_says_so(home, tmp_path):
    (ev.runs_dir() / "empty").mkdir(parents=True)
    at = no_exception(app().run())
    at.text_input(key="eval_folder").set_value("empty").run()
    click(at, "Open folder")
    no_exception(at)
    assert "no summary.json" in texts(at)


def test_a_typed_folder_must_be_one_of_the_apps_run_folders(home, tmp_path, monkeypatch):
    monkeypatch.delenv(ev.RUN_PATHS_ENV, raising=False)
    outside = tmp_path / "cli-run"
    cli_run(outside)
    cli_run(ev.runs_dir() / "mine")
    (ev.runs_dir() / "sneaky").symlink_to(outside, target_is_directory=True)
    at = no_exception(app().run())
    for typed in (str(outside), "~", "/etc", "/proc/self", "../../cli-run", "sneaky", str(ev.runs_dir() / "sneaky")):
        at.text_input(key="eval_folder").set_value(typed).run()
        click(at, "Open folder")
        shown = texts(no_exception(at))
        assert "outside this app's run folders" in shown and ev.RUN_PATHS_ENV in shown, typed
        assert "no summary.json" not in shown and "not a folder" not in shown, typed  # nothing said about the path
    for typed in ("mine", str(ev.runs_dir() / "mine")):
        at.text_input(key="eval_folder").set_value(typed).run()
        click(at, "Open folder")
        assert "hotpotqa · scope per-question" in texts(no_exception(at)), typed
    with pytest.raises(ValueError, match="outside"):
        ev.typed_run_folder(str(outside))
    monkeypatch.setenv(ev.RUN_PATHS_ENV, "1")  # the explicit setting opens any folder
    assert ev.typed_run_folder(str(outside)) == outside.resolve()


def _summary_variants(good: dict) -> list:
    stamp_list = {**good, "stamp": []}
    methods_list = {**good, "methods": ["dense"]}
    entry_text = {**good, "methods": {"dense": "fine"}}
    n_text = {**good, "methods": {m: {**e, "recall@5": "high"} for m, e in good["methods"].items()}}
    fates_list = {**good, "methods": {m: {**e, "gold_fate": [1]} for m, e in good["methods"].items()}}
    paired_bad = {**good, "paired": {"a vs b": {"f1": {"diff_ci95": 3}}}}
    questions_list = {**good, "stamp": {**good["stamp"], "questions": [2]}}
    no_methods = {k: v for k, v in good.items() if k != "methods"}
    return [[1, 2], "text", None, stamp_list, methods_list, entry_text, n_text, fates_list, paired_bad,
            questions_list, no_methods]


def test_a_malformed_summary_says_so_clearly(home):
    out = ev.runs_dir() / "damaged"
    cli_run(out)
    good = json.loads((out / "summary.json").read_text())
    assert ev.load_run(out).summary == good
    for bad in _summary_variants(good):
        (out / "summary.json").write_text(json.dumps(bad))
        with pytest.raises(ValueError, match="summary"):
            ev.load_run(out)
    (out / "summary.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested"):
        ev.load_run(out)
    (out / "summary.json").write_text(json.dumps(good))
    lines = (out / RESULTS).read_text().splitlines()
    (out / RESULTS).write_text("\n".join([json.dumps({"qid": "hp1", "methods": {"dense": []}, "answers": []})]
                                         + lines[1:]) + "\n")
    with pytest.raises(ValueError, match="results line 1"):
        ev.load_run(out)
    (out / RESULTS).write_text('{"qid": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(ValueError, match="nested"):
        ev.load_run(out)


# ================================================================== the library
def test_run_folders_follow_the_settings(home):
    base = EvalConfig(dataset="hotpotqa", data=HOTPOT, out=Path(), scope="pooled", limit=2)
    root = Path("/runs")
    a = ev.run_folder(base, scripted(), embedder(), False, root)
    assert a == ev.run_folder(EvalConfig(**{**base.__dict__, "limit": 5}), scripted(), embedder(), False, root)
    for other in ({"methods": ("dense",)}, {"answer": False}, {"scope": "per-question"},
                  {"params": {"neuropath": {"max_hops": 3}}}):
        assert ev.run_folder(EvalConfig(**{**base.__dict__, **other}), scripted(), embedder(), False, root) != a
    assert ev.run_folder(base, scripted(), embedder(), True, root).name.startswith("hotpotqa-pooled-recorded-")


def test_the_plan_counts_what_is_left(home, tmp_path):
    ds = ev.load_benchmark(ev.Benchmark("hotpotqa", "t", HOTPOT))
    out = tmp_path / "run"
    config = EvalConfig(dataset="hotpotqa", data=HOTPOT, out=out, scope="per-question", limit=2)
    plan = ev.plan_run(config, ds, "embedded")
    calls = estimates.expected_ask_calls(config.methods)
    assert (plan.questions, plan.done, plan.build_passages, plan.llm_calls) == (2, 0, 5, 2 * calls)
    assert plan.seconds == pytest.approx(estimates.build_estimate(5, "embedded").seconds
                                         + 2 * estimates.ask_estimate(config.methods, "embedded").seconds)
    cli_run(out)
    again = ev.plan_run(config, ds, "embedded")
    assert (again.done, again.build_passages, again.llm_calls, again.seconds) == (2, 0, 0, 0)
    dense = ev.plan_run(EvalConfig(**{**config.__dict__, "methods": ("dense",), "answer": False,
                                      "out": tmp_path / "d"}), ds, "embedded")
    assert (dense.build_passages, dense.embed_passages, dense.llm_calls) == (0, 5, 0)
    recorded = ev.plan_run(EvalConfig(**{**config.__dict__, "out": tmp_path / "r"}), ds, "recorded")
    assert recorded.seconds == 2 * ev.RECORDED_SECONDS_PER_QUESTION and "no LLM time" in recorded.text()


def test_a_cancelled_job_keeps_its_finished_questions(home, tmp_path):
    release = threading.Event()
    inner = scripted()

    class Gate:  # the first answer of the second question waits until the test cancels
        backend, model = inner.backend, inner.model

        def identity(self):
            return inner.identity()

        def complete(self, messages, **kw):
            if kw["stage"].startswith("answer") and "T.S. Arthur" in messages[-1]["content"]:
                release.wait(30)
            return inner.complete(messages, **kw)

    out = tmp_path / "run"
    config = EvalConfig(dataset="hotpotqa", data=HOTPOT, out=out, scope="per-question", limit=2)
    ds = ev.load_benchmark(ev.Benchmark("hotpotqa", "t", HOTPOT))
    job = ev.start_eval(config, Gate(), embedder(), ev.plan_run(config, ds, "scripted"), "t")
    deadline = time.time() + 30
    while job.done < 1 and time.time() < deadline:
        job.wait(0.05)
    assert job.done == 1 and job.total == 2
    job.cancel()
    release.set()
    assert job.wait(30) and job.status == jobs.CANCELLED
    run = ev.load_run(out)
    assert [r["qid"] for r in run.records] == ["hp1"]


def test_drill_down_gold_and_exports(home, tmp_path):
    cli_run(tmp_path / "run")
    run = ev.load_run(tmp_path / "run")
    rec = run.records[0]
    result = ev.drill_result(rec, run, None)
    assert [t.method for t in result.traces] == run.methods
    assert result.record["answer"] == rec["answers"][0] and result.record["gold_docs"]
    exported = json.loads(ev.export_json(run))
    assert exported["summary"] == run.summary
    assert all("trace" not in m for q in exported["questions"] for m in q["methods"].values())
    # the cost chart carries 95% intervals computed from the question lines
    cost = dict(report.figures(run.summary, run.records))["cost"]
    seconds = next(t for t in cost.data if t.name == "seconds")
    assert seconds.error_y.array is not None and len(seconds.error_y.array) == len(run.methods)
