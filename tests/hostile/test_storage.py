"""Hostile probes of memory folders and caches (issue 15, items 2, 3, 8, 9, 10, 13 and the storage
probes that held): every damaged or raced file is refused with a reason or repaired, never a
traceback, and no saved memory is ever lost."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memrag import durable, store
from memrag.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.ingest import benchmark_document
from scripted import HashEmbedder, ScriptedLLM

probe = pytest.mark.probe
MEM = "memory folders"
CACHE = "caches"


def ext(*names: str) -> dict:
    return {"entities": [{"name": n, "type": "thing", "description": f"about {n}", "importance": 3}
                         for n in names],
            "triples": [[names[0], "is near", names[-1]]]}


DOCS = [benchmark_document(f"d{i}", f"Title {i}", f"Alder{i} stands beside Birch{i}.", "t") for i in range(3)]
REPLIES = [ext(f"Alder{i}", f"Birch{i}") for i in range(3)]


def build(path: Path | None, docs=DOCS, replies=REPLIES):
    llm = ScriptedLLM({"index.extract": list(replies)})
    return run_build(build_memory(path, list(docs), llm, HashEmbedder(), IndexParams()))


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    build(tmp_path / "mem")
    return tmp_path / "mem"


# ------------------------------------------------------------------ item 10: durable writes
@probe("power cut right after a save: were the vector files, manifest and CURRENT flushed?",
       "every file of a version and the CURRENT pointer are fsynced before their rename, and the folders after",
       group=MEM)
def test_save_fsyncs_every_file_before_it_is_renamed_and_the_folders_after(tmp_path, monkeypatch):
    m = build(None)
    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    vdir = store.save(m, tmp_path / "mem")
    names = [Path(p).name for p in synced]
    for f in [*(f"{v}.npy" for v in store.VECTORS), "manifest.json", "memory.sqlite"]:
        assert any(n == f for n in names), f"{f} was never fsynced: {names}"
    # the version folder's contents reach the disk before it is renamed into place, CURRENT after it
    tmp_dirs = [i for i, n in enumerate(names) if n.startswith(f".{vdir.name}.tmp")]
    assert tmp_dirs, names
    pointer = [i for i, n in enumerate(synced) if Path(n).name.startswith(".CURRENT.tmp")]
    assert pointer and pointer[0] > tmp_dirs[-1]
    assert names[-1] == "mem" or str(tmp_path / "mem") in synced[pointer[0]:]


def test_write_atomic_leaves_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    target = tmp_path / "a.json"
    durable.write_atomic(target, '{"v": 1}')
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        durable.write_atomic(target, '{"v": 2}')
    assert target.read_text() == '{"v": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind
