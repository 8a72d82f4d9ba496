"""A memory folder's log of changes: every save (a build, a removal, an edit) and every switch of the
live version (an undo, `--use`), what it was, when, and which version it made live.

One JSON object a line in `<dir>/edit-log.jsonl`, appended by the store under the folder's writer
lock after CURRENT was switched (a crash between the two leaves a version the log does not name;
`index --versions` still lists it). The log is shared by every version of the folder, so it tells
the whole story, including versions since pruned (`versions.history` says which are still on disk).
Appends are single writes of one line, so a torn last line (a power cut) is the worst damage; the
reader (through `memrag.filesafe`: a regular file only, never a pipe that would hold it) skips lines
that are not what memrag writes and reads at most the last READ_MAX_BYTES.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memrag.durable import fsync_dir, write_atomic
from memrag.filesafe import UnreadableFile, open_regular

LOG = "edit-log.jsonl"
READ_MAX_BYTES = 2_000_000  # thousands of entries; older ones are dropped when the file outgrows it
KEEP_ON_TRIM = 1_000  # entries a trim keeps


@dataclass(frozen=True)
class LogEntry:
    at: str  # UTC, ISO 8601
    kind: str  # build | remove | merge | split | unlink-coref | rename | remove-triple | add-triple | undo | use
    text: str  # what it did, in words
    version: str  # the version it made live
    previous: str  # the version live before it ('' for a first build)
    args: dict[str, Any] = field(default_factory=dict)  # the edit as asked (for edits), else {}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def append(path: Path, entry: LogEntry) -> None:
    """Add one entry (the caller holds the folder's writer lock)."""
    file = Path(path) / LOG
    line = (json.dumps(asdict(entry), ensure_ascii=False) + "\n").encode("utf-8")
    created = not file.exists()
    with open(file, "ab") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    if created:
        fsync_dir(Path(path))
    if file.stat().st_size > READ_MAX_BYTES:
        _trim(file)


def _trim(file: Path) -> None:
    kept = read(file.parent)[-KEEP_ON_TRIM:]
    write_atomic(file, "".join(json.dumps(asdict(e), ensure_ascii=False) + "\n" for e in kept))


def read(path: Path) -> list[LogEntry]:
    """The entries, oldest first ([] when there is no log). Lines memrag did not write are skipped."""
    file = Path(path) / LOG
    if not os.path.lexists(file):
        return []
    try:
        fd = open_regular(file)  # filesafe's rule: a pipe or a device by that name is never opened to wait
    except UnreadableFile:
        return []  # not a file memrag wrote (a folder, a pipe): no entry of it can be read
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - READ_MAX_BYTES))
        blob = fh.read(READ_MAX_BYTES)  # the bound: a log grown past it is read from its tail
    lines = blob.split(b"\n")
    if size > READ_MAX_BYTES:
        lines = lines[1:]  # the first is cut
    out = []
    for raw in lines:
        entry = _entry(raw)
        if entry is not None:
            out.append(entry)
    return out


def _entry(raw: bytes) -> LogEntry | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    texts = {k: obj.get(k) for k in ("at", "kind", "text", "version", "previous")}
    args = obj.get("args", {})
    if not all(isinstance(v, str) for v in texts.values()) or not isinstance(args, dict):
        return None
    return LogEntry(**texts, args=args)
