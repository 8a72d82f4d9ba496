"""The shipped demo: the sample corpus, its prebuilt memory and its recordings."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any, Callable

from memrag.ask import METHODS, ask
from memrag.llm.recordings import EXTRACTION_FILE, RecordingLLM, Recordings, ReuseRecordedLLM
from memrag.sample import (ROOT, SAMPLE_DIR, SAMPLE_FIXED, is_sample_memory, sample_memory_dir,  # noqa: F401 (the demo's face)
                           sample_refusal)


def sample_docs_dir() -> Path:
    return SAMPLE_DIR / "docs"


def sample_questions() -> list[dict[str, Any]]:
    return json.loads((SAMPLE_DIR / "questions.json").read_text(encoding="utf-8"))


def gold_chunk_ids(memory, gold_docs: list[str]) -> list[int]:
    """Chunks of the gold documents (a sample document is one chunk, but be general)."""
    wanted = set(gold_docs)
    return [c.chunk_id for c in memory.chunks if c.doc_id in wanted]


def record(memory, llm, embedder, memory_dir: Path, methods: tuple[str, ...] = METHODS,
           questions: list[dict[str, Any]] | None = None,
           progress: Callable[[int, int, str, float], None] | None = None,
           reuse: Recordings | None = None) -> Path:
    """Ask every demo question with every method on a live LLM and write the raw responses.
    With `reuse` (the recordings being replaced), a call they hold is answered from them and only
    the calls that changed reach the model."""
    questions = questions if questions is not None else sample_questions()
    rec = RecordingLLM(ReuseRecordedLLM(reuse, llm) if reuse is not None else llm)
    made_on = memory.fingerprint()  # in the header: a later version of the memory then says why a replay misses
    path = None
    for i, q in enumerate(questions):
        rec.question = q["question"]
        t0 = time.perf_counter()
        ask(memory, q["question"], llm=rec, embedder=embedder, methods=methods)
        # Written after every question: an interrupted recording keeps what it has
        # (and the response cache makes the rerun of those questions free).
        path = rec.write(memory_dir, [x["question"] for x in questions[: i + 1]], memory_fingerprint=made_on)
        if progress:
            progress(i + 1, len(questions), q["id"], time.perf_counter() - t0)
    return path or rec.write(memory_dir, [], memory_fingerprint=made_on)


def extract(llm, embedder, memory_dir: Path, *, recorded: bool = False, name: str = "Varrow Coast (sample)",
            progress: Callable[[int, int, str, bool], None] | None = None):
    """Build the sample memory from its documents, keeping every extraction reply.

    Live: each reply is written to `extraction.jsonl` beside the memory after its chunk, so a
    change to post-processing re-runs from the recordings (`recorded=True`) without the model.
    Returns the memory's build summary (the "done" event's data).
    """
    from memrag.index import store
    from memrag.index.build import build_memory
    from memrag.config import IndexParams
    from memrag.index.readers import read_paths

    memory_dir = Path(memory_dir)
    params = IndexParams()
    report = read_paths([sample_docs_dir()], params)
    if recorded:
        rec = Recordings.open(memory_dir, EXTRACTION_FILE)
        if rec is None:
            raise ValueError(f"no {EXTRACTION_FILE} in {memory_dir}: extract live once first "
                             "(python -m memrag demo extract)")
        source = rec.replay_llm()
    else:
        source = RecordingLLM(llm)
    for p in memory_dir.glob("v[0-9]*"):
        shutil.rmtree(p)
    (memory_dir / store.CURRENT).unlink(missing_ok=True)
    (memory_dir / "journal.sqlite").unlink(missing_ok=True)  # post-processing may have changed
    memory_dir.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {}
    for ev in build_memory(memory_dir, report.documents, source, embedder, params, name=name):
        if ev.kind == "chunk_started" and isinstance(source, RecordingLLM):
            source.question = ev.data["title"]
        elif ev.kind == "chunk_done":
            if isinstance(source, RecordingLLM):
                source.write(memory_dir, [], EXTRACTION_FILE)
            if progress:
                progress(ev.data["i"] + 1, ev.data.get("total", 0) or len(report.documents),
                         ev.data.get("doc_id", ""), bool(ev.data.get("ok", True)))
        elif ev.kind == "done":
            summary = dict(ev.data)
    return summary
