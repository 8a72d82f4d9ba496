"""Two evaluations into one run folder (issue 27, probe 11): the folder is locked by its writer,
so a second `eval --out` on it is refused with a message instead of paying for every question
again; the lock is an OS lock, gone with its holder."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memrag.eval import rundir

HOLDER = """
import sys, time
from pathlib import Path
from memrag.eval.rundir import writing_run
with writing_run(Path(sys.argv[1])):
    Path(sys.argv[2]).touch()
    time.sleep(120)
"""


@pytest.mark.probe("a second `python -m memrag eval --out RUN` while another evaluation writes RUN",
                   "refused with a message naming the folder, before any question is paid for; "
                   "the folder is free again once the first is gone", group="run folders")
def test_a_second_eval_into_a_busy_run_folder_is_refused(tmp_path, monkeypatch, capsys):
    from memrag import embed
    from memrag.cli.main import main
    from scripted import HashEmbedder

    out, held = tmp_path / "run", tmp_path / "held"
    root = Path(__file__).resolve().parents[2]
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(held)], cwd=root)
    try:
        deadline = time.monotonic() + 120
        while not held.exists():
            assert holder.poll() is None and time.monotonic() < deadline, "the holder never took the lock"
            time.sleep(0.05)
        monkeypatch.setitem(embed._shared, embed.DEFAULT_EMBEDDER, HashEmbedder())
        monkeypatch.delenv("MEMRAG_EMBEDDER", raising=False)
        code = main(["eval", "--dataset", "sample", "--recorded", "--scope", "pooled", "--methods", "dense", "--limit", "1",
                     "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 1 and "is being written by another evaluation" in err and str(out) in err, err
        assert not (out / rundir.RESULTS).exists()
    finally:
        holder.kill()
        holder.wait(30)
    with rundir.writing_run(out, wait_s=5):  # the killed holder's lock went with it
        pass
