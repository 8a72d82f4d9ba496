"""The Learn page and the Ask page's compare mode in a real browser, on the sample memory's recordings.

Learn: the step slider replays a recorded demo trace and the graph inside the frame changes which
nodes it draws in full. Compare: one recorded demo question under NeuroPath with completion on and
off; the retrieval replays, B's answer (other passages) says it needs 'run live'.
Screenshots: docs/screenshots/learn.png and compare.png.
"""

from __future__ import annotations

import time

import pytest

from test_browser import open_app, settle, wait_for_graphs

pytestmark = pytest.mark.browser

# nodes drawn with a label (a step draws only what it knew: no ghosts of later steps, see explain/step_picture)
DRAWN_JS = "nodes.get().filter(n => n.label && n.label.trim()).map(n => n.id).sort()"


def drawn(page) -> list[str] | None:
    """Ids of the nodes the page's one graph draws in full, or None while no graph is there."""
    for frame in page.main_frame.child_frames:
        try:
            if frame.evaluate("typeof nodes !== 'undefined' && nodes.get ? nodes.length : 0"):
                return frame.evaluate(DRAWN_JS)
        except Exception:  # a frame being replaced while we look
            continue
    return None


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
    assert wait_for_graphs(page, 1), "no graph on the Learn page"
    settle(page)
    seeds = drawn(page)
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


# Every node's place on the screen (the frame's viewport px) and the frame's own size.
PLACES_JS = """() => {
  const out = {};
  for (const [id, p] of Object.entries(network.getPositions())) { const d = network.canvasToDOM(p); out[id] = [d.x, d.y]; }
  return {places: out, view: [window.innerWidth, window.innerHeight]};
}"""


def step_frame(page, step: int):
    """The Learn graph's frame of step `step` (1-based; its details panel says "at step N") once its
    labels are placed."""
    from test_browser_focus import frame_where

    return frame_where(page, "(d, n) => Object.values(d.details).some(x => x.heading === 'at step ' + n)", step,
                       f"Learn graph of step {step}")


def test_stepping_through_a_replay_moves_no_node(watched, server, sample_recordings):
    """Issue 29: at 1,440 × 900, NeuroPath's steps 1 → 2 → 3 on the demo question: every node two
    consecutive steps draw is at the same place on the screen (within a pixel), the frame keeps its
    size, and each step's written labels are 12 px or more, inside the graph and not overlapping."""
    from test_browser_focus import _shown_labels

    page = watched.page
    page.set_viewport_size({"width": 1440, "height": 900})
    open_app(watched, server, "Learn")
    page.get_by_text("Step 1 of").first.wait_for(timeout=300_000)
    settle(page)
    before = None
    for step in (1, 2, 3):
        if step > 1:
            move_slider(page, 1, f"Step {step} of")
            page.wait_for_timeout(800)
        frame = step_frame(page, step)
        now = frame.evaluate(PLACES_JS)
        written = _shown_labels(frame, fewest=1)
        print(f"step {step}: {len(now['places'])} nodes, {len(written)} labels written")
        if before is not None:
            shared = before["places"].keys() & now["places"].keys()
            assert shared and len(now["places"]) > len(shared), (step, len(shared))
            moved = {i: (before["places"][i], now["places"][i]) for i in shared
                     if max(abs(a - b) for a, b in zip(before["places"][i], now["places"][i])) > 1}
            assert not moved and now["view"] == before["view"], (step, moved, before["view"], now["view"])
        before = now
        watched.shot(f"learn-step-{step}", top=page.get_by_text("replay the trace step by step"))


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
