"""Probes of the Memory page's build form (issue #35): after a Cancel the form still holds what the
user chose (the source, the files, the name), and an interrupted build — cancelled, killed, or with
a damaged record — can be discarded as well as resumed, a memory saved in the same folder kept.

Real AppTest runs of the Memory page; the build's model is test_build_job's scripted LLM that writes
until its call is stopped, as the streamed embedded engine does.
"""

from __future__ import annotations

import threading

import pytest

from memrag.app import jobs, session
from memrag.app.memory_state import interrupted_build, saved_memories
from memrag.index import pending, store
from test_build_job import StreamingLike
from test_app_pages import DOCS, app, click, home, no_exception, plain, tiny, wait_for  # noqa: F401

NOTES = ("harbour-notes.txt", b"Beta sailed to Quellhaven.")  # StreamingLike writes on it until stopped


def name_box(at):
    return next(t for t in at.text_input if t.label == "memory name")


def built_and_cancelled(home):
    """The Memory page after an upload named 'harbour' was built and cancelled during its first call."""
    llm = StreamingLike()
    at = no_exception(app(llm=llm).run())
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([(NOTES[0], NOTES[1], "text/plain")])
    name_box(at).set_value("harbour").run()
    at = click(no_exception(at), "Build memory")
    assert llm.writing.wait(20)
    at = click(no_exception(at), "Cancel")
    job = jobs.get_job(at.session_state[session.AppState.build_job.key])
    assert job.wait(20) and job.status == jobs.CANCELLED, job.error
    return no_exception(at.run())


@pytest.mark.probe("a build of an upload named 'harbour' cancelled during its first chunk",
                   "the form still shows Upload files, the files and the name 'harbour', ready to build again",
                   group="build")
def test_after_cancel_the_form_keeps_the_source_the_files_and_the_name(home):
    at = built_and_cancelled(home)
    assert "The build was cancelled" in plain(at)
    # held by the server, and the start value a browser draws the form from afresh (the page drew
    # no form while the build ran): on main the radio started at 'Sample corpus', the name at 'my-notes'
    source = at.radio(key="memory_source")
    assert (source.value, source.options[source.proto.default]) == ("Upload files", "Upload files")
    assert (name_box(at).value, name_box(at).proto.default) == ("harbour", "harbour")
    text = plain(at)
    assert "Kept from your last upload: harbour-notes.txt" in text
    assert "1 document(s), 1 chunk(s) → memory 'harbour'" in text
    assert not next(b for b in at.button if b.label == "Build memory").disabled
    # the files can be let go, and a box the user empties forgets them
    at = click(at, "Forget these files")
    assert "Kept from your last upload" not in plain(no_exception(at))
    assert not [b for b in at.button if b.label == "Build memory"]


@pytest.mark.probe("a cancelled first build: discard it instead of resuming",
                   "the chunks and the folder are gone, with a sentence; nothing else is touched", group="build")
def test_a_cancelled_first_build_can_be_discarded(home):
    at = built_and_cancelled(home)
    folder = home / "memories" / "harbour"
    assert interrupted_build(folder)  # left as an interrupted build
    at = click(at, "Yes, discard it")
    assert "The interrupted build harbour was discarded." in plain(no_exception(at))
    assert not folder.exists() and saved_memories() == []


@pytest.mark.probe("an interrupted build beside a saved memory, and one whose record is damaged, discarded",
                   "the pending work goes, the saved memory stays and opens; a damaged record can be discarded",
                   group="build")
def test_an_interrupted_build_in_a_saved_memory_or_damaged_can_be_discarded(tiny):
    pending.write(tiny, DOCS[:2], ["not-yet-1", "not-yet-2"], "tiny")
    damaged = tiny.parent / "damaged"
    damaged.mkdir()
    (damaged / pending.PENDING).write_text("{not json", encoding="utf-8")
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Saved memory").run()
    at.selectbox[0].set_value("tiny").run()
    assert "tiny: interrupted build: 0 of 2 chunks extracted" in plain(at)
    at = click(at, "Yes, discard it")
    assert "the memory saved there is unchanged" in plain(no_exception(at))
    assert pending.read(tiny) is None and store.is_memory_dir(tiny)
    assert len(store.load(tiny).documents) == 3
    at.selectbox[0].set_value("damaged").run()
    assert "cannot be resumed" in plain(at) and not [b for b in at.button if b.label.startswith("Resume")]
    at = click(at, "Yes, discard it")
    assert "The interrupted build damaged was discarded." in plain(no_exception(at))
    assert not damaged.exists() and [m["folder"] for m in saved_memories()] == ["tiny"]


def test_a_running_build_cannot_be_discarded(home):
    from memrag.app.memory_state import discard_interrupted

    path = home / "memories" / "busy"
    pending.write(path, DOCS[:1], ["k"], "busy")
    gate = threading.Event()
    job = jobs.start_job("build", "b", lambda job: gate.wait(20), meta={"path": str(path)})
    try:
        with pytest.raises(ValueError, match="is running: cancel it first"):
            discard_interrupted(path)
        assert pending.read(path) is not None
    finally:
        gate.set()
        job.wait(20)
    with pytest.raises(ValueError, match="not one of this app's memories"):
        discard_interrupted(home)
