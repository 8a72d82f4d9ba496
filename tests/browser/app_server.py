"""A real `streamlit run app.py` on a free loopback port, and a Playwright page that records what it did.

Shared by the browser tests (tests/browser/conftest.py) and the app benchmark (bench/app_bench.py),
which puts this folder on sys.path. No pytest here: a server that does not come up raises
`AppServerError` with the end of its log.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "docs" / "screenshots"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update"]


class AppServerError(RuntimeError):
    """The app did not start (the message ends with its log)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(home: Path, env: Mapping[str, str] | None = None, timeout_s: float = 90, *,
                script: str = "app.py", cwd: Path = ROOT) -> Iterator[str]:
    """Serve the app (or another Streamlit `script` run in `cwd`) with MEMRAG_HOME=`home` (plus `env`)
    until the block ends; yields its URL.

    The server's output goes to `home`/streamlit.log. It leads its own process group, which is
    stopped (and nothing else) when the block ends."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    # MEMRAG_PRELOAD=0: the app does not load the embedded model unasked (`env` may turn it on)
    full_env = {**os.environ, "MEMRAG_HOME": str(home), "PYTHONUNBUFFERED": "1", "MEMRAG_PRELOAD": "0",
                **(env or {})}
    log_path = home / "streamlit.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         # no file watcher: an edit to any watched source makes Streamlit drop every memrag module on
         # the next run, the job table with them, so a running build would vanish from its page
         "--server.fileWatcherType", "none"],
        cwd=cwd, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                log.flush()
                raise AppServerError("streamlit did not start:\n" + log_path.read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and nothing else: it leads its own session
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def settle(page, quiet_ms: int = 1000, timeout_s: float = 120) -> None:
    """Wait until the script run is over (no 'running' icon for `quiet_ms`): a click or a file set
    during a rerun can be lost."""
    deadline = time.time() + timeout_s
    quiet_since = None
    while time.time() < deadline:
        running = page.locator("[data-testid=stStatusWidgetRunningIcon]").count() > 0
        now = time.time()
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif (now - quiet_since) * 1000 >= quiet_ms:
            return
        page.wait_for_timeout(200)
    raise TimeoutError(f"the page kept running for {timeout_s:.0f} s")


@contextlib.contextmanager
def watched_page(browser, failed: "Callable[[], bool]", name: str, failure_dir: Path) -> Iterator["Watched"]:
    """A fresh tall page in its own context, watched; when the block ends it checks that no dialog
    opened, no request left this machine and the console reported no error (a screenshot goes to
    `failure_dir` when `failed()` says the test failed)."""
    # tall: Streamlit scrolls inside its main block, so a screenshot shows one viewport
    context = browser.new_context(viewport={"width": 1500, "height": 2200})
    page = context.new_page()
    page.set_default_timeout(60_000)
    w = Watched(page)
    try:
        yield w
    finally:
        if failed():
            failure_dir.mkdir(exist_ok=True)
            page.screenshot(path=str(failure_dir / f"{name}.png"))
        context.close()
    assert w.dialogs == [], f"dialogs opened: {w.dialogs}"
    assert w.remote_requests() == [], f"requests left this machine: {w.remote_requests()}"
    assert w.console_errors == [], f"console errors: {w.console_errors}"


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
