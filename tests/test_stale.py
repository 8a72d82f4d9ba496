"""Traces, runs and recordings made before a document was removed, opened after it: the one sentence
that says so (memrag.index.stale) in the library, and on the Ask, Learn and Evaluate pages under
AppTest, each showing the old trace from its own passages."""

from __future__ import annotations

import re

import pytest

from memrag import demo
from memrag.ask import ask as run_ask
from memrag.app import jobs, session
from memrag.eval.config import EvalConfig
from memrag.eval.runner import run_eval, run_to_end
from memrag.index import removal, stale, store
from memrag.llm.recordings import Recordings, StaleRecording
from memrag.tracefile import traces_json
from scripted import HashEmbedder
from test_app_pages import (QUESTION, app, ask, ask_page, click, embedder, no_exception, plain, scripted,
                            wait_for)
from test_app_pages import home, tiny  # noqa: F401 (fixtures)
import test_app_evaluate as evaluate
from test_removal import embedder as removal_embedder
from test_removal import two  # noqa: F401 (fixture)

TRACES = stale.SENTENCES["traces"]


def remove(path, name: str, dim: int = 64) -> None:
    """A removal as the Memory page makes it (the memory's own hash embedder, if a name changes)."""
    removal.remove_documents(path, [name], lambda model: HashEmbedder(dim))


def answer_passages(at) -> list[str]:
    """The 'Passages given to the answer' lines of the answer cards: '[1] chunk N — title'."""
    return [m.value for m in at.markdown if re.match(r"\*\*\[\d+\]\*\* chunk \d+", m.value)]


# ------------------------------------------------------------------ the library
def test_the_sentence_names_what_was_made_on_an_earlier_version(two):
    from memrag.eval.records import RunSummary

    before = store.load(two)
    traces = run_ask(before, "Who built a mill in Port Alder?", llm=None, embedder=HashEmbedder(),
                     methods=("dense",), answer=False)
    summary = RunSummary(stamp={}, scope="pooled", methods={}, indexing={"fingerprint": before.fingerprint()},
                         paired={}, all_methods=None, deviations=[])
    recordings = Recordings(two / "responses.jsonl", {}, [], {}, before.fingerprint())
    assert [stale.stale_message(x, two) for x in (traces, summary, recordings)] == ["", "", ""]
    removal.remove_documents(two, ["ada"], removal_embedder)
    assert stale.stale_message(traces, two) == stale.SENTENCES["trace"]
    assert stale.stale_message(traces * 2, two) == TRACES
    assert stale.stale_message(summary, two) == stale.SENTENCES["run"]
    assert stale.stale_message(recordings, two) == stale.SENTENCES["recordings"]
    assert stale.stale_message(traces, None) == ""
    # another memory's trace, a run of per-question memories, recordings from before the field: nothing
    other = Recordings(two / "responses.jsonl", {}, [], {}, "")
    per_question = RunSummary(stamp={}, scope="per-question", methods={}, indexing={"per_question": True},
                              paired={}, all_methods=None, deviations=[])
    assert stale.stale_message(other, two) == stale.stale_message(per_question, two) == ""
    store.undo(two)  # the version they were made on is live again
    assert stale.stale_message(traces, two) == ""


def test_a_replay_that_misses_after_a_removal_says_the_memory_changed(tiny):
    memory = store.load(tiny, embedder().model_id)
    demo.record(memory, scripted(), embedder(), tiny, questions=[{"id": "t1", "question": QUESTION}])
    rec = Recordings.open(tiny)
    assert rec.memory_fingerprint == memory.fingerprint()  # written in the header
    remove(tiny, "port")  # the Vell passage goes: the tracker's and the answer's prompts change
    with pytest.raises(StaleRecording, match=re.escape(stale.SENTENCES["recordings"])):
        run_ask(store.load(tiny), QUESTION, llm=Recordings.open(tiny).replay_llm(), embedder=embedder())


# ------------------------------------------------------------------ the pages
def test_ask_page_says_an_answer_and_a_traces_file_were_made_on_an_earlier_version(tiny):
    at = ask(ask_page(tiny))
    job = jobs.get_job(at.session_state[session.AppState.ask_job.key])
    passages = answer_passages(at)
    assert passages and TRACES not in plain(at)
    remove(tiny, "ada")  # chunk 0 goes: 'port' is chunk 0 of the live version
    at = no_exception(at.run())
    assert TRACES in plain(at)
    assert answer_passages(at) == passages  # the trace's own chunk numbers and titles, not the live memory's
    data = traces_json(job.result, {"question": QUESTION, "mode": "live", "model": "scripted-1"}).encode()
    at.file_uploader(key="ask_trace_file").set_value(("t.json", data, "application/json")).run()
    at = no_exception(click(at, "Open these traces"))
    assert "Showing traces opened from a file." in plain(at) and TRACES in plain(at)
    assert answer_passages(at) == passages


def test_ask_page_replaying_recordings_made_before_a_removal_says_why_it_misses(tiny):
    memory = store.load(tiny, embedder().model_id)
    demo.record(memory, scripted(), embedder(), tiny, questions=[{"id": "t1", "question": QUESTION}])
    remove(tiny, "port")
    at = ask_page(tiny, scripted("Grey Sea"))
    assert at.radio(key="ask_kind").value == "Demo question"
    click(at, "Ask")
    job = wait_for(at, session.AppState.ask_job.key)
    at = no_exception(at.run())
    assert job.status == jobs.FAILED and stale.SENTENCES["recordings"] in plain(at), plain(at)


def test_learn_page_says_the_trace_it_replays_was_made_on_an_earlier_version(tiny):
    from test_app_learn import asked, drawn, slider

    at, _ = asked(tiny)
    assert TRACES not in plain(at)
    remove(tiny, "ada")  # Ada Brennick, the question's seed, is in no document of the live version
    at = no_exception(at.run())
    assert TRACES in plain(at)
    assert drawn(at) == {"e:ada brennick", "e:ada brenick"}  # the trace's own seeds, drawn from the trace
    slider(at).set_value(2).run()  # the replay still steps through the trace's own graph
    assert {"e:port alder", "e:vell river"} <= drawn(no_exception(at)) and TRACES in plain(at)


def test_learn_page_replaying_a_demo_question_recorded_before_a_removal_says_why_it_cannot(tiny):
    from test_app_learn import LEARN

    memory = store.load(tiny, embedder().model_id)
    demo.record(memory, scripted(), embedder(), tiny, questions=[{"id": "t1", "question": QUESTION}])
    remove(tiny, "port")
    at = app(tiny).run()
    at.switch_page(LEARN).run()
    assert "This demo question cannot be replayed" in plain(no_exception(at))
    assert stale.SENTENCES["recordings"] in plain(at)


def test_evaluate_page_says_a_run_folder_was_made_on_an_earlier_version(home, tmp_path, monkeypatch):
    from memrag.app import eval_views as ev

    monkeypatch.setenv(ev.RUN_PATHS_ENV, "1")
    out = tmp_path / "pooled-run"
    config = EvalConfig(dataset="hotpotqa", data=evaluate.HOTPOT, out=out, scope="limit-pooled", limit=2)
    run_to_end(run_eval(config, llm=evaluate.scripted(), embedder=evaluate.embedder()))
    run = ev.load_run(out)
    path = ev.memory_path_of(run, {})
    at = evaluate.app().run()

    def open_run():
        at.text_input(key="eval_folder").set_value(str(out)).run()
        return no_exception(evaluate.click(at, "Open folder"))

    assert stale.SENTENCES["run"] not in evaluate.texts(open_run())
    at.selectbox(key="eval_q").set_value("hp2").run()
    passages = answer_passages(no_exception(at))
    assert passages
    remove(path, removal.document_names(store.load(path))[0])  # every later chunk number moves down one
    at = open_run()
    assert stale.SENTENCES["run"] in evaluate.texts(at)
    at.selectbox(key="eval_q").set_value("hp2").run()  # a question's stored traces still open, as they were
    assert sum("**Answer:**" in m.value for m in no_exception(at).markdown) == 4
    assert answer_passages(at) == passages
