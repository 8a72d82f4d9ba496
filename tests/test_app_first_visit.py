"""The Ask page's question and methods look the same to a browser that draws a run's widgets for the
first time as to one that drew every run (issue #35).

A browser that never drew a run's widget — a second run followed at once, as the sidebar's rerun
when the embedded model finishes loading does on a fresh server — draws the next run's widget from
the start value in its message. Each run's start value must therefore be the value the server
holds: on main the methods selector's was empty from the second run on (the selector came up
empty in the browser, and Ask did nothing or replayed methods it did not show), and a link's demo
question went back to the first one. The browser side is tests/browser/test_browser_fresh_ask.py.
Real AppTest runs on the tiny memory standing in for the sample, with two recorded questions.
"""

from __future__ import annotations

import pytest

from memrag import demo, sample
from memrag.methods import registry
from test_app_pages import QUESTION, embedder, home, no_exception, scripted, tiny  # noqa: F401
from test_app_url import ASK, linked, settled

SECOND = "Which river did Ada Brennick cross?"


@pytest.fixture()
def two_questions(tiny, monkeypatch):
    from memrag.index import store

    questions = [{"id": "t1", "question": QUESTION, "answer": "Vell River", "gold_docs": ["ada", "port"]},
                 {"id": "t2", "question": SECOND, "answer": "Vell River", "gold_docs": ["ada"]}]
    monkeypatch.setattr(demo, "sample_memory_dir", lambda: tiny)
    monkeypatch.setattr(sample, "sample_memory_dir", lambda: tiny)  # what the sample rule reads
    monkeypatch.setattr(demo, "sample_questions", lambda: questions)
    demo.record(store.load(tiny, embedder().model_id), scripted("Vell River"), embedder(), tiny,
                questions=questions)
    return tiny


def held_and_drawn(at) -> dict[str, tuple[object, object]]:
    """Per widget: (the value the server holds, what a browser drawing this run's message fresh shows)."""
    order = registry.display_order()
    kinds = at.radio(key="ask_kind")
    out = {"question kind": (kinds.value, kinds.options[kinds.proto.default])}
    if kinds.value == "Demo question":
        demo_box = at.selectbox(key="ask_demo")
        out["demo question"] = (demo_box.value, demo_box.proto.default)
    else:
        free = at.text_area(key="ask_free")
        out["own question"] = (free.value, free.proto.default)
    pills = at.pills(key="ask_methods")
    out["methods"] = (list(pills.value), [order[i] for i in pills.proto.default])
    return out


def assert_in_step(at) -> None:
    apart = {k: v for k, v in held_and_drawn(at).items() if v[0] != v[1]}
    assert apart == {}, f"(held, drawn fresh) apart: {apart}"


def test_every_run_draws_the_question_and_methods_the_server_holds(two_questions):
    at = linked(ASK, {})
    for _ in range(3):  # the first run, and the runs that follow it unasked (model loaded, a poll)
        at = no_exception(at.run())
        assert_in_step(at)
        assert held_and_drawn(at)["methods"][0] == list(registry.display_order())
    at.pills(key="ask_methods").set_value(["dense"])
    at = no_exception(at.run())
    assert_in_step(at)
    assert held_and_drawn(at)["methods"] == (["dense"], ["dense"])
    # a page away and back (Streamlit forgets widgets a run did not draw): still the user's choice
    at.switch_page("app_pages/memory.py")
    at = no_exception(at.run())
    at.switch_page(ASK)
    at = no_exception(at.run())
    assert_in_step(at)
    assert held_and_drawn(at)["methods"] == (["dense"], ["dense"])


@pytest.mark.parametrize("link, held", [
    ({"q": "t2", "methods": "dense,neuropath"}, ("Demo question", 1, ["neuropath", "dense"])),
    ({"question": "Where did Ada go?"}, ("Your own question", "Where did Ada go?", None)),
])
def test_a_links_question_and_methods_are_drawn_on_every_run(two_questions, link, held):
    at = linked(ASK, link)
    for _ in range(3):
        at = settled(at)
        assert_in_step(at)
        values = held_and_drawn(at)
        question = values.get("demo question", values.get("own question"))[0]
        assert (values["question kind"][0], question) == held[:2]
        assert values["methods"][0] == (held[2] or list(registry.display_order()))


def test_an_ask_with_no_method_says_why_and_cannot_start(two_questions):
    at = no_exception(linked(ASK, {}).run())
    at.pills(key="ask_methods").set_value([])
    at = no_exception(at.run())
    ask = next(b for b in at.button if b.label == "Ask")
    assert ask.disabled
    assert any("No method is chosen" in c.value for c in at.caption)
