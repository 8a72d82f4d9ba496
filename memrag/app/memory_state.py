"""Memory folders as the app sees them: where saved memories live, which one is active, opened
once per (path, fingerprint) for the whole process, and the upload batch read for a build."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Sequence, TypedDict

import streamlit as st

from memrag.app import backend_state
from memrag.app.backend_state import settings
from memrag.app.session import AppState
from memrag.index import pending, store
from memrag.index.memory import Memory
from memrag.index.readers import IngestReport
from memrag.textsafe import distinct_slug


class SavedMemory(TypedDict):
    path: str
    folder: str
    manifest: dict[str, Any]  # empty when unreadable or not saved yet
    error: str  # why the manifest could not be read; "" when it could
    interrupted: str  # an unfinished build in the folder, in words ('' when none)


def safe_memory_name(name: str) -> str:
    """A folder name from user text: lower-case ASCII letters, digits, '-' and '_' only (a name that
    loses its letters on the way, 研究ノート, gets a hash of itself: two such names never merge)."""
    return distinct_slug(name, "memory", keep="a-z0-9_-", trim="-_", limit=60)


def read_upload_batch(files: Sequence[Any], params: Any) -> tuple[IngestReport, int]:
    """The ingest report and chunk count of uploaded files (objects with .name, .size, .getvalue()),
    read once per batch: every rerun of the page (any widget touched) would otherwise parse and
    chunk every file again. Keyed by each file's name, size and content hash, and the parameters."""
    from memrag.index.chunk import estimate_chunks
    from memrag.index.readers import read_uploads

    blobs = [(f.name, f.getvalue()) for f in files]
    key = (tuple((name, len(data), hashlib.sha256(data).hexdigest()) for name, data in blobs), repr(params))
    state = AppState()
    memo = state.upload_memo
    if memo.get("key") != key:
        report = read_uploads(blobs, params)
        memo = {"key": key, "report": report, "chunks": estimate_chunks(report.documents, params)}
        state.upload_memo = memo  # only the latest batch: an old one would hold its files in memory
    return memo["report"], memo["chunks"]


def memories_dir() -> Path:
    return settings().data_dir / "memories"


def memory_path(name: str) -> Path:
    """The folder of a saved memory called `name` (always inside the app's memories folder)."""
    root = memories_dir().resolve()
    path = (root / safe_memory_name(name)).resolve()
    if path.parent != root:  # cannot happen with a sanitised name; checked anyway
        raise ValueError(f"memory name {name!r} does not make a folder inside {root}")
    return path


def sample_memory_dir() -> Path:
    from memrag import demo

    return demo.sample_memory_dir()


def is_sample(path: str | Path | None) -> bool:
    from memrag import demo

    return demo.is_sample_memory(path)


def saved_memories() -> list[SavedMemory]:
    """Memories under the app's data folder, with their manifests (unreadable ones say why)."""
    root = memories_dir()
    out: list[SavedMemory] = []
    if not root.is_dir():
        return out
    building = _being_built()
    for p in sorted(root.iterdir()):
        # a build running now (in any session) is not interrupted: listing it offered another
        # session a resume of work still under way
        interrupted = interrupted_build(p) if p.is_dir() and str(p) not in building else ""
        if not p.is_dir() or not (store.is_memory_dir(p) or interrupted):
            continue
        entry: SavedMemory = {"path": str(p), "folder": p.name, "manifest": {}, "error": "",
                              "interrupted": interrupted}
        if store.is_memory_dir(p):
            try:
                entry["manifest"] = store.check(p)
            except store.MemoryFormatError as e:
                entry["error"] = str(e)
        out.append(entry)
    return out


def _being_built() -> set[str]:
    """Folders a running build job of this server writes into."""
    from memrag.app import jobs

    return {str(j.meta.get("path")) for j in jobs.list_jobs("build", running_only=True) if j.meta.get("path")}


def resumable(path: Path) -> pending.PendingBuild | None:
    """The interrupted build left in `path`, when there is one that can be resumed."""
    try:
        return pending.read(path)
    except pending.PendingUnreadable:
        return None


def discard_interrupted(path: Path) -> str:
    """Throw away the interrupted build left in `path` (a folder of the app's memories): its pending
    record always, and its journal and the folder too when the build never saved a memory there. A
    memory saved there earlier stays as it was. Returns what was done, in words; raises ValueError
    when it may not (not one of the app's memories, or a build writes there now)."""
    from memrag.durable import WRITER_LOCK

    path = Path(path)
    if path.resolve().parent != memories_dir().resolve():
        raise ValueError(f"{path.name!r} is not one of this app's memories")
    if str(path) in _being_built():
        raise ValueError(f"A build into {path.name} is running: cancel it first.")
    try:
        with store.writing(path, wait_s=1.0):  # no build of another process starts meanwhile
            pending.clear(path)
            if store.is_memory_dir(path):
                return f"The interrupted build in {path.name} was discarded; the memory saved there is unchanged."
            for name in (pending.JOURNAL, pending.JOURNAL + "-wal", pending.JOURNAL + "-shm", pending.PENDING + ".tmp"):
                (path / name).unlink(missing_ok=True)
    except store.MemoryBusyError as e:
        raise ValueError(str(e)) from None
    (path / WRITER_LOCK).unlink(missing_ok=True)
    try:
        path.rmdir()  # only when nothing else is left in it
    except OSError:
        return f"The interrupted build {path.name} was discarded; files memrag did not write stay in its folder."
    return f"The interrupted build {path.name} was discarded."


def interrupted_build(path: Path) -> str:
    """'interrupted build: 1 of 3 chunks extracted (2 documents)', or '' when none is left there."""
    try:
        build = pending.read(path)
    except pending.PendingUnreadable as e:
        return f"an interrupted build that cannot be resumed: {e}"
    if build is None:
        return ""
    return (f"interrupted build: {pending.chunks_done(path, build)} of {build.chunks} chunks extracted "
            f"({len(build.documents)} document(s))")


def memory_label(path: str | Path) -> str:
    if is_sample(path):
        return "Sample corpus: the Varrow Coast"
    try:
        name = store.read_manifest(Path(path)).get("name") or ""
    except store.MemoryFormatError:
        name = ""
    return f"{name} ({Path(path).name})" if name and name != Path(path).name else Path(path).name


@st.cache_resource(show_spinner="opening the memory…", max_entries=6)
def _open(path: str, fingerprint: str, embedder: str) -> Memory:
    return store.load(Path(path), embedder)


def open_memory(path: str | Path) -> Memory:
    """The memory at `path`, opened once per (path, fingerprint) for the whole process."""
    manifest = store.read_manifest(Path(path))
    embedder = backend_state.open_with(str(manifest["embedder"]["model"]), memory_label(path))  # built with it
    return _open(str(Path(path).resolve()), str(manifest.get("fingerprint", "")), embedder)


def active_memory() -> tuple[str | None, Memory | None, str]:
    """(path, memory, error): the memory pages work on; the sample when none was chosen."""
    s = AppState()
    if s.active_memory is None and store.is_memory_dir(sample_memory_dir()):
        s.active_memory = str(sample_memory_dir())
    if s.active_memory is None:
        return None, None, ""
    try:
        return s.active_memory, open_memory(s.active_memory), ""
    except (store.MemoryFormatError, OSError, ValueError) as e:
        return s.active_memory, None, str(e)
