"""The Memory page's explorer in a real browser: the whole memory on one map, a click on an entity
reaching Python (its panel), "expand neighbours" updating every count together, words of a
readable size, and the whole MuSiQue memory drawn (when bench/app_bench.py has built it)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from app_server import ROOT, running_app, settle, watched_page
from plotly_probe import LIT, outside, overlapping, wait_for_map
from test_browser import open_app

from memrag.index import store

pytestmark = pytest.mark.browser

MUSIQUE_MEMORY = ROOT / "data" / "musique-memory"  # built by bench/app_bench.py from ../shared/bench/musique
MIN_WORD_PX = 11


def lit_caption(page) -> tuple[int, int]:
    text = page.get_by_text(re.compile(r"Lit: .* entities, \d+ links")).inner_text()
    entities, links = re.search(r"(\d+) entities, (\d+) links", text).groups()
    return int(entities), int(links)


def legend_total(state: dict) -> int:
    """The counts the chart's legend entries give ("person (12)"), added up."""
    return sum(int(re.search(r"\(([\d,]+)\)$", t).group(1).replace(",", "")) for t in state["legend"])


def test_a_click_on_the_map_reaches_python_and_expanding_updates_every_count(watched, server, sample_memory):
    memory = store.load(sample_memory)
    names = [e.name for e in memory.entities]
    port = names.index("Port Alder")
    open_app(watched, server)
    page = watched.page
    state = wait_for_map(page, len(names), [port])
    hubs, hubs_legend = state["words"], state["legend"]
    assert legend_total(state) == len(names)
    assert 10 <= len(hubs) <= 30 and all(w["size"] >= MIN_WORD_PX for w in hubs), hubs
    assert overlapping(hubs) == [] and outside(hubs, state["plot"]) == []
    settle(page)
    page.mouse.click(*state["at"][str(port)])
    panel = page.locator(".st-key-mem_kg_panel")
    panel.get_by_role("heading", name="Port Alder").wait_for()  # written by Python for this click
    assert panel.get_by_text("relation(s)").count() and panel.locator("[data-testid=stDataFrame]").count()
    entities, links = lit_caption(page)
    state = wait_for_map(page, entities, title=LIT)  # the neighbourhood, drawn beside the panel
    assert legend_total(state) == entities and entities > 5 and links >= entities - 1
    words = [w for w in state["words"] if w["w"] > 0]
    assert words and all(w["size"] >= MIN_WORD_PX for w in words), [w for w in words if w["size"] < MIN_WORD_PX]
    assert "Port Alder" in {w["text"] for w in words} and overlapping(words) == []
    assert outside(words, state["plot"]) == []  # none clipped at the frame's edges
    settle(page)
    watched.shot("memory-explorer-sample-port-alder", top=page.get_by_role("tab", name="Knowledge graph"))
    page.get_by_role("button", name="expand neighbours").click()
    page.get_by_text(re.compile(r"and the neighbours of \d+ expanded")).wait_for()
    grown, grown_links = lit_caption(page)
    assert grown > entities and grown_links > links
    state = wait_for_map(page, grown, title=LIT)
    assert legend_total(state) == grown  # caption, legend and the drawing agree
    assert wait_for_map(page, len(names))["legend"] == hubs_legend  # the map itself stays as it was
    page.get_by_role("button", name="clear").click()
    page.get_by_text("Click an entity on the map, or find one by name").wait_for()


def test_search_finds_an_entity_and_lights_it(watched, server, sample_memory):
    open_app(watched, server)
    page = watched.page
    box = page.get_by_role("textbox", name="find an entity")
    box.fill("penhalow")  # a typo still finds the Penhallows
    box.press("Enter")
    panel = page.locator(".st-key-mem_kg_panel")
    panel.get_by_role("heading", name=re.compile("Penhallow")).wait_for()
    page.locator("[data-testid=stSelectbox]").filter(has_text="matches").click()
    options = set(page.get_by_role("option").all_inner_texts())
    assert {"Osric Penhallow", "Corwin Penhallow"} <= options, options
    page.get_by_role("option", name="Corwin Penhallow").click()
    panel.get_by_role("heading", name="Corwin Penhallow").wait_for()
    page.get_by_text(re.compile(r"Lit: Corwin Penhallow")).wait_for()


@pytest.fixture(scope="module")
def musique_home(tmp_path_factory) -> Path:
    if not store.is_memory_dir(MUSIQUE_MEMORY):
        pytest.skip(f"{MUSIQUE_MEMORY} is not built: `python bench/app_bench.py --parts explorer` builds it "
                    "from ../shared/bench/musique")
    home = tmp_path_factory.mktemp("musique_home")
    shutil.copytree(MUSIQUE_MEMORY, home / "memories" / "musique")
    return home


def test_the_whole_musique_memory_is_drawn_and_a_click_reaches_python(browser, musique_home):
    memory = store.load(musique_home / "memories" / "musique")
    names = [e.name for e in memory.entities]
    with running_app(musique_home) as url, watched_page(browser, lambda: False, "musique",
                                                         ROOT / "test-artifacts") as w:
        page = w.page
        page.set_viewport_size({"width": 1440, "height": 1100})
        open_app(w, url)
        page.get_by_text("Saved memory", exact=True).click()
        page.get_by_role("button", name="Open this memory").click()
        state = wait_for_map(page, len(names), timeout_s=300)
        assert len(names) > 15_000 and 10 <= len(state["words"]) <= 30 and overlapping(state["words"]) == []
        settle(page, timeout_s=300)
        w.shot("memory-musique-whole", top=page.get_by_role("tab", name="Knowledge graph"))
        hub = max(range(len(names)), key=lambda i: len(memory.triples_of.get(memory.entities[i].key, [])))
        state = wait_for_map(page, len(names), [hub])
        page.mouse.click(*state["at"][str(hub)])
        heading = page.locator(".st-key-mem_kg_panel").get_by_role("heading")
        heading.wait_for(timeout=120_000)
        assert heading.inner_text() in names  # the entity under the cursor (the hub or a close neighbour)
