"""Issue 29's graph acceptance, on the sample memory's recorded demo question at 1,440 × 900: the Ask
page's focus layout writes every node label of the focused graph inside its frame, at 12 px or
more, no two label boxes overlapping and none cut; clicking a node opens its details panel with its
source passage. Measured in the frame's DOM (the labels are text elements over the canvas)."""

from __future__ import annotations

import re

import pytest
from app_server import SHOTS
from test_browser import open_app, settle, wait_for_graphs

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


def frame_where(page, test_js: str, arg, what: str, timeout_ms: int = 60_000):
    """The first graph frame whose labels are placed and for which `test_js` (a function of `arg`
    given the page's layer data, run in the frame) is true."""
    check = ("arg => { const x = document.getElementById('memrag-graph-extra'); "
             "if (!x || document.body.dataset.memragReady !== '1') return false; "
             f"return ({test_js})(JSON.parse(x.textContent), arg); }}")
    for _ in range(timeout_ms // 500):
        for frame in page.main_frame.child_frames:
            try:
                if frame.evaluate(check, arg):
                    return frame
            except Exception:  # a frame being replaced while we look
                continue
        page.wait_for_timeout(500)
    raise AssertionError(f"no {what} was drawn")


def focus_frame(page, px: int, timeout_ms: int = 60_000):
    """The frame drawing the focused graph (its look writes every label, `px` high), once its labels are placed."""
    return frame_where(page, "(d, px) => d.labelAll && d.px === px", px, "focused graph", timeout_ms)


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
    # NeuroPath's route is a plotly chart (tests/browser/test_browser_picture.py): measure EcphoryRAG's frame here
    page.get_by_role("button", name="Focus: EcphoryRAG").click()
    heading = page.get_by_role("heading", name="EcphoryRAG in focus")
    heading.wait_for()
    settle(page)
    assert len(wait_for_graphs(page, 1)) >= 1  # the focused graph (the small multiples are plotly charts)
    frame = focus_frame(page, 13)
    heading.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    check_labels(frame.evaluate(MEASURE), 12)
    watched.shot("ask-focus-layout")

    # a click on a node (here: its label) opens its panel, with the passage it comes from as text
    extra = frame.evaluate("JSON.parse(document.getElementById('memrag-graph-extra').textContent)")
    node = next(n for n in extra["order"] if extra["details"][n]["passages"] and n in extra["texts"])
    passage = extra["passages"][extra["details"][node]["passages"][0]]
    frame.locator(f".memrag-label[data-node='{node}']").click()
    panel = frame.locator("#memrag-panel")
    panel.wait_for(state="visible")
    shown = panel.inner_text()
    assert extra["details"][node]["name"] in shown and passage[1][:60] in shown, shown[:600]
    watched.shot("ask-focus-node-panel")

    # the presenter look: larger type, every label still placed
    page.get_by_text("Presenter: larger type and nodes").click()
    settle(page)
    page.wait_for_timeout(1000)
    frame = focus_frame(page, 18)
    check_labels(frame.evaluate(MEASURE), 16)
    watched.shot("ask-focus-presenter", top=heading)

    # side by side, one click away; at 1,440 px no button or passage title cut short
    page.get_by_test_id("stButtonGroup").get_by_text("Side by side", exact=True).click()
    settle(page)
    heading.wait_for(state="detached")
    assert len(wait_for_graphs(page, 1)) >= 1  # EcphoryRAG's (the others are plotly charts)
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
