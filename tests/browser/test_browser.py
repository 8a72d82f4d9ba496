"""The app in a real browser: graphs draw nodes, recorded demo answers, hostile uploads stay text,
builds survive a page switch, and no request leaves this machine (checked for every test by the
`watched` fixture, together with dialogs and console errors).

Real-model use is kept small: tests 3 and 4 each build a one-sentence upload (one extraction
call each); test 2 replays the sample memory's recordings.
"""

from __future__ import annotations

import re
import time

import pytest
from app_server import settle  # noqa: F401  (the other browser tests import it from here)
from plotly_probe import clear_point, overlapping, wait_for_map, wait_for_picture

pytestmark = pytest.mark.browser

HOSTILE_LINES = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "![x](http://example.invalid/leak)"]
BUILD_TIMEOUT_MS = 900_000  # one extraction: ~20-60 s on 2 idle cores, minutes when other work shares them


# Every typed picture on the page (memrag.viz.figure: a plotly chart whose points' customdata is
# "node|<id>"): its node ids and every word it gives the reader (written names, hover texts, legend).
PICTURES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  if (!gd._fullData || !gd.data) return null;
  const ids = [], words = [];
  for (const t of gd.data) {
    const cd = Array.isArray(t.customdata) ? t.customdata : [];
    cd.forEach((c, i) => { if (typeof c === 'string' && c.startsWith('node|')) ids.push(c.slice(5)); });
    if (cd.some(c => typeof c === 'string' && /^(node|edge)\|/.test(c)))
      // hover text as plotly shows it: the renderer escapes <, > and & (memrag.viz.figure.plot_text)
      for (const h of (Array.isArray(t.hovertext) ? t.hovertext : []))
        words.push(String(h).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'));
  }
  if (!ids.length) return null;
  for (const a of gd.querySelectorAll('.annotation-text, .legendtext')) words.push(a.textContent);
  return {ids, words};
}).filter(Boolean)"""


def pictures(page) -> list[dict]:
    """The typed pictures drawn on the page, each {ids, words} (none while one is being replaced)."""
    try:
        return page.evaluate(PICTURES)
    except Exception:  # a chart being replaced while we look
        return []


def graph_sizes(page) -> list[int]:
    """How many nodes each typed picture on the page draws."""
    return [len(p["ids"]) for p in pictures(page)]


def wait_for_graphs(page, count: int, timeout_s: float = 60) -> list[int]:
    deadline = time.time() + timeout_s
    while True:
        sizes = [n for n in graph_sizes(page) if n > 0]
        if len(sizes) >= count or time.time() > deadline:
            return sizes
        page.wait_for_timeout(500)


START_HEADING = "memrag: retrieval modelled on memory"  # the start page, the app's root


def open_app(w, server: str, page_name: str = "Memory") -> None:
    """Open the app at its root, the start page (a deep link makes Streamlit probe
    `/<page>/_stcore/...` first, which logs 404s in the console), and click through to the page."""
    w.page.goto(server + "/")
    w.page.get_by_role("heading", name=START_HEADING, level=1).wait_for()
    if page_name:
        w.page.get_by_role("link", name=page_name, exact=True).click()
        w.page.get_by_role("heading", name=page_name, level=1).wait_for()


def upload_and_build(w, name: str, text: str) -> None:
    page = w.page
    page.get_by_text("Upload files", exact=True).click()
    page.locator("input[type=file]").wait_for(state="attached")
    settle(page)  # a file set while the page reruns would land in an uploader about to be replaced
    page.locator("input[type=file]").set_input_files(
        files=[{"name": f"{name}.txt", "mimeType": "text/plain", "buffer": text.encode()}])
    box = page.get_by_role("textbox", name="memory name")
    box.fill(name)
    box.press("Enter")
    page.get_by_text("1 document(s), 1 chunk(s)").wait_for()
    settle(page)  # a click during a rerun can be lost
    page.get_by_role("button", name="Build memory").click()
    page.locator("[data-testid=stProgress]").first.wait_for(timeout=60_000)  # the build started


def wait_finished(page) -> None:
    """Wait for the build's end; a failed or cancelled build fails the test with the page's words."""
    ended = page.get_by_text("finished in").or_(page.get_by_text("The build failed")).or_(
        page.get_by_text("The build was cancelled"))
    ended.first.wait_for(timeout=BUILD_TIMEOUT_MS)
    if not page.get_by_text("finished in").count():
        pytest.fail("the build did not finish: " + page.locator("[data-testid=stAlert]").first.inner_text())


def test_sample_memory_draws_the_knowledge_graph(watched, server, sample_memory):
    open_app(watched, server)
    assert wait_for_map(watched.page)["drawn"] >= 200  # the whole memory: test_browser_explorer.py tests it further
    settle(watched.page)
    watched.shot("memory-sample-knowledge-graph")
    watched.page.get_by_role("tab", name="Coreference candidates").click()
    watched.page.get_by_text("candidate links among").wait_for()
    coref = wait_for_picture(watched.page, "coreference candidates")
    assert len(coref["nodes"]) >= 10 and all(n["id"].startswith("node|e:") for n in coref["nodes"])
    assert all(w["size"] >= 11 for w in coref["words"]) and not overlapping(coref["words"])
    # a click on an entity reaches Python, which writes its facts beneath the picture
    settle(watched.page)
    node = clear_point(wait_for_picture(watched.page, "coreference candidates"))  # places after the page settled
    watched.page.mouse.move(node["x"], node["y"])  # WebGL points are picked on hover first
    watched.page.wait_for_timeout(300)
    watched.page.mouse.click(node["x"], node["y"])
    panel = watched.page.locator(".st-key-mem_coref_panel")
    panel.wait_for(timeout=30_000)
    name = panel.get_by_role("heading").first.inner_text()
    assert name and name in node["text"], (name, node["text"])  # the clicked entity, its name as text
    watched.page.mouse.move(5, 5)  # its hover label off the picture
    settle(watched.page)
    watched.shot("memory-sample-coreference", top=watched.page.get_by_role("tab", name="Coreference candidates"))


def test_recorded_demo_question_with_all_methods(watched, server, sample_recordings):
    open_app(watched, server, "Ask")
    page = watched.page
    page.get_by_text("Replays the replies recorded with").wait_for()
    page.get_by_role("button", name="Ask", exact=True).click()
    answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
    answers.nth(3).wait_for(timeout=120_000)
    settle(page)
    assert answers.count() == 4, f"{answers.count()} answers"
    page.get_by_text("recorded with", exact=False).first.wait_for()
    # NeuroPath's route in focus (as is its hop 1 route in the details), EcphoryRAG's activation,
    # HippoRAG 2's PageRank and Dense's ranking beside it: typed pictures, plotly charts on the page
    from test_browser_picture import route_state
    assert route_state(page)["nodes"], "no NeuroPath route"
    sizes = wait_for_graphs(page, 4)
    assert len(sizes) >= 4 and all(n > 0 for n in sizes), sizes
    assert any(any(i.startswith("cue:") for i in p["ids"]) for p in pictures(page)), "no EcphoryRAG picture"
    assert not page.locator("iframe[srcdoc*='vis.DataSet']").count()  # no pyvis frame is left
    tables = page.locator("[data-testid=stDataFrame]").count()
    assert tables >= 2, f"{tables} tables"  # comparison, token totals
    page.get_by_role("tab", name="As a chart").click()  # the cost chart is drawn when its tab opens
    page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for()
    page.wait_for_timeout(1500)
    watched.shot("ask-recorded-demo-all-methods")
    # NeuroPath's detail tabs: tokens by stage, the LLM-call inspector, the gold passages' fates
    for tab, expect, shot in (("Tokens", "Tokens by stage: neuropath", "ask-neuropath-tokens"),
                              ("LLM calls", "raw reply", "ask-llm-call-inspector"),
                              ("Gold", "Where each gold passage was found or lost", "ask-neuropath-gold-fate")):
        page.get_by_role("tab", name=tab, exact=True).click()
        page.get_by_text(expect).first.wait_for()
        settle(page)
        watched.shot(shot, top=page.get_by_text("details of"))


def test_hostile_upload_stays_text(watched, server):
    open_app(watched, server)
    text = "Ada Brennick kept notes. " + " ".join(HOSTILE_LINES)
    upload_and_build(watched, "hostile", text)
    wait_finished(watched.page)
    page = watched.page
    wait_for_map(page)  # the knowledge graph of the new memory
    page.wait_for_timeout(1000)
    watched.shot("memory-hostile-upload-graph")
    page.get_by_role("tab", name="Documents and chunks").click()
    for line in HOSTILE_LINES:
        # shown literally in the chunk's text element (the table's hidden grid cells hold it too)
        page.get_by_test_id("stText").filter(has_text=line).first.wait_for()
    assert page.locator("img[src*='example.invalid'], img[src='x']").count() == 0
    watched.shot("memory-hostile-upload-chunks")
    assert not [u for u in watched.requests if "example.invalid" in u]


def test_build_survives_a_page_switch(watched, server):
    open_app(watched, server)
    page = watched.page
    upload_and_build(watched, "tide", "The Harbour Board of Port Alder met in 1890 at the Tide House.")
    watched.shot("memory-build-in-progress")
    page.get_by_role("link", name="Ask").click()
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_role("link", name="Memory").click()
    page.get_by_role("heading", name="Memory", level=1).wait_for()
    # still running after coming back (a page run can take a while while the model works)
    page.locator("[data-testid=stProgress]").first.wait_for(timeout=120_000)
    assert page.get_by_text("finished in").count() == 0
    wait_finished(page)
    wait_for_map(page)
    watched.shot("memory-build-finished")
