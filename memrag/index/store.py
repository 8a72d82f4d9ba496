"""Saving and opening a memory folder — atomically, with no pickles and no native index files.

Layout: `<dir>/CURRENT` names the live version folder `<dir>/v000007/`, which
holds `memory.sqlite`, `manifest.json` and the vector arrays (`*.npy`, loaded
with allow_pickle=False). A save writes a new version folder aside, then
replaces CURRENT atomically (os.replace of a one-line file): a crash at any
moment leaves the previous version loadable. Each manifest names the version that was live
when it was saved (`previous`), so `undo` can switch CURRENT back to it; after a save only the
live version and its KEEP_VERSIONS - 1 nearest ancestors are kept, and further ancestors up to
KEEP_MAX_VERSIONS while they fit in KEEP_BYTES (versions left aside by an undo go too; the edit log
says which versions it names were pruned). faiss indices are rebuilt at load — never `faiss.read_index`.

Every file is fsynced before its rename (`memrag.durable`), so a power cut
cannot leave CURRENT naming bytes that never reached the disk. One writer at a
time per folder (`writing`, an OS file lock held by a build from load to save);
temporaries of saves that were killed are removed by the next save. Loading
goes through `memrag.index.store_format`, which refuses a damaged folder with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from memrag.durable import fsync_dir, fsync_file, storage_guard, write_atomic, write_file, writer_lock
from memrag.index import edit_log
from memrag.index import store_format as fmt
from memrag.index.store_format import MemoryFormatError, MemoryStoreError, damaged
from memrag.index.memory import (FORMAT_VERSION, ChunkRow, DocRow, EngramRow, ExtractionLog, Memory,
                           TripleRow)

CURRENT = "CURRENT"
MANIFEST = "manifest.json"
VECTORS = ("chunk_vecs", "engram_vecs", "entity_vecs", "triple_vecs")
KEEP_VERSIONS = 3  # the live version and two to undo back to, always
# Further ancestors are kept while all kept versions fit in KEEP_BYTES: a small memory (the sample, a few
# documents) keeps a long line of edits to go back along; a large one keeps three full copies at most.
KEEP_MAX_VERSIONS = 12
KEEP_BYTES = 200_000_000
HISTORY_MAX = 200  # fingerprints of earlier versions a manifest remembers (to recognise old traces)
LOCK_WAIT_S = 10.0  # a second writer waits this long for the first, then is refused
STALE_TEMP_S = 3600.0  # a save writes its version in seconds; older temporaries are leftovers
SAVE_KEPT = "The memory's previous version is unchanged (a build's extracted chunks stay in its journal)."

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
CREATE TABLE coref_unlinked (key_a TEXT, key_b TEXT, PRIMARY KEY (key_a, key_b));
CREATE TABLE merges (merge_id INTEGER PRIMARY KEY, joined_key TEXT, joined_name TEXT, rows TEXT, names TEXT,
                     vectors BLOB);
"""


class MemoryBusyError(MemoryStoreError):
    """Another build or save holds the memory folder; nothing was changed."""


def is_memory_dir(path: Path) -> bool:
    return (Path(path) / CURRENT).is_file()


def current_version_dir(path: Path) -> Path:
    path = Path(path)
    cur = path / CURRENT
    if not cur.is_file():
        raise damaged(path, f"there is no {CURRENT} file: this is not a memrag memory folder")
    try:
        with open(cur, "rb") as fh:
            name = fh.read(64).decode("ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise damaged(path, f"{CURRENT} is unreadable ({e})") from None
    if not (name.startswith("v") and name[1:].isdigit()) or not (path / name).is_dir():
        raise damaged(path, f"{CURRENT} points to a missing version {name!r}")
    return path / name


@contextmanager
def writing(path: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the folder's writer lock: one build or save at a time per memory, across processes and
    threads (an OS file lock, so a killed holder releases it). Re-entrant in one thread, so a
    build that holds it from load to save may call `save`. Refuses with MemoryBusyError after
    `wait_s` seconds."""
    busy = lambda: MemoryBusyError(  # noqa: E731
        f"memory {path} is being written by another build (another app session, or `python -m memrag "
        f"index`); waited {wait_s:g} s. Nothing was changed: try again when that build has finished.")
    with writer_lock(Path(path), wait_s, busy, SAVE_KEPT):
        yield


def _next_version(path: Path) -> str:
    nums = [int(p.name[1:]) for p in path.glob("v[0-9]*") if p.name[1:].isdigit()]
    return f"v{(max(nums) + 1) if nums else 1:06d}"


def save(memory: Memory, path: Path, _fail_after: str | None = None, change: str = "", kind: str = "build",
         args: dict[str, Any] | None = None) -> Path:
    """Write `memory` as a new version of the folder and switch to it atomically. `change` says
    in words what this version changed (shown by `undo`); `kind` and `args` say what made it in the
    folder's log (`memrag.index.edit_log`).

    `_fail_after` is for tests: raise right after the named phase to simulate a crash.
    """
    path = Path(path)
    with writing(path), storage_guard(path, "save the memory", SAVE_KEPT):
        return _save(memory, path, _fail_after, change, kind, args or {})


def _lineage_fields(path: Path) -> dict[str, Any]:
    """What a new version records of the one it replaces: its name, and the fingerprints of it and
    of its own ancestors (so a trace made on any earlier version is recognised as such)."""
    try:
        live = current_version_dir(path).name
        before = read_manifest(path)
    except MemoryFormatError:
        return {"previous": ""}  # a new folder (or a damaged live version, which this save replaces)
    history = [*before.get("history", []), before.get("fingerprint", "")][-HISTORY_MAX:]
    return {"previous": live, "history": [h for h in history if h]}


def _save(memory: Memory, path: Path, _fail_after: str | None, change: str, kind: str,
          args: dict[str, Any]) -> Path:
    remove_stale_temporaries(path)
    lineage = _lineage_fields(path)
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
            **lineage,
            **({"change": change} if change else {}),
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
    _log(path, kind, change, version, lineage["previous"], args)
    _prune(path, version)
    return path / version


def _log(path: Path, kind: str, text: str, version: str, previous: str, args: dict[str, Any] | None = None) -> None:
    """One entry in the folder's log, once the change is live. The change is done whatever happens
    here: a log that cannot be written (a full disk) misses the entry and says nothing false."""
    try:
        edit_log.append(path, edit_log.LogEntry(edit_log.now(), kind, text, version, previous, args or {}))
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # our own leftover: this process is not writing it now (it holds the lock)
    if os.name != "posix":
        return True  # no harmless probe there: only the age bound applies
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by another user
    return True


def remove_stale_temporaries(path: Path, max_age_s: float = STALE_TEMP_S) -> list[str]:
    """Remove the version folders and pointer files of saves that died half-way (kill -9, power cut):
    those whose process is gone, or older than `max_age_s` (a pid can be reused). Returns their names."""
    removed = []
    now = time.time()
    for p in [*Path(path).glob(".v[0-9]*.tmp*"), *Path(path).glob(f".{CURRENT}.tmp*")]:
        pid = p.name.rsplit(".tmp", 1)[1]
        try:
            old = now - p.lstat().st_mtime > max_age_s
        except OSError:
            continue  # already gone
        if old or not pid.isdigit() or not _pid_alive(int(pid)):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p.name)
    return removed


def _version_bytes(vdir: Path) -> int:
    try:
        return sum(p.stat().st_size for p in vdir.iterdir() if p.is_file())
    except OSError:
        return 0


def kept_versions(path: Path) -> list[str]:
    return sorted(p.name for p in Path(path).glob("v[0-9]*") if p.is_dir() and p.name[1:].isdigit())


def version_manifest(path: Path, version: str, label: str = "") -> dict[str, Any]:
    """A kept version's manifest (the live one's or an earlier one's), checked to have the shape
    memrag writes. `label` names the file in messages (default: VERSION/manifest.json)."""
    file = Path(path) / version / MANIFEST
    label = label or f"{version}/{MANIFEST}"
    try:
        if file.stat().st_size > fmt.MANIFEST_MAX_BYTES:
            raise damaged(path, f"{label} is {file.stat().st_size} bytes: not a manifest memrag wrote")
        text = file.read_bytes()
    except OSError as e:
        raise damaged(path, f"{label} is unreadable ({e.strerror or e})") from None
    return fmt.parse_manifest(text, path, FORMAT_VERSION)


def previous_version(path: Path, version: str) -> str | None:
    """The version that was live when `version` was saved, if it is still kept. Versions saved
    before manifests named it: the highest-numbered kept version below it (saves were sequential)."""
    try:
        named = version_manifest(path, version).get("previous")
    except MemoryFormatError:
        named = None
    kept = kept_versions(path)
    if named is None:
        below = [v for v in kept if v < version]
        return below[-1] if below else None
    return named if named in kept else None


def _prune(path: Path, live: str) -> None:
    keep, v = {live}, live
    size = _version_bytes(path / live)
    while (v := previous_version(path, v)) is not None and v not in keep and len(keep) < KEEP_MAX_VERSIONS:
        size += _version_bytes(path / v)
        if len(keep) >= KEEP_VERSIONS and size > KEEP_BYTES:
            break
        keep.add(v)
    for old in kept_versions(path):
        if old not in keep:  # older ancestors, and versions an undo left aside
            shutil.rmtree(path / old, ignore_errors=True)


class NothingToUndoError(MemoryStoreError):
    """The live version has no earlier version kept to switch back to; nothing was changed."""


class UnknownVersionError(MemoryStoreError):
    """A version asked for is not kept in the folder; nothing was changed."""


def switch_to(path: Path, version: str, kind: str, text: str) -> None:
    """Make `version` the live one, after opening it whole as `load` would (manifest, tables,
    vectors): a version that cannot be opened is refused, naming it, and CURRENT is left as it was.
    `kind` and `text` say why in the folder's log. The caller holds the writer lock."""
    if version not in kept_versions(path):
        raise UnknownVersionError(f"memory {path} keeps no version {version!r}. Nothing was changed.")
    try:
        load_version(path, version)
    except MemoryFormatError as e:
        raise MemoryFormatError(f"version {version} of memory {path} cannot be opened, so it was not made "
                                f"live: {e}. Nothing was changed; `index --memory DIR --versions` lists the "
                                "versions kept and whether each opens.") from None
    try:
        before = current_version_dir(path).name
    except MemoryFormatError:
        before = ""
    write_atomic(path / CURRENT, version + "\n")
    _log(path, kind, text, version, before)


def undo(path: Path, lock_wait_s: float = LOCK_WAIT_S) -> tuple[str, dict[str, Any]]:
    """Switch the memory back to the version before the live one (one atomic rewrite of CURRENT:
    the earlier version's files are untouched, so it opens byte for byte as it was saved), after
    opening that version whole (`switch_to`). Returns (the version now live, the manifest of the
    version undone)."""
    path = Path(path)
    with writing(path, lock_wait_s), storage_guard(path, "undo the last change", "The memory is unchanged."):
        live = current_version_dir(path).name
        undone = read_manifest(path)
        before = previous_version(path, live)
        if before is None:
            raise NothingToUndoError(f"memory {path} keeps no version before the live one ({live}): "
                                     "nothing to undo. Nothing was changed.")
        switch_to(path, before, "undo", f"undid {undone.get('change') or 'the last change'}")
        return before, undone


def undoable(path: Path) -> str | None:
    """What `undo` would undo now (the live version's change in words), or None when it cannot."""
    try:
        live = current_version_dir(path).name
        if previous_version(path, live) is None:
            return None
        return read_manifest(path).get("change") or "the last change"
    except MemoryFormatError:
        return None


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
        con.executemany("INSERT INTO coref_unlinked VALUES (?,?)", sorted(m.coref_unlinked))
        con.executemany("INSERT INTO merges VALUES (?,?,?,?,?,?)",
                        [(r.merge_id, r.joined_key, r.joined_name,
                          json.dumps({"engrams": r.engrams, "heads": r.heads, "tails": r.tails}),
                          json.dumps(r.names, ensure_ascii=False),
                          np.ascontiguousarray(r.vectors if r.vectors is not None else np.zeros((0, m.dim)),
                                               dtype="<f4").tobytes())
                         for r in m.merges])
        con.commit()
    finally:
        con.close()


def read_manifest(path: Path) -> dict[str, Any]:
    """The live version's manifest, checked to have the shape memrag writes."""
    return version_manifest(path, current_version_dir(path).name, MANIFEST)


def check(path: Path) -> dict[str, Any]:
    """What listing a folder needs, cheaply: the manifest, the tables present, and vector files
    whose headers fit the manifest's counts. `load` checks everything else."""
    path = Path(path)
    manifest = read_manifest(path)
    vdir = current_version_dir(path)
    try:
        con = fmt.open_tables(vdir / "memory.sqlite")
        try:
            have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            con.close()
    except sqlite3.Error as e:
        raise damaged(path, f"memory.sqlite is not a readable database ({e})") from None
    missing = sorted(set(fmt.TABLES) - have)
    if missing:
        raise damaged(path, f"memory.sqlite lacks the table(s) {', '.join(missing)}")
    counts, dim = manifest.get("counts"), manifest["embedder"]["dim"]
    if counts is not None:
        for name, rows in _vector_rows(counts).items():
            fmt.check_vector_header(vdir / f"{name}.npy", rows, dim, path)
    return manifest


def _vector_rows(counts: dict[str, int]) -> dict[str, int]:
    return {"chunk_vecs": counts["chunks"], "engram_vecs": counts["engrams"],
            "entity_vecs": counts["entities"], "triple_vecs": counts["triples"]}


def load(path: Path, embedder_id: str | None = None) -> Memory:
    """Open a saved memory. Refuses a damaged folder, a newer format or a different embedder, with the reason."""
    path = Path(path)
    return _load_checked(path, current_version_dir(path).name, MANIFEST, embedder_id)


def load_version(path: Path, version: str, embedder_id: str | None = None) -> Memory:
    """Open one kept version of the folder (live or not), with every check `load` makes."""
    return _load_checked(Path(path), version, f"{version}/{MANIFEST}", embedder_id)


def _load_checked(path: Path, version: str, label: str, embedder_id: str | None) -> Memory:
    try:
        return _load(path, version, label, embedder_id)
    except sqlite3.Error as e:  # garbage, truncated or locked-away file: whatever SQLite found
        raise damaged(path, f"memory.sqlite is not a readable memory database ({e})") from None
    except OSError as e:
        raise damaged(path, f"a file is unreadable ({e})") from None


def _load(path: Path, version: str, label: str, embedder_id: str | None) -> Memory:
    vdir = path / version
    manifest = version_manifest(path, version, label)
    emb = manifest["embedder"]
    if embedder_id is not None and emb["model"] != embedder_id:
        raise MemoryFormatError(
            f"{path} was built with embedder {emb['model']!r}; the current embedder is {embedder_id!r}. "
            "Vectors from different embedders cannot be mixed: rebuild the memory or switch embedder.")
    m = Memory(emb["model"], emb["dim"])
    m.name = manifest.get("name", "")
    m.llm = manifest.get("llm", {})
    m.params = manifest.get("params", {})
    stored_order = _read_tables(m, fmt.open_tables(vdir / "memory.sqlite"), path)
    m.rebuild_derived()
    if [n.key for n in m.entities] != stored_order:
        raise damaged(path, "the entity table does not match the engrams")
    counts = manifest.get("counts")
    actual = {"documents": len(m.documents), "chunks": len(m.chunks), "engrams": len(m.engrams),
              "triples": len(m.triples), "entities": len(m.entities)}
    if counts is not None and {k: counts[k] for k in actual} != actual:
        raise damaged(path, f"manifest.json counts {counts} disagree with the tables {actual}")
    for name, rows in _vector_rows(actual).items():
        setattr(m, name, fmt.read_vectors(vdir / f"{name}.npy", rows, m.dim, path))
    return m


def _read_tables(m: Memory, con: sqlite3.Connection, path: Path) -> list[str]:
    """Fill `m` from the tables, checking kinds, ids and every chunk reference; returns the stored
    entity order (checked against the engrams by the caller)."""
    try:
        def rows(table: str) -> list[tuple[Any, ...]]:
            return fmt.read_table(con, table, path)

        m.documents = [DocRow(r[0], r[1], r[2], r[3], r[4], fmt.json_cell(r[5], f"document {r[0]!r} meta", path, {}))
                       for r in rows("documents")]
        m.chunks = [ChunkRow(*r) for r in rows("chunks")]
        m.engrams = [EngramRow(*r) for r in rows("engrams")]
        m.triples = [TripleRow(*r) for r in rows("triples")]
        log = [ExtractionLog(r[0], r[1], r[2] or "", r[3] or "", r[4], r[5], float(r[6]), bool(r[7]))
               for r in rows("extraction_log")]
        m.ledger_rows = [fmt.json_cell(r[0], "a ledger row", path) for r in rows("ledger")]
        stored_order = [r[0] for r in rows("entities")]
        if fmt.has_table(con, "coref_unlinked"):
            m.coref_unlinked = {(a, b) if a < b else (b, a) for a, b in rows("coref_unlinked")}
        merges = rows("merges") if fmt.has_table(con, "merges") else []
    finally:
        con.close()
    fmt.check_ids([c.chunk_id for c in m.chunks], "chunks", path)
    fmt.check_ids([e.engram_id for e in m.engrams], "engrams", path)
    fmt.check_ids([t.triple_id for t in m.triples], "triples", path)
    n = len(m.chunks)
    fmt.check_refs([e.chunk_id for e in m.engrams], n, "engrams", path)
    fmt.check_refs([t.chunk_id for t in m.triples], n, "triples", path)
    fmt.check_refs([x.chunk_id for x in log], n, "extraction_log", path)
    doc_ids = {d.doc_id for d in m.documents}
    orphan = next((c for c in m.chunks if c.doc_id not in doc_ids), None)
    if orphan is not None:
        raise damaged(path, f"chunk {orphan.chunk_id} belongs to document {orphan.doc_id!r}, which is not stored")
    m.extraction_log = {x.chunk_id: x for x in log}
    m.merges = [fmt.merge_record(r, len(m.engrams), len(m.triples), m.dim, path) for r in merges]
    return stored_order


def memory_to_rows(m: Memory) -> dict[str, list[dict[str, Any]]]:
    """Every table as plain dicts (for tests and exports)."""
    return {
        "documents": [asdict(d) for d in m.documents],
        "chunks": [asdict(c) for c in m.chunks],
        "engrams": [asdict(e) for e in m.engrams],
        "triples": [asdict(t) for t in m.triples],
        "entities": [asdict(n) for n in m.entities],
        "extraction_log": [asdict(x) for x in m.extraction_log.values()],
        "coref_unlinked": [{"key_a": a, "key_b": b} for a, b in sorted(m.coref_unlinked)],
        "merges": [{**{k: v for k, v in asdict(r).items() if k != "vectors"},
                    "vectors": [] if r.vectors is None else r.vectors.tolist()} for r in m.merges],
    }
