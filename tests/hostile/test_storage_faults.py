"""Storage faults (issue 27, probe 6): a full disk (`ulimit -f`), a read-only MEMRAG_HOME and
MEMRAG_HOME=/dev/null give one named StorageError from the journal, the store and the run's
records — the CLI prints it with what was kept and exits 74, never a traceback — and the response
cache turns itself off on any of them (the work goes on uncached)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from memrag.config import IndexParams
from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.llm.cache import CachedLLM, ResponseCache
from scripted import HashEmbedder, ScriptedLLM

from hostile import storage_worker

probe = pytest.mark.probe
GROUP = "storage faults"
WORKER = Path(storage_worker.__file__)


@contextmanager
def read_only(folder: Path):
    """`folder` made unwritable for this process: chmod for a normal user; root ignores modes, so
    there the folder is made immutable (chattr +i), and the probe is skipped where neither works."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("running as root where chattr is not allowed: no way to make a folder read-only")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def _cached_call(cache_path: Path) -> tuple[CachedLLM, str]:
    cache = ResponseCache(cache_path)
    llm = CachedLLM(ScriptedLLM(["Port Alder"]), cache)
    reply = llm.complete([{"role": "user", "content": "where?"}], max_tokens=20, stage="answer")
    return llm, cache.notice + reply.text


@probe("MEMRAG_HOME=/dev/null, then an answer through the response cache",
       "the cache turns itself off with a message naming the path; the call goes on uncached", group=GROUP)
def test_a_cache_under_dev_null_turns_itself_off():
    _, said = _cached_call(Path("/dev/null") / "llm_cache.sqlite")
    assert "could not use the response cache" in said and said.endswith("Port Alder")


@probe("a read-only MEMRAG_HOME, then an answer through the response cache",
       "the cache turns itself off with a message; the call goes on uncached", group=GROUP)
def test_a_cache_in_a_read_only_home_turns_itself_off(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with read_only(home):
        _, said = _cached_call(home / "llm_cache.sqlite")
    assert "could not use the response cache" in said and said.endswith("Port Alder")


@probe("a build into a memory under a read-only MEMRAG_HOME, and one under MEMRAG_HOME=/dev/null",
       "a StorageError naming the folder and what was kept, before any LLM call", group=GROUP)
def test_a_build_into_an_unwritable_place_is_a_storage_error(tmp_path):
    from memrag.durable import StorageError

    docs = storage_worker.docs(0, 1)
    llm = ScriptedLLM({"index.extract": [storage_worker.reply(0)]})
    with pytest.raises(StorageError, match="cannot be opened") as e:
        run_build(build_memory(Path("/dev/null/memories/x"), docs, llm, HashEmbedder(), IndexParams()))
    assert e.value.kind == "cannot open" and "previous version is unchanged" in str(e.value)
    home = tmp_path / "home"
    home.mkdir()
    with read_only(home), pytest.raises(StorageError) as e:
        run_build(build_memory(home / "mem", docs, llm, HashEmbedder(), IndexParams()))
    assert e.value.kind in ("no access", "read-only") and not llm.calls


@probe("a finished question recorded into a run folder that became read-only",
       "a StorageError saying the finished questions are kept", group=GROUP)
def test_a_run_record_into_a_read_only_folder_is_a_storage_error(tmp_path):
    from memrag.durable import StorageError
    from memrag.eval.rundir import RESULTS, append_record, read_results

    out = tmp_path / "run"
    out.mkdir()
    append_record(out / RESULTS, {"qid": "q1"})
    with read_only(out), pytest.raises(StorageError, match="already finished are kept"):
        append_record(out / "other.jsonl", {"qid": "q2"})
    assert [r["qid"] for r in read_results(out / RESULTS)] == ["q1"]


@probe("`ulimit -f` (a disk that fills) during `python -m memrag index` into an existing memory",
       "exit 74 with a storage message saying what was kept, no traceback; the previous version "
       "unchanged; the same build without the limit then finishes", group=GROUP)
def test_a_build_that_fills_the_disk_stops_with_a_message(tmp_path):
    mem, docs_dir = tmp_path / "mem", tmp_path / "docs"
    first = run_build(build_memory(mem, storage_worker.docs(0, 2), ScriptedLLM(
        {"index.extract": [storage_worker.reply(i) for i in range(2)]}), HashEmbedder(), IndexParams()))
    docs_dir.mkdir()
    for i in range(10, 50):
        (docs_dir / f"d{i}.txt").write_text(f"Alder{i} stands beside Birch{i}.")
    env = {**os.environ, "MEMRAG_HOME": str(tmp_path / "home")}
    run = subprocess.run([sys.executable, str(WORKER), "cli-index", str(mem), str(docs_dir), str(64 * 1024)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 74, run.stderr[-3000:]
    assert "storage error" in run.stderr and "kept" in run.stderr and "Traceback" not in run.stderr
    assert store.memory_to_rows(store.load(mem)) == store.memory_to_rows(first)
    again = subprocess.run([sys.executable, str(WORKER), "cli-index", str(mem), str(docs_dir), str(2**40)],
                           capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(store.load(mem).documents) == 42


@probe("`python -m memrag index` with MEMRAG_HOME=/dev/null and the memory under it",
       "exit 74 with a message naming the path, no traceback", group=GROUP)
def test_cli_index_under_dev_null_prints_a_storage_error(tmp_path, monkeypatch, capsys):
    from memrag import embed
    from memrag.cli.main import main

    monkeypatch.setenv("MEMRAG_HOME", "/dev/null")
    monkeypatch.setitem(embed._shared, embed.DEFAULT_EMBEDDER, HashEmbedder())
    monkeypatch.delenv("MEMRAG_EMBEDDER", raising=False)
    corpus = tmp_path / "corpus.json"
    corpus.write_text('[{"title": "Port Alder", "text": "Port Alder lies on the Vell River."}]')
    openie = tmp_path / "openie.json"
    openie.write_text('{"docs": [{"title": "Port Alder", "text": "Port Alder lies on the Vell River.", '
                      '"passage": "x", "extracted_entities": ["Port Alder", "Vell River"], '
                      '"extracted_triples": [["Port Alder", "lies on", "Vell River"]]}], "ents_by_doc": []}')
    code = main(["index", "--memory", "/dev/null/memories/m", "--import-openie", str(openie), "--corpus", str(corpus)])
    err = capsys.readouterr().err
    assert code == 74 and "/dev/null/memories/m" in err and "Traceback" not in err


@probe("the Memory page's build into a read-only MEMRAG_HOME",
       "the page says the build failed, why, and that the previous version is unchanged", group=GROUP)
def test_the_app_shows_a_storage_error_with_what_was_kept(tmp_path, monkeypatch):
    import re

    from memrag.app import jobs, session as app_state
    from test_app_pages import app, click, no_exception, wait_for

    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    monkeypatch.setenv("MEMRAG_HOME", str(home))
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain")])
    next(t for t in at.text_input if t.label == "memory name").set_value("notes").run()
    with read_only(home / "memories"):
        click(no_exception(at), "Build memory")
        job = wait_for(at, app_state.AppState.build_job.key)
    assert job.status == jobs.FAILED
    at = no_exception(at.run())
    said = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("The build failed: could not" in s and "previous version is unchanged" in s for s in said), said
