"""A rendered graph page in real Chromium: hostile labels and tooltips stay text, nothing fires,
nothing is fetched (moved beside the app's browser tests so they share one Playwright)."""

from __future__ import annotations

from memrag.viz.graph_html import render
from test_viz import HOSTILE, small_graph


def test_hostile_graph_in_chromium_draws_text_fires_nothing_and_fetches_nothing(browser):
    nodes, edges = small_graph(HOSTILE)
    nodes[0].tooltip = HOSTILE[2] + " href"
    edges[0].label = HOSTILE[1]
    page_html = render(nodes, edges)
    dialogs, requests = [], []
    # One Playwright per process: this test shares the browser of tests/browser/conftest.py.
    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: requests.append(r.url))
        page.set_content(page_html, wait_until="load")
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
        assert tip.replace("\u200b", "") == HOSTILE[2] + " href"
        assert page.evaluate("document.querySelectorAll('div.vis-tooltip *').length") == 0
        page.wait_for_timeout(300)
    finally:
        context.close()
    assert dialogs == []
    assert [u for u in requests if not u.startswith(("about:", "data:"))] == []
