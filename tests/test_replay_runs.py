"""Committed runs replay with one command each (bench/replay_check.py): the sample's headline run
always, and one MuSiQue run when the shared benchmark (../shared/bench) and an imported MuSiQue
memory are at hand — skipped with a message saying which is missing otherwise. A replay answers
every model call from the run's recordings, so this is arithmetic and retrieval only (about a
minute each)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from memrag.index import store
from test_replay_check import RC

SAMPLE_RUN = "sample-pooled-20"
MUSIQUE_RUN = "musique-pooled-1-5-live-seconds"


def musique_memory() -> Path | None:
    """An imported MuSiQue memory: $MEMRAG_MUSIQUE_MEMORY, the repository's data/mem-musique (where
    bench/replay_check.py says to build it), or the shared one beside the repository."""
    named = os.environ.get("MEMRAG_MUSIQUE_MEMORY")
    places = [Path(named)] if named else []
    places += [RC.REPO / "data" / "mem-musique", RC.REPO.parent / "data-shared" / "musique-memory"]
    return next((p for p in places if store.is_memory_dir(p)), None)


def _check(run: str, work: Path, memory: Path | None) -> tuple[str, str]:
    args = argparse.Namespace(work=work, bench=RC.DEFAULT_BENCH, musique_memory=memory or work / "no-memory",
                              baseline=None, without=[])
    work.mkdir(parents=True, exist_ok=True)
    return RC.check(RC.RUNS / run, args), ""


def test_the_sample_run_replays_as_committed(tmp_path, capsys):
    verdict, _ = _check(SAMPLE_RUN, tmp_path, None)
    out = capsys.readouterr().out
    assert verdict == "identical", out


def test_a_musique_run_replays_as_committed(tmp_path, capsys):
    if not (RC.DEFAULT_BENCH / RC.MUSIQUE_OPENIE).is_file():
        pytest.skip(f"MuSiQue replay skipped: the shared benchmark is not at {RC.DEFAULT_BENCH}")
    memory = musique_memory()
    if memory is None:
        pytest.skip("MuSiQue replay skipped: no imported MuSiQue memory (set MEMRAG_MUSIQUE_MEMORY, or build "
                    "data/mem-musique once as bench/replay_check.py's docstring says, 10-20 minutes)")
    verdict, _ = _check(MUSIQUE_RUN, tmp_path, memory)
    out = capsys.readouterr().out
    assert verdict == "identical", out
