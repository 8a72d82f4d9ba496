"""An editable copy of a memory folder: its live version (opened whole first, copied byte for byte)
and the recordings beside it, so a copy of the shipped sample answers its demo questions offline
exactly as the sample does — and can be edited, which the sample never is.

Not copied: earlier versions (the copy starts its own line), the source's log (the copy's begins
with where it came from), an interrupted build's journal and pending file, locks and temporaries.
The copy is written beside its destination and renamed into place, so it is whole or absent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from memrag.durable import WRITER_LOCK, fsync_dir, fsync_file, write_atomic
from memrag.index import edit_log, pending, store

_LEFT_OUT = {store.CURRENT, WRITER_LOCK, edit_log.LOG, pending.PENDING, pending.JOURNAL}


class CopyError(store.MemoryStoreError):
    """The copy cannot be made as asked; nothing was written."""


def copy_memory(source: Path, dest: Path) -> Path:
    """Copy the memory at `source` to the new folder `dest` (which must not exist) and return it."""
    source, dest = Path(source), Path(dest)
    if dest.exists():
        raise CopyError(f"{dest} exists already: choose another name. Nothing was written.")
    live = store.current_version_dir(source)
    store.load_version(source, live.name)  # a damaged memory is refused here, not copied
    tmp = dest.with_name(f".{dest.name}.copy{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        shutil.copytree(live, tmp / live.name)
        for f in sorted(source.iterdir()):
            if f.is_file() and not f.is_symlink() and f.name not in _LEFT_OUT and ".tmp" not in f.name:
                shutil.copy2(f, tmp / f.name)
        for f in tmp.rglob("*"):
            if f.is_file():
                fsync_file(f)  # the bytes are on disk before the name says the copy is there
        fsync_dir(tmp / live.name)
        write_atomic(tmp / store.CURRENT, live.name + "\n")
        named = store.version_manifest(source, live.name).get("name") or source.name
        edit_log.append(tmp, edit_log.LogEntry(edit_log.now(), "copy", f"copied from {named} (its version "
                                               f"{live.name})", live.name, "", {"source": source.name}))
        fsync_dir(tmp)
        os.rename(tmp, dest)
        fsync_dir(dest.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
