"""memrag.app.jobs: background work that outlives a page run — progress, ETA, cancel, failures,
and the two job bodies the app uses (build and ask) driven by a scripted LLM."""

from __future__ import annotations

import threading

import pytest

from memrag.app import estimates, jobs
from memrag.app.work import build_work, ask_work
from memrag.config import IndexParams
from memrag.index.readers import Document
from scripted import HashEmbedder, ScriptedLLM

# The look-alike name (Cyrillic а) is written in the passage itself: extraction keeps names as
# written, and drops letters of a script the passage does not use (memrag.index.cleanup).
DOCS = [Document("a", "Alpha", "Alpha met Beta in Tollimere; Alph\u0430 stayed.", "t", "sample"),
        Document("b", "Beta", "Beta sailed to Quellhaven.", "t", "sample"),
        Document("c", "Gamma", "Gamma is unreadable.", "t", "sample")]


def extraction(messages, stage):
    prompt = messages[-1]["content"]
    if "Alpha met Beta" in prompt:
        return {"entities": [{"name": "Alpha", "type": "person", "description": "", "importance": 3},
                             {"name": "Alphа", "type": "person", "description": "", "importance": 1}],
                "triples": [["Alpha", "met", "Beta"]]}
    if "Beta sailed" in prompt:
        return {"entities": [], "triples": [["Beta", "sailed to", "Quellhaven"]]}
    return "this is not JSON at all"  # both tries fail: the chunk is recorded as failed


def test_a_job_reports_progress_and_returns_its_result():
    gate = threading.Event()

    def work(job):
        job.report("start", total=4, done=0)
        for i in range(4):
            job.report("step", {"i": i}, done=i + 1, step_seconds=2.0)
            if i == 1:
                gate.wait(5)
        return "result"

    job = jobs.start_job("test", "counting", work, meta={"x": 1})
    assert jobs.get_job(job.id) is job
    while job.done < 2:
        job.wait(0.01)
    snap = job.snapshot()
    assert snap["status"] == jobs.RUNNING and snap["fraction"] == 0.5 and snap["eta_s"] == pytest.approx(4.0, abs=0.5)
    assert job in jobs.list_jobs("test", running_only=True)
    gate.set()
    assert job.wait(5) and job.status == jobs.DONE and job.result == "result" and job.fraction() == 1.0
    events, n = job.events_since(0)
    assert [e.kind for e in events] == ["start", "step", "step", "step", "step"] and n == 5
    assert job.events_since(3)[0][0].data == {"i": 2}
    assert job not in jobs.list_jobs("test", running_only=True)


def test_eta_falls_back_to_the_prior_estimate():
    gate = threading.Event()
    job = jobs.start_job("test", "waiting", lambda j: gate.wait(5), total=3, estimate_s=1000.0)
    eta = job.eta_seconds()
    assert 990 < eta <= 1000
    gate.set()
    job.wait(5)
    assert job.eta_seconds() == 0.0


def test_cancel_is_cooperative_and_failures_keep_their_message():
    started = threading.Event()

    def loop(job):
        started.set()
        while True:
            job.check_cancel()
            job.wait(0.01)

    job = jobs.start_job("test", "loop", loop)
    started.wait(5)
    job.cancel()
    assert job.wait(5) and job.status == jobs.CANCELLED and job.cancel_requested

    def boom(job):
        raise ValueError("the memory has no chunks")

    bad = jobs.start_job("test", "boom", boom)
    assert bad.wait(5) and bad.status == jobs.FAILED
    assert bad.error == "the memory has no chunks" and "ValueError" in bad.error_detail


def test_job_llm_checks_cancel_before_each_call_and_keeps_cache_keys():
    job = jobs.Job("j", "ask", "x")

    class Keyed(ScriptedLLM):
        last_key = "k123"

    llm = jobs.JobLLM(Keyed({"answer": [{"answer": "a"}, {"answer": "b"}]}), job, expected_calls=3)
    llm.complete([{"role": "user", "content": "q"}], max_tokens=10, stage="answer")
    assert llm.last_key == "k123" and job.done == 1 and job.total == 3
    assert [e.kind for e in job.events] == ["llm_started", "llm_done"]
    job.cancel()
    with pytest.raises(jobs.JobCancelled):
        llm.complete([{"role": "user", "content": "q"}], max_tokens=10, stage="answer")
    assert len(llm.inner.calls) == 1  # the cancelled call never reached the engine


def test_build_work_grows_the_graph_records_failures_and_resumes(tmp_path):
    path = tmp_path / "mem"
    llm = ScriptedLLM({"index.extract": extraction})
    emb = HashEmbedder(overrides={"Alpha": [1, 0], "Alphа": [0.95, 0.31]})
    job = jobs.start_job("build", "b", build_work(path, DOCS, llm, emb, IndexParams(), name="m"))
    assert job.wait(30) and job.status == jobs.DONE, job.error
    s = job.state
    assert set(s["nodes"]) == {"alpha", "alph\u0430", "beta", "quellhaven"}  # the second Alpha has a Cyrillic a
    assert [(e["source"], e["relation"], e["target"]) for e in s["edges"]] == [
        ("alpha", "met", "beta"), ("beta", "sailed to", "quellhaven")]
    assert {(c["source"], c["target"]) for c in s["coref_links"]} == {("alpha", "alph\u0430"), ("alph\u0430", "alpha")}
    (failure,) = s["failures"]
    assert failure["doc_id"] == "c" and failure["raw_reply"] == "this is not JSON at all"
    assert job.done == job.total == 3
    assert job.result["path"] == str(path) and job.result["memory"].stats()["failures"] == 1
    calls = len(llm.calls)
    # the same documents again: nothing new to read, no new LLM calls
    again = jobs.start_job("build", "b2", build_work(path, DOCS, llm, emb, IndexParams()))
    assert again.wait(30) and again.status == jobs.DONE
    assert len(llm.calls) == calls and [e.kind for e in again.events].count("skipped") == 3


def test_a_cancelled_build_keeps_its_journal_and_resumes_without_new_calls(tmp_path):
    path = tmp_path / "mem"
    gate, first_done = threading.Event(), threading.Event()

    def slow(messages, stage):
        if first_done.is_set():
            gate.wait(5)
        first_done.set()
        return extraction(messages, stage)

    llm = ScriptedLLM({"index.extract": slow})
    emb = HashEmbedder()
    job = jobs.start_job("build", "b", build_work(path, DOCS[:2], llm, emb, IndexParams()))
    first_done.wait(5)
    job.cancel()
    gate.set()
    assert job.wait(30) and job.status == jobs.CANCELLED
    made = len(llm.calls)
    assert made >= 1
    resumed = jobs.start_job("build", "b", build_work(path, DOCS[:2], llm, emb, IndexParams()))
    assert resumed.wait(30) and resumed.status == jobs.DONE
    done = [e.data for e in resumed.events if e.kind == "chunk_done"]
    assert done[0]["resumed"] is True  # read before the cancel: taken from the journal
    assert len(llm.calls) == made + sum(1 for d in done if not d["resumed"])


def test_ask_work_reports_each_llm_call():
    from memrag.index.build import build_memory, run_build

    llm = ScriptedLLM({"index.extract": extraction,
                       "query.entities": lambda m, s: {"entities": ["Alpha"]},
                       "neuropath.track": lambda m, s: {"reasoning_chain": "c", "valid_ids": [1],
                                                        "expansion_requirement": "", "expand_ids": [],
                                                        "continue": 0},
                       "answer": lambda m, s: {"reasoning": "r", "answer": "Beta", "cited": [1]}})
    emb = HashEmbedder()
    memory = run_build(build_memory(None, DOCS[:2], llm, emb, IndexParams()))
    job = jobs.start_job("ask", "a", ask_work(memory, "Whom did Alpha meet?", llm, emb,
                                                   ["neuropath", "dense"], {}))
    assert job.wait(30) and job.status == jobs.DONE, job.error
    assert [t.method for t in job.result] == ["neuropath", "dense"]
    stages = [e.data["stage"] for e in job.events if e.kind == "llm_done"]
    assert stages == ["query.entities", "neuropath.track.hop1", "answer", "answer"]
    assert job.total == estimates.expected_ask_calls(["neuropath", "dense"]) == 5


def test_expected_calls():
    assert estimates.expected_ask_calls(["dense"]) == 1
    assert estimates.expected_ask_calls(["ecphory", "dense"]) == 3
    assert estimates.expected_ask_calls(["neuropath"], {"neuropath": {"max_hops": 3}}) == 5
    # HippoRAG 2: its recognition call and its answer; no query-entity call to share in compare mode
    assert estimates.expected_ask_calls(["hipporag2"]) == 2
    assert estimates.expected_compare_calls("hipporag2") == 4
    assert estimates.expected_compare_calls("ecphory") == 3  # the query-entity call is made once
    assert estimates.expected_compare_calls("neuropath", [{"max_hops": 2}, {"max_hops": 2}]) == 7
    # each side's own parameters: 1 + 2 hops, the query-entity call once, two answers
    assert estimates.expected_compare_calls("neuropath", [{"max_hops": 1}, {"max_hops": 2}]) == 6
    # the retrieval-only HippoRAG 2 calls the model for its answer alone
    assert estimates.expected_ask_calls(["hipporag2"], {"hipporag2": {"recognition": False}}) == 1


def test_job_llm_passes_probability_requests_and_the_capability_on():
    # A job's wrapper hid both before: a tracker asking through it always fell back to the
    # generative tracker ("JobLLM does not pass next-token probabilities").
    from test_llm_logprobs import ProbScripted

    from memrag.llm.logprobs import logprobs_missing

    wrapped = jobs.JobLLM(ProbScripted(["Yes", "Yes"]), jobs.Job("j", "ask", "x"))
    assert logprobs_missing(wrapped) == ""
    c = wrapped.complete([{"role": "user", "content": "q"}], max_tokens=1, stage="s", top_logprobs=2)
    assert c.top_logprobs and len(c.top_logprobs[0]) == 2
    plain = jobs.JobLLM(ScriptedLLM({"answer": [{"answer": "a"}]}), jobs.Job("k", "ask", "x"))
    assert logprobs_missing(plain)  # a scripted engine without them says so
