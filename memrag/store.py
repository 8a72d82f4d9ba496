"""Saving and opening a memory folder — atomically, with no pickles and no native index files.

Layout: `<dir>/CURRENT` names the live version folder `<dir>/v000007/`, which
holds `memory.sqlite`, `manifest.json` and the vector arrays (`*.npy`, loaded
with allow_pickle=False). A save writes a new version folder aside, then
replaces CURRENT atomically (os.replace of a one-line file): a crash at any
moment leaves the previous version loadable. Old versions are pruned after the
switch. faiss indices are rebuilt at load — never `faiss.read_index`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from memrag.durable import fsync_dir, fsync_file, write_atomic, write_file
from memrag.memory import (FORMAT_VERSION, ChunkRow, DocRow, EngramRow, ExtractionLog, Memory,
                           TripleRow)

CURRENT = "CURRENT"
MANIFEST = "manifest.json"
VECTORS = ("chunk_vecs", "engram_vecs", "entity_vecs", "triple_vecs")
KEEP_VERSIONS = 2

_TABLES = """
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, ord INTEGER, title TEXT, text TEXT, source TEXT,
                        kind TEXT, meta TEXT);
CREATE TABLE chunks (chunk_id INTEGER PRIMARY KEY, doc_id TEXT, idx INTEGER, title TEXT, text TEXT);
CREATE TABLE engrams (engram_id INTEGER PRIMARY KEY, key TEXT, name TEXT, type TEXT, description TEXT,
                      importance INTEGER, chunk_id INTEGER);
CREATE TABLE triples (triple_id INTEGER PRIMARY KEY, head_key TEXT, head TEXT, relation TEXT,
                      tail_key TEXT, tail TEXT, chunk_id INTEGER);
CREATE TABLE entities (ord INTEGER PRIMARY KEY, key TEXT UNIQUE, name TEXT, type TEXT);
CREATE TABLE coref (key TEXT, top INTEGER, threshold REAL, rank INTEGER, other_key TEXT, similarity REAL);
CREATE TABLE extraction_log (chunk_id INTEGER PRIMARY KEY, status TEXT, error TEXT, raw_reply TEXT,
                             prompt_tokens INTEGER, completion_tokens INTEGER, seconds REAL, cached INTEGER);
CREATE TABLE ledger (row INTEGER PRIMARY KEY, data TEXT);
"""


class MemoryFormatError(ValueError):
    """The folder is not a memory this version of memrag can open; the message says why."""


def is_memory_dir(path: Path) -> bool:
    return (Path(path) / CURRENT).is_file()


def current_version_dir(path: Path) -> Path:
    path = Path(path)
    cur = path / CURRENT
    if not cur.is_file():
        raise MemoryFormatError(f"{path} is not a memrag memory (no {CURRENT} file)")
    name = cur.read_text().strip()
    if not name.startswith("v") or "/" in name or not (path / name).is_dir():
        raise MemoryFormatError(f"{path}/{CURRENT} points to a missing version {name!r}")
    return path / name


def _next_version(path: Path) -> str:
    nums = [int(p.name[1:]) for p in path.glob("v[0-9]*") if p.name[1:].isdigit()]
    return f"v{(max(nums) + 1) if nums else 1:06d}"


def save(memory: Memory, path: Path, _fail_after: str | None = None) -> Path:
    """Write `memory` as a new version of the folder and switch to it atomically.

    `_fail_after` is for tests: raise right after the named phase to simulate a crash.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    version = _next_version(path)
    tmp = path / f".{version}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        _write_sqlite(memory, tmp / "memory.sqlite")
        fsync_file(tmp / "memory.sqlite")
        for name in VECTORS:
            arr = getattr(memory, name)
            write_file(tmp / f"{name}.npy", lambda fh: np.save(fh, arr, allow_pickle=False))
        if _fail_after == "vectors":
            raise RuntimeError("injected failure after writing vectors")
        manifest = {
            "format_version": FORMAT_VERSION,
            "name": memory.name,
            "embedder": {"model": memory.embedder_id, "dim": memory.dim},
            "llm": memory.llm,
            "params": memory.params,
            "fingerprint": memory.fingerprint(),
            "counts": {"documents": len(memory.documents), "chunks": len(memory.chunks),
                       "engrams": len(memory.engrams), "triples": len(memory.triples),
                       "entities": len(memory.entities)},
            "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        write_file(tmp / MANIFEST, lambda fh: fh.write(json.dumps(manifest, indent=2, ensure_ascii=False).encode()))
        fsync_dir(tmp)
        os.rename(tmp, path / version)
        fsync_dir(path)  # the new version folder is on disk before CURRENT may name it
        if _fail_after == "rename":
            raise RuntimeError("injected failure before switching CURRENT")
        write_atomic(path / CURRENT, version + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _prune(path, version)
    return path / version


def _prune(path: Path, live: str) -> None:
    versions = sorted(p.name for p in path.glob("v[0-9]*") if p.is_dir())
    for old in versions[:-KEEP_VERSIONS]:
        if old != live:
            shutil.rmtree(path / old, ignore_errors=True)


def _write_sqlite(m: Memory, file: Path) -> None:
    con = sqlite3.connect(file)
    try:
        con.executescript(_TABLES)
        con.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?)",
                        [(d.doc_id, i, d.title, d.text, d.source, d.kind, json.dumps(d.meta))
                         for i, d in enumerate(m.documents)])
        con.executemany("INSERT INTO chunks VALUES (?,?,?,?,?)",
                        [(c.chunk_id, c.doc_id, c.index, c.title, c.text) for c in m.chunks])
        con.executemany("INSERT INTO engrams VALUES (?,?,?,?,?,?,?)",
                        [(e.engram_id, e.key, e.name, e.type, e.description, e.importance, e.chunk_id)
                         for e in m.engrams])
        con.executemany("INSERT INTO triples VALUES (?,?,?,?,?,?,?)",
                        [(t.triple_id, t.head_key, t.head, t.relation, t.tail_key, t.tail, t.chunk_id)
                         for t in m.triples])
        con.executemany("INSERT INTO entities VALUES (?,?,?,?)",
                        [(i, n.key, n.name, n.type) for i, n in enumerate(m.entities)])
        top, thr = m.params.get("coref_top", 5), m.params.get("coref_threshold", 0.8)
        con.executemany("INSERT INTO coref VALUES (?,?,?,?,?,?)",
                        [(k, top, thr, r, c.key, c.similarity)
                         for k, members in m.coref_sets(top, thr).items() for r, c in enumerate(members)])
        con.executemany("INSERT INTO extraction_log VALUES (?,?,?,?,?,?,?,?)",
                        [(x.chunk_id, x.status, x.error, x.raw_reply, x.prompt_tokens, x.completion_tokens,
                          x.seconds, int(x.cached)) for x in m.extraction_log.values()])
        con.executemany("INSERT INTO ledger (data) VALUES (?)", [(json.dumps(r),) for r in m.ledger_rows])
        con.commit()
    finally:
        con.close()


def read_manifest(path: Path) -> dict[str, Any]:
    vdir = current_version_dir(path)
    try:
        return json.loads((vdir / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        raise MemoryFormatError(f"{vdir}/{MANIFEST} is unreadable: {e}") from e


def load(path: Path, embedder_id: str | None = None) -> Memory:
    """Open a saved memory. Refuses a newer format or a different embedder, with the reason."""
    path = Path(path)
    vdir = current_version_dir(path)
    manifest = read_manifest(path)
    fv = manifest.get("format_version")
    if not isinstance(fv, int) or fv > FORMAT_VERSION:
        raise MemoryFormatError(
            f"{path} was saved in memory format {fv}, newer than this memrag understands ({FORMAT_VERSION}); "
            "upgrade memrag")
    emb = manifest.get("embedder") or {}
    if embedder_id is not None and emb.get("model") != embedder_id:
        raise MemoryFormatError(
            f"{path} was built with embedder {emb.get('model')!r}; the current embedder is {embedder_id!r}. "
            "Vectors from different embedders cannot be mixed: rebuild the memory or switch embedder.")
    m = Memory(emb.get("model", ""), int(emb.get("dim", 0)))
    m.name = manifest.get("name", "")
    m.llm = manifest.get("llm", {})
    m.params = manifest.get("params", {})
    con = sqlite3.connect(f"file:{vdir / 'memory.sqlite'}?mode=ro", uri=True)
    try:
        m.documents = [DocRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5] or "{}")) for r in con.execute(
            "SELECT doc_id, title, text, source, kind, meta FROM documents ORDER BY ord")]
        m.chunks = [ChunkRow(*r) for r in con.execute(
            "SELECT chunk_id, doc_id, idx, title, text FROM chunks ORDER BY chunk_id")]
        m.engrams = [EngramRow(*r) for r in con.execute(
            "SELECT engram_id, key, name, type, description, importance, chunk_id FROM engrams ORDER BY engram_id")]
        m.triples = [TripleRow(*r) for r in con.execute(
            "SELECT triple_id, head_key, head, relation, tail_key, tail, chunk_id FROM triples ORDER BY triple_id")]
        m.extraction_log = {r[0]: ExtractionLog(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]))
                            for r in con.execute("SELECT * FROM extraction_log")}
        m.ledger_rows = [json.loads(r[0]) for r in con.execute("SELECT data FROM ledger ORDER BY row")]
        stored_order = [r[0] for r in con.execute("SELECT key FROM entities ORDER BY ord")]
    finally:
        con.close()
    for name in VECTORS:
        arr = np.load(vdir / f"{name}.npy", allow_pickle=False)
        setattr(m, name, np.ascontiguousarray(arr, dtype=np.float32))
    m.rebuild_derived()
    if [n.key for n in m.entities] != stored_order:
        raise MemoryFormatError(f"{path}: entity table does not match its engrams (damaged memory?)")
    _check_shapes(m, path)
    return m


def _check_shapes(m: Memory, path: Path) -> None:
    expect = {"chunk_vecs": len(m.chunks), "engram_vecs": len(m.engrams),
              "entity_vecs": len(m.entities), "triple_vecs": len(m.triples)}
    for name, rows in expect.items():
        arr = getattr(m, name)
        if arr.shape != (rows, m.dim):
            raise MemoryFormatError(f"{path}: {name} has shape {arr.shape}, expected ({rows}, {m.dim})")


def memory_to_rows(m: Memory) -> dict[str, list[dict[str, Any]]]:
    """Every table as plain dicts (for tests and exports)."""
    return {
        "documents": [asdict(d) for d in m.documents],
        "chunks": [asdict(c) for c in m.chunks],
        "engrams": [asdict(e) for e in m.engrams],
        "triples": [asdict(t) for t in m.triples],
        "entities": [asdict(n) for n in m.entities],
        "extraction_log": [asdict(x) for x in m.extraction_log.values()],
    }
