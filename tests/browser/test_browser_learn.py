"""The Learn page and the Ask page's compare mode in a real browser, on the sample memory's recordings.

Learn: the step slider replays a recorded demo trace and its picture (a plotly chart) changes which
nodes it draws; no node moves between steps; NeuroPath's Completion step draws what completion
added; a click on a node opens the panel Python writes. Compare: one recorded demo question under
NeuroPath with completion on and off; the retrieval replays, B's answer (other passages) says it
needs 'run live'.
Screenshots: docs/screenshots/learn.png, learn-step-N.png, learn-neuropath-completion-q01.png and compare.png.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from test_browser import open_app, settle, wait_for_graphs

pytestmark = pytest.mark.browser

# The Learn page's one picture (a plotly chart, memrag.viz.figure): each drawn node's place on the screen,
# opacity and hover text; the written words; the legend; the chart's box.
CHART = ("[...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]"
         ".find(g => g._fullData && g._fullData.some(t => t.name === 'nodes'))")
LEARN_STATE = "() => {\n  const gd = " + CHART + """;
  if (!gd || !gd._fullLayout._plots || !gd._fullLayout._plots.xy) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const nodes = {};
  for (const tr of gd._fullData) {
    if (tr.name !== 'nodes') continue;
    const op = tr.marker.opacity;
    for (let i = 0; i < tr.customdata.length; i++)
      nodes[tr.customdata[i].slice(5)] = {x: box.left + xa._offset + xa.l2p(tr.x[i]),
        y: box.top + ya._offset + ya.l2p(tr.y[i]), opacity: Array.isArray(op) ? op[i] : op, text: tr.hovertext[i]};
  }
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => t.textContent);
  const legend = [...gd.querySelectorAll('.legendtext')].map(t => t.textContent);
  return {nodes, words, legend, box: [box.left, box.top, box.width, box.height]};
}"""


def state(page) -> dict | None:
    try:
        return page.evaluate(LEARN_STATE)
    except Exception:  # the chart is being replaced while we look
        return None


def drawn(page) -> list[str] | None:
    """Ids of the nodes the page's one picture draws, or None while no picture is there."""
    now = state(page)
    return sorted(now["nodes"]) if now and now["nodes"] else None


def move_slider(page, steps: int, expect: str) -> None:
    page.get_by_role("slider", name="replay the trace step by step").focus()
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    page.get_by_text(expect).first.wait_for()
    settle(page)


def wait_changed(page, before: list[str], timeout_s: float = 60) -> list[str]:
    deadline = time.time() + timeout_s
    while True:
        now = drawn(page)
        if (now and now != before) or time.time() > deadline:
            return now or []
        page.wait_for_timeout(300)


def test_learn_slider_changes_the_highlighted_nodes(watched, server, sample_recordings):
    open_app(watched, server, "Learn")
    page = watched.page
    page.get_by_text("Step 1 of").first.wait_for(timeout=300_000)  # replays the demo (loads the embedder)
    settle(page)
    seeds = wait_changed(page, [])
    assert seeds, "the seeds step draws no node"
    move_slider(page, 1, "Step 2 of")
    hop1 = wait_changed(page, seeds)
    assert set(seeds) < set(hop1), (seeds, hop1)  # hop 1 adds the places its paths reach
    page.get_by_text("preplay ↔ path tracking").first.wait_for()

    # EcphoryRAG: cues, then the initial activation and the first associative round
    page.get_by_text("EcphoryRAG · ecphory", exact=True).click()
    page.get_by_text("cue ↔ query cue").first.wait_for()
    settle(page)
    cues = wait_changed(page, hop1)
    move_slider(page, 2, "Step 3 of")
    round1 = wait_changed(page, cues)
    assert set(cues) < set(round1) and len(round1) > len(cues) + 5, (len(cues), len(round1))
    page.wait_for_timeout(1000)
    watched.shot("learn", top=page.get_by_role("heading", name="Learn", level=1))


def test_stepping_through_a_replay_moves_no_node(watched, server, sample_recordings):
    """Issue 29: at 1,440 × 900, NeuroPath's steps 1 → 2 → 3 on the demo question: every node two
    consecutive steps draw is at the same place on the screen (within a pixel), and the chart keeps its box."""
    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Learn")
    page.get_by_text("Step 1 of").first.wait_for(timeout=300_000)
    settle(page)
    before = None
    wait_changed(page, [])  # the first step's picture is drawn
    for step in (1, 2, 3):
        if step > 1:
            move_slider(page, 1, f"Step {step} of")
            wait_changed(page, sorted(before["nodes"]))
            page.wait_for_timeout(800)
        now = state(page)
        print(f"step {step}: {len(now['nodes'])} nodes, {len(now['words'])} words written")
        if before is not None:
            shared = before["nodes"].keys() & now["nodes"].keys()
            assert shared and len(now["nodes"]) > len(shared), (step, len(shared))
            # places within the chart (the page may have scrolled between the two looks)
            moved = {i: (before["nodes"][i], now["nodes"][i]) for i in shared
                     if max(abs((before["nodes"][i][k] - before["box"][j]) - (now["nodes"][i][k] - now["box"][j]))
                            for j, k in ((0, "x"), (1, "y"))) > 1}
            assert not moved and now["box"][2:] == before["box"][2:], (step, moved, before["box"], now["box"])
        before = now
        watched.shot(f"learn-step-{step}", top=page.get_by_text("replay the trace step by step"))


def test_learn_neuropath_completion_draws_what_completion_added(watched, server, sample_recordings):
    """Issue 34: NeuroPath's Completion step on q01 draws the answer's passages (new at this step, each
    saying why: a kept path or the completion search's rank) and fades the paths' other entities; the
    gold answer (Tresswick) is marked; the wheel over the graph scrolls the page and leaves the graph be."""
    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Learn")
    page.get_by_text("Step 1 of").first.wait_for(timeout=300_000)
    assert "q=q01" in page.url, page.url  # the demo question the Learn page starts with
    settle(page)
    wait_changed(page, [])
    hop2: dict = {}
    for step in (2, 3, 4):
        before = drawn(page)
        move_slider(page, 1, f"Step {step} of")
        wait_changed(page, before)
        page.wait_for_timeout(500)
        if step == 3:
            hop2 = state(page)
    page.get_by_text("replay ↔ post-retrieval completion").first.wait_for()
    page.wait_for_timeout(800)
    now = state(page)
    passages = {i: n for i, n in now["nodes"].items() if i.startswith("c:")}
    assert passages and not (passages.keys() & hop2["nodes"].keys()), (sorted(passages), sorted(hop2["nodes"]))
    assert all(n["opacity"] == 1 for n in passages.values())
    assert all("rank" in n["text"] or "path" in n["text"] for n in passages.values()), passages
    assert sum(1 for w in now["words"] if w.startswith("#")) >= 2, now["words"]  # "#2 Port Alder": rank, title
    assert "completion search" in now["nodes"]["q:completion"]["text"]
    assert any(n["opacity"] < 1 for n in now["nodes"].values())  # the paths' other entities fade
    assert any("passage found by the completion search" in x for x in now["legend"]), now["legend"]
    assert any("Tresswick" in n["text"] and "gold answer" in n["text"] for n in now["nodes"].values())
    assert not any("no drawn path" in x for x in now["legend"]), now["legend"]
    page.get_by_text("replay the trace step by step").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    watched.shot("learn-neuropath-completion-q01")

    # the wheel over the graph scrolls the page
    scroller = "document.querySelector('[data-testid=stMain]')"
    top = page.evaluate(f"{scroller}.scrollTop")
    box = state(page)["box"]
    page.mouse.move(box[0] + box[2] / 2, box[1] + min(box[3] / 2, 300))
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(800)
    assert page.evaluate(f"{scroller}.scrollTop") > top, "the wheel over the graph did not scroll the page"
    assert state(page)["box"][2:] == box[2:]  # and the graph kept its size (no zoom)


def test_learn_click_reaches_python(watched, server, sample_recordings):
    """A click on a node of the step's picture opens the panel Python writes for it (its name, what the
    step says of it, its relations in the memory); the step stays."""
    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Learn")
    page.get_by_text("Step 1 of").first.wait_for(timeout=300_000)
    settle(page)
    seeds = wait_changed(page, [])
    move_slider(page, 1, "Step 2 of")
    wait_changed(page, seeds)
    # at 900 px the chart starts low on the page: bring all of it into view, or the node may sit below the fold
    page.evaluate(f"() => ({CHART}).scrollIntoView({{block: 'center'}})")
    page.wait_for_timeout(800)
    now = state(page)
    width, height = page.evaluate("[innerWidth, innerHeight]")
    lit = [(i, n) for i, n in now["nodes"].items()
           if i.startswith("e:") and n["opacity"] == 1 and 0 < n["x"] < width and 0 < n["y"] < height]
    assert lit, ("no lit entity in view", now["box"], height)
    # the entity farthest from every other point: a click there lands on it
    ident, node = max(lit, key=lambda p: min(((q["x"] - p[1]["x"]) ** 2 + (q["y"] - p[1]["y"]) ** 2
                                              for j, q in now["nodes"].items() if j != p[0]), default=1e9))
    panel = page.get_by_role("dialog")
    for attempt in (1, 2):  # a click that lands while Streamlit redraws the chart is lost: click once more
        page.mouse.click(node["x"], node["y"])
        try:
            panel.wait_for(timeout=30_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    panel.get_by_text("relation(s)").first.wait_for()
    shown = panel.inner_text()
    assert node["text"].split("\n")[0] in shown and "mention(s)" in shown, (node, shown[:600])
    assert page.get_by_text("Step 2 of").count() >= 1


def test_compare_mode_on_a_recorded_demo_question(watched, server, sample_recordings):
    open_app(watched, server, "Ask")
    page = watched.page
    page.get_by_text("Compare parameter sets", exact=True).click()
    page.get_by_text("A → B: completion").first.wait_for()
    settle(page)
    page.get_by_role("button", name="Compare", exact=True).click()
    page.get_by_text("What changed").first.wait_for(timeout=300_000)  # loads the embedder first
    settle(page)
    # A and B side by side, then A's detail at hop 1: NeuroPath's routes, plotly charts
    routes = page.locator(".js-plotly-plot").filter(has=page.locator(".legendtext", has_text="seed · "))
    routes.nth(2).wait_for(timeout=60_000)
    assert page.get_by_role("heading", name="A · completion on").count() == 1
    assert page.get_by_role("heading", name="B · completion off").count() == 1
    page.get_by_text("answer not recorded for these settings").first.wait_for()  # B's answer: not recorded; its retrieval replayed
    assert page.locator("[data-testid=stDataFrame]").count() >= 1
    page.wait_for_timeout(1500)
    watched.shot("compare", top=page.get_by_text("mode", exact=True))
