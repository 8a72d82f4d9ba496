"""Committed runs replay with one command each (bench/replay_check.py): the sample's headline run
always; a MuSiQue run whenever the shared benchmark (../shared/bench) is at hand, over its own small
memory imported from the shared OpenIE file into a temporary folder (the first 5 questions' 100
passages, about a minute); and the pooled MuSiQue run when an imported MuSiQue memory is at hand too.
Each is skipped with a message saying what is missing otherwise. A replay answers every model call
from the run's recordings, so this is import, arithmetic and retrieval only."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from memrag.index import store
from test_replay_check import RC

SAMPLE_RUN = "sample-pooled-20"
MUSIQUE_SLICE_RUN = "musique-limit-pooled-1-5-four-methods"  # its memory: the first 5 questions' passages
MUSIQUE_RUN = "musique-pooled-1-5-live-seconds"  # over the whole imported corpus (1,890 passages)


def musique_memory() -> Path | None:
    """An imported MuSiQue memory: $MEMRAG_MUSIQUE_MEMORY, the repository's data/mem-musique (where
    bench/replay_check.py says to build it), or the shared one beside the repository."""
    named = os.environ.get("MEMRAG_MUSIQUE_MEMORY")
    places = [Path(named)] if named else []
    places += [RC.REPO / "data" / "mem-musique", RC.REPO.parent / "data-shared" / "musique-memory"]
    return next((p for p in places if store.is_memory_dir(p)), None)


def _check(run: str, work: Path, memory: Path | None) -> str:
    args = argparse.Namespace(work=work, bench=RC.DEFAULT_BENCH, musique_memory=memory or work / "no-memory",
                              baseline=None, without=[])
    work.mkdir(parents=True, exist_ok=True)
    return RC.check(RC.RUNS / run, args)


def _skip_without_shared_musique() -> None:
    if not (RC.DEFAULT_BENCH / RC.MUSIQUE_OPENIE).is_file():
        pytest.skip(f"MuSiQue replay skipped: the shared benchmark is not at {RC.DEFAULT_BENCH} "
                    f"(no {RC.MUSIQUE_OPENIE})")


def test_the_sample_run_replays_as_committed(tmp_path, capsys):
    verdict = _check(SAMPLE_RUN, tmp_path, None)
    out = capsys.readouterr().out
    assert verdict == "identical", out


def test_a_musique_run_replays_as_committed(tmp_path, capsys):
    _skip_without_shared_musique()
    summary = json.loads((RC.RUNS / MUSIQUE_SLICE_RUN / "summary.json").read_text(encoding="utf-8"))
    # a live run of all four methods with answers, over a slice imported from the shared OpenIE file
    assert summary["stamp"]["scope"] == "limit-pooled" and summary["stamp"]["answers"]
    assert sorted(summary["methods"]) == ["dense", "ecphory", "hipporag2", "neuropath"]
    verdict = _check(MUSIQUE_SLICE_RUN, tmp_path, None)
    out = capsys.readouterr().out
    assert verdict == "identical", out
    assert (tmp_path / MUSIQUE_SLICE_RUN / "memory").is_dir()  # imported here, not opened from elsewhere


def test_the_pooled_musique_run_replays_as_committed(tmp_path, capsys):
    _skip_without_shared_musique()
    memory = musique_memory()
    if memory is None:
        pytest.skip("pooled MuSiQue replay skipped: no imported MuSiQue memory (set MEMRAG_MUSIQUE_MEMORY, or build "
                    "data/mem-musique once as bench/replay_check.py's docstring says, 10-20 minutes)")
    verdict = _check(MUSIQUE_RUN, tmp_path, memory)
    out = capsys.readouterr().out
    assert verdict == "identical", out
