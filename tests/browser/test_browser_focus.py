"""Issue 29's graph acceptance, on the sample memory's recorded demo question at 1,440 × 900: the Ask
page's focus layout writes the focused picture's words at 11 px or more, inside the plot and none
overlapping (read from plotly's state); clicking a node opens the panel Python writes, with its
source passages. The Learn page's pyvis step picture is measured in its frame's DOM (MEASURE)."""

from __future__ import annotations

import html
import re

import pytest
from app_server import SHOTS
from test_browser import open_app, settle

pytestmark = pytest.mark.browser

# Every written label of a frame: its box, type size and whether its text fits its box, the graph's
# box, and the frame's viewport.
MEASURE = """() => {
  const box = document.getElementById('mynetwork').getBoundingClientRect();
  const extra = JSON.parse(document.getElementById('memrag-graph-extra').textContent);
  const labels = [...document.querySelectorAll('.memrag-label')].filter(e => !e.classList.contains('ghost'));
  return {
    expected: Object.keys(extra.texts).length - extra.ghost.length,
    hidden: document.getElementById('memrag-labels').dataset.hidden,
    graph: [box.left, box.top, box.right, box.bottom], view: [window.innerWidth, window.innerHeight],
    labels: labels.map(e => { const r = e.getBoundingClientRect();
      return {text: e.textContent, shown: getComputedStyle(e).display !== 'none',
              px: parseFloat(getComputedStyle(e).fontSize), box: [r.left, r.top, r.right, r.bottom],
              cut: e.scrollWidth > e.clientWidth + 0.5}; })};
}"""


def check_labels(m: dict, min_px: float, fewest: int = 11) -> None:
    gl, gt, gr, gb = m["graph"]
    assert gr <= m["view"][0] + 0.5 and gb <= m["view"][1] + 0.5, f"graph {m['graph']} past its frame {m['view']}"
    assert m["hidden"] == "0" and len(m["labels"]) == m["expected"] >= fewest, (m["hidden"], len(m["labels"]))
    boxes = []
    for lab in m["labels"]:
        l, t, r, b = lab["box"]
        assert lab["shown"] and lab["px"] >= min_px, lab
        assert not lab["cut"] and l >= gl and t >= gt and r <= gr and b <= gb, lab
        boxes.append((l, t, r, b, lab["text"]))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_focus_layout_writes_every_label_without_overlap_and_a_click_opens_the_panel(watched, server,
                                                                                      sample_recordings):
    """EcphoryRAG in focus (NeuroPath's route: tests/browser/test_browser_picture.py): its words ≥ 11 px,
    inside the plot and apart (read from plotly's state); a click on an engram opens the panel Python
    writes, with the passages it comes from; the presenter look enlarges the words, not the layout."""
    from test_browser_picture import ECPHORY_LEGEND, check_words, ecphory_pictures, route_state

    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Ask")
    page.get_by_text("Replays the replies recorded with").wait_for()
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("strong").filter(has_text=re.compile(r"^Answer:$")).nth(3).wait_for(timeout=120_000)
    settle(page)
    # the focus layout is the default view: no click needed
    heading = page.get_by_role("heading", name=re.compile(" in focus$"))
    heading.wait_for()
    page.get_by_role("button", name="Focus: EcphoryRAG").click()
    heading = page.get_by_role("heading", name="EcphoryRAG in focus")
    heading.wait_for()
    settle(page)
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    state = route_state(page, legend=ECPHORY_LEGEND)
    check_words(state)
    assert len(state["words"]) >= 11, len(state["words"])
    watched.shot("ask-focus-layout")

    # a click on an engram opens the panel Python writes: its name, its activation, its passages
    node = next(n for n in state["nodes"] if n["id"].startswith("node|e:"))
    name = html.unescape(node["text"]).split("\n")[0].rsplit(" (", 1)[0]
    page.mouse.click(node["x"], node["y"])
    panel = page.get_by_role("dialog")
    panel.wait_for(timeout=30_000)
    panel.get_by_role("heading", name=name).wait_for()
    panel.get_by_text("mention(s)").wait_for()  # the panel written to its end (the memory's facts last)
    shown = panel.inner_text()
    assert "final engram" in shown and "mention(s)" in shown and " · chunk " in shown, shown[:600]
    watched.shot("ask-focus-node-panel")
    page.keyboard.press("Escape")
    panel.wait_for(state="detached")

    # the presenter look: larger type, the same places
    before = {n["id"]: (round(n["x"]), round(n["y"])) for n in state["nodes"]}
    page.get_by_text("Presenter: larger type and nodes").click()
    settle(page)
    page.wait_for_timeout(1000)
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    bigger = route_state(page, legend=ECPHORY_LEGEND)
    assert max(w["size"] for w in bigger["words"]) > max(w["size"] for w in state["words"])
    assert {n["id"]: (round(n["x"]), round(n["y"])) for n in bigger["nodes"]} == before
    check_words(bigger)
    watched.shot("ask-focus-presenter", top=heading)

    # side by side, one click away; at 1,440 px no button or passage title cut short
    page.get_by_test_id("stButtonGroup").get_by_text("Side by side", exact=True).click()
    settle(page)
    heading.wait_for(state="detached")
    assert ecphory_pictures(page)
    answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
    answers.first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    watched.shot("ask-side-by-side-1440")
    cut = page.evaluate("""[...document.querySelectorAll('[data-testid=stButton] button *')]
        .filter(e => e.scrollWidth > e.clientWidth + 0.5).map(e => e.textContent)""")
    assert cut == [], cut


def _shown_labels(page, fewest: int = 11) -> list[dict]:
    """The written labels of a graph page that found a place (checked like the focus graph's)."""
    m = page.evaluate(MEASURE)
    shown = [lab for lab in m["labels"] if lab["shown"]]
    check_labels({**m, "labels": shown, "expected": len(shown), "hidden": "0"}, 12, fewest)
    return shown


def test_learn_pagerank_step_places_labels_inside_the_frame(browser, sample_recordings):
    """HippoRAG 2's PageRank step at the Learn page's width (its labels ran past the frame's edge:
    "ellan Marine Station")."""
    from memrag import demo
    from memrag.ask import ask
    from memrag.embed import get_embedder
    from memrag.index import store
    from memrag.llm.recordings import FILE_NAME, Recordings
    from memrag.viz import trace_graphs

    memory = store.load(sample_recordings)
    q = demo.sample_questions()[0]
    [trace] = ask(memory, q["question"], llm=Recordings.load(sample_recordings / FILE_NAME).replay_llm(),
                  embedder=get_embedder(), methods=["hipporag2"])
    step = next(i for i, s in enumerate(trace.steps) if "PageRank" in s.title)
    pages = {"learn-hipporag2-pagerank-labels": (trace_graphs.step_graph(trace, step, height=560)[0], 780, 640)}
    context = browser.new_context()
    try:
        for name, (html, width, height) in pages.items():
            page = context.new_page()
            page.set_viewport_size({"width": width, "height": height})
            page.set_content(html, wait_until="load")
            page.wait_for_function("document.body.dataset.memragReady === '1'")
            shown = _shown_labels(page)
            assert len(shown) >= 15, (name, len(shown))
            page.screenshot(path=str(SHOTS / f"{name}.png"))
            page.close()
    finally:
        context.close()
