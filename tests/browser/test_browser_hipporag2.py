"""HippoRAG 2's and Dense's typed pictures on the Ask page (sample memory, recordings, q11), drawn by
plotly (memrag.viz.figure): a click on a node of HippoRAG 2's focused picture reaches Python, which
writes the node's panel (a passage: its rank, score, gold fate and text; a seeded phrase: its mass,
seed weight and facts), and its "show where" opens the row it names; side by side at 1,440 px Dense's
ranked list fits its column. Screenshots: docs/screenshots/hipporag2-*.png."""

from __future__ import annotations

import re

import pytest
from plotly_probe import overlapping, wait_for_picture
from test_browser import settle
from test_browser_picture import ask_question, scroll_to_focus

pytestmark = pytest.mark.browser

LEGEND = "seeded phrase"  # HippoRAG 2's legend starts with its seeds


def focus_hipporag2(page) -> None:
    """Bring HippoRAG 2 into focus (NeuroPath, the first method with a graph, is the default)."""
    page.get_by_role("button", name="Focus: HippoRAG 2").click()
    page.get_by_role("heading", name="HippoRAG 2 in focus").wait_for()
    settle(page)


def node_at(state: dict, node_id: str) -> dict:
    return next(n for n in state["nodes"] if n["id"] == f"node|{node_id}")


def open_panel(page, node: dict):
    page.mouse.click(node["x"], node["y"])
    panel = page.get_by_role("dialog")
    panel.wait_for(timeout=30_000)
    return panel


def test_click_reaches_python_on_a_hipporag2_node(watched, server, sample_recordings):
    page = watched.page
    ask_question(watched, server, "q11", (1440, 900))
    focus_hipporag2(page)
    scroll_to_focus(page)
    state = wait_for_picture(page, LEGEND)
    for w in state["words"]:
        assert w["size"] >= 11, w
    assert overlapping(state["words"]) == [], overlapping(state["words"])
    names = {w["text"] for w in state["words"]}
    # read left to right: the column heads, the two seeds, the gold passages by rank
    assert {"seeded phrases", "reached by the walk", "passages by mass"} <= names, names
    assert {"Skellan Marine Station", "University of Tollimere"} <= names, names
    assert {"#1 Skellan Marine Station", "#5 University of Tollimere"} <= names, names
    watched.shot("hipporag2-overview-q11-1440x900")

    # a passage: Python writes its rank, score, gold fate and text; "show where" opens its row
    panel = open_panel(page, node_at(state, "c:27"))
    panel.get_by_role("heading", name="#1 Skellan Marine Station").wait_for()
    shown = panel.inner_text()
    assert re.search(r"Rank 1 of \d+ · score 0\.0\d+ · chunk 27 · the answer read it", shown), shown[:800]
    assert "Gold passage: in the top k" in shown and "Skellan Marine Station" in shown, shown[:800]
    watched.shot("hipporag2-panel-passage-q11")
    panel.get_by_role("button", name="show where").click()
    row = page.locator(".st-key-res_hipporag2_focus_row")
    row.wait_for(timeout=90_000)  # a full rerun of the page: slow when other work shares the cores
    assert "highlighted in the list below" in row.inner_text()

    # a seeded phrase: its mass, seed weight and the retrieved facts naming it; "show where" opens the fact
    scroll_to_focus(page)
    state = wait_for_picture(page, LEGEND)
    panel = open_panel(page, node_at(state, "e:university of tollimere"))
    panel.get_by_role("heading", name="University of Tollimere").wait_for()
    shown = panel.inner_text()
    assert re.search(r"PageRank mass 0\.\d+ · seed weight 0\.\d+", shown), shown[:800]
    assert "retrieved fact(s)" in shown and "mention(s)" in shown, shown[:800]
    panel.get_by_role("button", name="show where").click()
    row = page.get_by_text("The fact 'show where' points at")
    row.wait_for(timeout=90_000)


def test_side_by_side_dense_list_fits_at_1440(watched, server, sample_recordings):
    page = watched.page
    ask_question(watched, server, "q11", (1440, 900))
    page.get_by_test_id("stButtonGroup").get_by_text("Side by side", exact=True).click()
    settle(page)
    page.get_by_role("heading", name=re.compile(" in focus$")).wait_for(state="detached")
    page.get_by_text("Dense: the passages nearest the question").wait_for()
    wait_for_picture(page, LEGEND)
    page.wait_for_timeout(1000)
    # the narrow tables beside the graphs: none scrolls sideways (a column cut at the right edge)
    tables = page.evaluate("""[...document.querySelectorAll('[data-testid=stMain] [data-testid=stDataFrame]')]
      .filter(t => t.getBoundingClientRect().width > 0 && t.getBoundingClientRect().width < 400)
      .map(t => { const sc = t.querySelector('.dvn-scroller');
        return {width: t.getBoundingClientRect().width, scroll: sc.scrollWidth, client: sc.clientWidth}; })""")
    assert tables, "no ranked list beside the graphs"
    assert [t for t in tables if t["scroll"] > t["client"] + 1] == [], tables
    page.get_by_text("Passages given to the answer").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    watched.shot("hipporag2-side-by-side-1440")
