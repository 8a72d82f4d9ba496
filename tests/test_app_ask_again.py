"""The Ask page's "ask again on this version" (memrag/app/ask_again_views.py) under AppTest, with
the scripted LLM: answers made before an edit offer the estimate and the button; asking again runs
as a background job that reuses the unchanged calls; the per-method diff names what changed."""

from __future__ import annotations

from memrag.app.ask_result import AskResult
from memrag.ask import ask
from memrag.index import edits, store
from memrag.index.edits import Edit
from test_app_pages import QUESTION, embedder, no_exception, plain, scripted
from test_app_pages import home, tiny  # noqa: F401 (fixtures)


def _page(path: str, shown) -> None:
    from memrag.app import ask_again_views, jobs
    from memrag.app.ask_result import AskResult
    from memrag.app.session import AppState
    from memrag.index import store as memory_store

    memory = memory_store.load(path)
    job = jobs.get_job(AppState().ask_job)
    if job is not None:
        assert job.wait(60)
        shown = AskResult.of_job(job)
        import streamlit as st
        st.session_state["asked"] = [(t.method, t.answer.answer if t.answer else "") for t in shown.traces]
    ask_again_views.offer(shown, memory, path, None, True)
    ask_again_views.changes(shown, memory)


def app(path, shown, llm):
    from streamlit.testing.v1 import AppTest

    from memrag.app import session

    at = AppTest.from_function(_page, args=(str(path), shown), default_timeout=60)
    at.session_state[session.TEST_LLM_KEY] = llm
    at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
    return at


def test_answers_made_before_an_edit_are_asked_again_and_the_change_shown(tiny):
    record = {"id": "t1", "question": QUESTION, "answer": "Vell River", "gold_docs": ["ada", "port"]}
    traces = ask(store.load(tiny, embedder().model_id), QUESTION, llm=scripted(), embedder=embedder())
    shown = AskResult(traces, QUESTION, record, "live", "scripted-1")
    at = no_exception(app(tiny, shown, scripted()).run())
    assert "This memory changed" not in plain(at)  # made on the live version: nothing to offer
    edits.edit_memory(tiny, Edit("remove-triple", {"triple": 0}), lambda model: embedder())  # Ada born in Port Alder
    model = scripted()
    at = no_exception(app(tiny, shown, model).run())
    said = plain(at)
    assert "This memory changed since these answers." in said and "go to the model" in said
    assert not model.calls  # the estimate asked nothing
    at = no_exception(at.button(key="ask_again_go").click().run())
    assert at.session_state["asked"] and len(model.calls) < len(traces[0].llm_calls) + 4
    assert {c["stage"] for c in model.calls} <= {"neuropath.track.hop1", "neuropath.track.hop2",
                                                 "hipporag2.recognition", "answer"}
    said = plain(at)
    assert "What changed, method by method" in said
    assert "NeuroPath:" in said and "Ada Brennick → born in → Port Alder" in said
