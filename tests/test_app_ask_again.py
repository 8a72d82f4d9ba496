"""The Ask page's "ask again on this version" (memrag/app/ask_again_views.py) under AppTest, with
the scripted LLM: answers made before an edit offer the estimate and the button; asking again runs
as a background job that reuses the unchanged calls; the per-method diff names what changed."""

from __future__ import annotations

from memrag.app.ask_result import AskResult
from memrag.ask import ask
from memrag.index import edits, store, versions
from memrag.index.edits import Edit
from test_app_pages import QUESTION, embedder, no_exception, plain, scripted
from test_app_pages import home, recorded, tiny  # noqa: F401 (fixtures)


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


# ------------------------------------------------------------------ on the Ask page, offline
def answers(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Answer:**")]


def _tiny_showcase(folder, work) -> "object":
    """A showcase for the tiny stand-in sample: remove triple 0 (Ada Brennick born in Port Alder), the
    calls it changes recorded once with the scripted model (the engine the stand-in's recordings name)."""
    import json

    from memrag.explain import showcase

    folder.mkdir()
    (folder / showcase.SPEC).write_text(json.dumps({"question": "t1", "title": "remove Ada's birthplace",
                                                    "why": "a test", "edit": {"kind": "remove-triple",
                                                                              "args": {"triple": 0}}}))
    show = showcase.load(folder)
    showcase.record(show, scripted(), embedder(), work)
    return show


def test_the_ask_page_asks_again_after_an_edit_offline_from_the_showcase_recordings(recorded, home, tmp_path,
                                                                                    monkeypatch):
    from memrag.explain import showcase
    from memrag.index import copies
    from test_app_pages import ask, ask_page, click, wait_for
    from memrag.app import session

    show = _tiny_showcase(tmp_path / "showcase", tmp_path / "work")
    monkeypatch.setattr(showcase, "SHOWCASE_DIR", show.folder)
    copy = copies.copy_memory(recorded, home / "memories" / "copy")
    live = scripted("Grey Sea")  # never asked: everything replays
    at = ask_page(copy, live)
    assert at.radio(key="ask_kind").value == "Demo question"  # a copy of the sample keeps its gold questions
    at = ask(at, question="")
    assert "R@5" in [m.label for m in at.metric]  # gold known on the copy
    first, first_version = answers(at), store.current_version_dir(copy).name
    assert "This memory changed" not in plain(at)
    edits.edit_memory(copy, show.edit, lambda model: embedder())
    at = no_exception(at.run())
    said = plain(at)
    assert "This memory changed since these answers." in said and "go to the model" in said
    click(at, "Ask again on this version")
    job = wait_for(at, session.AppState.ask_job.key)
    assert job.status == "done", job.error
    at = no_exception(at.run())
    said = plain(at)
    assert "What changed, method by method" in said and "Ada Brennick → born in → Port Alder" in said
    assert "This memory changed since these answers." not in said  # the answers shown are this version's
    assert live.calls == []  # offline: the showcase's recordings answered the changed calls
    # the edit undone (its first version live again): the answers of the undone edit are offered again,
    # and asked again they come back as the first ones, every changed call from the copy's recordings
    versions.use_version(copy, first_version)
    at = no_exception(at.run())
    assert "This memory changed since these answers." in plain(at)
    click(at, "Ask again on this version")
    job = wait_for(at, session.AppState.ask_job.key)
    assert job.status == "done", job.error
    at = no_exception(at.run())
    assert answers(at) == first and "What changed, method by method" in plain(at) and live.calls == []


def test_another_edit_is_not_answered_by_the_showcase_and_says_so(recorded, home, tmp_path, monkeypatch):
    from memrag.explain import showcase
    from memrag.index import copies
    from test_app_pages import ask, ask_page, click, wait_for
    from memrag.app import session

    show = _tiny_showcase(tmp_path / "showcase", tmp_path / "work")
    monkeypatch.setattr(showcase, "SHOWCASE_DIR", show.folder)
    copy = copies.copy_memory(recorded, home / "memories" / "copy")
    at = ask(ask_page(copy, scripted()), question="")
    m = store.load(copy)
    other = next(i for i, t in enumerate(m.triples) if i != 0 and "Vell" in f"{t.head} {t.tail}")
    edits.edit_memory(copy, Edit("remove-triple", {"triple": other}), lambda model: embedder())
    at = no_exception(at.run())
    click(at, "Ask again on this version")
    job = wait_for(at, session.AppState.ask_job.key)
    assert job.status == "failed" and "no recorded response" in str(job.error)
