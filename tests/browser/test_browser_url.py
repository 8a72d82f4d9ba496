"""The view in the URL, in a real browser on the sample memory and its recordings: a shared link
opens the Learn page at its question and step, and a reload after an Ask shows the same answers
(replayed from the recordings) with the same question and methods chosen."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from test_browser import settle
from plotly_probe import wait_for_picture
from test_browser_learn import wait_changed

pytestmark = pytest.mark.browser
ANSWER = re.compile(r"^Answer:$")


def deep_link(watched, url: str) -> list[str]:
    """Open `url` (a page's path with parameters), as a shared link or a reload does. Streamlit's
    frontend first probes for the app under the page's path (`/learn/_stcore/...`), which the
    server answers 404 and the console logs; those probes, and only those, are let through."""
    missing: list[str] = []
    watched.page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    watched.page.goto(url)
    return missing


def forgive_probes(watched, missing: list[str]) -> None:
    path = urlparse(watched.page.url).path.rstrip("/")
    assert missing and all(urlparse(u).path.startswith(f"{path}/_stcore/") for u in missing), missing
    not_found = "Failed to load resource: the server responded with a status of 404 (Not Found)"
    assert watched.console_errors.count(not_found) <= len(missing), watched.console_errors
    watched.console_errors[:] = [e for e in watched.console_errors if e != not_found]


def params(page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def wait_params(page, expected: dict[str, list[str]], timeout_ms: int = 60_000) -> dict[str, list[str]]:
    deadline = page.evaluate("Date.now()") + timeout_ms
    while params(page) != expected and page.evaluate("Date.now()") < deadline:
        page.wait_for_timeout(200)
    return params(page)


def test_a_learn_link_opens_its_question_and_step(watched, server, sample_recordings):
    page = watched.page
    missing = deep_link(watched, server + "/learn?q=q02&method=neuropath&step=2")
    page.get_by_role("heading", name="Learn", level=1).wait_for()
    page.get_by_text("Step 2 of").first.wait_for(timeout=300_000)  # replays the demo (loads the embedder)
    assert page.get_by_role("combobox", name="demo question").input_value().startswith("q02: ")
    slider = page.get_by_role("slider", name="replay the trace step by step")
    assert wait_changed(page, []), "the Learn step drew no picture"  # the step's typed picture (plotly)
    settle(page)
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.get_by_text("Step 3 of").first.wait_for()
    assert wait_params(page, {"memory": ["sample"], "q": ["q02"], "method": ["neuropath"], "step": ["3"]}) == \
        {"memory": ["sample"], "q": ["q02"], "method": ["neuropath"], "step": ["3"]}
    forgive_probes(watched, missing)


def test_a_reload_after_ask_keeps_the_question_methods_and_answers(watched, server, sample_recordings):
    page = watched.page
    missing = deep_link(watched, server + "/ask")
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_text("Replays the replies recorded with").wait_for(timeout=300_000)
    settle(page)
    page.get_by_role("button", name="EcphoryRAG").click()  # methods: leave EcphoryRAG out
    settle(page)
    # the picker's question (the demo guide's default once this server worked the guide out)
    qid = page.get_by_role("combobox", name="demo question").input_value().split(":")[0]
    page.get_by_role("button", name="Ask", exact=True).click()
    answers = page.locator("strong").filter(has_text=ANSWER)
    answers.nth(2).wait_for(timeout=300_000)
    expected = {"memory": ["sample"], "q": [qid], "methods": ["neuropath,hipporag2,dense"], "asked": ["1"]}
    assert wait_params(page, expected) == expected
    settle(page)
    page.reload()  # the same deep link again
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    answers.nth(2).wait_for(timeout=300_000)
    settle(page)
    assert answers.count() == 3  # the same three methods, replayed
    assert params(page) == expected
    # NeuroPath's route and the other methods' pictures (typed pictures, plotly) drawn again
    assert wait_for_picture(page, "seed")["nodes"]
    assert page.evaluate("[...document.querySelectorAll('.js-plotly-plot')].filter(g => g._fullData && "
                         "g._fullData.some(t => t.name === 'nodes')).length") >= 3
    forgive_probes(watched, missing)
