"""Fix the memory, ask again — in a real browser, offline: the Start page's demo guide opens the
recorded showcase on a fresh copy of the sample; the Ask page replays its question; the Memory page
explorer's panel removes the showcase's triple; asking again is answered from the showcase's
recordings and the diff names a gold passage whose rank or fate changed; the edit log's way back
restores the copy's first version, on which the question replays exactly as on the sample."""

from __future__ import annotations

import re

import pytest
from app_server import settle
from test_browser import START_HEADING

from memrag.explain import showcase

pytestmark = pytest.mark.browser

ASK_TIMEOUT_MS = 180_000  # a replay of four methods while other work shares the cores


def _answers(page) -> list[str]:
    return [t.strip() for t in page.locator("[data-testid=stMarkdownContainer]").filter(
        has=page.locator("strong", has_text=re.compile(r"^Answer:$"))).all_inner_texts()]


def _nav(page, name: str) -> None:
    page.get_by_role("link", name=name, exact=True).click()  # a sidebar link keeps the session
    page.get_by_role("heading", name=name, level=1).wait_for()
    settle(page)


def test_edit_ask_again_showcase_replays_offline_from_the_demo_guide(watched, server, sample_recordings,
                                                                      tmp_path_factory):
    from memrag import demo
    from memrag.index import store

    show = showcase.load()
    changed = [(m, g) for m, o in showcase.expected().items() for g in o["gold"]]
    assert changed, "the showcase's expected.json names no gold passage that changed"
    triple = store.load(sample_recordings).triples[show.edit.args["triple"]]
    page = watched.page
    page.goto(server + "/")
    page.get_by_role("heading", name=START_HEADING, level=1).wait_for()
    settle(page)
    page.get_by_text("show the demo guide").click()
    page.get_by_text("Fix the memory, ask again").wait_for(timeout=ASK_TIMEOUT_MS)  # after the guide's replays
    settle(page)
    watched.shot("guide-fix-the-memory-ask-again", top=page.get_by_text("Fix the memory, ask again"))
    page.get_by_role("button", name="Open the showcase on an editable copy").click()

    # the Ask page, on the copy, on the showcase's question: ask (a replay of the sample's recordings)
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    settle(page)
    assert page.get_by_role("combobox", name="demo question").input_value().startswith(f"{show.qid}: ")
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=ASK_TIMEOUT_MS)
    settle(page)
    first = _answers(page)

    # the Memory page: the explorer's panel is on the triple's head; its triple action removes it
    _nav(page, "Memory")
    panel = page.locator(".st-key-mem_kg_panel")
    panel.get_by_role("heading", name=triple.head).wait_for()
    panel.get_by_text("Edit this entity or one of its triples").click()
    settle(page)
    box = panel.locator("[data-testid=stSelectbox]").filter(has_text="a triple listed above")
    box.locator("input").click()
    page.keyboard.type(f"#{triple.triple_id}: ")  # a selectbox filters its options as one types
    page.keyboard.press("Enter")  # the one option left; the Apply button below says which triple it is
    settle(page)
    apply_ = panel.get_by_role("button", name=re.compile(rf"^Apply: remove triple #{triple.triple_id} "))
    apply_.click()
    panel.get_by_text(re.compile(r"Removed triple .* is live")).wait_for(timeout=60_000)
    settle(page)
    watched.shot("memory-panel-triple-removed", top=panel)

    # back on Ask: the answers were made on the version before; ask again, offline
    _nav(page, "Ask")
    page.get_by_text("This memory changed since these answers.").wait_for()
    page.get_by_role("button", name="Ask again on this version").click()
    page.get_by_text("What changed, method by method").wait_for(timeout=ASK_TIMEOUT_MS)
    settle(page)
    method, gold = changed[0]
    line = page.get_by_text(re.compile(rf"^gold {re.escape(gold['title'])}: ")).first
    line.wait_for()
    assert "→" in line.inner_text()
    assert page.get_by_text("no recorded response").count() == 0  # every changed call came from the showcase
    watched.shot("ask-again-showcase-diff", top=page.get_by_text("What changed, method by method"))
    # NeuroPath's route now, what appeared since the edit marked (its legend counts the new paths)
    route_head = page.get_by_text("NeuroPath's route now")
    route_head.wait_for()
    page.get_by_text(re.compile(r"new since the edit \(\d+ gone\) · \d+ paths?")).first.wait_for()
    watched.shot("ask-again-showcase-route-since", top=route_head)

    # undo: the edit log makes the copy's first version live again; asked there, the question
    # replays from the sample's recordings exactly as the first time
    _nav(page, "Memory")
    page.get_by_text("Edit entities and triples", exact=True).click()
    page.get_by_role("button", name="Make this version live").click()
    page.get_by_text(re.compile(r"Version v\d+ is live again")).first.wait_for(timeout=60_000)
    settle(page)
    copy = _showcase_copy(tmp_path_factory)
    assert store.load(copy).fingerprint() == store.load(demo.sample_memory_dir()).fingerprint()  # by content
    # asked there, the question replays from the sample's own recordings (any changed call would miss)
    _nav(page, "Ask")
    page.get_by_role("button", name="Ask", exact=True).click()
    settle(page)
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=ASK_TIMEOUT_MS)
    assert _answers(page) == first and page.get_by_text("no recorded response").count() == 0
    assert page.get_by_text("come from another memory").count() == 0  # made on the live version
    watched.shot("ask-after-undo-replays-unchanged")


def _showcase_copy(tmp_path_factory):
    """The copy the guide made, in the test server's MEMRAG_HOME (the `server` fixture's folder)."""
    made = sorted(tmp_path_factory.getbasetemp().glob("memrag_home*/memories/showcase-*"),
                  key=lambda p: p.stat().st_mtime)
    assert made, "the guide made no copy of the sample"
    return made[-1]
