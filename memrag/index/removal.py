"""Removing documents from a memory: a new version without them, which `store.undo` can switch back from.

A removal keeps every row that does not come from the removed documents and renumbers what is
left in its old order (ids are positions: vectors line up with rows), so the result is the memory
a build of the remaining documents alone would have made: the same chunks, mentions, triples and
entity nodes, and the same vectors row for row. Entity nodes come from mentions, so a node only
the removed documents mentioned goes, and one another document mentions stays; coreference
candidates are derived from the remaining nodes' vectors, so links to a removed node go with it.
A node whose most frequent name came from the removed documents is named again and its name
embedded again (the only embedding a removal may need).

What stays on purpose: the ledger (what building cost, which was spent) and the build journal
(extraction replies by chunk content, so re-adding the document or redoing it needs no model
call). Chunk numbers after a removed document change, and so does the memory's fingerprint:
traces, run folders and recordings made before carry the old fingerprint, which every reader
compares before it maps a chunk number onto the memory (`memrag.index.stale` says why in words).

Crash safety is the store's: the new version is written aside and CURRENT switched atomically,
under the folder's writer lock, so a removal killed at any moment leaves the memory as it was.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from memrag.embed import LazyEmbedder
from memrag.index import store
from memrag.index.build import change_text, refresh_entity_vectors
from memrag.index.memory import Memory
from memrag.index.stale import stale_note  # noqa: F401 (here since removals began; memrag.index.stale is its home)


class UnknownDocumentError(store.MemoryStoreError):
    """A name given for removal is not a document of the memory; nothing was changed."""


@dataclass(frozen=True)
class Removal:
    """What one removal did (counts are of the rows that went)."""

    version: str
    documents: list[str]
    chunks: int
    engrams: int
    triples: int
    entities: int
    renamed: int  # nodes that kept mentions elsewhere but changed their name (embedded again)

    def text(self) -> str:
        return (f"removed {', '.join(self.documents)}: {self.chunks} chunk(s), {self.engrams} mention(s), "
                f"{self.triples} triple(s), {self.entities} entit{'y' if self.entities == 1 else 'ies'} "
                f"no other document mentions; new version {self.version}")


STALE_NOTE = ("This memory's chunk numbers and fingerprint changed: traces, evaluation runs and recorded answers "
              "made on the version before belong to that version. They still show their own passages, but "
              "their chunk numbers are not mapped onto this one and recorded answers are not replayed against "
              "it; undo (index --undo, or the Memory page's button) switches back to the version they were "
              "made on.")


def document_names(memory: Memory) -> list[str]:
    """The documents' names, as `--remove` and the Memory page take them (their ids, in order)."""
    return [d.doc_id for d in memory.documents]


def check_names(memory: Memory, names: Sequence[str]) -> list[str]:
    """The names, each once and in order, if every one is a document of `memory`; otherwise
    UnknownDocumentError naming those that are not (with the nearest real names)."""
    have = document_names(memory)
    wanted = list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in set(have)]
    if not wanted:
        raise UnknownDocumentError("no document named: give one or more names from --list. Nothing was changed.")
    if unknown:
        hints = []
        for n in unknown:
            near = difflib.get_close_matches(n, have, n=3)
            hints.append(f"{n!r}" + (f" (did you mean {', '.join(map(repr, near))}?)" if near else ""))
        raise UnknownDocumentError(
            f"not a document of this memory: {'; '.join(hints)}. `index --memory DIR --list` lists the "
            f"{len(have)} it holds. Nothing was changed.")
    return wanted


def without_documents(memory: Memory, names: Sequence[str], embedder: Any) -> tuple[Memory, Removal]:
    """A new Memory without the named documents (the given one is not changed), and what went.
    `embedder` (with .encode) is used only for nodes whose name changes; version is filled in on save."""
    gone = set(check_names(memory, names))
    kept = [c for c in memory.chunks if c.doc_id not in gone]
    new_id = {c.chunk_id: i for i, c in enumerate(kept)}
    engrams = [e for e in memory.engrams if e.chunk_id in new_id]
    triples = [t for t in memory.triples if t.chunk_id in new_id]

    m = Memory(memory.embedder_id, memory.dim)
    m.name, m.llm, m.params = memory.name, dict(memory.llm), dict(memory.params)
    m.documents = [d for d in memory.documents if d.doc_id not in gone]
    m.chunks = [replace(c, chunk_id=new_id[c.chunk_id]) for c in kept]
    m.engrams = [replace(e, engram_id=i, chunk_id=new_id[e.chunk_id]) for i, e in enumerate(engrams)]
    m.triples = [replace(t, triple_id=i, chunk_id=new_id[t.chunk_id]) for i, t in enumerate(triples)]
    m.extraction_log = {new_id[k]: replace(x, chunk_id=new_id[k])
                        for k, x in sorted(memory.extraction_log.items()) if k in new_id}
    m.ledger_rows = [dict(r) for r in memory.ledger_rows]
    # edits stay: removed links apply whenever both nodes exist; merges keep the rows still here
    m.coref_unlinked = set(memory.coref_unlinked)
    engram_ids = {e.engram_id: i for i, e in enumerate(engrams)}
    triple_ids = {t.triple_id: i for i, t in enumerate(triples)}
    m.merges = [r for r in (r.renumbered(engram_ids, triple_ids) for r in memory.merges) if r is not None]
    m.chunk_vecs = _rows(memory.chunk_vecs, [c.chunk_id for c in kept], m.dim)
    m.engram_vecs = _rows(memory.engram_vecs, [e.engram_id for e in engrams], m.dim)
    m.triple_vecs = _rows(memory.triple_vecs, [t.triple_id for t in triples], m.dim)
    # Entity nodes from the remaining mentions; a node's vector is kept unless its name changed.
    m.entity_vecs = memory.entity_vecs
    old_names = {n.key: n.name for n in memory.entities}
    refresh_entity_vectors(m, embedder, old_names)
    renamed = sum(1 for n in m.entities if old_names.get(n.key) != n.name)
    return m, Removal("", sorted(gone, key=document_names(memory).index), len(memory.chunks) - len(kept),
                      len(memory.engrams) - len(engrams), len(memory.triples) - len(triples),
                      len(memory.entities) - len(m.entities), renamed)


def _rows(vectors: np.ndarray, ids: list[int], dim: int) -> np.ndarray:
    return np.ascontiguousarray(vectors[ids], dtype=np.float32) if ids else np.zeros((0, dim), np.float32)


def remove_documents(path: Path, names: Sequence[str], embedder: Callable[[str], Any],
                     lock_wait_s: float = store.LOCK_WAIT_S, _fail_after: str | None = None) -> Removal:
    """Remove the named documents from the memory folder at `path` as a new version.
    `embedder(model_id)` (the memory's own embedder) is called only when a remaining node must be
    named again (loading a model costs seconds).
    Holds the folder's writer lock from reading to saving, so no build's save is lost."""
    path = Path(path)
    with store.writing(path, lock_wait_s):
        memory = store.load(path)
        check_names(memory, names)  # before anything is computed: a wrong name changes nothing
        smaller, removal = without_documents(memory, names, LazyEmbedder(lambda: embedder(memory.embedder_id)))
        version = store.save(smaller, path, _fail_after=_fail_after,
                             change=change_text("removed", removal.documents), kind="remove",
                             args={"documents": removal.documents})
    return replace(removal, version=version.name)
