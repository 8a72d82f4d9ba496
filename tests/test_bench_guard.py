"""The benches build their MuSiQue memory under --work; a memory there that no bench made (a link to
someone's own memory folder, say) is refused, not rebuilt as a new version of it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from memrag.config import IndexParams
from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.index.readers import benchmark_document
from scripted import HashEmbedder, ScriptedLLM

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench_common():
    spec = importlib.util.spec_from_file_location("bench_common_under_test", BENCH / "_common.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _memory_named(path: Path, name: str) -> None:
    doc = benchmark_document("d1", "Ada Brennick", "Ada Brennick was born in Port Alder.", "t")
    reply = {"entities": [{"name": "Ada Brennick", "type": "person", "description": "", "importance": 3}],
             "triples": []}
    llm = ScriptedLLM({"index.extract": [reply]})
    run_build(build_memory(path, [doc], llm, HashEmbedder(), IndexParams(), name=name))


def test_a_memory_no_bench_made_is_refused_and_left_as_it_was(tmp_path):
    C = _bench_common()
    path = tmp_path / "work" / "memory"
    _memory_named(path, "my-notes")
    before = sorted(p.name for p in path.iterdir())
    with pytest.raises(C.ForeignMemoryError, match="my-notes"):
        C.holds_bench_memory(path, C.MEMORY_NAME)
    assert sorted(p.name for p in path.iterdir()) == before
    assert store.read_manifest(path)["name"] == "my-notes"


@pytest.mark.parametrize("name", ["musique-openie", "musique-openie-first150"])
def test_a_bench_memory_or_an_empty_folder_passes(tmp_path, name):
    C = _bench_common()
    assert C.holds_bench_memory(tmp_path / "nothing-here", name) is False
    _memory_named(tmp_path / "memory", name)
    assert C.holds_bench_memory(tmp_path / "memory", name) is True


def test_the_retrieval_bench_stops_with_a_message_before_touching_it(tmp_path):
    work = tmp_path / "work"
    _memory_named(work / "memory", "my-notes")
    versions = sorted(p.name for p in (work / "memory").iterdir())
    data = tmp_path / "data"  # stand-ins: the guard runs before the MuSiQue files are read beyond their length
    data.mkdir()
    C = _bench_common()
    (data / C.CORPUS_FILE).write_text('[{"title": "t", "text": "x"}]', encoding="utf-8")
    (data / C.OPENIE_FILE).write_text("{}", encoding="utf-8")
    (data / C.QUESTIONS_FILE).write_text("[]", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BENCH / "retrieval_bench.py"), "--no-llm", "--work", str(work),
                           "--data-dir", str(data)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "which no bench made" in proc.stderr
    assert sorted(p.name for p in (work / "memory").iterdir()) == versions
