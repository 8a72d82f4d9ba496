"""Writing files so that a crash or a power cut leaves either the old bytes or the new ones.

`write_atomic` writes beside the target, flushes the bytes to the disk (fsync),
renames over the target and flushes the folder, so the rename itself survives.
`fsync_file` and `fsync_dir` are the two halves, for writers that rename a whole
folder (a memory version) instead of one file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Callable


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
