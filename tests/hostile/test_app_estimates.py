"""Probes of build estimates on a busy machine (issue #35): a three-paragraph upload was estimated
at 48 s on main and was still writing at 0.5 tokens/s five minutes later (load 2-7 on 2 cores),
with no expected total shown. Estimates now come from the rates and tokens per chunk measured in
this process, are scaled by how busy the machine is now against while those were measured, and say
so; the build panel shows the tokens written of the expected total.
"""

from __future__ import annotations

import time

import pytest

from memrag.app import estimates, jobs, session
from memrag.app.estimates import Throughput
from memrag.app.progress import tokens_line
from memrag.app.work import build_work
from memrag.config import IndexParams
from memrag.llm import watch
from scripted import HashEmbedder
from test_app_pages import app, home, no_exception  # noqa: F401
from test_build_job import DOCS, StreamingLike
from test_live_estimates import completion

QUIET, BUSY = (lambda: (0.4, 2)), (lambda: (5.0, 2))
TIMINGS = {"prompt_n": 900, "prompt_ms": 30_000, "predicted_n": 300, "predicted_ms": 30_000}  # 30 + 10 tokens/s


@pytest.mark.probe("a build estimate while the machine runs at load 5 on 2 cores",
                   "scaled by how busy the machine is and saying so: 'load 5 on 2 cores: about …'", group="estimates")
def test_a_build_estimate_on_a_busy_machine_says_so_and_is_scaled():
    quiet, busy = Throughput(load=QUIET), Throughput(load=BUSY)
    calm = estimates.build_estimate(3, "embedded", throughput=quiet)
    loaded = estimates.build_estimate(3, "embedded", throughput=busy)
    assert loaded.seconds == pytest.approx(2.5 * calm.seconds)  # load 5 on 2 cores: 2.5 times the quiet time
    assert loaded.text().startswith(f"load 5 on 2 cores: about {estimates.seconds_text(loaded.seconds)} (")
    assert "load" not in calm.text()
    # a server's speed is its own: the load here does not scale it
    assert estimates.build_estimate(3, "ollama", throughput=busy).seconds == \
        estimates.build_estimate(3, "ollama", throughput=quiet).seconds


@pytest.mark.probe("a build estimate after chunks were read here at measured speeds",
                   "from the measured prompt and writing rates and tokens per chunk, saying so; rates measured "
                   "on a busy machine are not slowed twice", group="estimates")
def test_a_build_estimate_uses_the_rates_and_tokens_per_chunk_measured_here():
    t = Throughput(load=BUSY)
    for _ in range(2):
        t.observe(completion("index.extract", 900, 300, 60.0, raw={"timings": TIMINGS}))
    e = estimates.build_estimate(4, "embedded", throughput=t)
    assert e.seconds == pytest.approx(4 * 60.0)  # measured at load 5, asked at load 5: as measured
    text = e.text()
    assert "from 2 call(s) measured here: prompt 30 tokens/s, completion 10 tokens/s" in text
    assert "900 prompt and 300 written tokens a chunk, from 2 chunk(s) read here" in text
    t.load = QUIET  # the machine calmed down: the same work takes less than measured
    assert estimates.build_estimate(4, "embedded", throughput=t).seconds == pytest.approx(4 * 60.0 / 2.5)


def test_the_tokens_line_counts_finished_and_running_calls_against_the_expected_total():
    writing = watch.CallState("index.extract", watch.WRITING, 0.0, tokens=40, tokens_per_s=0.5)
    reading = watch.CallState("index.extract", watch.PROMPT, 0.0, prompt_total=900, prompt_done=10)
    # 310 written by finished calls; two running (40 and 0 written, 250 each expected); 2 chunks not started
    assert tokens_line(310, [writing, reading], chunks_left=2, per_chunk=250) == (
        "Tokens written: 350 of about 1,310 expected (250 a chunk); at 0.5 tokens/s the rest takes about 32 min.")
    # a chunk writing more than is typical raises the total instead of being 'done'
    long = watch.CallState("index.extract", watch.WRITING, 0.0, tokens=600, tokens_per_s=2.0)
    assert tokens_line(0, [long], chunks_left=1, per_chunk=250) == (
        "Tokens written: 600 of about 850 expected (250 a chunk); at 2.0 tokens/s the rest takes about 2 min.")
    assert tokens_line(900, [], chunks_left=0, per_chunk=250) == "Tokens written: 900 of about 900 expected (250 a chunk)."


@pytest.mark.probe("a live build writing slowly: the build panel", "shows tokens written of the expected total",
                   group="estimates")
def test_the_build_panel_shows_tokens_written_of_the_expected_total(home):
    llm = StreamingLike()  # answers Alpha at once, then writes Beta's tokens until cancelled
    path = home / "memories" / "notes"
    job = jobs.start_job("build", "building notes", build_work(path, DOCS, llm, HashEmbedder(), IndexParams()),
                         total=3, meta={"backend": "scripted"})
    try:
        assert llm.writing.wait(20)
        deadline = time.monotonic() + 10
        while watch.WRITING not in [c.phase for c in job.model_calls()] and time.monotonic() < deadline:
            time.sleep(0.05)
        at = app()
        at.session_state[session.AppState.build_job.key] = job.id
        at = no_exception(at.run())
        assert job.state["tokens_written"] > 0  # Alpha's call, finished
        captions = [c.value.replace("\\", "") for c in at.caption]  # markdown-escaped
        line = next(c for c in captions if c.startswith("Tokens written:"))
        assert " expected (" in line and "tokens/s the rest takes about" in line, line
    finally:
        job.cancel()
        job.wait(20)
