"""A build job that can be watched and stopped: the running call stops part-way on a cancel, the
finished chunks stay, the per-file table says what happened to each file, the folder is listed
as an interrupted build and resuming it reads only what is left; failed files are retried."""

from __future__ import annotations

import threading
import time

from memrag.app import jobs
from memrag.app.memory_state import interrupted_build, resumable
from memrag.app.progress import model_activity, progress_figure
from memrag.app.work import build_work
from memrag.config import IndexParams
from memrag.index import pending, store
from memrag.index.readers import Document
from memrag.llm import watch
from scripted import HashEmbedder, ScriptedLLM
from test_app_pages import home  # noqa: F401  (the fixture: MEMRAG_HOME in a temporary folder)

DOCS = [Document("a", "Alpha", "Alpha met Beta in Tollimere.", "alpha.txt", "file"),
        Document("b", "Beta", "Beta sailed to Quellhaven.", "beta.txt", "file"),
        Document("c", "Gamma", "Gamma rowed to Skellan.", "gamma.txt", "file")]


def extraction(messages, stage):
    prompt = messages[-1]["content"]
    for who, where in (("Alpha", "Tollimere"), ("Beta", "Quellhaven"), ("Gamma", "Skellan")):
        if f"{who} " in prompt and where in prompt:
            return {"entities": [{"name": who, "type": "person", "description": "", "importance": 2}],
                    "triples": [[who, "went to", where]]}
    return "not JSON"


class StreamingLike(ScriptedLLM):
    """Answers Alpha at once; on Beta it 'writes' token after token until its watcher cancels,
    as the streamed embedded engine does, and counts the tokens on the watch."""

    def __init__(self) -> None:
        super().__init__({"index.extract": extraction})
        self.writing = threading.Event()

    def complete(self, messages, *, schema=None, max_tokens, stage):
        if "Beta sailed" in messages[-1]["content"]:
            self.writing.set()
            for n in range(1, 2000):
                watch.report(phase=watch.WRITING, tokens=n, tokens_per_s=20.0)
                if watch.stop_requested():
                    raise watch.CallCancelled("stopped part-way")
                time.sleep(0.01)
        return super().complete(messages, schema=schema, max_tokens=max_tokens, stage=stage)


def test_cancel_stops_the_running_call_keeps_finished_chunks_and_resumes(tmp_path):
    path = tmp_path / "notes"
    llm = StreamingLike()
    job = jobs.start_job("build", "b", build_work(path, DOCS, llm, HashEmbedder(), IndexParams(), name="notes"),
                         meta={"backend": "scripted"})
    assert llm.writing.wait(10)
    deadline = time.monotonic() + 5
    while "writing token" not in progress_figure(job.snapshot()).model and time.monotonic() < deadline:
        time.sleep(0.02)
    assert progress_figure(job.snapshot()).model.startswith("writing token")  # the panel and sidebar line
    asked = time.monotonic()
    job.cancel()
    assert job.wait(5) and job.status == jobs.CANCELLED, job.error
    assert time.monotonic() - asked < 3.0  # the fake writes a token every 10 ms; slack for a busy machine
    files = job.state["files"]
    assert [(f["source"], f["status"], f["done"]) for f in files.values()] == [
        ("alpha.txt", "done", 1), ("beta.txt", "cancelled", 0), ("gamma.txt", "cancelled", 0)]
    # not a saved memory yet, but listed as an interrupted build with its one finished chunk
    assert not store.is_memory_dir(path)
    assert interrupted_build(path) == "interrupted build: 1 of 3 chunks extracted (3 document(s))"
    left = resumable(path)
    assert [d.doc_id for d in left.documents] == ["a", "b", "c"] and left.name == "notes"
    calls = len(llm.calls)
    again = jobs.start_job("build", "b2", build_work(path, left.documents, ScriptedLLM(
        {"index.extract": extraction}), HashEmbedder(), IndexParams(), name=left.name))
    assert again.wait(30) and again.status == jobs.DONE, again.error
    assert len(llm.calls) == calls  # Alpha came from the journal, not the model
    assert [e.data["resumed"] for e in again.events if e.kind == "chunk_done"] == [True, False, False]
    assert store.is_memory_dir(path) and interrupted_build(path) == "" and resumable(path) is None
    assert {e.name for e in again.result["memory"].entities} >= {"Alpha", "Beta", "Gamma"}


def test_a_failed_file_is_shown_with_its_raw_reply_and_retried(tmp_path):
    path = tmp_path / "notes"
    broken = {"index.extract": lambda messages, stage: "not JSON" if "Gamma" in messages[-1]["content"]
              else extraction(messages, stage)}
    job = jobs.start_job("build", "b", build_work(path, DOCS, ScriptedLLM(broken), HashEmbedder(), IndexParams()))
    assert job.wait(30) and job.status == jobs.DONE, job.error
    gamma = job.state["files"]["c"]
    assert (gamma["status"], gamma["failed"], gamma["raw_reply"]) == ("failed", 1, "not JSON")
    assert [f["status"] for f in job.state["files"].values()] == ["done", "done", "failed"]
    assert resumable(path) is None  # a finished build leaves nothing pending
    retry = jobs.start_job("build", "r", build_work(path, [], ScriptedLLM({"index.extract": extraction}),
                                                    HashEmbedder(), IndexParams(), retry_failed=True))
    assert retry.wait(30) and retry.status == jobs.DONE, retry.error
    assert [(f["doc_id"], f["status"]) for f in retry.state["files"].values()] == [("c", "done")]
    assert retry.result["memory"].stats()["failures"] == 0


def test_a_damaged_pending_record_is_listed_as_such_and_not_offered_for_resuming(tmp_path):
    path = tmp_path / "notes"
    path.mkdir()
    (path / pending.PENDING).write_text("{not json", encoding="utf-8")
    assert interrupted_build(path).startswith("an interrupted build that cannot be resumed: pending.json cannot")
    assert resumable(path) is None


def test_model_activity_names_the_call_and_counts_the_others():
    now = time.monotonic()
    calls = [watch.CallState("index.extract", watch.PROMPT, now - 4, prompt_total=700, prompt_done=512),
             watch.CallState("index.extract", watch.WAITING, now - 1, ahead=1)]
    assert model_activity(calls, now) == ("reading 700 prompt tokens: 512 read (4 s into this call; "
                                          "1 more call(s) in flight)")
    assert model_activity([], now) == ""
    assert watch.CallState("s", watch.LOADING, now).text() == "loading the model"


def test_the_memory_page_lists_an_interrupted_build_and_resumes_it(home):
    from test_app_pages import DOCS as PAGE_DOCS, app, click, no_exception, plain, wait_for
    from memrag.app import session

    path = home / "memories" / "notes"
    pending.write(path, PAGE_DOCS[:2], ["not-yet-1", "not-yet-2"], "notes")
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Saved memory").run()
    assert "notes: interrupted build: 0 of 2 chunks extracted (2 document(s))." in plain(no_exception(at))
    assert not any(b.label == "Open this memory" for b in at.button)  # nothing saved to open yet
    at = click(at, "Resume the interrupted build")
    job = wait_for(at, session.AppState.build_job.key)
    assert job.status == jobs.DONE, job.error
    assert [f["status"] for f in job.state["files"].values()] == ["done", "done"]
    at = no_exception(at.run())
    assert at.session_state[session.AppState.active_memory.key] == str(path)
    assert store.is_memory_dir(path) and resumable(path) is None
