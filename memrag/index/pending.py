"""A build's unfinished work, kept beside its memory until the memory is saved.

A build writes `pending.json` (its documents and the journal keys of their chunks) before its
first extraction and removes it after saving. A build that was cancelled, failed or killed
leaves it behind: the folder is then listed as an interrupted build, how many of its chunks the
journal already holds is counted, and building the same documents again resumes (the journal
answers the chunks already extracted, without new LLM calls).
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memrag.index.readers import Document

PENDING = "pending.json"
JOURNAL = "journal.sqlite"
MAX_PENDING_BYTES = 64 * 1024 * 1024  # a pending file far larger than any upload batch is not ours


class PendingUnreadable(ValueError):
    """The pending file is damaged or not one memrag wrote (the message says which)."""


@dataclass(frozen=True)
class PendingBuild:
    name: str
    documents: list[Document]
    chunk_keys: list[str]

    @property
    def chunks(self) -> int:
        return len(self.chunk_keys)


def write(path: Path, documents: list[Document], chunk_keys: list[str], name: str) -> None:
    """Record the build's work, replacing any earlier record (written whole, then renamed)."""
    path.mkdir(parents=True, exist_ok=True)
    blob = json.dumps({"format": 1, "name": name, "documents": [asdict(d) for d in documents],
                       "chunk_keys": chunk_keys}, ensure_ascii=False)
    tmp = path / (PENDING + ".tmp")
    tmp.write_text(blob, encoding="utf-8")
    os.replace(tmp, path / PENDING)


def clear(path: Path) -> None:
    (path / PENDING).unlink(missing_ok=True)


def read(path: Path) -> PendingBuild | None:
    """The interrupted build in `path`, None when there is none."""
    file = Path(path) / PENDING
    if not file.is_file():
        return None
    try:
        if file.stat().st_size > MAX_PENDING_BYTES:
            raise PendingUnreadable(f"{file.name} is {file.stat().st_size:,} bytes: not one memrag wrote")
        data = json.loads(file.read_text(encoding="utf-8"))
        return PendingBuild(str(data["name"]), [_document(d) for d in data["documents"]],
                            [str(k) for k in data["chunk_keys"]])
    except (OSError, ValueError, KeyError, TypeError) as e:
        if isinstance(e, PendingUnreadable):
            raise
        raise PendingUnreadable(f"{file.name} cannot be read ({type(e).__name__}: {e})") from None


def _document(d: Any) -> Document:
    if not isinstance(d, dict) or not all(isinstance(d.get(k), str) for k in ("doc_id", "title", "text")):
        raise TypeError("a document entry lacks its id, title or text")
    return Document(d["doc_id"], d["title"], d["text"], str(d.get("source", "")), str(d.get("kind", "file")),
                    dict(d.get("meta") or {}))


def chunks_done(path: Path, build: PendingBuild) -> int:
    """How many of the build's chunks its journal already holds (extracted, or failed and recorded)."""
    journal = Path(path) / JOURNAL
    if not journal.is_file() or not build.chunk_keys:
        return 0
    con = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5.0)
    try:
        keys = set(build.chunk_keys)
        return sum(1 for (k,) in con.execute("SELECT key FROM extracted") if k in keys)
    except sqlite3.Error:
        return 0  # a journal being written or damaged: nothing is claimed
    finally:
        con.close()
