"""Issue #35, in a real browser: a build cancelled part-way leaves the form as the user filled it —
the source 'Upload files', the name typed, the uploaded files offered again — and the interrupted
build can be discarded. The model is a loopback OpenAI-compatible fake that answers slowly, so the
Cancel lands during the first extraction call."""

from __future__ import annotations

import pytest
from app_server import ROOT, AppServerError, running_app, settle, watched_page
from fake_openai import Reply, running_fake_openai
from test_browser import open_app, upload_and_build

pytestmark = pytest.mark.browser

EMPTY = '{"entities": [], "triples": []}'


def checked(page, label: str) -> bool:
    return page.get_by_test_id("stRadio").get_by_role("radio", name=label, exact=True).is_checked()


def test_a_cancelled_build_keeps_the_form_and_can_be_discarded(browser, tmp_path, request):
    def failed() -> bool:
        rep = getattr(request.node, "rep_call", None)
        return rep is not None and rep.failed

    with running_fake_openai(models=["default"]) as fake:
        fake.script(*[Reply(content=EMPTY, delay_s=10.0) for _ in range(4)])
        env = {"MEMRAG_OPENAI_BASE_URL": fake.base_url, "MEMRAG_EMBEDDER": "openai:probe-embed"}
        try:
            with running_app(tmp_path / "home", env=env) as url, \
                    watched_page(browser, failed, request.node.name, ROOT / "test-artifacts") as w:
                page = w.page
                open_app(w, url, "Memory")
                upload_and_build(w, "harbour", "Ada Brennick was born in Port Alder.")
                page.get_by_role("button", name="Cancel").click()
                page.get_by_text("The build was cancelled").wait_for()
                settle(page)
                assert checked(page, "Upload files") and not checked(page, "Sample corpus")
                assert page.get_by_role("textbox", name="memory name").input_value() == "harbour"
                page.get_by_text("Kept from your last upload: harbour.txt").wait_for()
                page.get_by_text("1 document(s), 1 chunk(s) → memory 'harbour'").wait_for()
                page.set_viewport_size({"width": 1440, "height": 900})
                w.shot("memory-build-cancelled-form-kept")
                page.get_by_role("button", name="Discard it").click()
                page.get_by_role("button", name="Yes, discard it").click()
                page.get_by_text("The interrupted build harbour was discarded.").wait_for()
                assert not (tmp_path / "home" / "memories" / "harbour").exists()
        except AppServerError as e:
            pytest.fail(str(e))
