"""A trace written by `python -m memrag ask --json --out FILE` opens on the Ask page."""

from __future__ import annotations

import re

import pytest
from app_server import settle
from test_browser import open_app

from memrag.cli.main import main
from memrag.demo import sample_questions
from memrag.tracefile import read_traces

pytestmark = pytest.mark.browser


def test_a_cli_trace_opens_on_the_ask_page(watched, server, sample_recordings, tmp_path, capsys):
    out = tmp_path / "t.json"
    question = sample_questions()[0]["question"]
    assert main(["ask", "--memory", str(sample_recordings), question, "--out", str(out)]) == 0  # replayed
    capsys.readouterr()
    traces, _ = read_traces(out.read_bytes())
    open_app(watched, server, "Ask")
    page = watched.page
    page.get_by_text("Open traces from a file").click()
    page.locator("input[type=file]").last.wait_for(state="attached")
    settle(page)
    page.locator("input[type=file]").last.set_input_files(str(out))
    page.get_by_role("button", name="Open these traces").click()
    page.get_by_text("Showing traces opened from a file.").wait_for(timeout=120_000)
    answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
    answers.nth(len(traces) - 1).wait_for(timeout=60_000)
    assert answers.count() == len(traces)
    page.get_by_text(question).first.wait_for()
    # Each trace's answer is on its own answer line (an answer word also occurs in hidden passage
    # text, e.g. a place name, so the lines are read rather than the first match anywhere).
    lines = [answers.nth(i).locator("xpath=..").inner_text() for i in range(answers.count())]
    assert sorted(line.removeprefix("Answer:").strip() for line in lines) == sorted(t.answer.answer for t in traces)
