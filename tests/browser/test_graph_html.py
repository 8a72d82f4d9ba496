"""A rendered graph page in real Chromium: hostile labels and tooltips stay text, nothing fires,
nothing is fetched (moved beside the app's browser tests so they share one Playwright)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from memrag.trace import GraphEdge, GraphNode
from memrag.viz.graph_html import render
from test_viz import HOSTILE, small_graph


@contextlib.contextmanager
def graph_page(browser, page_html: str, viewport: dict | None = None) -> Iterator:
    """The graph page in its own context; when the block ends, no dialog opened and nothing was fetched."""
    dialogs, requests = [], []
    # One Playwright per process: this test shares the browser of tests/browser/conftest.py.
    context = browser.new_context(**({"viewport": viewport} if viewport else {}))
    try:
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.set_content(page_html, wait_until="load")
        yield page
        page.wait_for_timeout(300)
    finally:
        context.close()
    assert dialogs == []
    assert [u for u in requests if not u.startswith(("about:", "data:"))] == []


def test_hostile_graph_in_chromium_draws_text_fires_nothing_and_fetches_nothing(browser):
    nodes, edges = small_graph(HOSTILE)
    nodes[0].tooltip = HOSTILE[2] + " href"
    edges[0].label = HOSTILE[1]
    page_html = render(nodes, edges)
    with graph_page(browser, page_html) as page:
        page.wait_for_function("typeof network !== 'undefined' && nodes.length === 3")
        assert page.evaluate("nodes.get('n1').label") == HOSTILE[1]
        assert page.evaluate("document.querySelectorAll('img, iframe, script[src], link[href]').length") == 0
        # hover the first node: vis-network shows the tooltip as text
        x, y = page.evaluate("(() => { const p = network.getPositions(['n0'])['n0']; "
                             "const d = network.canvasToDOM(p); "
                             "const r = document.querySelector('#mynetwork canvas').getBoundingClientRect(); "
                             "return [r.left + d.x, r.top + d.y]; })()")
        page.mouse.move(x + 40, y + 40)
        page.mouse.move(x, y)
        page.wait_for_selector("div.vis-tooltip", state="visible", timeout=5000)
        tip = page.evaluate("document.querySelector('div.vis-tooltip').innerText")
        assert tip.replace("\u200b", "") == HOSTILE[0] + "\n" + HOSTILE[2] + " href"  # the name first
        # innerText writes a line break as <br>, the only element it makes
        assert page.evaluate("document.querySelectorAll('div.vis-tooltip *:not(br)').length") == 0


def test_hostile_text_in_the_labels_and_details_panel_stays_text(browser):
    """The label layer and the details panel (assets/graph_overlay.js) set every name, relation and
    passage as text: hostile ones show literally, make no element, fire nothing, fetch nothing."""
    nodes, edges = small_graph(HOSTILE)
    for n in nodes:
        n.chunk_ids = [7]
    passage = "<img src=//example.invalid/p.png onerror=alert(4)> said <script>alert(5)</script>"
    neighbour = GraphNode("n9", "<b onmouseover=alert(6)>Nine</b>", "entity", group="person", chunk_ids=[7])
    nodes.append(neighbour)
    edges.append(GraphEdge("e9", "n0", "n9", "triple", "<i>knows</i>"))
    page_html = render(nodes, edges, passages={7: ("<h1>Title</h1>", passage)})
    with graph_page(browser, page_html, {"width": 900, "height": 700}) as page:
        page.wait_for_function("document.body.dataset.memragReady === '1'")
        written = page.evaluate("[...document.querySelectorAll('.memrag-label')].map(e => e.textContent)")
        assert sorted(written) == sorted([*HOSTILE, neighbour.label])
        page.locator(".memrag-label[data-node='n0']").click()
        panel = page.locator("#memrag-panel")
        panel.wait_for(state="visible")
        shown = panel.inner_text()
        assert HOSTILE[0] in shown and passage in shown and "<h1>Title</h1>" in shown, shown
        assert "<i>knows</i>" in page.evaluate("edges.get('e9').label")
        panel.locator(".memrag-close").click()  # the open panel may cover the next label
        page.locator(".memrag-label[data-node='n9']").click()
        page.wait_for_function("document.getElementById('memrag-panel').dataset.node === 'n9'")
        assert neighbour.label in panel.inner_text()
        # its relation, read from the edge drawn at it: "<name> → <i>knows</i> → <b …>Nine</b>"
        assert f"{HOSTILE[0]} → <i>knows</i> → {neighbour.label}" in panel.inner_text()
        # nothing in the layer or the panel became an element of the hostile text
        assert page.evaluate("document.querySelectorAll('img, iframe, script[src], link[href], h1, b, i').length") == 0
