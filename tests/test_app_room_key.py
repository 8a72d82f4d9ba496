"""The operator's API key stays on the server (issue #35): with OPENAI_API_KEY and
MEMRAG_OPENAI_BASE_URL set, no element of any page holds the key — every element as the browser
receives it and every widget's value — in room mode or not; the key box says a key is set on the
server, the server's key still goes to its own base URL, and a key typed into the box goes instead.
Real AppTest runs against a loopback OpenAI-compatible fake that records each request's headers."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget

from fake_openai import running_fake_openai
from memrag.app import session
from memrag.app.session import AppState
from scripted import HashEmbedder

APP = str(Path(__file__).resolve().parent.parent / "app.py")
PAGES = ["app_pages/start.py", "app_pages/memory.py", "app_pages/ask.py", "app_pages/evaluate.py",
         "app_pages/learn.py"]
SECRET = "sk-operator-" + "4e1b7d" * 6
KEY_BOX = session.WIDGET_PREFIX + AppState.openai_api_key.key
pytestmark = pytest.mark.usefixtures("restore_error_details")


def everything(at: AppTest) -> list[str]:
    """Every element of the page as sent to the browser (its message) and every widget's value."""
    seen: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            seen.append(str(proto))
        if isinstance(node, Widget):
            seen.append(repr(node.value))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return seen


def sent_keys(fake) -> list[str]:
    """The bearer token of every request the fake server received."""
    return [v for r in fake.requests for k, v in r.headers.items() if k.lower() == "authorization"]


@pytest.mark.parametrize("room_mode", ["1", "0"])
def test_no_page_holds_the_servers_key_and_the_server_still_uses_it(room_mode, tmp_path, monkeypatch):
    with running_fake_openai(models=["default"]) as fake:
        monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("MEMRAG_ROOM_MODE", room_mode)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("MEMRAG_OPENAI_BASE_URL", fake.base_url)
        at = AppTest.from_file(APP, default_timeout=60)
        at.session_state[session.TEST_EMBEDDER_KEY] = HashEmbedder()
        for page in PAGES:
            at.switch_page(page)
            at.run()
            assert not at.exception, [e.value for e in at.exception]
            leaks = [s for s in everything(at) if SECRET in s]
            assert leaks == [], f"{page}: {leaks[:2]}"
            box = at.sidebar.text_input(key=KEY_BOX)
            assert box.value == "" and box.placeholder == "set on the server"
        captions = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")
        assert "A key is set on the server" in captions and "using openai / default" in captions
        assert sent_keys(fake) and set(sent_keys(fake)) == {f"Bearer {SECRET}"}  # the server's key, to its URL

        # a key typed into the box is the viewer's own: it goes instead of the server's
        before = len(fake.requests)
        at.sidebar.text_input(key=KEY_BOX).input("sk-typed-by-viewer").run()
        assert not at.exception, [e.value for e in at.exception]
        assert set(sent_keys(fake)[before:]) == {"Bearer sk-typed-by-viewer"}
        assert not [s for s in everything(at) if SECRET in s]
