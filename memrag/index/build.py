"""Building a memory: extraction, integration, embedding, saving — as a stream of events.

`build_memory(...)` is a generator: the app draws the graph and coreference
links as they form, the CLI draws a progress bar, tests read the events. The
last event is `done` with the memory. Every extracted chunk is written to a
journal beside the memory at once, so a build killed half-way and started again
re-uses those chunks and spends no new tokens on them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from memrag.durable import storage_guard
from memrag.index import pending, store
from memrag.index.cleanup import name_quality
from memrag.config import IndexParams, params_dict
from memrag.embed import Embedder
from memrag.index.extract import Extraction, ExtractOutcome, Mention, extract_chunk, postprocess
from memrag.index.chunk import ChunkText, chunk_document
from memrag.index.readers import Document
from memrag.llm.base import LLM, LLMBackendError
from memrag.index.memory import ChunkRow, DocRow, EngramRow, ExtractionLog, Memory, TripleRow
from memrag.index.normalise import entity_key
from memrag import prompts
from memrag.prompts import version_for


# Fresh failures in a row that stop a build: one bad reply fails one chunk, but this many in a
# row means the server or model is broken, and going on would spend time on nothing.
MAX_FAILED_IN_A_ROW = 5


class BuildStopped(LLMBackendError):
    """A build gave up before its end; every chunk extracted so far is kept in its journal."""


@dataclass
class BuildEvent:
    kind: str  # start | skipped | chunk_started | chunk_done | document_done | embedding | saved | done
    data: dict[str, Any] = field(default_factory=dict)
    memory: Memory | None = None


# ------------------------------------------------------------------ journal
JOURNAL_KEPT = ("Chunks already extracted are kept in the build journal and the memory's previous version is "
                "unchanged: make room or fix the folder, then run the same build again to resume.")


class Journal:
    """Per-chunk extraction results, committed one by one (the resume point). A disk fault is a
    StorageError naming the journal."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with storage_guard(path, "open the build journal", JOURNAL_KEPT):
            path.parent.mkdir(parents=True, exist_ok=True)
            self.con = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
            self.con.execute("PRAGMA journal_mode=WAL")
            self.con.execute("CREATE TABLE IF NOT EXISTS extracted (key TEXT PRIMARY KEY, outcome TEXT)")
            self.con.commit()

    def get(self, key: str) -> ExtractOutcome | None:
        with storage_guard(self.path, "read the build journal", JOURNAL_KEPT):
            row = self.con.execute("SELECT outcome FROM extracted WHERE key=?", (key,)).fetchone()
        return None if row is None else _outcome_from_json(row[0])

    def put(self, key: str, outcome: ExtractOutcome) -> None:
        with storage_guard(self.path, "write the build journal", JOURNAL_KEPT):
            self.con.execute("INSERT OR REPLACE INTO extracted VALUES (?, ?)", (key, _outcome_to_json(outcome)))
            self.con.commit()

    def close(self) -> None:
        self.con.close()


def _outcome_to_json(o: ExtractOutcome) -> str:
    return json.dumps({"extraction": asdict(o.extraction) if o.extraction else None,
                       "calls": [asdict(c) for c in o.calls], "error": o.error})


def _outcome_from_json(s: str) -> ExtractOutcome:
    from memrag.trace import LLMCallRecord

    d = json.loads(s)
    ex = d["extraction"]
    extraction = (Extraction([Mention(**m) for m in ex["entities"]], ex["triples"], dict(ex.get("cleanup") or {}))
                  if ex else None)
    return ExtractOutcome(extraction, [LLMCallRecord(**c) for c in d["calls"]], d["error"])


def chunk_key(llm: LLM, chunk: ChunkText) -> str:
    blob = json.dumps([version_for("index.extract"), prompts.extract_messages(chunk.title, chunk.text),
                       prompts.EXTRACT_SCHEMA, llm.identity()], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


# ------------------------------------------------------------------ integration
def integrate_chunk(memory: Memory, chunk_id: int, extraction: Extraction | None) -> tuple[list[int], list[int]]:
    """Append a chunk's engrams and triples; returns (new engram ids, new triple ids)."""
    new_e, new_t = [], []
    if extraction is None:
        return new_e, new_t
    for m in extraction.entities:
        eid = len(memory.engrams)
        memory.engrams.append(EngramRow(eid, entity_key(m.name), m.name, m.type, m.description,
                                        m.importance, chunk_id))
        new_e.append(eid)
    for head, rel, tail in extraction.triples:
        tid = len(memory.triples)
        memory.triples.append(TripleRow(tid, entity_key(head), head, rel, entity_key(tail), tail, chunk_id))
        new_t.append(tid)
    return new_e, new_t


def refresh_entity_vectors(memory: Memory, embedder: Embedder, old_names: dict[str, str]) -> list[str]:
    """Rebuild entity nodes, embedding only nodes that are new or whose display name changed.
    `old_names` is the nodes' names before, in the order of `memory.entity_vecs`' rows.
    Returns the keys of nodes that are new."""
    vecs = memory.entity_vecs
    known = {k: (name, vecs[i]) for i, (k, name) in enumerate(old_names.items()) if i < len(vecs)}
    return [k for k in embed_entities(memory, embedder, known) if k not in old_names]


def embed_entities(memory: Memory, embedder: Embedder, known: dict[str, tuple[str, np.ndarray]]) -> list[str]:
    """Rebuild entity nodes from the engrams and their vectors: a node keeps the vector `known` holds
    for its key when it still has the name known with it; every other node's name is embedded.
    Returns the keys embedded."""
    memory.rebuild_derived()
    todo = [n for n in memory.entities if n.key not in known or known[n.key][0] != n.name]
    fresh = embedder.encode([n.name for n in todo]) if todo else np.zeros((0, memory.dim), np.float32)
    fresh_of = {n.key: fresh[i] for i, n in enumerate(todo)}
    rows = [fresh_of[n.key] if n.key in fresh_of else known[n.key][1] for n in memory.entities]
    memory.entity_vecs = np.vstack(rows).astype(np.float32) if rows else np.zeros((0, memory.dim), np.float32)
    memory._indices.pop("entities", None)
    memory._coref_cache.clear()
    return [n.key for n in todo]


def coref_links_for(memory: Memory, new_keys: list[str], top: int, threshold: float) -> list[dict[str, Any]]:
    """Coreference links that involve a new node: its own candidates, and older nodes that now list it."""
    if not new_keys:
        return []
    sets = memory.coref_sets(top, threshold)
    new = set(new_keys)
    links = []
    for key, members in sets.items():
        for m in members:
            if key in new or m.key in new:
                links.append({"source": key, "target": m.key, "similarity": round(m.similarity, 4)})
    return links


def _embed_tail(embedder: Embedder, texts: list[str], current: np.ndarray, dim: int) -> np.ndarray:
    if not texts:
        return current if len(current) else np.zeros((0, dim), np.float32)
    new = embedder.encode(texts)
    return np.vstack([current, new]).astype(np.float32) if len(current) else new


def engram_text(e: EngramRow) -> str:
    """What an engram's vector embeds: "name: description" (the name alone when it has none)."""
    return f"{e.name}: {e.description}" if e.description else e.name


def embed_new_rows(memory: Memory, embedder: Embedder) -> Iterator[BuildEvent]:
    """Vectors for chunks, engrams and triples added since the last save (rows without vectors)."""
    jobs = [
        ("chunks", "chunk_vecs", [f"{c.title}\n{c.text}" for c in memory.chunks[len(memory.chunk_vecs):]]),
        ("engrams", "engram_vecs", [engram_text(e) for e in memory.engrams[len(memory.engram_vecs):]]),
        ("triples", "triple_vecs", [t.text for t in memory.triples[len(memory.triple_vecs):]]),
    ]
    for label, attr, texts in jobs:
        t0 = time.perf_counter()
        setattr(memory, attr, _embed_tail(embedder, texts, getattr(memory, attr), memory.dim))
        yield BuildEvent("embedding", {"what": label, "count": len(texts),
                                       "seconds": round(time.perf_counter() - t0, 3)})
    memory._indices.clear()


# ------------------------------------------------------------------ the build
def new_memory(embedder: Embedder, params: IndexParams, name: str = "") -> Memory:
    m = Memory(embedder.model_id, embedder.dim)
    m.name = name
    m.params = params_dict(params)
    return m


def build_memory(
    path: Path | None,
    documents: list[Document],
    llm: LLM | None,
    embedder: Embedder,
    params: IndexParams,
    *,
    memory: Memory | None = None,
    parallel: int = 1,
    retry_failed: bool = False,
    name: str = "",
    lock_wait_s: float = store.LOCK_WAIT_S,
) -> Iterator[BuildEvent]:
    """Add `documents` to `memory` (or a new one) and save it to `path` (if given).

    Documents already present (same title and text) are skipped and reported.
    With `parallel` > 1 (Ollama), that many extraction requests are kept in
    flight; results are integrated in document order either way.
    The folder's writer lock is held from loading to saving: a second build into the same
    folder waits `lock_wait_s` seconds, then is refused (MemoryBusyError), so none is lost.
    """
    kwargs = dict(memory=memory, parallel=parallel, retry_failed=retry_failed, name=name)
    if path is None:
        yield from _build(path, documents, llm, embedder, params, **kwargs)
        return
    with store.writing(path, lock_wait_s):
        yield from _build(path, documents, llm, embedder, params, **kwargs)


def _build(path: Path | None, documents: list[Document], llm: LLM | None, embedder: Embedder,
           params: IndexParams, *, memory: Memory | None, parallel: int, retry_failed: bool,
           name: str) -> Iterator[BuildEvent]:
    t_start = time.perf_counter()
    m = memory if memory is not None else (store.load(path, embedder.model_id)
                                           if path is not None and store.is_memory_dir(path)
                                           else new_memory(embedder, params, name))
    if llm is not None and not m.llm:
        m.llm = {"backend": llm.backend, "model": llm.model}
    have = {(d.title, d.text) for d in m.documents}
    used_ids = {d.doc_id for d in m.documents}
    todo: list[Document] = []
    for d in documents:
        if (d.title, d.text) in have:
            yield BuildEvent("skipped", {"doc_id": d.doc_id, "title": d.title, "reason": "already in memory"})
            continue
        have.add((d.title, d.text))
        doc_id, n = d.doc_id, 2
        while doc_id in used_ids:
            doc_id, n = f"{d.doc_id}-{n}", n + 1
        used_ids.add(doc_id)
        todo.append(Document(doc_id, d.title, d.text, d.source, d.kind, dict(d.meta)))

    plan: list[tuple[Document, list[ChunkText]]] = []
    for d in todo:
        chunks = chunk_document(d, params)
        plan.append((d, [ChunkText(d.doc_id, c.index, c.title, c.text) for c in chunks]))
    # The work: chunks of this memory that failed before (when retrying them), then the new
    # documents' chunks; a retried chunk keeps its id, a new one gets the next.
    retry_rows = [r for r in m.chunks if _failed_before(m, r.chunk_id)] if retry_failed else []
    work: list[tuple[Document | None, ChunkText, int | None]] = [
        (None, ChunkText(r.doc_id, r.index, r.title, r.text), r.chunk_id) for r in retry_rows]
    work += [(d, c, None) for d, cs in plan for c in cs]
    total = len(work)
    yield BuildEvent("start", {"documents": len(plan), "chunks": total, "retried": len(retry_rows),
                               "files": _files(work)})

    if path is not None and llm is not None and todo:  # listed as interrupted until saved
        pending.write(path, todo, [chunk_key(llm, c) for d, c, _ in work if d is not None], name or m.name)
    journal = Journal(path / pending.JOURNAL) if path is not None else None
    executor = ThreadPoolExecutor(max_workers=max(1, parallel)) if parallel > 1 else None
    in_flight: deque[Future | None] = deque()
    failed_in_a_row = 0
    cleanup: Counter[str] = Counter()  # what the name clean-up changed in this build's chunks
    try:
        def run(c: ChunkText) -> tuple[ExtractOutcome, bool]:
            key = chunk_key(llm, c) if llm is not None else ""
            if journal is not None and key:
                got = journal.get(key)
                if got is not None and (got.extraction is not None or not retry_failed):
                    return got, True
            if llm is None:
                raise ValueError("building needs an LLM (or import an OpenIE file)")
            out = extract_chunk(llm, c.title, c.text)
            if journal is not None:
                journal.put(key, out)
            return out, False

        next_submit = 0
        current_doc: str | None = None
        doc_start_names: dict[str, str] = {}
        for i, (doc, c, old_id) in enumerate(work):
            if c.doc_id != current_doc:
                current_doc = c.doc_id
                if doc is not None:
                    m.documents.append(DocRow(doc.doc_id, doc.title, doc.text, doc.source, doc.kind, doc.meta))
                doc_start_names = {n.key: n.name for n in m.entities}
            yield BuildEvent("chunk_started", {"i": i, "total": total, "doc_id": c.doc_id,
                                               "title": c.title, "text": c.text[:300]})
            if executor is not None:
                while next_submit < len(work) and next_submit < i + parallel:
                    in_flight.append(executor.submit(run, work[next_submit][1]))
                    next_submit += 1
                outcome, resumed = in_flight.popleft().result()  # type: ignore[union-attr]
            else:
                outcome, resumed = run(c)
            if old_id is None:
                chunk_id = len(m.chunks)
                m.chunks.append(ChunkRow(chunk_id, c.doc_id, c.index, c.title, c.text))
            else:
                chunk_id = old_id
            new_e, new_t = integrate_chunk(m, chunk_id, outcome.extraction)
            if outcome.extraction is not None:
                cleanup.update(outcome.extraction.cleanup)
            last = outcome.calls[-1] if outcome.calls else None
            fresh = [x for x in outcome.calls if not x.cached and not resumed]
            m.extraction_log[chunk_id] = ExtractionLog(
                chunk_id, "ok" if outcome.extraction is not None else "failed", outcome.error or "",
                outcome.raw_reply if outcome.extraction is None else "",
                _sum(x.prompt_tokens for x in outcome.calls), _sum(x.completion_tokens for x in outcome.calls),
                sum(x.seconds for x in outcome.calls), resumed or bool(last and last.cached))
            for x in outcome.calls:
                m.ledger_rows.append({"stage": x.stage, **x.cost_dict(), "cached": x.cached or resumed,
                                      "model": x.model, "backend": x.backend})
            yield BuildEvent("chunk_done", {
                "i": i, "total": total, "chunk_id": chunk_id, "doc_id": c.doc_id, "ok": outcome.extraction is not None,
                "error": outcome.error, "raw_reply": outcome.raw_reply if outcome.extraction is None else "",
                "resumed": resumed,
                "fresh_tokens": _sum((x.prompt_tokens or 0) + (x.completion_tokens or 0) for x in fresh) if fresh else 0,
                "seconds": round(sum(x.seconds for x in outcome.calls), 3),
                "nodes": [{"key": m.engrams[e].key, "name": m.engrams[e].name, "type": m.engrams[e].type}
                          for e in new_e],
                "edges": [{"source": m.triples[t].head_key, "target": m.triples[t].tail_key,
                           "relation": m.triples[t].relation} for t in new_t],
            })
            if outcome.extraction is not None:
                failed_in_a_row = 0
            elif not resumed:
                failed_in_a_row += 1
                _stop_after_failures(failed_in_a_row, i + 1, total, outcome.error)
            last_of_doc = i + 1 == len(work) or work[i + 1][1].doc_id != c.doc_id
            if last_of_doc:
                new_keys = refresh_entity_vectors(m, embedder, doc_start_names)
                links = coref_links_for(m, new_keys, m.params.get("coref_top", params.coref_top),
                                        m.params.get("coref_threshold", params.coref_threshold))
                yield BuildEvent("document_done", {"doc_id": c.doc_id, "new_entities": len(new_keys),
                                                   "coref_links": links})
    finally:
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        if journal is not None:
            journal.close()

    # Nodes may also need vectors when no document was added (e.g. an empty add on a fresh memory).
    if len(m.entity_vecs) != len(m.entities):
        refresh_entity_vectors(m, embedder, {n.key: n.name for n in m.entities[:len(m.entity_vecs)]})
    yield from embed_new_rows(m, embedder)
    yield from save_and_finish(m, path, t_start, {"cleanup": dict(sorted(cleanup.items()))},
                               change=change_text("added", [d.doc_id for d, _ in plan]))


def _files(work: list[tuple[Document | None, ChunkText, int | None]]) -> list[dict[str, Any]]:
    """The build's documents in order, with their chunk counts (for a per-file table)."""
    files: dict[str, dict[str, Any]] = {}
    for doc, c, _ in work:
        f = files.setdefault(c.doc_id, {"doc_id": c.doc_id, "title": doc.title if doc else c.title,
                                        "source": doc.source if doc else "", "chunks": 0})
        f["chunks"] += 1
    return list(files.values())


def _failed_before(m: Memory, chunk_id: int) -> bool:
    log = m.extraction_log.get(chunk_id)
    return log is not None and log.status == "failed"


def _stop_after_failures(in_a_row: int, reached: int, total: int, last_error: str | None) -> None:
    """Raise BuildStopped when too many fresh chunks in a row have failed."""
    if in_a_row >= MAX_FAILED_IN_A_ROW:
        raise BuildStopped(
            f"The build stopped at chunk {reached} of {total}: {in_a_row} chunks in a row failed "
            f"(the last: {last_error}). Every chunk done so far is kept; check the LLM, then run the "
            "build again (with --retry-failed to extract the failed chunks again).")


def change_text(verb: str, doc_ids: list[str], shown: int = 3) -> str:
    """A version's change in words, as undo names it: 'added a, b, c and 4 more'."""
    if not doc_ids:
        return ""
    more = f" and {len(doc_ids) - shown} more" if len(doc_ids) > shown else ""
    return f"{verb} {', '.join(doc_ids[:shown])}{more}"


def save_and_finish(m: Memory, path: Path | None, t_start: float,
                    extra: dict[str, Any] | None = None, change: str = "") -> Iterator[BuildEvent]:
    """The end of every build: save (when a folder is given, with `change` in words for undo), then
    `done` with the stats, how clean the entity names are, and any `extra` figures of the build."""
    if path is not None:
        t0 = time.perf_counter()
        store.save(m, path, change=change)
        pending.clear(path)  # the work it recorded is in the saved memory now
        yield BuildEvent("saved", {"path": str(path), "seconds": round(time.perf_counter() - t0, 3)})
    stats: dict[str, Any] = dict(m.stats())
    stats["names"] = name_quality([n.name for n in m.entities])
    stats.update(extra or {})
    stats["seconds"] = round(time.perf_counter() - t_start, 3)
    yield BuildEvent("done", stats, memory=m)


def _sum(values) -> int | None:
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def run_build(events: Iterator[BuildEvent]) -> Memory:
    """Drain a build generator and return the memory (for scripts and tests)."""
    memory = None
    for ev in events:
        if ev.kind == "done":
            memory = ev.memory
    assert memory is not None
    return memory
