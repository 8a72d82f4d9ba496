"""The start page in a real browser: the app's root URL opens it, and "Try a demo question" lands on
the Ask page with the sample memory and its first demo question chosen (one click)."""

from __future__ import annotations

import json

import pytest
from test_browser import START_HEADING, settle

pytestmark = pytest.mark.browser


def test_the_root_url_opens_the_start_page_and_a_demo_question_is_one_click_away(watched, server, sample_recordings):
    from memrag import demo

    page = watched.page
    page.goto(server + "/")
    page.get_by_role("heading", name=START_HEADING, level=1).wait_for()
    for words in ("place cells", "engram", "Active memory:", "LLM:"):
        page.get_by_text(words).first.wait_for()
    settle(page)  # the three ways in are drawn by the end of the run
    page.get_by_role("link", name="Learn the analogy").wait_for()
    page.get_by_role("button", name="Build from your own documents").wait_for()
    watched.shot("start-page")

    page.get_by_role("button", name="Try a demo question").click()
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_text("Replays the replies recorded with").wait_for()  # the sample's recordings are in use
    settle(page)
    # the demo guide's default question, worked out from the recordings (memrag.explain.demo_guide)
    default = _guide_default()
    shown = page.get_by_role("combobox", name="demo question").input_value()
    assert shown.startswith(f"{default['id']}: {default['question']}"), shown
    watched.shot("start-demo-question-on-ask")


def _guide_default() -> dict:
    from memrag import demo
    from memrag.embed import get_embedder
    from memrag.explain.demo_guide import build_guide, replay_outcomes
    from memrag.index import store
    from memrag.llm.recordings import Recordings

    questions = json.loads((demo.SAMPLE_DIR / "questions.json").read_text())
    emb = get_embedder()
    memory = store.load(demo.sample_memory_dir(), emb.model_id)
    guide = build_guide(replay_outcomes(memory, Recordings.open(demo.sample_memory_dir()), emb, questions))
    return next(q for q in questions if q["id"] == guide.default)
