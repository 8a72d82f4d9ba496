""""show where" in one click (issue 29): for a recorded sample question chosen by property — a
NeuroPath gold passage whose path was listed but not kept at hop 1 — the answer card's "first miss"
button opens NeuroPath's Retrieval tab at hop 1 with that path's row highlighted and in view, at
1,440 × 900. Screenshot: docs/screenshots/show-where-first-miss.png."""

from __future__ import annotations

import re

import pytest
from app_server import settle
from test_browser import open_app

from memrag.demo import gold_chunk_ids, sample_memory_dir, sample_questions
from memrag.embed import get_embedder
from memrag.eval.gold import gold_fate_records
from memrag.index import store
from memrag.llm.recordings import Recordings

pytestmark = pytest.mark.browser


def first_miss_at_hop_1() -> tuple[int, str]:
    """(index among the demo questions, the first-miss sentence) of the first sample question whose
    NeuroPath gold passage outside the found ones was first missed at hop 1 (replayed from recordings)."""
    from memrag.ask import ask

    emb = get_embedder()
    memory, rec = store.load(sample_memory_dir(), emb.model_id), Recordings.open(sample_memory_dir())
    for i, q in enumerate(sample_questions()):
        if not rec.has_question(q["question"]):
            continue
        t, = ask(memory, q["question"], llm=rec.replay_llm(), embedder=emb, methods=["neuropath"], answer=False)
        for r in gold_fate_records(t, gold_chunk_ids(memory, q["gold_docs"]), k=5,
                                   unit_of=lambda c: memory.chunks[c].doc_id):
            if not r.clean and r.first_miss is not None and r.first_miss.hop == 1 and r.rank and r.rank > 5:
                return i, r.first_miss.text
    pytest.fail("no sample question has a NeuroPath gold passage first missed at hop 1")


def first_miss_of(method: str) -> tuple[int, str, str]:
    """(index among the demo questions, the first-miss sentence, its step as the view names it) of the
    first sample question whose answer card offers `method`'s first miss (replayed from recordings)."""
    from memrag.app.question_gold import gold_fate_line, gold_of
    from memrag.ask import ask
    from memrag.methods import registry

    emb = get_embedder()
    memory, rec = store.load(sample_memory_dir(), emb.model_id), Recordings.open(sample_memory_dir())
    for i, q in enumerate(sample_questions()):
        if not rec.has_question(q["question"]):
            continue
        t, = ask(memory, q["question"], llm=rec.replay_llm(), embedder=emb, methods=[method], answer=False)
        miss = next((w for w in gold_fate_line(t, gold_of(q, memory), memory).moments if w.label == "first miss"),
                    None)
        if miss is not None and miss.step is not None:
            return i, miss.text, registry.get(method).views.step_name(t, miss.step)
    pytest.fail(f"no sample question offers a first miss of {method}")


def click_first_miss(watched, server, index: int, miss: str, method: str):
    """Ask the demo question at `index` at 1,440 × 900, click the "show where: first miss" button whose
    caption is `miss`, and return the row's container once it is highlighted and in view."""
    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Ask")
    page.get_by_text("Replays the replies recorded with").wait_for()
    question = sample_questions()[index]
    picker = page.get_by_test_id("stSelectbox").filter(has_text="demo question")
    picker.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(f"{question['id']}: "))).click()
    settle(page)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=120_000)
    settle(page)
    # the button names the moment, the caption under it says what happened (cut together at 1,440 px)
    caption = page.get_by_text(miss, exact=True)
    assert caption.count() == 1, f"no caption for '{miss}'"
    below = caption.bounding_box()
    assert below is not None, "the first-miss caption is not shown"
    buttons = page.locator("button:visible").filter(has_text=re.compile(r": first miss$"))
    above = [b for b in buttons.all() if (box := b.bounding_box()) is not None and box["y"] < below["y"]
             and abs(box["x"] - below["x"]) < 40]
    assert above, "no visible 'show where: first miss' button above its caption"
    above[-1].click()
    row = page.locator(f".st-key-res_{method}_focus_row")
    row.wait_for(timeout=60_000)
    page.wait_for_timeout(2500)  # the scroll waits for the row's element, then moves
    box = row.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 900, box  # inside the 900 px view
    assert page.get_by_role("tab", name="Retrieval", selected=True).count() == 1
    return row


def test_show_where_lands_on_the_hop_1_row_highlighted_and_in_view(watched, server, sample_recordings):
    index, miss = first_miss_at_hop_1()
    row = click_first_miss(watched, server, index, miss, "neuropath")
    page = watched.page
    path_no = re.search(r"path #(\d+)", miss).group(1)
    assert page.get_by_role("radio", name="Hop 1").or_(page.get_by_role("button", name="Hop 1")).count() >= 1
    grid = row.get_by_test_id("stDataFrame")
    assert grid.count() == 1 and path_no
    watched.shot("show-where-first-miss")


def test_q14_first_miss_buttons_name_their_passage(watched, server, sample_recordings):
    """Issue 36: on q14 NeuroPath missed two gold passages; each has its own pair of buttons named
    after it, and Corwin Penhallow's first miss opens hop 1 at the kept path that was not extended.
    Screenshots: docs/screenshots/show-where-q14-each-passage.png (the landing) and -card.png (the buttons)."""
    index = next(i for i, q in enumerate(sample_questions()) if q["id"] == "q14")
    miss = "hop 1: path #1 kept, not extended (its end, Corwin Penhallow, is in the passage; the model extended only #17)"
    page = watched.page
    row = click_first_miss(watched, server, index, miss, "neuropath")
    for passage in ("Corwin Penhallow", "Osric Penhallow"):
        for moment in ("first miss", "finally lost"):
            assert page.get_by_role("button", name=f"{passage}: {moment}").count() >= 1, (passage, moment)
    assert page.get_by_text(re.compile(r"^hop 1: path #28 listed, not kept")).count() == 1  # Osric's direct miss
    assert row.get_by_test_id("stDataFrame").count() == 1
    watched.shot("show-where-q14-each-passage")
    watched.shot("show-where-q14-card", top=page.get_by_text(re.compile(r"gold passages in the top 5")))


def test_show_where_lands_on_the_ecphory_step_with_the_passages_engrams(watched, server, sample_recordings):
    """EcphoryRAG's first miss opens its Retrieval tab at the activation step that first held the
    passage, the passage's engrams first, highlighted and in view."""
    index, miss, step = first_miss_of("ecphory")
    row = click_first_miss(watched, server, index, miss, "ecphory")
    assert row.get_by_test_id("stDataFrame").count() == 1 and "points at (chunk" in row.inner_text()
    # the activation slider stands at the moment's step
    assert watched.page.get_by_test_id("stSliderThumbValue").filter(has_text=step).count() == 1, step
    watched.shot("show-where-ecphory-first-miss")


def test_the_start_page_guide_on_the_sample(watched, server, sample_recordings):
    """The demo guide worked out from the sample's recordings, each group saying how it was computed.
    Screenshot: docs/screenshots/start-demo-guide.png."""
    open_app(watched, server, "")
    page = watched.page
    page.get_by_text("show the demo guide").click()
    page.get_by_text("Computed now from the recorded replies").wait_for(timeout=300_000)
    for group in ("missed", "every method right", "every method wrong (error analysis)"):
        page.get_by_text(group).first.wait_for()
    settle(page)
    watched.shot("start-demo-guide", top=page.get_by_text("show the demo guide"))
