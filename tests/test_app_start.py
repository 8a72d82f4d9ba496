"""The start page under AppTest: what memrag is, the analogies, the three ways in (each one click),
the backend and memory shown; and the Memory page's build states (no previous memory during a
build, Build not clickable again, a one-chunk build's graph, failed chunks named)."""

from __future__ import annotations

import re
import threading
import time

from memrag.app import estimates, jobs, session, start_views
from memrag.app.work import build_work
from memrag.config import IndexParams
from memrag.methods import registry
from scripted import ScriptedLLM
from test_app_pages import (DOCS, EXTRACTIONS, QUESTION, app, click, embedder, frames, no_exception, pictures,
                            plain, scripted, wait_for)
from test_app_pages import home, recorded, tiny  # noqa: F401 (fixtures)


def test_the_start_page_is_the_default_and_says_what_memrag_is(home):
    at = no_exception(app(page=None).run())
    assert at.title[0].value.startswith("memrag")
    md = plain(at)
    assert "knowledge graph" in md and "place cells" in md and "engram" in md
    for label in registry.LABELS.values():  # every registered method, HippoRAG 2 too once it is there
        assert label in start_views.methods_line()
    assert ("HippoRAG 2" in md) == ("hipporag2" in registry.LABELS)  # named only when registered
    assert "LLM: scripted" in md  # the backend, visible
    assert "Active memory:" in md
    assert {b.label for b in at.button} >= {"Try a demo question", "Build from your own documents"}
    assert any(p.proto.page == "learn" and p.proto.label == "Learn the analogy" for p in at.get("page_link"))


def test_try_a_demo_question_lands_on_ask_with_the_sample_and_its_question(recorded, tmp_path):
    other = tmp_path / "other"  # a saved memory was open: the demo opens the sample anyway
    at = app(other, page=None)
    at = no_exception(click(no_exception(at.run()), "Try a demo question"))
    assert at.title[0].value == "Ask"
    assert at.session_state[session.AppState.active_memory.key] == str(recorded)
    assert at.radio(key="ask_kind").value == "Demo question"
    assert at.selectbox(key="ask_demo").value == 0
    assert at.selectbox(key="ask_demo").format_func(0).startswith("t1: " + QUESTION)  # then the guide's tags
    assert any(b.label == "Ask" and not b.disabled for b in at.button)


def test_build_from_your_documents_opens_the_upload_form(home):
    at = no_exception(click(no_exception(app(page=None).run()), "Build from your own documents"))
    assert at.title[0].value == "Memory"
    assert at.radio(key="memory_source").value == "Upload files" and len(at.file_uploader) == 1


def _held_build(home, docs, llm):
    """A real build job over `docs` whose embedding step waits for the returned gate."""
    gate = threading.Event()

    class Held:
        def __init__(self, inner):
            self.inner = inner
            self.model_id = inner.model_id

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def encode(self, *a, **k):
            gate.wait(30)
            return self.inner.encode(*a, **k)

    path = home / "memories" / "held"
    job = jobs.start_job("build", "building held", build_work(path, docs, llm, Held(embedder()), IndexParams()),
                         total=len(docs), meta={"path": str(path)})
    return job, gate


def test_a_running_one_chunk_build_shows_its_graph_and_nothing_of_the_previous_memory(tiny, home):
    job, gate = _held_build(home, [DOCS[0]], scripted())
    try:
        deadline = time.time() + 20
        while job.state.get("chunks_done", 0) < 1 and time.time() < deadline:
            job.wait(0.05)
        at = app(tiny)
        at.session_state[session.AppState.build_job.key] = job.id
        at = no_exception(at.run())
        assert job.status == jobs.RUNNING
        (drawn,) = pictures(at)  # the growing graph of the one chunk read, and no other graph
        assert {c for c in drawn if c.startswith("node|")} == {"node|e:ada brennick", "node|e:ada brenick",
                                                                "node|e:port alder"}
        assert frames(at) == []
        assert not at.tabs  # the previous memory's tabs are gone while it builds
        assert not at.file_uploader and not any(b.label == "Build memory" for b in at.button)
    finally:
        gate.set()
        job.wait(30)


def test_build_memory_is_not_clickable_again_until_the_inputs_change(home):
    estimates.THROUGHPUT.clear()  # earlier tests' calls were measured in this process
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain")])
    at = no_exception(at.run())
    assert "first estimate, not yet measured on this machine" in plain(at)
    click(at, "Build memory")
    assert wait_for(at, session.AppState.build_job.key).status == jobs.DONE
    at = no_exception(at.run())
    build = next(b for b in at.button if b.label == "Build memory")
    assert build.disabled and "change the files or the name to build again" in plain(at)
    next(t for t in at.text_input if t.label == "memory name").set_value("other-notes").run()
    assert not next(b for b in no_exception(at).button if b.label == "Build memory").disabled


def test_failed_chunks_are_named_with_their_raw_reply(home):
    def extract(messages, stage):
        return EXTRACTIONS[0] if "Ada Brennick was born" in messages[-1]["content"] else "<b>not JSON</b>"

    path = home / "memories" / "failing"
    job = jobs.start_job("build", "building failing",
                         build_work(path, [DOCS[0], DOCS[1]], ScriptedLLM({"index.extract": extract}), embedder(),
                                    IndexParams()), total=2, meta={"path": str(path)})
    assert job.wait(30) and job.status == jobs.DONE
    at = app(path)
    at.session_state[session.AppState.build_job.key] = job.id
    at = no_exception(at.run())
    assert "could not be extracted: chunk 1 (Port Alder)" in plain(at)  # the build's own summary
    at.session_state["mem_tabs"] = "Indexing cost"
    at = no_exception(at.run())
    assert "Failed chunks: chunk 1 (Port Alder)" in plain(at)
    assert any("not JSON" in c.value for c in at.code)
    assert any(re.sub(r"\\(.)", r"\1", e.label).startswith("chunk 1 (Port Alder)") for e in at.expander)


def test_a_build_started_while_the_model_loads_waits_for_it_not_for_chunk_one(home, monkeypatch):
    """The panel and the sidebar say the job waits for the model; no chunk is blamed."""
    from memrag.llm import preload

    preload.reset()
    monkeypatch.setenv("MEMRAG_PRELOAD", "1")
    loaded, gate = threading.Event(), threading.Event()
    preload.start(lambda: (loaded.set(), gate.wait(30)))  # a slow fake loader

    def reading(job: jobs.Job) -> None:
        job.update_state(lambda s: s.update(current={"i": 0, "title": "Ada", "text": "Ada was born."}, failures=[]))
        job.report("chunk_started", note="reading chunk 1 of 1: Ada")
        gate.wait(30)

    job = jobs.start_job("build", "building waiting", reading, total=1, estimate_s=5.0,
                         meta={"backend": "embedded"})
    try:
        at = app()
        at.session_state[session.AppState.build_job.key] = job.id
        at = no_exception(at.run())
        md = plain(at)
        figure = "building waiting: 0 of 1, waiting for the model to load"
        assert re.sub(r"\\(.)", r"\1", at.get("progress")[0].proto.text) == figure  # the panel
        assert figure in re.sub(r"\\(.)", r"\1", " ".join(c.value for c in at.sidebar.caption))  # the sidebar
        assert "Loading the model" in md
        assert "reading chunk 1" not in md and "Reading chunk" not in md and "taking longer" not in md
    finally:
        gate.set()
        job.wait(10)
        preload.wait(10)
        preload.reset()


def test_the_start_page_guide_groups_the_recorded_questions_and_opens_one_on_ask(recorded, tmp_path):
    """The guide is worked out from the recordings when asked for, says how, and each question opens
    on the Ask page in one click, tagged there with its groups."""
    at = no_exception(app(tmp_path / "other", page=None).run())
    assert "Computed now from the recorded replies" not in plain(at)  # nothing worked out before it is asked for
    at = no_exception(at.toggle(key="start_guide").set_value(True).run())
    md = plain(at)
    assert "Computed now from the recorded replies" in md and "every method right" in md
    assert "Every method's answer matches the reference" in md  # how the group was computed
    button = next(b for b in at.button if b.label == "open on Ask")
    at = no_exception(button.click().run())
    assert at.title[0].value == "Ask" and at.selectbox(key="ask_demo").value == 0
    assert " · " in at.selectbox(key="ask_demo").format_func(0)  # tagged with its group
