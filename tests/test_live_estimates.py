"""Honest live work: estimates from this process's measured throughput, remaining time that rises
only with a note, one progress figure for sidebar and panel, the model preload's states."""

from __future__ import annotations

import threading
import time

import pytest

from memrag.app import estimates, jobs, progress
from memrag.app.estimates import Throughput
from memrag.llm import preload
from memrag.llm.base import Completion


IDLE = lambda: (0.0, 2)  # noqa: E731 - a quiet two-core machine: estimates here do not depend on the real load


def completion(stage: str, prompt: int, completion_tokens: int, seconds: float, *, backend: str = "embedded",
               cached: bool = False, raw: dict | None = None) -> Completion:
    return Completion(text="{}", prompt_tokens=prompt, prompt_tokens_cached=0, completion_tokens=completion_tokens,
                      seconds=seconds, cached=cached, model="m", backend=backend, stage=stage, raw=raw)


def test_before_any_call_the_estimate_is_a_stated_default():
    t = Throughput(load=IDLE)
    e = estimates.build_estimate(2, "embedded", throughput=t)
    dp, dc = estimates.DEFAULT_RATES["embedded"]
    p, c = estimates.TYPICAL_TOKENS["index.extract"]
    assert e.seconds == pytest.approx(2 * (p / dp + c / dc))
    assert not e.rates.measured and estimates.FIRST_ESTIMATE in e.text()


def test_measured_calls_replace_the_defaults():
    t = Throughput(load=IDLE)
    # llama.cpp says how the time was split: 1000 prompt tokens in 2 s, 100 completion tokens in 5 s
    timings = {"prompt_n": 1000, "prompt_ms": 2000, "predicted_n": 100, "predicted_ms": 5000}
    t.observe(completion("index.extract", 1000, 100, 7.0, raw={"timings": timings}))
    r = t.rates("embedded")
    assert (r.prompt_tps, r.completion_tps, r.calls) == (pytest.approx(500), pytest.approx(20), 1)
    e = estimates.build_estimate(3, "embedded", throughput=t)
    assert e.seconds == pytest.approx(3 * 7.0)  # the measured call's own token counts are now typical
    assert "measured here" in e.text() and "500 tokens/s" in e.text()
    # cached and replayed calls measure nothing; another backend keeps its defaults
    t.observe(completion("answer", 10, 10, 0.001, cached=True))
    assert t.rates("embedded").calls == 1 and not t.rates("ollama").measured


def test_a_call_without_split_timings_scales_both_defaults():
    t = Throughput(load=IDLE)
    dp, dc = estimates.DEFAULT_RATES["other"]
    predicted = 800 / dp + 50 / dc
    t.observe(completion("answer", 800, 50, 2 * predicted, backend="ollama"))  # twice as slow as the defaults
    r = t.rates("ollama")
    assert r.prompt_tps == pytest.approx(dp / 2) and r.completion_tps == pytest.approx(dc / 2)
    assert estimates.ask_estimate(["dense"], "ollama", throughput=t).seconds == pytest.approx(2 * predicted)


def test_a_job_llm_feeds_the_process_throughput(monkeypatch):
    t = Throughput(load=IDLE)

    class Slow:
        backend, model = "embedded", "m"

        def complete(self, messages, *, schema=None, max_tokens, stage):
            return completion(stage, 400, 40, 3.0)

        def identity(self):
            return {}

    job = jobs.start_job("test", "one call", lambda j: None)
    wrapped = jobs.JobLLM(Slow(), job)
    wrapped.throughput = t
    wrapped.complete([{"role": "user", "content": "x"}], max_tokens=10, stage="answer")
    assert t.rates("embedded").calls == 1


def _snap(job: jobs.Job) -> dict:
    return job.snapshot()


def test_remaining_time_rises_only_with_a_note_and_goes_over_the_estimate():
    gate, step, end = threading.Event(), threading.Event(), threading.Event()

    def work(job):
        job.report("start", total=4, done=0)
        gate.wait(5)
        job.report("step", done=1, step_seconds=20.0)  # far slower than the 8 s estimate
        step.set()
        end.wait(5)

    job = jobs.start_job("test", "asking", work, total=4, estimate_s=8.0)
    try:
        fig = progress.progress_figure(_snap(job))
        assert fig.left.startswith("about 8 s left") and fig.note == ""
        gate.set()
        step.wait(5)
        fig = progress.progress_figure(_snap(job))
        assert fig.line() == "1 of 4, about 60 s left"
        assert fig.note == "the first step took longer than the first estimate: estimate raised from 8 s to 60 s"
    finally:
        gate.set()
        end.set()
        job.wait(5)
    # past the estimate the figure counts the seconds over it
    over = progress.progress_figure({"status": "running", "done": 1, "total": 4, "fraction": 0.25, "eta_s": -12.4,
                                     "meta": {}})
    assert over.left == "12 s over the estimate" and "taking longer" not in over.line()


def test_a_second_slower_step_says_the_model_answered_slower():
    job = jobs.Job("j", "test", "x", total=5, estimate_s=100.0)
    job.report("step", done=1, step_seconds=2.0)
    assert job.eta_note == ""  # 8 s left: lower than the prior, no note
    job.report("step", done=2, step_seconds=20.0)
    assert job.eta_note.startswith("the model answered slower than measured so far: estimate raised from 8 s to")


def test_sidebar_and_panel_share_one_figure():
    """Both call progress_figure on the same snapshot; while the model loads, the job waits for it."""
    snap = {"status": "running", "done": 0, "total": 4, "fraction": 0.0, "eta_s": 32.0,
            "meta": {"backend": "embedded"}}
    loading = {"state": preload.LOADING, "elapsed_s": 40.0, "error": ""}
    assert progress.progress_figure(snap, loading).line() == "0 of 4, waiting for the model to load"
    ready = {"state": preload.READY, "elapsed_s": 40.0, "error": ""}
    assert progress.progress_figure(snap, ready).line() == "0 of 4, about 32 s left"


@pytest.fixture()
def preload_on(monkeypatch):
    preload.reset()
    monkeypatch.setenv("MEMRAG_PRELOAD", "1")
    yield
    preload.wait(5)
    preload.reset()


def test_preload_states_loading_then_ready(preload_on):
    release = threading.Event()
    calls = []
    assert preload.start(lambda: (calls.append(1), release.wait(5)))
    assert preload.status()["state"] == preload.LOADING
    assert "Loading the model" in progress.model_state_text()
    assert not preload.start(lambda: calls.append(2))  # one load per process
    release.set()
    assert preload.wait(5)
    s = preload.status()
    assert s["state"] == preload.READY and s["elapsed_s"] >= 0 and calls == [1]
    assert progress.model_state_text().startswith("Model loaded in")


def test_preload_failure_keeps_its_message(preload_on):
    def broken():
        time.sleep(0.05)
        raise RuntimeError("embedded model part 3 is missing")

    preload.start(broken)
    assert preload.wait(5)
    assert preload.status()["state"] == preload.FAILED
    assert progress.model_state_text() == "The model could not be loaded: embedded model part 3 is missing"
    assert not preload.start(broken)  # not retried until reset ("check again")


def test_preload_off_starts_nothing(monkeypatch):
    preload.reset()
    monkeypatch.setenv("MEMRAG_PRELOAD", "0")
    started = []
    assert not preload.start(lambda: started.append(1))
    time.sleep(0.05)
    assert started == [] and preload.status()["state"] == preload.OFF


# ------------------------------------------------------------------ replay time is not a method's speed
def _summary(replies: str) -> dict:
    entry = {"n": 2, "recall@1": 0.5, "recall@2": 0.5, "recall@5": 1.0, "recall@10": 1.0, "em": 0.5, "raw_em": 0.5,
             "f1": 0.6, "prompt_tokens_per_query": 900.0, "completion_tokens_per_query": 80.0,
             "llm_calls_per_query": 3.0, "seconds_per_query": 0.07, "llm_seconds_per_query": 41.5,
             "gold_fate": {}, "ci95": {}}
    return {"stamp": {"replies": replies, "llm_model": "m"}, "scope": "pooled", "methods": {"neuropath": entry},
            "indexing": {}, "paired": {}}


def test_a_replayed_run_names_its_seconds_as_the_replay_and_shows_the_original():
    from memrag.eval import report

    header, rows, _ = report.score_rows(_summary("recorded"))
    assert header[-2:] == ["replay s/q", "original LLM s/q"] and "s/q" not in header
    assert rows[0][-2:] == ["0.07", "41.50"]
    fig = report._cost(_summary("recorded"))
    assert "original run" in fig.layout.annotations[1].text
    assert list(fig.data[-1].y) == [41.5]  # the chart shows the recorded calls' time, never the replay's
    live_header, live_rows, _ = report.score_rows(_summary("live"))
    assert live_header[-1] == "s/q" and live_rows[0][-1] == "0.07"
    assert list(report._cost(_summary("live")).data[-1].y) == [0.07]


def test_a_job_llm_keeps_a_replay_named_as_one():
    class Replay:
        backend, model, replays = "recorded", "m", True

    job = jobs.Job("j", "test", "x")
    assert jobs.JobLLM(Replay(), job, progress=False).replays is True


def test_a_traces_download_is_named_after_what_it_holds():
    from memrag.textsafe import download_name
    from memrag.tracefile import traces_file_name

    class T:
        def __init__(self, method):
            self.method = method

    name = traces_file_name([T("neuropath"), T("dense")], {"qid": "q01", "question": "Who?"})
    assert name.startswith("memrag-q01-neuropath-dense-") and name.endswith(".json")
    free = traces_file_name([T("ecphory")], {"qid": None, "question": "Which river flows by Port Alder's mill?"})
    assert free.startswith("memrag-which-river-flows-by-port-alder-s-ecphory-")
    assert download_name("My Notes!", None, ext="csv", day="2026-12-01") == "memrag-my-notes-2026-12-01.csv"


def test_the_cost_chart_names_methods_by_their_labels_and_its_subtitles_leave_room():
    """At 1,440 px the two subtitles ran into each other ("tokens per queryLLM seconds…"): each line of
    a subtitle now fits the width its half of the chart gets (about 26 characters at the app's width)."""
    from memrag.eval import report

    fig = report._cost(_summary("recorded"))
    assert list(fig.data[-1].x) == ["NeuroPath"] and list(fig.data[0].x) == ["NeuroPath"]
    titles = [a.text for a in fig.layout.annotations]
    assert all(len(line) <= 26 for t in titles for line in t.split("<br>")), titles
    left, right = fig.layout.xaxis.domain, fig.layout.xaxis2.domain
    assert right[0] - left[1] >= 0.15  # a gap between the halves for their titles
