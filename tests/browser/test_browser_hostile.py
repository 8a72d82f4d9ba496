"""Issue 15 acceptance: a memory whose entity names hold `src=//…`, `<script>` and `onerror=` draws
them as text on the Memory page (knowledge graph) and the Ask page (NeuroPath, EcphoryRAG and dense
graphs), with no exception, no dialog and no request leaving the machine.

The memory is built here with a scripted LLM and the app's own embedder, and ships recorded replies
for its one question, so the Ask page replays them: no LLM is loaded or asked.
"""

from __future__ import annotations

import pytest
from app_server import ROOT, AppServerError, running_app, watched_page
from plotly_probe import LIT, outside, wait_for_map
from test_browser import pictures, settle, wait_for_graphs

pytestmark = pytest.mark.browser

NAMES = ["src=//cdn.example.org/x.js", "<script>alert(1)</script>", "onerror=alert(1)"]
QUESTION = "Which page loads <script src=//cdn.example.org/x.js>?"
TEXT = ("Ada Brennick wrote src=//cdn.example.org/x.js into the page. The page also held "
        "<script>alert(1)</script> and an image with onerror=alert(1).")
MEMORY = "hostile-names"


def _scripted():
    from scripted import ScriptedLLM

    entities = [{"name": "Ada Brennick", "type": "person", "description": "img src=//cdn.example.org/a.png",
                 "importance": 3}]
    entities += [{"name": n, "type": "work", "description": f"href=//example.org/{i} {n}", "importance": 2}
                 for i, n in enumerate(NAMES)]
    triples = [["Ada Brennick", "wrote", NAMES[0]], [NAMES[0], "loads", NAMES[1]], [NAMES[1], "fires", NAMES[2]]]
    track = {"reasoning_chain": "Ada Brennick wrote it.", "valid_ids": [1], "expansion_requirement": "",
             "expand_ids": [], "continue": 0}
    return ScriptedLLM({
        "index.extract": lambda m, s: {"entities": entities, "triples": triples},
        "query.entities": lambda m, s: {"entities": [NAMES[0], "Ada Brennick"]},
        "neuropath.track": lambda m, s: track,
        "hipporag2.recognition": lambda m, s: {"keep": [1]},
        "answer": lambda m, s: {"reasoning": "from the passage", "answer": NAMES[1], "cited": [1]},
    })


def build_hostile_memory(home) -> None:
    """The memory, saved under `home`, and recordings of every call its question makes."""
    from memrag.ask import ask
    from memrag.index.build import build_memory, run_build
    from memrag.config import IndexParams
    from memrag.embed import get_embedder
    from memrag.index.readers import Document
    from memrag.llm.recordings import RecordingLLM

    path = home / "memories" / MEMORY
    doc = Document("page", "The page with src=//cdn.example.org/x.js", TEXT, "test", "file")
    memory = run_build(build_memory(path, [doc], _scripted(), get_embedder(), IndexParams(), name=MEMORY))
    recorder = RecordingLLM(_scripted())
    recorder.question = QUESTION
    ask(memory, QUESTION, llm=recorder, embedder=get_embedder())
    recorder.write(path, [QUESTION])


@pytest.fixture(scope="module")
def hostile_server(chromium, tmp_path_factory):
    home = tmp_path_factory.mktemp("hostile_home")
    build_hostile_memory(home)
    try:
        with running_app(home, env={"OLLAMA_HOST": "http://127.0.0.1:9"}) as url:  # nothing listens there
            yield url, home
    except AppServerError as e:
        pytest.fail(str(e))


def assert_drawn_as_text(page, wanted: list[str], pictures_at_least: int) -> None:
    """The typed pictures (plotly) give the reader every one of `wanted` as literal text (hover,
    written names, legend), and no element of the page came from them."""
    assert page.locator("[data-testid=stException]").count() == 0, page.locator(
        "[data-testid=stException]").first.inner_text()
    assert len(wait_for_graphs(page, pictures_at_least)) >= pictures_at_least
    drawn = pictures(page)
    assert len(drawn) >= pictures_at_least, drawn
    shown = "\n".join(w for p in drawn for w in p["words"])
    for name in wanted:
        assert name in shown, (name, shown[:2000])  # the literal text, never &lt;-escaped
    made = page.evaluate("[...document.querySelectorAll('img, iframe[src], script[src], link[href]')]"
                         ".map(e => e.getAttribute('src') || e.getAttribute('href') || '')"
                         ".filter(u => u.includes('example.org'))")
    assert made == [], made


def assert_map_is_text(page, home) -> None:
    """The Memory page's map (plotly) holds every entity; a click on the hostile-named one reaches
    Python, whose panel and neighbourhood chart write the names literally, none of them an element."""
    from memrag.index import store

    names = [e.name for e in store.load(home / "memories" / MEMORY).entities]
    target = names.index(NAMES[1])
    state = wait_for_map(page, len(names), [target])
    page.mouse.click(*state["at"][str(target)])
    panel = page.locator(".st-key-mem_kg_panel")
    panel.get_by_role("heading", name=NAMES[1]).wait_for()  # the name as a heading's text
    lit = wait_for_map(page, title=LIT)
    assert NAMES[1] in {w["text"] for w in lit["words"]}, lit["words"]  # written literally on the chart
    assert outside(lit["words"], lit["plot"]) == []  # long names at the frame's edges are not clipped
    box = page.get_by_role("textbox", name="find an entity")
    for name in (NAMES[0], NAMES[2]):  # the others, found by name: each panel's heading is the literal name
        box.fill(name)
        box.press("Enter")
        panel.get_by_role("heading", name=name).wait_for()
    assert page.locator("[data-testid=stException]").count() == 0
    made = page.evaluate("[...document.querySelectorAll('img, iframe, script[src], link[href]')]"
                         ".map(e => e.getAttribute('src') || e.getAttribute('href') || '')"
                         ".filter(u => u.includes('example.org'))")
    assert made == [], made


def test_hostile_entity_names_draw_as_text_on_the_memory_and_ask_pages(browser, hostile_server, request):
    def failed() -> bool:
        rep = getattr(request.node, "rep_call", None)
        return rep is not None and rep.failed

    url, home = hostile_server
    with watched_page(browser, failed, request.node.name, ROOT / "test-artifacts") as w:
        page = w.page
        page.goto(url + "/")  # the start page, then the Memory page
        page.get_by_role("link", name="Memory", exact=True).click()
        page.get_by_role("heading", name="Memory", level=1).wait_for()
        settle(page)
        page.get_by_test_id("stRadio").filter(has_text="Memory source").get_by_text("Saved memory").click()
        page.get_by_role("button", name="Open this memory").click()
        page.get_by_role("heading", name=MEMORY).wait_for()
        settle(page)
        assert_map_is_text(page, home)
        w.shot("memory-hostile-entity-names")

        page.get_by_role("link", name="Ask").click()
        page.get_by_role("heading", name="Ask", level=1).wait_for()
        page.get_by_text("Replays the replies recorded with").wait_for()
        settle(page)
        page.get_by_role("button", name="Ask", exact=True).click()
        page.get_by_text("recorded with", exact=False).first.wait_for(timeout=120_000)
        settle(page)
        # every method's picture (plotly) gives the entities and the question as text
        assert_drawn_as_text(page, NAMES + [QUESTION], 4)
        page.wait_for_timeout(1000)
        w.shot("ask-hostile-entity-names")
    assert not [u for u in w.requests if "example.org" in u]
