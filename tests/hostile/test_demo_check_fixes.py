"""`python -m memrag demo-check`'s fixes are commands that work, and its messages name the real cause
(issue 35): for a damaged sample memory it suggested an `index` command that refuses to touch the
sample, and a broken recorded reply was reported as "the prompts or parameters changed"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fake_ollama import closed_port_host
from memrag import demo, sample
from memrag.cli.demo_check import run_demo_check
from memrag.config import Settings
from memrag.llm.recordings import FILE_NAME

probe = pytest.mark.probe
SHIPPED = demo.sample_memory_dir()


@pytest.fixture()
def sample_copy(tmp_path, monkeypatch) -> Path:
    """A copy of the shipped sample memory standing in for it (the checks and `demo extract` use it)."""
    copy = tmp_path / "memory"
    shutil.copytree(SHIPPED, copy)
    for module in (demo, sample):
        monkeypatch.setattr(module, "sample_memory_dir", lambda backend="embedded", model="": copy)
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OLLAMA_HOST", closed_port_host())
    return copy


def _check(name: str):
    report = run_demo_check(Settings(backend="embedded"), demo.ROOT, pages=False)
    return next(c for c in report.checks if c.name == name)


@probe("demo-check on a sample memory whose memory.sqlite is garbage",
       "FAIL, and the fix offered is a command that mends it (git checkout, or `demo extract --recorded`, which is "
       "run here and makes the check pass), never the `index` command that refuses the sample", group="demo-check")
def test_a_damaged_sample_memory_gets_a_fix_that_works(sample_copy, capsys):
    from memrag.cli import main as cli

    version = next(sample_copy.glob("v[0-9]*"))
    (version / "memory.sqlite").write_bytes(b"this is not a database" * 100)
    failed = _check("sample memory")
    assert not failed.ok
    assert "git checkout -- " in failed.fix and "python -m memrag demo extract --recorded" in failed.fix
    assert "memrag index" not in failed.fix
    assert cli.main(["demo", "extract", "--recorded"]) == 0  # the fix, as offered
    capsys.readouterr()
    assert _check("sample memory").ok


@probe("demo-check when one line of the sample's responses.jsonl is broken (NaN seconds)",
       "FAIL naming responses.jsonl and the line as a reply that cannot be used (not 'the prompts or parameters "
       "changed'); the fix restores the file from git or re-records", group="demo-check")
def test_a_broken_recorded_reply_is_named_as_that(sample_copy):
    path = sample_copy / FILE_NAME
    lines = path.read_text().splitlines()
    row = json.loads(lines[5])
    row["seconds"] = float("nan")
    lines[5] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    failed = _check("recordings")
    assert not failed.ok
    assert f"{path}, line 6: its seconds are nan" in failed.detail and "cannot be used" in failed.detail
    assert "prompts or parameters changed" not in failed.detail
    assert "git checkout -- " in failed.fix and "python -m memrag demo record" in failed.fix
