"""A real `streamlit run app.py` and Debian chromium driven by Playwright.

The server runs with MEMRAG_HOME in a fresh temporary folder (no saved memories, an empty
response cache). Every page a test opens records the URL of every request, every console
error and every dialog; a test fails if a request leaves this machine, a dialog opens or
the console reports an error. Screenshots go to docs/screenshots/.
"""

from __future__ import annotations

import os

import pytest

# The server start and the watched page live in app_server.py, shared with bench/app_bench.py.
from app_server import CHROMIUM, LAUNCH_ARGS, ROOT, AppServerError, running_app, watched_page

FAILURE_SHOTS = ROOT / "test-artifacts"  # git-ignored: what the page looked like when a test failed


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
    try:
        with running_app(home) as url:
            yield url
    except AppServerError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture()
def watched(browser, server, request):
    def failed() -> bool:
        rep = getattr(request.node, "rep_call", None)
        return rep is not None and rep.failed

    with watched_page(browser, failed, request.node.name, FAILURE_SHOTS) as w:
        yield w


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
    from memrag import demo
    from memrag.index import store

    path = demo.sample_memory_dir()
    _need(f"the sample memory {path}", store.is_memory_dir(path))
    return path


@pytest.fixture(scope="session")
def sample_recordings(sample_memory) -> Path:
    """The sample memory's recorded replies for its demo questions."""
    from memrag.llm.recordings import FILE_NAME

    _need(f"the recordings {sample_memory / FILE_NAME}", (sample_memory / FILE_NAME).is_file())
    return sample_memory
