"""The Ask page around the graphs at 1,440 × 900 (issue 34): after Ask the answer cards are in view
without scrolling by hand; the page's tables (answers side by side, tokens by method, and each detail
tab's table) fit the content column — no column cut at the right edge; LLM stages are named in words.
Screenshot: docs/screenshots/ask-answers-in-view.png."""

from __future__ import annotations

import re

import pytest
from test_browser import open_app, settle

pytestmark = pytest.mark.browser

VIEW = {"width": 1440, "height": 900}

# The full-width tables of the main column, inside the detail tabs (the tabs with "Deviations from the
# paper") or outside them: each one's box, and how far its grid scrolls sideways (the grid is a
# canvas; its scroller is wider than its box when a column runs past the right edge).
TABLES_JS = """inDetails => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stDataFrame]')]
  .filter(t => { const tabs = t.closest('[data-testid=stTabs]');
    const details = !!tabs && [...tabs.querySelectorAll('[role=tab]')].some(b => b.textContent.includes('Deviations'));
    return details === inDetails && t.getBoundingClientRect().width >= 900; })
  .map(t => { const sc = t.querySelector('.dvn-scroller'); const r = t.getBoundingClientRect();
    return {top: Math.round(r.top), width: Math.round(r.width), scroll: sc.scrollWidth, client: sc.clientWidth}; })"""


def tables_cut(page, in_details: bool, fewest: int = 1) -> list[dict]:
    """The full-width tables (in the detail tabs or outside them) that scroll sideways (none may);
    fails when fewer than `fewest` are there. Hidden tabs' tables measure 0 wide and are left out."""
    found = page.evaluate(TABLES_JS, in_details)
    assert len(found) >= fewest, found
    return [t for t in found if t["scroll"] > t["client"] + 1]


def test_answers_come_into_view_and_tables_fit_at_1440(watched, server, sample_recordings):
    page = watched.page
    page.set_viewport_size(VIEW)
    open_app(watched, server, "Ask")
    page.get_by_text("Replays the replies recorded with").wait_for()
    settle(page)
    page.get_by_role("button", name="Ask", exact=True).click()
    answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
    answers.nth(3).wait_for(timeout=300_000)  # loads the embedder first
    settle(page)
    page.wait_for_timeout(1500)
    tops = [answers.nth(i).evaluate("e => e.getBoundingClientRect().top") for i in range(4)]
    # every card's answer line inside the window, with room under it for the answer itself
    assert all(0 <= top <= VIEW["height"] - 150 for top in tops), tops
    watched.shot("ask-answers-in-view")

    # answers side by side and tokens by method (the comparison under the graphs)
    assert tables_cut(page, in_details=False, fewest=2) == []
    # each detail tab's table, NeuroPath's then EcphoryRAG's
    for method in ("NeuroPath", "EcphoryRAG"):
        page.get_by_test_id("stButtonGroup").filter(has_text="details of").get_by_text(method, exact=True).click()
        settle(page)
        for tab in ("Tokens", "Ranked passages", "LLM calls", "Gold"):
            page.get_by_role("tab", name=tab, exact=True).click()
            settle(page)
            page.wait_for_timeout(500)
            assert tables_cut(page, in_details=True) == [], (method, tab)
    # stages in words (the inspected call's line adds the id in brackets)
    page.get_by_role("tab", name="LLM calls", exact=True).click()
    page.get_by_text("entities in the question (query.entities)").first.wait_for()
    watched.shot("ask-llm-calls-fitted", top=page.get_by_text("details of"))
