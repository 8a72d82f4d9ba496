"""Issue 29's graph acceptance, on the sample memory's recorded demo question at 1,440 × 900: the Ask
page's focus layout writes the focused picture's words at 12 px or more (16 for a presenter), inside
its plot, no two overlapping; the small multiples and the side-by-side view draw every method's
picture. Measured from plotly's state in the page (every picture is a typed picture, memrag.viz.figure)."""

from __future__ import annotations

import re

import pytest
from plotly_probe import outside, overlapping
from test_browser import open_app, pictures, settle, wait_for_graphs

pytestmark = pytest.mark.browser

# The widest typed picture on the page (the focused one): its written words with box and size, and its plot.
FOCUSED = """() => {
  const charts = [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd._fullLayout && gd._fullData &&
      gd._fullData.some(t => t.name === 'nodes'));
  if (!charts.length) return null;
  const gd = charts.reduce((a, b) => a.getBoundingClientRect().width >= b.getBoundingClientRect().width ? a : b);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
            size: parseFloat(getComputedStyle(t).fontSize)}; });
  return {words, plot: [box.left + xa._offset, box.top + ya._offset, xa._length, ya._length]};
}"""


def check_words(page, min_px: float) -> None:
    state = page.evaluate(FOCUSED)
    assert state and state["words"], state
    assert all(w["size"] >= min_px for w in state["words"]), [w for w in state["words"] if w["size"] < min_px]
    assert overlapping(state["words"]) == [] and outside(state["words"], state["plot"]) == []


def test_focus_layout_writes_legible_words_and_side_by_side_draws_every_picture(watched, server,
                                                                              sample_recordings):
    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Ask")
    page.get_by_text("Replays the replies recorded with").wait_for()
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=120_000)
    settle(page)
    # the focus layout is the default view: no click needed; EcphoryRAG large, the others small above it
    page.get_by_role("button", name="Focus: EcphoryRAG").click()
    heading = page.get_by_role("heading", name="EcphoryRAG in focus")
    heading.wait_for()
    settle(page)
    assert len(wait_for_graphs(page, 4)) >= 4  # the focused picture, three small ones, NeuroPath's hop 1
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    check_words(page, 12)
    watched.shot("ask-focus-layout")

    # the presenter look: larger type, every word still apart
    page.get_by_text("Presenter: larger type and nodes").click()
    settle(page)
    page.wait_for_timeout(1000)
    check_words(page, 16)
    watched.shot("ask-focus-presenter", top=heading)

    # side by side, one click away: every method's picture; at 1,440 px no button cut short
    page.get_by_test_id("stButtonGroup").get_by_text("Side by side", exact=True).click()
    settle(page)
    heading.wait_for(state="detached")
    assert len(wait_for_graphs(page, 4)) >= 4
    assert any(any(i.startswith("cue:") for i in p["ids"]) for p in pictures(page))
    answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
    answers.first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    watched.shot("ask-side-by-side-1440")
    cut = page.evaluate("""[...document.querySelectorAll('[data-testid=stButton] button *')]
        .filter(e => e.scrollWidth > e.clientWidth + 0.5).map(e => e.textContent)""")
    assert cut == [], cut
