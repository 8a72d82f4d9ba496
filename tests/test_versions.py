"""Versions of a memory folder: undo opens the version it switches to first (a damaged one is
refused, named, and the live version stays), `index --versions` lists every version still on disk
with what made it, and `index --use VERSION` reaches any of them, opened first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memrag.config import IndexParams
from memrag.index import removal, store, versions
from memrag.index.build import build_memory, run_build
from memrag.index.readers import benchmark_document
from scripted import HashEmbedder, ScriptedLLM

REPO = Path(__file__).parent.parent
ADA = benchmark_document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder.", "t")
MILL = benchmark_document("mill", "Brennick mill", "Brennick built a mill in Port Alder.", "t")
REPLY = {"entities": [{"name": "Port Alder", "type": "place", "description": "", "importance": 3}],
         "triples": [["Brennick", "built a mill in", "Port Alder"]]}


def embedder(model_id: str) -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def removed(tmp_path) -> Path:
    """v000001 holds both documents; v000002 (live) is v000001 without 'ada'."""
    path = tmp_path / "mem"
    run_build(build_memory(path, [ADA, MILL], ScriptedLLM({"index.extract": lambda m, s: REPLY}), HashEmbedder(),
                           IndexParams()))
    removal.remove_documents(path, ["ada"], embedder)
    assert store.current_version_dir(path).name == "v000002"
    return path


def damage(path: Path, version: str, file: str = "memory.sqlite") -> None:
    (path / version / file).write_bytes(b"this is not what memrag wrote" * 10)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memrag", "index", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


@pytest.mark.parametrize("file", ["memory.sqlite", "entity_vecs.npy"])
def test_undo_onto_a_damaged_version_is_refused_naming_it_and_the_live_version_stays(removed, file):
    damage(removed, "v000001", file)
    with pytest.raises(store.MemoryFormatError, match=r"version v000001 .*cannot be opened.*Nothing was changed"):
        store.undo(removed)
    assert store.current_version_dir(removed).name == "v000002"
    assert removal.document_names(store.load(removed)) == ["mill"]  # the live version still opens


def test_the_cli_undo_onto_a_damaged_version_exits_1_and_a_second_undo_is_refused_the_same_way(removed):
    damage(removed, "v000001")
    for _ in range(2):  # today: the first exits 0 and leaves an unopenable memory, the second says "nothing to undo"
        done = cli("--memory", str(removed), "--undo")
        assert done.returncode == 1, done.stdout
        assert "v000001" in done.stderr and "cannot be opened" in done.stderr and "Traceback" not in done.stderr
        assert "nothing to undo" not in done.stderr
        assert store.current_version_dir(removed).name == "v000002"
    assert removal.document_names(store.load(removed)) == ["mill"]


def test_versions_lists_every_version_on_disk_with_what_made_it_and_whether_it_opens(removed):
    listed = versions.list_versions(removed)
    assert [(v.name, v.live, v.change) for v in listed] == [("v000001", False, "added ada, mill"),
                                                            ("v000002", True, "removed ada")]
    assert listed[1].previous == "v000001" and listed[1].counts["documents"] == 1 and not listed[1].problem
    damage(removed, "v000001")
    first = versions.list_versions(removed)[0]
    assert "memory.sqlite" in first.problem and first.change == "added ada, mill"  # its manifest is intact
    out = cli("--memory", str(removed), "--versions", "--json")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("  v000001\t") and "CANNOT BE OPENED" in lines[0]
    assert lines[1].startswith("* v000002\t") and "removed ada (after v000001)" in lines[1]
    rows = json.loads(lines[-1])["versions"]
    assert [(r["version"], r["opens"], r["live"]) for r in rows] == [("v000001", False, False),
                                                                    ("v000002", True, True)]


def test_use_reaches_any_kept_version_after_opening_it_and_back_again(removed):
    assert versions.use_version(removed, "1") == ("v000001", "v000002")
    assert removal.document_names(store.load(removed)) == ["ada", "mill"]
    assert {v.name for v in versions.list_versions(removed)} == {"v000001", "v000002"}  # nothing deleted
    used = cli("--memory", str(removed), "--use", "v000002")
    assert used.returncode == 0, used.stderr
    assert "v000002 is live now" in used.stdout and store.current_version_dir(removed).name == "v000002"
    again = cli("--memory", str(removed), "--use", "v2")
    assert again.returncode == 0 and "already the live one" in again.stdout


def test_use_refuses_a_damaged_an_unknown_and_a_malformed_version_changing_nothing(removed):
    damage(removed, "v000001", "chunk_vecs.npy")
    for version, said in (("v000001", "version v000001 of memory"), ("v000009", "keeps no version v000009"),
                          ("../v000001", "is not a version name")):
        done = cli("--memory", str(removed), "--use", version)
        assert done.returncode == 1 and said in done.stderr and "Nothing was changed" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and store.current_version_dir(removed).name == "v000002"
    assert "it keeps v000001, v000002" in cli("--memory", str(removed), "--use", "v9").stderr


def test_use_is_the_way_back_when_current_names_a_missing_version(removed):
    (removed / "CURRENT").write_text("v000077\n")
    with pytest.raises(store.MemoryFormatError):
        store.load(removed)
    done = cli("--memory", str(removed), "--use", "1")
    assert done.returncode == 0, done.stderr
    assert removal.document_names(store.load(removed)) == ["ada", "mill"]


def test_use_is_refused_for_the_shipped_sample_and_versions_reads_it(removed, monkeypatch, capsys):
    from memrag import demo, sample
    from memrag.cli.main import main

    monkeypatch.setattr(demo, "sample_memory_dir", lambda *a: removed)
    monkeypatch.setattr(sample, "sample_memory_dir", lambda *a: removed)  # what the sample rule reads
    assert main(["index", "--memory", str(removed), "--use", "v000001"]) == 1
    assert demo.SAMPLE_FIXED in capsys.readouterr().err
    assert store.current_version_dir(removed).name == "v000002"
    assert main(["index", "--memory", str(removed), "--versions"]) == 0
    assert "* v000002" in capsys.readouterr().out
