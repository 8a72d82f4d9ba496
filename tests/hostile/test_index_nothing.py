"""`python -m memrag index` given only paths it skips (issue 35): on main it exited 0 and wrote an
empty memory. It must exit non-zero, say why, and make (or change) no memory."""

from __future__ import annotations

import os

import pytest

from fake_ollama import closed_port_host
from memrag.index import store
from scripted import HashEmbedder

probe = pytest.mark.probe


@pytest.fixture()
def skipped_only(tmp_path):
    """Paths every one of which is skipped: a missing file, an empty text, a binary, a named pipe."""
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "tool.exe").write_bytes(b"MZ\x90\x00" * 10)
    os.mkfifo(tmp_path / "pipe.txt")
    return [str(tmp_path / n) for n in ("missing.txt", "empty.txt", "tool.exe", "pipe.txt")]


@pytest.fixture()
def cli(monkeypatch, tmp_path):
    from memrag import embed
    from memrag.cli import main

    monkeypatch.setenv("OLLAMA_HOST", closed_port_host())
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(embed, "get_embedder", lambda *a, **k: HashEmbedder())
    return main.main


@probe("`index --memory NEW` where every path is skipped (missing, empty, .exe, a named pipe)",
       "exit 1 with 'nothing to index' after each path's reason; no memory folder made", group="index")
def test_every_path_skipped_makes_no_memory(cli, skipped_only, tmp_path, capsys):
    target = tmp_path / "mem"
    assert cli(["index", "--memory", str(target), *skipped_only]) == 1
    err = capsys.readouterr().err
    assert "nothing to index: every path given was skipped" in err and "was not made" in err
    assert all(os.path.basename(p) in err for p in skipped_only)  # each one's reason is named
    assert not target.exists() and "Traceback" not in err


@probe("`index --memory EXISTING` where every new path is skipped", "exit 1; the memory's live version is "
       "unchanged", group="index")
def test_every_path_skipped_leaves_an_existing_memory_alone(cli, skipped_only, tmp_path, capsys):
    (tmp_path / "doc.txt").write_text("Ada Brennick was born in Port Alder, which lies on the Vell River.")
    target = tmp_path / "mem"
    from memrag.index.build import build_memory, run_build
    from memrag.config import IndexParams
    from memrag.index.readers import read_paths
    from scripted import ScriptedLLM

    docs = read_paths([tmp_path / "doc.txt"], IndexParams()).documents
    run_build(build_memory(target, docs, ScriptedLLM({"index.extract": lambda m, s: {"entities": [], "triples": []}}),
                           HashEmbedder(), IndexParams()))
    before = store.read_manifest(target)["fingerprint"], sorted(p.name for p in target.iterdir())
    assert cli(["index", "--memory", str(target), *skipped_only]) == 1
    assert "was not changed" in capsys.readouterr().err
    assert (store.read_manifest(target)["fingerprint"], sorted(p.name for p in target.iterdir())) == before
