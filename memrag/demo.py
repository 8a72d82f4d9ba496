"""The shipped demo: the sample corpus, its prebuilt memory and its recordings."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Callable

from memrag.ask import METHODS, ask
from memrag.recordings import RecordingLLM

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_corpus"
EXTRACT_COMMAND = ("python -m memrag index sample_corpus/docs --memory sample_corpus/memory "
                   "--name 'Varrow Coast (sample)' --backend embedded")


def sample_memory_dir(backend: str = "embedded", model: str = "") -> Path:
    """The shipped memory (built and recorded with the embedded model), or the folder beside it
    for a memory built with another LLM (`memory-ollama-phi4`, …): never over the shipped one."""
    if backend == "embedded":
        return SAMPLE_DIR / "memory"
    slug = re.sub(r"[^a-z0-9]+", "-", f"{backend}-{model}".lower()).strip("-")
    return SAMPLE_DIR / f"memory-{slug}"


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
           progress: Callable[[int, int, str, float], None] | None = None) -> Path:
    """Ask every demo question with every method on a live LLM and write the raw responses."""
    questions = questions if questions is not None else sample_questions()
    rec = RecordingLLM(llm)
    path = None
    for i, q in enumerate(questions):
        rec.question = q["question"]
        t0 = time.perf_counter()
        ask(memory, q["question"], llm=rec, embedder=embedder, methods=methods)
        # Written after every question: an interrupted recording keeps what it has
        # (and the response cache makes the rerun of those questions free).
        path = rec.write(memory_dir, [x["question"] for x in questions[: i + 1]])
        if progress:
            progress(i + 1, len(questions), q["id"], time.perf_counter() - t0)
    return path or rec.write(memory_dir, [])
