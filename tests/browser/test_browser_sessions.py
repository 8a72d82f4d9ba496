"""Two browser sessions at once on one `streamlit run` server: one builds a memory from an upload
while the other asks a recorded demo question on the sample memory. Neither sees the other's
choices (question, methods, backend, memory) or the memory while it is half built, and both finish.

The builder's LLM is a fake Ollama (tests/fake_ollama.py) on this machine, so the build needs no
model; its one extraction reply is held back until the asker is done, which makes "while it
builds" certain instead of a race. The asker replays the sample memory's recordings.
"""

from __future__ import annotations

import json
import re
import threading

import pytest

from app_server import ROOT, AppServerError, Watched, running_app
from fake_ollama import ChatReply, running_fake_ollama
from plotly_probe import wait_for_map
from test_browser import open_app, pictures, settle, wait_finished, wait_for_graphs

pytestmark = pytest.mark.browser

MEMORY = "harbour-notes"
TEXT = "The Harbour Board of Port Alder met in 1890 at the Tide House."
EXTRACTION = {
    "entities": [["Harbour Board of Port Alder", "organization", 4, "a board that met in 1890"],
                 ["Tide House", "location", 3, "where the board met"]],
    "triples": [["Harbour Board of Port Alder", "met at", "Tide House"]],
}
SAMPLE_LABEL = "Sample corpus: the Varrow Coast"
FAILURE_SHOTS = ROOT / "test-artifacts"
HOLD_S = 900  # the longest the fake keeps the extraction reply back (released sooner by the test)


@pytest.fixture(scope="module")
def held_ollama():
    """A fake Ollama with phi4 whose chat replies wait until `release` is set."""
    release = threading.Event()
    with running_fake_ollama(models=["phi4"]) as fake:
        fake.default_reply = ChatReply(content=json.dumps(EXTRACTION), prompt_eval_count=300, eval_count=60)
        plain_next = fake._next_reply

        def held_next():
            release.wait(HOLD_S)
            return plain_next()

        fake._next_reply = held_next
        try:
            yield fake, release
        finally:
            release.set()  # never leave a server thread waiting


@pytest.fixture(scope="module")
def shared_server(chromium, held_ollama, tmp_path_factory):
    """One app server for both sessions; its Ollama is the held fake."""
    fake, _ = held_ollama
    home = tmp_path_factory.mktemp("memrag_home_sessions")
    try:
        with running_app(home, env={"OLLAMA_HOST": fake.host}) as url:
            yield url, home
    except AppServerError as e:
        pytest.fail(str(e))


def sidebar_text(page) -> str:
    return page.get_by_test_id("stSidebar").inner_text()


def pill(page, label: str):
    return page.get_by_role("toolbar", name="methods").get_by_role("button", name=label, exact=True)


def pill_pressed(page, label: str) -> bool:
    return pill(page, label).get_attribute("aria-pressed") == "true"


def backend_selected(page, label: str) -> bool:
    option = page.get_by_test_id("stSidebar").get_by_test_id("stRadioOption").filter(
        has_text=re.compile(rf"^{label}$"))
    return option.get_attribute("data-selected") == "true"


def demo_question(page) -> str:
    return page.get_by_role("combobox", name="demo question").input_value()


def pick_demo_question(page, qid: str) -> None:
    settle(page)
    page.get_by_role("combobox", name="demo question").click()
    page.get_by_role("option", name=re.compile(rf"^{qid}:")).click()
    page.wait_for_timeout(300)
    settle(page)
    assert demo_question(page).startswith(qid + ":")


def toggle_pill(page, label: str) -> None:
    before = pill_pressed(page, label)
    pill(page, label).click()
    page.wait_for_timeout(300)
    settle(page)
    assert pill_pressed(page, label) != before, f"the {label} pill did not toggle"


def upload_and_build(page, name: str, text: str) -> None:
    """Like test_browser.upload_and_build, for a machine busy enough that a page run takes minutes:
    the name is set before the file (one rerun less between the file and the build button), and a
    file lost to a rerun that replaced the uploader is set again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.get_by_text("Upload files", exact=True).click()
    page.locator("input[type=file]").wait_for(state="attached")
    settle(page, quiet_ms=3000)
    box = page.get_by_role("textbox", name="memory name")
    box.fill(name)
    box.press("Enter")
    settle(page, quiet_ms=3000)
    ready = page.get_by_text("1 document(s), 1 chunk(s)")
    for attempt in range(3):
        page.locator("input[type=file]").set_input_files(
            files=[{"name": f"{name}.txt", "mimeType": "text/plain", "buffer": text.encode()}])
        try:
            ready.wait_for(timeout=300_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            settle(page, quiet_ms=3000)
    assert MEMORY in page.get_by_text("1 document(s), 1 chunk(s)").inner_text()
    settle(page, quiet_ms=2000)  # a click during a rerun can be lost
    page.get_by_role("button", name="Build memory").click()
    page.locator("[data-testid=stProgress]").first.wait_for()  # the build started


def answers(page):
    return page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))


def test_two_sessions_build_and_ask_at_once(browser, shared_server, held_ollama, sample_recordings):
    from memrag.index import store

    url, home = shared_server
    fake, release = held_ollama
    contexts, watchers = [], []
    try:
        for _ in range(2):
            context = browser.new_context(viewport={"width": 1500, "height": 2200})
            contexts.append(context)
            page = context.new_page()
            page.set_default_timeout(600_000)  # this machine may be busy with other work (minutes per page run)
            watchers.append(Watched(page))
        builder, asker = watchers
        bp, ap = builder.page, asker.page
        open_app(builder, url)
        open_app(asker, url)

        # ---- the builder makes choices of its own on the Ask page, then starts a build on Ollama
        bp.get_by_test_id("stSidebar").get_by_text("ollama", exact=True).click()
        bp.get_by_test_id("stSidebar").get_by_text("using ollama / phi4").wait_for()
        bp.get_by_role("link", name="Ask").click()
        bp.get_by_role("heading", name="Ask", level=1).wait_for()
        pick_demo_question(bp, "q03")
        toggle_pill(bp, "EcphoryRAG")
        bp.get_by_role("link", name="Memory").click()
        bp.get_by_role("heading", name="Memory", level=1).wait_for()
        upload_and_build(bp, MEMORY, TEXT)
        # the build reaches its one extraction call and is held there
        for _ in range(600):
            if fake.chat_bodies():
                break
            bp.wait_for_timeout(500)
        assert len(fake.chat_bodies()) == 1, "the build never called the (fake) LLM"
        assert "Port Alder" in json.dumps(fake.chat_bodies()[0]), "the extraction call lacks the uploaded text"
        half_built = home / "memories" / MEMORY
        assert half_built.is_dir() and not store.is_memory_dir(half_built), "expected a half-built memory folder"
        settle(bp)
        builder.shot("two_sessions_builder")
        # the builder leaves the build page (the build goes on): its progress poll, a page run every
        # second, would otherwise take most of what a busy machine leaves this server
        bp.get_by_role("link", name="Ask").click()
        bp.get_by_role("heading", name="Ask", level=1).wait_for()

        # ---- meanwhile the asker: the sample is its memory; the half-built memory is nowhere
        assert SAMPLE_LABEL in sidebar_text(ap)
        assert backend_selected(ap, "auto"), "the builder's backend choice reached the asker"
        ap.get_by_test_id("stRadio").filter(has_text="Memory source").get_by_text("Saved memory").click()
        ap.get_by_text("No saved memories yet").wait_for()
        assert ap.get_by_test_id("stSelectbox").filter(has_text="saved memory").count() == 0
        # the builder's job is its own: not in the asker's sidebar, and not offered to follow
        assert MEMORY not in sidebar_text(ap), sidebar_text(ap)
        assert ap.get_by_text("Follow the running build").count() == 0
        ap.get_by_role("heading", name=SAMPLE_LABEL).wait_for()
        ap.get_by_role("link", name="Ask").click()
        ap.get_by_role("heading", name="Ask", level=1).wait_for()
        settle(ap)
        # the builder's question and methods did not carry over
        assert demo_question(ap).startswith("q01:")
        assert all(pill_pressed(ap, m) for m in ("NeuroPath", "EcphoryRAG", "HippoRAG 2", "Dense"))
        pick_demo_question(ap, "q02")
        toggle_pill(ap, "Dense")
        toggle_pill(ap, "HippoRAG 2")
        ap.get_by_text("Replays the replies recorded with").wait_for()
        ap.get_by_role("button", name="Ask", exact=True).click()
        answers(ap).nth(1).wait_for(timeout=600_000)
        settle(ap)
        assert answers(ap).count() == 2, f"{answers(ap).count()} answers for two methods"
        ap.get_by_text("recorded with", exact=False).first.wait_for()
        sizes = wait_for_graphs(ap, 1, timeout_s=120)  # every picture a typed one (plotly)
        assert len(sizes) >= 1, f"pictures with nodes: {sizes}"
        assert any(any(i.startswith("cue:") for i in p["ids"]) for p in pictures(ap)), "no EcphoryRAG picture"
        # the asker's ask ran while the build was held, and made no LLM call of its own
        assert len(fake.chat_bodies()) == 1
        ap.wait_for_timeout(1000)
        asker.shot("two_sessions_asker")
        # back on its Memory page the builder finds its build still running
        bp.get_by_role("link", name="Memory").click()
        bp.get_by_role("heading", name="Memory", level=1).wait_for()
        bp.locator("[data-testid=stProgress]").first.wait_for()
        assert bp.get_by_text("finished in").count() == 0

        # ---- the build finishes
        release.set()
        wait_finished(bp)
        wait_for_map(bp)  # the new memory's knowledge graph
        settle(bp)
        builder_side = sidebar_text(bp)
        assert MEMORY in builder_side and SAMPLE_LABEL not in builder_side, builder_side
        assert store.is_memory_dir(half_built)

        # the asker, on its next run, still has its own memory, question, methods and answers
        ap.get_by_role("radiogroup", name="details of").get_by_role("radio", name="EcphoryRAG", exact=True).click()
        ap.wait_for_timeout(300)
        settle(ap)
        asker_side = sidebar_text(ap)
        assert SAMPLE_LABEL in asker_side and MEMORY not in asker_side, asker_side
        assert demo_question(ap).startswith("q02:")
        assert not pill_pressed(ap, "Dense") and not pill_pressed(ap, "HippoRAG 2")
        assert pill_pressed(ap, "NeuroPath") and pill_pressed(ap, "EcphoryRAG")
        assert answers(ap).count() == 2
        assert backend_selected(ap, "auto")

        # the builder's Ask page shows none of the asker's question or answers
        bp.get_by_role("link", name="Ask").click()
        bp.get_by_role("heading", name="Ask", level=1).wait_for()
        settle(bp)
        assert answers(bp).count() == 0
        assert bp.get_by_text("Which company owned the steamer", exact=False).count() == 0
        assert pill_pressed(bp, "Dense"), "the asker's method choice reached the builder"
        assert backend_selected(bp, "ollama")
        assert len(fake.chat_bodies()) == 1  # one extraction call in all
    except BaseException:
        FAILURE_SHOTS.mkdir(exist_ok=True)
        for name, w in zip(("builder", "asker"), watchers):
            w.page.screenshot(path=str(FAILURE_SHOTS / f"two_sessions_{name}.png"))
        raise
    finally:
        release.set()
        for context in contexts:
            context.close()
    for name, w in zip(("builder", "asker"), watchers):
        assert w.dialogs == [], f"{name}: dialogs opened: {w.dialogs}"
        assert w.remote_requests() == [], f"{name}: requests left this machine: {w.remote_requests()}"
        assert w.console_errors == [], f"{name}: console errors: {w.console_errors}"
