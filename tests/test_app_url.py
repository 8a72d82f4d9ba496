"""The view in the URL (memrag.app.url_state): a link or a reload reopens the Ask page's question,
methods and replayed answers and the Learn page's question, method and step; hostile or unknown
values are ignored with a note shown as text. Real AppTest runs, scripted LLM, hash embedder, the
tiny memory standing in for the sample with its recordings."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from memrag.app import jobs, session
from test_app_learn import LEARN, slider
from test_app_pages import (APP, QUESTION, assert_nothing_raw, embedder, no_exception, plain, recorded,  # noqa: F401
                            scripted, tiny, home)

ASK = "app_pages/ask.py"


def linked(page: str, params: dict[str, str], llm=None) -> AppTest:
    """The app opened at `page` with `params` in its URL: a new browser session."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(page)
    at.session_state[session.TEST_LLM_KEY] = llm or scripted()
    at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
    at.query_params.update(params)
    return at


def settled(at: AppTest) -> AppTest:
    """Run until a replay started by the page has finished and its answers are drawn."""
    at = no_exception(at.run())
    job = jobs.get_job(at.session_state[session.AppState.ask_job.key]) \
        if session.AppState.ask_job.key in at.session_state else None
    if job is not None and not job.finished:
        assert job.wait(60)
        at = no_exception(at.run())
    return at


def answers(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Answer:**")]


def test_a_link_with_a_question_methods_and_answers_replays_them(recorded):
    live = scripted("Grey Sea")
    at = settled(linked(ASK, {"q": "t1", "methods": "dense,neuropath", "asked": "1"}, live))
    assert at.radio(key="ask_kind").value == "Demo question" and at.selectbox(key="ask_demo").value == 0
    assert at.pills(key="ask_methods").value == ["neuropath", "dense"]
    assert answers(at) == ["**Answer:** Vell River"] * 2
    assert live.calls == []  # replayed from the recordings
    # the page writes its view back, in the registry's order: a reload opens the same
    assert at.query_params == {"memory": "sample", "q": "t1", "methods": "neuropath,dense", "asked": "1"}


def test_after_an_ask_the_url_holds_the_view_and_a_reload_replays_it(recorded):
    at = settled(linked(ASK, {}))
    assert at.query_params == {"memory": "sample", "q": "t1"}  # before asking: no answers in the link
    next(b for b in at.button if b.label == "Ask").click()
    at = settled(at)
    assert len(answers(at)) == 4 and at.query_params == {"memory": "sample", "q": "t1", "asked": "1"}
    reload = settled(linked(ASK, dict(at.query_params)))
    assert len(answers(reload)) == 4
    # another question clears the answers from the link
    at.pills(key="ask_methods").set_value(["dense"])
    at = settled(at)
    assert at.query_params == {"memory": "sample", "q": "t1", "methods": "dense"}


def test_an_own_question_is_restored_but_never_asked_live_from_a_link(recorded):
    live = scripted("Grey Sea")
    at = settled(linked(ASK, {"question": QUESTION + "?", "asked": "1"}, live))
    assert at.radio(key="ask_kind").value == "Your own question"
    assert at.text_area(key="ask_free").value == QUESTION + "?"
    assert live.calls == [] and answers(at) == []
    assert "no recording of: press Ask" in plain(at)


def test_hostile_or_unknown_values_are_ignored_with_a_note_as_text(recorded):
    live = scripted("Grey Sea")
    hostile = {"q": "<script>alert(1)</script>", "methods": "evil,<img src=x onerror=alert(2)>",
               "memory": "../../etc", "asked": "1", "question": "x" * 5000}
    at = settled(linked(ASK, hostile, live))
    text = plain(at)
    assert "The link's memory '../../etc' is not on this machine" in text
    assert "The link's question '<script>alert(1)</script>' is not a demo question" in text
    assert "Unknown method(s) in the link ignored: 'evil', '<img src=x onerror=alert(2)>'" in text
    assert_nothing_raw(at)
    assert at.pills(key="ask_methods").value == ["neuropath", "ecphory", "hipporag2", "dense"]
    assert at.radio(key="ask_kind").value == "Demo question" and answers(at) == []
    assert live.calls == []
    assert at.session_state[session.AppState.active_memory.key] == str(recorded)


def test_a_link_names_a_saved_memory_by_folder_never_by_path(tiny, tmp_path):
    at = no_exception(linked("app_pages/memory.py", {"memory": "tiny"}).run())
    assert at.session_state[session.AppState.active_memory.key] == str(tiny)
    for bad in (str(tiny), "tiny/../tiny", "..", "nope"):
        at = no_exception(linked("app_pages/memory.py", {"memory": bad}).run())
        assert at.session_state[session.AppState.active_memory.key] != str(tiny), bad
        assert "is not on this machine" in plain(at)


def test_a_learn_link_opens_its_question_method_and_step(recorded):
    at = no_exception(linked(LEARN, {"q": "t1", "method": "neuropath", "step": "3"}).run())
    assert at.radio(key="learn_source").value == "A recorded demo question"
    assert at.segmented_control(key="learn_method").value == "neuropath"
    assert slider(at).value == 2
    assert "Step 3 of" in plain(at)
    assert at.query_params == {"memory": "sample", "q": "t1", "method": "neuropath", "step": "3"}
    slider(at).set_value(1).run()
    assert at.query_params["step"] == "2"


def test_a_learn_link_with_bad_values_starts_at_step_one_with_notes(recorded):
    at = no_exception(linked(LEARN, {"q": "t1", "method": "<b>x</b>", "step": "99"}).run())
    text = plain(at)
    assert "The link's method '<b>x</b>' is not taught for this question" in text
    assert "The link's step 99 is past this trace's" in text
    assert slider(at).value == 0
    at = no_exception(linked(LEARN, {"step": "-1e9"}).run())
    assert "The link's step '-1e9' is not a step number" in plain(at) and slider(at).value == 0
    assert_nothing_raw(at)
