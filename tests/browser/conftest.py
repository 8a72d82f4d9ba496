"""A real `streamlit run app.py` and Debian chromium driven by Playwright.

The server runs with MEMRAG_HOME in a fresh temporary folder (no saved memories, an empty
response cache). Every page a test opens records the URL of every request, every console
error and every dialog; a test fails if a request leaves this machine, a dialog opens or
the console reports an error. Screenshots go to docs/screenshots/.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "docs" / "screenshots"
FAILURE_SHOTS = ROOT / "test-artifacts"  # git-ignored: what the page looked like when a test failed
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def chromium() -> str:
    if not os.path.exists(CHROMIUM):
        message = f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) for the browser tests"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    pytest.importorskip("playwright.sync_api")
    return CHROMIUM


@pytest.fixture(scope="session")
def server(chromium, tmp_path_factory) -> str:
    home = tmp_path_factory.mktemp("memrag_home")
    port = _free_port()
    env = {**os.environ, "MEMRAG_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    log = open(home / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.flush()
                pytest.fail("streamlit did not start:\n" + (home / "streamlit.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and nothing else: it leads its own session
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        yield b
        b.close()


class Watched:
    """A page plus everything it did: requests, console errors, dialogs."""

    def __init__(self, page) -> None:
        self.page = page
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console_errors.append(f"page error: {e}"))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def remote_requests(self) -> list[str]:
        out = []
        for u in self.requests:
            p = urlparse(u)
            if p.scheme in ("about", "data", "blob"):
                continue
            if p.hostname not in LOCAL_HOSTS:
                out.append(u)
        return out

    def shot(self, name: str, top=None) -> Path:
        """Save a screenshot; `top` (a locator) is scrolled to the top of the view first
        (Streamlit scrolls inside its main block, so the page itself never grows)."""
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        if top is not None:
            top.first.evaluate("e => e.scrollIntoView({block: 'start'})")
            self.page.wait_for_timeout(800)
        self.page.screenshot(path=str(path))
        return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture()
def watched(browser, server, request):
    # tall: Streamlit scrolls inside its main block, so a screenshot shows one viewport
    context = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = context.new_page()
    page.set_default_timeout(60_000)
    w = Watched(page)
    yield w
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        FAILURE_SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(FAILURE_SHOTS / f"{request.node.name}.png"))
    context.close()
    assert w.dialogs == [], f"dialogs opened: {w.dialogs}"
    assert w.remote_requests() == [], f"requests left this machine: {w.remote_requests()}"
    assert w.console_errors == [], f"console errors: {w.console_errors}"


def _need(what: str, ok: bool) -> None:
    if ok:
        return
    message = f"{what} is missing (being built? see sample_corpus/README.md)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def sample_memory() -> Path:
    """The prebuilt sample memory."""
    from memrag import demo, store

    path = demo.sample_memory_dir()
    _need(f"the sample memory {path}", store.is_memory_dir(path))
    return path


@pytest.fixture(scope="session")
def sample_recordings(sample_memory) -> Path:
    """The sample memory's recorded replies for its demo questions."""
    from memrag.recordings import FILE_NAME

    _need(f"the recordings {sample_memory / FILE_NAME}", (sample_memory / FILE_NAME).is_file())
    return sample_memory
