"""Hostile probes of the sidebar's base URL (issue 27, probe 4): in room mode the box is not a
server-side request to anywhere, and whatever answers never gets its body onto the page (the
"internal service" is tests/internal_server.py on loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from memrag.app.session import TEST_EMBEDDER_KEY, AppState
from internal_server import Internal, running_internal
from scripted import HashEmbedder

probe = pytest.mark.probe
pytestmark = pytest.mark.usefixtures("restore_error_details")
APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture()
def internal() -> Iterator[Internal]:
    with running_internal() as s:
        yield s


def _sidebar(tmp_path: Path, monkeypatch, base_url: str, allow: str) -> AppTest:
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_BASE_URLS", allow)
    monkeypatch.delenv("MEMRAG_OPENAI_BASE_URL", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[TEST_EMBEDDER_KEY] = HashEmbedder()
    at.session_state[AppState.backend.key] = "openai"
    at.session_state[AppState.openai_base_url.key] = base_url
    return at.run()


def _page_text(at: AppTest) -> str:
    parts = [e.value for kind in ("error", "warning", "info", "caption", "markdown", "success")
             for e in getattr(at, kind)]
    parts += [str(e.value) for e in at.exception]
    return " ".join(map(str, parts)).replace("\\", "")  # markdown escapes


@probe("room mode: the sidebar's base URL set to an internal address not on the allow-list",
       "refused before any request, saying which addresses are allowed", group="room")
def test_an_address_off_the_allow_list_gets_no_request(tmp_path, monkeypatch, internal):
    at = _sidebar(tmp_path, monkeypatch, internal.url, "http://127.0.0.1:9/v1")
    assert not at.exception, [e.value for e in at.exception]
    assert internal.paths == []  # nothing was sent: before, GET /v1/models went out
    shown = _page_text(at)
    assert "room mode" in shown and "MEMRAG_ROOM_ALLOW_BASE_URLS" in shown and "http://127.0.0.1:9/v1" in shown
    assert "db password" not in shown


@probe("room mode: an allowed base URL steered with a query (?x=…) or another path",
       "refused like any address off the list", group="room")
@pytest.mark.parametrize("tail", ["?x=/admin", "/../admin", "/v2", "#frag"])
def test_an_allowed_address_cannot_be_steered(tmp_path, monkeypatch, internal, tail):
    steered = internal.url + tail if not tail.startswith("/") else internal.url.rsplit("/v1", 1)[0] + tail
    at = _sidebar(tmp_path, monkeypatch, steered, internal.url)
    assert internal.paths == []
    assert "MEMRAG_ROOM_ALLOW_BASE_URLS" in _page_text(at)


@probe("room mode: an allowed server answers the check with 403 and an internal page's body",
       "the page says the check failed and of what kind, never the body", group="room")
def test_a_server_error_body_never_reaches_the_page(tmp_path, monkeypatch, internal):
    at = _sidebar(tmp_path, monkeypatch, internal.url, internal.url)
    assert internal.paths  # it was asked: the address is allowed
    shown = _page_text(at)
    assert "db password" not in shown and "admin console" not in shown, shown
    assert "The LLM backend check failed (LLMUnavailable)" in shown and "room mode" in shown.lower()
    assert st_config.get_option("client.showErrorDetails") == "type"  # uncaught errors: the type only


@probe("without room mode: the same server's 403 body", "shown, so the person running the app sees why",
       group="room")
def test_outside_room_mode_the_check_still_says_what_the_server_said(tmp_path, monkeypatch, internal):
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMRAG_ROOM_MODE", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state[TEST_EMBEDDER_KEY] = HashEmbedder()
    at.session_state[AppState.backend.key] = "openai"
    at.session_state[AppState.openai_base_url.key] = internal.url
    at.run()
    assert "db password" in _page_text(at)
