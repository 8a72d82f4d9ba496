"""Writing files so that a crash or a power cut leaves either the old bytes or the new ones.

`write_atomic` writes beside the target, flushes the bytes to the disk (fsync),
renames over the target and flushes the folder, so the rename itself survives.
`fsync_file` and `fsync_dir` are the two halves, for writers that rename a whole
folder (a memory version) instead of one file. `storage_guard` names the faults a disk can
give (full, read-only, no access, cannot open) as one StorageError, for every writer.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator


def fsync_file(path: Path) -> None:
    """Force a file that is already written (by another library, e.g. SQLite or numpy) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Force a folder's entries (renames, new files) to the disk. Some platforms cannot open a
    folder (Windows): there the rename is as durable as the system makes it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system that cannot sync folders (some network mounts) still gets the rename
    finally:
        os.close(fd)


def write_file(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write a new file with `write(fh)` and force it to the disk before returning."""
    with open(path, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def write_atomic(path: Path, data: str | bytes | Callable[[IO[bytes]], None]) -> None:
    """Replace `path` with `data` (text is written as UTF-8) durably and atomically."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    if callable(data):
        writer = data
    else:
        blob = data.encode("utf-8") if isinstance(data, str) else data
        writer = lambda fh: fh.write(blob)  # noqa: E731
    try:
        write_file(tmp, writer)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


# ------------------------------------------------------------------ storage faults, named
class StorageError(Exception):
    """The disk refused a read or write memrag needed: full, read-only, no access, or a path that
    cannot be opened. The message says which file, why, and what was kept."""

    def __init__(self, message: str, *, path: Path, kind: str) -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind  # full | read-only | no access | cannot open | disk error


_ERRNO_KINDS = {errno.ENOSPC: "full", errno.EFBIG: "full", errno.EDQUOT: "full", errno.EROFS: "read-only",
                errno.EACCES: "no access", errno.EPERM: "no access", errno.ENOTDIR: "cannot open",
                errno.EEXIST: "cannot open", errno.EISDIR: "cannot open", errno.ENOENT: "cannot open",
                errno.ENAMETOOLONG: "cannot open", errno.ELOOP: "cannot open", errno.EIO: "disk error"}
# SQLite names its storage faults by code; "busy"/"locked" are not among them (those are waited on).
_SQLITE_KINDS = {"SQLITE_FULL": "full", "SQLITE_READONLY": "read-only", "SQLITE_PERM": "no access",
                 "SQLITE_CANTOPEN": "cannot open", "SQLITE_IOERR": "disk error"}
_WHY = {"full": "the disk is full or a file-size limit was reached",
        "read-only": "the file system or file is read-only",
        "no access": "permission denied",
        "cannot open": "the path cannot be opened (a part of it is a file, or is missing)",
        "disk error": "the disk reported an input/output error (full, or a file-size limit reached?)"}


def storage_kind(error: BaseException) -> str | None:
    """Which storage fault `error` is, or None when it is not one (a bug, a busy database, damage)."""
    if isinstance(error, sqlite3.Error):
        name = getattr(error, "sqlite_errorname", "") or ""
        for prefix, kind in _SQLITE_KINDS.items():
            if name == prefix or name.startswith(prefix + "_"):
                return kind
        return None
    if isinstance(error, OSError):
        return _ERRNO_KINDS.get(error.errno or -1)
    return None


@contextmanager
def storage_guard(path: Path | str, action: str, kept: str = "") -> Iterator[None]:
    """Turn a storage fault inside the block into a StorageError naming `path`, `action` ('save the
    memory') and what was `kept`; every other error passes unchanged."""
    try:
        yield
    except StorageError:
        raise
    except (OSError, sqlite3.Error) as e:
        kind = storage_kind(e)
        if kind is None:
            raise
        detail = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        message = f"could not {action} ({path}): {_WHY[kind]} [{detail}]."
        raise StorageError(message + (f" {kept}" if kept else ""), path=Path(path), kind=kind) from e


WRITER_LOCK = ".writer.lock"


@contextmanager
def writer_lock(folder: Path, wait_s: float, busy: Callable[[], Exception], kept: str = "") -> Iterator[None]:
    """Hold `folder`'s writer lock: one writer at a time across processes and threads (an OS file
    lock, so a killed holder releases it; re-entrant in one thread). After `wait_s` seconds raises
    `busy()`; the folder is made first, and a disk that refuses it is a StorageError."""
    from filelock import FileLock, Timeout

    folder = Path(folder)
    lock = FileLock(str((folder / WRITER_LOCK).resolve()), is_singleton=True)
    try:
        with storage_guard(folder, "open the folder for writing", kept):
            folder.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout=wait_s)
    except Timeout:
        raise busy() from None
    try:
        yield
    finally:
        lock.release()
