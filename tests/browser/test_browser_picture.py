"""Issue 34's pictures on the Ask page (sample memory, recordings): NeuroPath's route in the focus
graph, drawn by plotly (memrag.viz.figure). A click on a node reaches Python, which writes a panel
for it; every word the picture writes is ≥ 11 px, inside its frame and clear of every other, at
1,440 × 900 and 1,280 × 720 for q11 and q14 — read from plotly's own state in the page, not from
the Python that placed them."""

from __future__ import annotations

import re

import pytest
from plotly_probe import overlapping
from test_browser import open_app, settle

from memrag.demo import sample_questions

pytestmark = pytest.mark.browser

ROUTE_LEGEND = "seed · "  # the route's legend starts with its seeds
ECPHORY_LEGEND = "cue · "  # EcphoryRAG's activation: its legend starts with the cues
# The focused route: plotly's state for every node point (on-screen place, customdata, hover text)
# and every written word (the annotations, as the page drew them), with the chart's box.
ROUTE_STATE = """(prefix) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g._fullLayout && g._fullData &&
      g._fullData.some(t => t.name === 'nodes') && [...g.querySelectorAll('.legendtext')]
      .some(t => t.textContent.startsWith(prefix)) && g.getBoundingClientRect().width > 500);
  if (!gd || !gd._fullLayout._plots || !gd._fullLayout._plots.xy) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const nodes = [];
  for (const tr of gd._fullData) {
    if (tr.name !== 'nodes') continue;
    for (let i = 0; i < tr.customdata.length; i++)
      nodes.push({id: tr.customdata[i], text: tr.hovertext[i],
                  x: box.left + xa._offset + xa.l2p(tr.x[i]), y: box.top + ya._offset + ya.l2p(tr.y[i])});
  }
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
            size: parseFloat(getComputedStyle(t).fontSize)}; });
  const legend = [...gd.querySelectorAll('.legendtext')].map(t => t.textContent);
  const plot = [box.left + xa._offset, box.top + ya._offset, xa._length, ya._length];
  // WebGL points (a large picture) have drawn once their scene's canvas has a size; SVG ones at once
  const gl = !gd._fullData.some(t => t.type === 'scattergl') || !!(gd._fullLayout._plots.xy._scene &&
      [...gd.querySelectorAll('canvas')].some(c => c.width > 0));
  return {nodes, words, legend, plot, box: [box.left, box.top, box.width, box.height], gl};
}"""


def route_state(page, timeout_ms: int = 60_000, legend: str = ROUTE_LEGEND) -> dict:
    """The focused picture whose legend starts with `legend` (NeuroPath's route by default)."""
    for _ in range(timeout_ms // 250):
        try:
            state = page.evaluate(ROUTE_STATE, legend)
        except Exception:  # the chart is being replaced under us
            state = None
        if state and state["gl"] and state["nodes"] and state["words"]:
            return state
        page.wait_for_timeout(250)
    raise AssertionError(f"the focused picture with the legend {legend!r} was not drawn")


def ask_question(watched, server, qid: str, size: tuple[int, int]) -> None:
    """Ask demo question `qid` (recorded) at `size`; return once the answers are shown."""
    page = watched.page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_app(watched, server, "Ask")
    page.get_by_text("Replays the replies recorded with").wait_for()
    ids = [q["id"] for q in sample_questions()]
    picker = page.get_by_test_id("stSelectbox").filter(has_text="demo question")
    picker.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(f"{qid}: "))).click()
    settle(page)
    assert qid in ids
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=120_000)
    settle(page)


def check_words(state: dict) -> None:
    """Every written word ≥ 11 px, inside the plot, none overlapping another."""
    left, top, width, height = state["plot"]
    for w in state["words"]:
        assert w["size"] >= 11, w
        assert w["x"] >= left - 0.5 and w["y"] >= top - 0.5, (w, state["plot"])
        assert w["x"] + w["w"] <= left + width + 0.5 and w["y"] + w["h"] <= top + height + 0.5, (w, state["plot"])
    assert overlapping(state["words"]) == [], overlapping(state["words"])


def scroll_to_focus(page) -> None:
    heading = page.get_by_role("heading", name=re.compile(" in focus$"))
    heading.wait_for()
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(600)


def focus_neuropath(page, label: str = "NeuroPath") -> None:
    """Bring a method into focus (the default focus is the first method with a graph)."""
    heading = page.get_by_role("heading", name=re.compile(" in focus$"))
    heading.wait_for()
    if not heading.inner_text().startswith(label):
        page.get_by_role("button", name=f"Focus: {label}").click()
        page.get_by_role("heading", name=f"{label} in focus").wait_for()
        settle(page)


def click_open_panel(page, state: dict, name: str):
    """Click the node whose words start with `name` and wait for the panel Python writes for it, to
    its end (the memory's facts come last); the panel and its text."""
    node = next(n for n in state["nodes"] if n["text"].startswith(name))
    page.mouse.click(node["x"], node["y"])
    panel = page.get_by_role("dialog")
    panel.wait_for(timeout=30_000)
    panel.get_by_role("heading", name=name).wait_for()
    panel.get_by_text("mention(s)").wait_for()
    return panel, panel.inner_text()


@pytest.mark.parametrize("qid", ["q11", "q14"])
@pytest.mark.parametrize("size", [(1440, 900), (1280, 720)], ids=["1440x900", "1280x720"])
def test_route_words_are_legible_and_apart(watched, server, sample_recordings, qid, size):
    page = watched.page
    ask_question(watched, server, qid, size)
    focus_neuropath(page)
    scroll_to_focus(page)
    state = route_state(page)
    check_words(state)
    names = {w["text"] for w in state["words"]}
    assert {"seeds", "hop 1", "hop 2"} <= names, names
    assert any(t.startswith("+") and "listed, not kept" in t for t in names), names  # the folded paths
    # the legend's path counts are the caption's
    caption = page.get_by_text(re.compile("^NeuroPath's route over")).first.inner_text()  # the focus graph first
    for entry in state["legend"]:
        m = re.match(r"^(valid|expanded|listed, not kept) · (\d+) paths?$", entry)
        if m:
            assert f"{m.group(2)} {m.group(1)}" in caption, (entry, caption)
    watched.shot(f"neuropath-route-{qid}-{size[0]}x{size[1]}")
    # the presenter look: larger type, the same places
    before = {n["id"]: (round(n["x"]), round(n["y"])) for n in state["nodes"]}
    page.get_by_text("Presenter: larger type and nodes").click()
    settle(page)
    page.wait_for_timeout(800)
    scroll_to_focus(page)
    bigger = route_state(page)
    assert max(w["size"] for w in bigger["words"]) > max(w["size"] for w in state["words"])
    after = {n["id"]: (round(n["x"]), round(n["y"])) for n in bigger["nodes"]}
    assert after == before
    check_words(bigger)


def test_click_reaches_python_in_the_focused_neuropath_route(watched, server, sample_recordings):
    """q11: a click on a count node opens the paths it folds (the picture redrawn by Python); a click
    on a node opens the panel Python writes for that node, whose "show where" opens the hop that
    listed one of its paths, the path's row highlighted."""
    page = watched.page
    ask_question(watched, server, "q11", (1440, 900))
    focus_neuropath(page)
    scroll_to_focus(page)
    state = route_state(page)
    count = next(n for n in state["nodes"] if n["id"].startswith("node|more:university of tollimere"))
    page.mouse.click(count["x"], count["y"])
    for _ in range(120):
        opened = route_state(page)
        if len(opened["nodes"]) > len(state["nodes"]):
            break
        page.wait_for_timeout(250)
    assert len(opened["nodes"]) > len(state["nodes"]), "the count node did not open"
    assert any(w["text"].startswith("− fold") for w in opened["words"])
    check_words(opened)

    # written by Python: the node's name, the paths through it and its place in the memory
    panel, shown = click_open_panel(page, opened, "University of Tollimere")
    assert re.search(r"On \d+ path\(s\)", shown) and "mention(s)" in shown and "show where" in shown, shown[:800]
    watched.shot("neuropath-route-q11-panel")
    panel.get_by_role("button", name="show where").click()
    row = page.locator(".st-key-res_neuropath_focus_row")
    row.wait_for(timeout=90_000)  # a full rerun of the page: slow when other work shares the cores
    assert "highlighted in this hop's table" in row.inner_text()


def test_click_reaches_python_in_the_focused_ecphory_activation(watched, server, sample_recordings):
    """q11, EcphoryRAG in focus: its activation drawn in columns (question, initial activation, rounds,
    context) with legible words apart; a click on a count box opens the entities it folds, a click on
    a final engram opens the panel Python writes (its activation per round and its fate), whose "show
    where" opens the Retrieval tab at the step that first activated it, its passage in view."""
    page = watched.page
    ask_question(watched, server, "q11", (1440, 900))
    focus_neuropath(page, "EcphoryRAG")
    scroll_to_focus(page)
    state = route_state(page, legend=ECPHORY_LEGEND)
    check_words(state)
    names = {w["text"] for w in state["words"]}
    assert {"question", "initial", "round 1", "context"} <= names, names
    assert any(w.startswith("#1 ") for w in names), names  # the context passages are named
    watched.shot("ecphory-activation-q11-1440x900")
    box = next(n for n in state["nodes"] if n["id"].startswith("node|more:"))
    page.mouse.click(box["x"], box["y"])
    for _ in range(120):
        opened = route_state(page, legend=ECPHORY_LEGEND)
        if len(opened["nodes"]) > len(state["nodes"]):
            break
        page.wait_for_timeout(250)
    assert len(opened["nodes"]) > len(state["nodes"]), "the count box did not open"
    assert any(w["text"].startswith("− fold") for w in opened["words"])

    panel, shown = click_open_panel(page, opened, "University of Tollimere")
    # its fate and its activations (a table: its cells are drawn on a canvas), then the memory's facts
    assert "Recalled: final engram #1" in shown and "show where" in shown and "mention(s)" in shown, shown[:800]
    assert panel.get_by_test_id("stDataFrame").count() >= 1
    watched.shot("ecphory-activation-q11-panel")
    panel.get_by_role("button", name="show where").click()
    row = page.locator(".st-key-res_ecphory_focus_row")
    row.wait_for(timeout=90_000)
    assert "The passage 'show where' points at" in row.inner_text()
