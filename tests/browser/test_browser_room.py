"""Issue 27 acceptance, room mode in a real browser: the sidebar's base-URL box refuses an address
outside the allow-list (nothing is sent there), an allowed server's error body never reaches the
page, and a live build is refused with a sentence that says why."""

from __future__ import annotations

import pytest
from app_server import ROOT, AppServerError, running_app, settle, watched_page
from internal_server import SECRET_BODY, running_internal

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def room(chromium, tmp_path_factory):
    with running_internal() as internal:
        env = {"MEMRAG_ROOM_MODE": "1", "MEMRAG_ROOM_ALLOW_BASE_URLS": internal.url, "MEMRAG_OPENAI_BASE_URL": ""}
        try:
            with running_app(tmp_path_factory.mktemp("room_home"), env=env) as url:
                yield url, internal
        except AppServerError as e:
            pytest.fail(str(e))


def _base_url(page, url: str) -> None:
    box = page.get_by_test_id("stSidebar").get_by_role("textbox", name="Base URL")
    box.fill(url)
    box.press("Enter")
    settle(page)


def test_room_mode_refuses_other_addresses_hides_server_bodies_and_live_builds(browser, room, request):
    url, internal = room

    def failed() -> bool:
        rep = getattr(request.node, "rep_call", None)
        return rep is not None and rep.failed

    with watched_page(browser, failed, request.node.name, ROOT / "test-artifacts") as w:
        page = w.page
        page.goto(url + "/")
        page.get_by_role("heading", name="memrag: retrieval modelled on memory", level=1).wait_for()
        settle(page)
        page.get_by_test_id("stSidebar").get_by_text("openai", exact=True).click()
        settle(page)
        # an address off the list (the same server, another path): refused, nothing sent there
        _base_url(page, internal.url.replace("/v1", "/admin"))
        page.get_by_text("the base URL must be one the person running it allowed").first.wait_for()
        assert internal.paths == []
        # the allowed address: asked, its 403 body ("db password=…") kept off the page
        _base_url(page, internal.url)
        page.get_by_text("The LLM backend check failed").first.wait_for()
        assert internal.paths, "the allowed server was never asked"
        body = page.locator("body").inner_text()
        assert "db password" not in body and SECRET_BODY not in body

        page.get_by_role("link", name="Memory", exact=True).click()
        page.get_by_role("heading", name="Memory", level=1).wait_for()
        page.get_by_text("Upload files", exact=True).click()
        page.locator("input[type=file]").wait_for(state="attached")
        settle(page)
        page.locator("input[type=file]").set_input_files(
            files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"Ada Brennick was born in Port Alder."}])
        page.get_by_text("where building a memory is off").first.wait_for()
        assert page.get_by_role("button", name="Build memory").is_disabled()
