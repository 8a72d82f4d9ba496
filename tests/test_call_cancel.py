"""A watched HTTP call stops within a second of its caller's cancel (real loopback servers that
take 20 s to answer), an unwatched one is untouched, and a job's cancel ends the job as cancelled
(not failed) while a model call is running."""

from __future__ import annotations

import threading
import time

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from fake_openai import Reply, running_fake_openai
from memrag.app import jobs
from memrag.llm import watch
from memrag.llm.ollama_backend import OllamaLLM
from memrag.llm.openai_backend import OpenAICompatibleLLM

MSGS = [{"role": "user", "content": "Say ok."}]
SLOW_S = 20.0


def _cancel_after(llm, seconds: float) -> tuple[BaseException | None, float]:
    """Run one call under a watch that cancels `seconds` in; (what it raised, seconds from the cancel)."""
    stop = threading.Event()
    box: dict = {}

    def call():
        with watch.watching(watch.CallWatch(stop.is_set), "test"):
            try:
                llm.complete(MSGS, max_tokens=10, stage="test")
            except BaseException as e:  # noqa: BLE001 - what it raised is the result
                box["error"] = e
            box["ended"] = time.monotonic()

    t = threading.Thread(target=call)
    t.start()
    time.sleep(seconds)
    asked = time.monotonic()
    stop.set()
    t.join(SLOW_S + 10)
    return box.get("error"), box["ended"] - asked


def test_ollama_call_stops_within_a_second_of_the_cancel():
    with running_fake_ollama(models=["phi4"]) as fake:
        fake.script(ChatReply(content="ok", delay_s=SLOW_S))
        error, after = _cancel_after(OllamaLLM(host=fake.host, model="phi4", timeout=60), 1.0)
    assert isinstance(error, watch.CallCancelled), error
    assert after < 2.0  # a read slice is 0.5 s; slack for a busy machine


def test_openai_call_stops_within_a_second_of_the_cancel():
    with running_fake_openai(models=["default"]) as fake:
        fake.script(Reply(content="ok", delay_s=SLOW_S))
        llm = OpenAICompatibleLLM(base_url=fake.base_url, model="default", api_key="sk-test-0123456789", timeout=60)
        error, after = _cancel_after(llm, 1.0)
    assert isinstance(error, watch.CallCancelled), error
    assert after < 2.0  # a read slice is 0.5 s; slack for a busy machine


def test_a_watched_call_that_is_not_cancelled_answers_as_before():
    with running_fake_ollama(models=["phi4"]) as fake:
        fake.script(ChatReply(content="slow but fine", delay_s=1.5))
        with watch.watching(watch.CallWatch(), "test"):
            c = OllamaLLM(host=fake.host, model="phi4", timeout=60).complete(MSGS, max_tokens=10, stage="test")
    assert c.text == "slow but fine"


def test_a_watched_read_still_keeps_the_calls_deadline():
    with running_fake_ollama(models=["phi4"]) as fake:
        fake.script(ChatReply(content="ok", delay_s=SLOW_S))
        t0 = time.monotonic()
        with watch.watching(watch.CallWatch(), "test"):
            with pytest.raises(Exception, match="did not finish answering within 2 s"):
                OllamaLLM(host=fake.host, model="phi4", timeout=2).complete(MSGS, max_tokens=10, stage="test")
    assert time.monotonic() - t0 < 4


def test_a_jobs_cancel_during_a_model_call_ends_the_job_cancelled_and_shows_the_call():
    with running_fake_ollama(models=["phi4"]) as fake:
        fake.script(ChatReply(content="ok", delay_s=SLOW_S))
        inner = OllamaLLM(host=fake.host, model="phi4", timeout=60)
        job = jobs.start_job("ask", "one slow call",
                             lambda j: jobs.JobLLM(inner, j).complete(MSGS, max_tokens=10, stage="answer"))
        deadline = time.monotonic() + 10
        while not job.snapshot()["model_calls"] and time.monotonic() < deadline:
            time.sleep(0.05)
        calls = job.snapshot()["model_calls"]
        assert [c.stage for c in calls] == ["answer"] and calls[0].text() == "waiting for the model"
        asked = time.monotonic()
        job.cancel()
        assert job.wait(5)
    assert job.status == jobs.CANCELLED and time.monotonic() - asked < 2.0
    assert job.snapshot()["model_calls"] == []
