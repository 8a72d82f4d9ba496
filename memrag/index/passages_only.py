"""A memory of passages alone (chunks and their vectors, no graph): what dense retrieval needs.

Dense evaluations on the pooled 2Wiki / HotpotQA corpora would otherwise wait a day for LLM
extraction whose graph dense retrieval never reads. Such a memory says so in `llm`, and the
graph methods refuse it (see `is_passages_only`) instead of silently finding nothing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

from memrag.index.build import BuildEvent, embed_new_rows, new_memory, save_and_finish
from memrag.config import IndexParams
from memrag.embed import Embedder
from memrag.index.chunk import chunk_document
from memrag.index.readers import Document
from memrag.index.memory import ChunkRow, DocRow, ExtractionLog

PASSAGES_ONLY = "passages-only"


def is_passages_only(memory: Any) -> bool:
    return (getattr(memory, "llm", None) or {}).get("backend") == PASSAGES_ONLY


def build_passages_only(path: Path | None, documents: list[Document], embedder: Embedder, params: IndexParams,
                        name: str = "") -> Iterator[BuildEvent]:
    """Chunk and embed `documents` into a new memory with no entities or triples."""
    t_start = time.perf_counter()
    m = new_memory(embedder, params, name)
    m.llm = {"backend": PASSAGES_ONLY, "model": "none (no extraction: dense retrieval only)"}
    seen: set[tuple[str, str]] = set()
    todo = []
    for d in documents:
        if (d.title, d.text) in seen:
            yield BuildEvent("skipped", {"doc_id": d.doc_id, "title": d.title, "reason": "duplicate passage"})
            continue
        seen.add((d.title, d.text))
        todo.append(d)
    plan = [(d, chunk_document(d, params)) for d in todo]
    yield BuildEvent("start", {"documents": len(plan), "chunks": sum(len(cs) for _, cs in plan)})
    for d, chunks in plan:
        m.documents.append(DocRow(d.doc_id, d.title, d.text, d.source, d.kind, dict(d.meta)))
        for c in chunks:
            chunk_id = len(m.chunks)
            m.chunks.append(ChunkRow(chunk_id, d.doc_id, c.index, c.title, c.text))
            m.extraction_log[chunk_id] = ExtractionLog(chunk_id, PASSAGES_ONLY)
    yield from embed_new_rows(m, embedder)
    yield from save_and_finish(m, path, t_start)
