"""The app's job bodies: building a memory, asking, comparing two parameter sets.

Each returns the function a background job runs (memrag.app.jobs); it reports progress as
events and keeps what the page draws while it runs (the growing graph) in `job.state`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from memrag.app.estimates import expected_ask_calls, expected_compare_calls
from memrag.app.jobs import CANCELLED, Job, JobCancelled, JobLLM
from memrag.app.view_cache import made
from memrag.explain import ablations
from memrag.index.memory import Memory
from memrag.llm.base import LLM


def build_work(path: Path | None, documents: list, llm: LLM | None, embedder: Any, params: Any, *,
               parallel: int = 1, name: str = "", retry_failed: bool = False) -> Callable[[Job], Any]:
    """A job body that runs `build_memory` and keeps the growing graph and a per-file table in
    `job.state`.

    The job holds its own LLM and embedder references, so the page that started it may go.
    Every model call is watched (`JobLLM`): a cancel stops the running call part-way. Chunks
    already extracted stay in the memory's journal and the unfinished work in its pending
    record, so the folder is listed as an interrupted build and building again resumes
    without new tokens for them.
    """
    from memrag.index.build import build_memory

    def work(job: Job) -> Any:
        job.update_state(lambda s: s.update(nodes={}, edges=[], coref_links=[], failures=[], current=None, titles={},
                                            skipped=[], chunks_done=0, resumed=0, fresh_tokens=0, tokens_written=0,
                                            files={}))
        watched = _BuildLLM(llm, job, progress=False) if llm is not None else None  # the chunks are the steps
        memory = None
        try:
            for ev in build_memory(path, documents, watched, embedder, params, parallel=parallel, name=name,
                                   retry_failed=retry_failed):
                job.check_cancel()
                memory = _build_event(job, ev) or memory
        except BaseException as e:  # the files not finished are marked with how the build ended
            ended = CANCELLED if isinstance(e, JobCancelled) else "stopped"
            job.update_state(lambda s: _unfinished_files(s, ended))
            raise
        return {"path": str(path) if path is not None else None, "memory": memory}

    return work


class _BuildLLM(JobLLM):
    """A build's JobLLM that also counts the tokens its fresh calls wrote (the panel's "tokens written")."""

    def complete(self, messages: Any, **kwargs: Any) -> Any:
        c = super().complete(messages, **kwargs)
        if not c.cached:
            self.job.update_state(lambda s: s.update(tokens_written=s.get("tokens_written", 0)
                                                     + (c.completion_tokens or 0)))
        return c


def _build_event(job: Job, ev: Any) -> Any:
    """Report one build event on the job; returns the memory at the last one."""
    d = ev.data
    if ev.kind == "start":
        job.update_state(lambda s: s["files"].update(
            {f["doc_id"]: {**f, "status": QUEUED, "done": 0, "failed": 0} for f in d.get("files", [])}))
        job.report("start", {k: v for k, v in d.items() if k != "files"}, total=d["chunks"], done=0,
                   note=f"{d['chunks']} chunk(s) to read")
    elif ev.kind == "chunk_started":
        job.update_state(lambda s: _chunk_started(s, d))
        job.report("chunk_started", {k: d[k] for k in ("i", "total", "doc_id", "title")},
                   note=f"reading chunk {d['i'] + 1} of {d['total']}: {d['title'][:80]}")
    elif ev.kind == "chunk_done":
        job.update_state(lambda s: _add_chunk(s, d))
        job.report("chunk_done", {k: d[k] for k in ("i", "chunk_id", "doc_id", "ok", "error", "resumed",
                                                    "seconds", "fresh_tokens")},
                   done=d["i"] + 1, step_seconds=None if d.get("resumed") else d.get("seconds"))
    elif ev.kind == "document_done":
        job.update_state(lambda s: _document_done(s, d))
        job.report("document_done", {"doc_id": d["doc_id"], "new_entities": d.get("new_entities"),
                                     "coref_links": len(d.get("coref_links", []))})
    elif ev.kind == "skipped":
        job.update_state(lambda s: s["skipped"].append(d))
        job.report("skipped", d)
    elif ev.kind == "embedding":
        job.report("embedding", d, note=f"embedding {d['count']} {d['what']}")
    elif ev.kind == "saved":
        job.report("saved", d, note="saved")
    elif ev.kind == "done":
        job.report("done", d, note="finished")
        return ev.memory
    return None


# A file's state in a build's per-file table.
QUEUED, EXTRACTING, DONE_FILE, FAILED_FILE = "queued", "extracting", "done", "failed"


def _unfinished_files(state: dict[str, Any], ended: str) -> None:
    for f in state.get("files", {}).values():
        if f["status"] in (QUEUED, EXTRACTING):
            f["status"] = ended


def _document_done(state: dict[str, Any], d: dict[str, Any]) -> None:
    state["coref_links"].extend(d.get("coref_links", []))
    f = state["files"].get(d["doc_id"])
    if f is not None:
        f["status"] = FAILED_FILE if f["failed"] else DONE_FILE


def _chunk_started(state: dict[str, Any], d: dict[str, Any]) -> None:
    state["current"] = {"i": d["i"], "title": d["title"], "text": d["text"]}
    state["titles"][d["i"]] = d["title"]  # a failed chunk is later named by its title
    f = state["files"].get(d["doc_id"])
    if f is not None:
        f["status"] = EXTRACTING


def _add_chunk(state: dict[str, Any], d: dict[str, Any]) -> None:
    for n in d.get("nodes", []):
        state["nodes"].setdefault(n["key"], {"name": n["name"], "type": n["type"]})
    state["edges"].extend(d.get("edges", []))
    state["chunks_done"] += 1
    state["resumed"] += int(bool(d.get("resumed")))
    state["fresh_tokens"] += d.get("fresh_tokens") or 0
    f = state["files"].get(d["doc_id"])
    if f is not None:
        f["done"] += 1
        if not d.get("ok"):
            f["failed"] += 1
            f["error"], f["raw_reply"] = d.get("error") or "", d.get("raw_reply") or ""
    if not d.get("ok"):
        state["failures"].append({"chunk_id": d["chunk_id"], "doc_id": d["doc_id"],
                                  "title": state.get("titles", {}).get(d["i"], ""), "error": d.get("error") or "",
                                  "raw_reply": d.get("raw_reply") or ""})


def recorded_replay(memory: Memory, rec: Any, embedder: Any, question: str, methods: list[str],
                    params: dict[str, Any]) -> list[Any]:
    """`ask` from the memory's recordings (no model), once per memory, recordings, embedder,
    question, methods and parameters for the process: the same inputs replay to the same traces,
    so the Ask page replays the demo question it shows in the background (`prefetch_replay`) and
    the click takes those traces with their graphs made. A recording the replay lacks raises
    StaleRecording, as a replay in the job would."""
    from memrag.ask import ask

    return made("recorded replay", (memory, rec, embedder), (question, tuple(methods), repr(params)),
                lambda: ask(memory, question, llm=rec.replay_llm(), embedder=embedder, methods=methods,
                            params=params))


def ask_work(memory: Memory, question: str, llm: LLM, embedder: Any, methods: list[str],
             params: dict[str, Any], *, corpus: str = "", replay_of: Any = None) -> Callable[[Job], Any]:
    """A job body that runs `memrag.ask.ask` with every LLM call going through `JobLLM`; with
    `replay_of` (the memory's recordings) a recorded replay, shared by every ask of the same inputs."""
    from memrag.ask import ask

    def work(job: Job) -> Any:
        if replay_of is not None:
            return recorded_replay(memory, replay_of, embedder, question, methods, params)
        wrapped = JobLLM(llm, job, expected_calls=expected_ask_calls(methods, params))
        job.report("start", {"methods": list(methods)}, total=wrapped.expected_calls, done=0,
                   note="embedding the question")
        return ask(memory, question, llm=wrapped, embedder=embedder, methods=methods, params=params,
                   corpus=corpus)

    return work


def compare_work(memory: Memory, question: str, llm: Any, embedder: Any, method: str,
                 variants: list[ablations.Variant]) -> Callable[[Job], list[ablations.Variant]]:
    """A job body running both variants, every LLM call through `JobLLM` (progress and cancel)."""
    if method not in ablations.METHODS:
        raise ValueError(f"compare mode is for {', '.join(ablations.METHODS)}, not {method!r}")

    def work(job: Job) -> list[ablations.Variant]:
        wrapped = JobLLM(llm, job, expected_calls=expected_compare_calls(method, [v.params for v in variants]))
        job.report("start", {"method": method}, total=wrapped.expected_calls, done=0, note="embedding the question")
        return ablations.run_variants(memory, question, wrapped, embedder, method, variants)

    return work
