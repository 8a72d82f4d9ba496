"""Issue #35, in a real browser: an app in room mode with the operator's OPENAI_API_KEY and
MEMRAG_OPENAI_BASE_URL set never sends the key to a viewer — not in any message on the page's
websocket, not in any page's HTML, not in any input's value — while the key box says a key is set
on the server and the server still uses it for its base URL (a loopback fake records it)."""

from __future__ import annotations

import pytest
from app_server import ROOT, AppServerError, running_app, settle, watched_page
from fake_openai import running_fake_openai

pytestmark = pytest.mark.browser

SECRET = "sk-operator-" + "9c2e5a" * 6
PAGES = ["Memory", "Ask", "Evaluate", "Learn", "Start"]
INPUT_VALUES = "() => Array.from(document.querySelectorAll('input, textarea')).map(e => e.value)"


def test_room_mode_never_sends_the_servers_key_to_a_browser(browser, tmp_path, request):
    def failed() -> bool:
        rep = getattr(request.node, "rep_call", None)
        return rep is not None and rep.failed

    received: list[bytes] = []
    with running_fake_openai(models=["default"]) as fake:
        env = {"MEMRAG_ROOM_MODE": "1", "OPENAI_API_KEY": SECRET, "MEMRAG_OPENAI_BASE_URL": fake.base_url}
        try:
            with running_app(tmp_path / "home", env=env) as url, \
                    watched_page(browser, failed, request.node.name, ROOT / "test-artifacts") as w:
                page = w.page
                page.on("websocket", lambda ws: ws.on(
                    "framereceived", lambda p: received.append(p if isinstance(p, bytes) else p.encode())))
                page.goto(url + "/")
                sidebar = page.get_by_test_id("stSidebar")
                box = sidebar.get_by_role("textbox", name="API key")
                box.wait_for()
                settle(page)
                assert box.get_attribute("type") == "password"
                assert SECRET not in box.input_value() and box.input_value() == ""
                assert box.get_attribute("placeholder") == "set on the server"
                sidebar.get_by_text("A key is set on the server").wait_for()
                page.set_viewport_size({"width": 1440, "height": 900})
                w.shot("room-mode-key-set-on-the-server")
                for name in PAGES:
                    page.get_by_role("link", name=name, exact=True).click()
                    settle(page)
                    htmls = [f.content() for f in page.frames]
                    assert not [h for h in htmls if SECRET in h], f"the key is in the {name} page's HTML"
                    values = page.evaluate(INPUT_VALUES)
                    assert SECRET not in values, f"an input on the {name} page holds the key"
        except AppServerError as e:
            pytest.fail(str(e))
        assert received, "no websocket message was seen: the check would pass on anything"
        assert not [m for m in received if SECRET.encode() in m], "a message to the browser carried the key"
        bearer = [v for r in fake.requests for k, v in r.headers.items() if k.lower() == "authorization"]
        assert bearer and set(bearer) == {f"Bearer {SECRET}"}, bearer  # the server's key went to its own URL
