"""Hostile probes of memory folders and caches (issue 15, items 2, 3, 8, 9, 10, 13 and the storage
probes that held): every damaged or raced file is refused with a reason or repaired, never a
traceback, and no saved memory is ever lost."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memrag import durable
from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import benchmark_document
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


# ------------------------------------------------------------------ items 2 and 3: damaged folders
def _vdir(mem: Path) -> Path:
    return store.current_version_dir(mem)


def _sql(mem: Path, *statements: str) -> None:
    import sqlite3

    con = sqlite3.connect(_vdir(mem) / "memory.sqlite")
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


def _manifest(mem: Path, change) -> None:
    import json

    f = _vdir(mem) / "manifest.json"
    man = json.loads(f.read_text())
    f.write_text(json.dumps(change(man)))


def _npy_header(mem: Path, name: str, header: bytes) -> None:
    (_vdir(mem) / f"{name}.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)


def _vectors(mem: Path, name: str, change) -> None:
    f = _vdir(mem) / f"{name}.npy"
    np.save(f, change(np.load(f)), allow_pickle=True)


DAMAGE = {
    "sqlite is garbage": lambda m: (_vdir(m) / "memory.sqlite").write_bytes(b"not a database at all " * 200),
    "sqlite is truncated": lambda m: os.truncate(_vdir(m) / "memory.sqlite",
                                                 (_vdir(m) / "memory.sqlite").stat().st_size // 3),
    "sqlite lacks a table": lambda m: _sql(m, "DROP TABLE triples"),
    "sqlite text column is NULL": lambda m: _sql(m, "UPDATE chunks SET text = NULL WHERE chunk_id = 0"),
    "engram chunk_id is text": lambda m: _sql(m, "UPDATE engrams SET chunk_id = 'two' WHERE engram_id = 0"),
    "manifest is a JSON list": lambda m: (_vdir(m) / "manifest.json").write_text("[1, 2, 3]"),
    "manifest is not JSON": lambda m: (_vdir(m) / "manifest.json").write_text("{\"format_version\": 1,"),
    "manifest dim is a list": lambda m: _manifest(m, lambda x: {**x, "embedder": {**x["embedder"], "dim": [384]}}),
    "manifest format_version 0": lambda m: _manifest(m, lambda x: {**x, "format_version": 0}),
    "manifest format_version true": lambda m: _manifest(m, lambda x: {**x, "format_version": True}),
    "manifest counts disagree": lambda m: _manifest(m, lambda x: {**x, "counts": {**x["counts"], "chunks": 7}}),
    "npy header declares 10^9 x 384": lambda m: _npy_header(
        m, "chunk_vecs", b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 384), }" + b" " * 50 + b"\n"),
    "npy header is garbage": lambda m: _npy_header(m, "engram_vecs", b"{'descr': <f4\n"),
    "npy file is missing": lambda m: (_vdir(m) / "triple_vecs.npy").unlink(),
    "npy is pickled": lambda m: np.save(_vdir(m) / "entity_vecs.npy",
                                        np.array([{"boom": 1}] * 4, dtype=object), allow_pickle=True),
    "triple chunk_id 9999": lambda m: _sql(m, "UPDATE triples SET chunk_id = 9999 WHERE triple_id = 0"),
    "engram chunk_id -1": lambda m: _sql(m, "UPDATE engrams SET chunk_id = -1 WHERE engram_id = 1"),
    "extraction log chunk_id 9999": lambda m: _sql(m, "UPDATE extraction_log SET chunk_id = 9999 WHERE chunk_id = 2"),
    "chunk ids out of order": lambda m: _sql(m, "UPDATE chunks SET chunk_id = 40 WHERE chunk_id = 2"),
    "NaN in a vector": lambda m: _vectors(m, "engram_vecs", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 3,
                                                                               np.nan, a).astype(np.float32)),
    "inf in a vector": lambda m: _vectors(m, "chunk_vecs", lambda a: np.full_like(a, np.inf)),
    "one vector row too few": lambda m: _vectors(m, "triple_vecs", lambda a: a[:-1]),
    "vectors of another width": lambda m: _vectors(m, "chunk_vecs", lambda a: a[:, :10]),
    "document meta is not JSON": lambda m: _sql(m, "UPDATE documents SET meta = '{oops' WHERE ord = 0"),
}


@probe("a damaged memory folder: garbage, truncated or table-less memory.sqlite; manifest a JSON list, "
       "'dim': [384], format_version 0; an .npy header of 10^9 x 384; a pickled .npy",
       "refused at load with 'this memory cannot be opened: <reason>', nothing allocated or executed",
       group=MEM)
@pytest.mark.parametrize("damage", [k for k in DAMAGE if "chunk_id" not in k and "vector" not in k])
def test_a_damaged_folder_is_refused_with_the_reason(mem, damage):
    DAMAGE[damage](mem)
    with pytest.raises(store.MemoryFormatError, match="this memory cannot be opened: "):
        store.load(mem)


@probe("a memory whose triples or engrams point at chunk 9999 or -1, or whose vectors hold NaN or have "
       "the wrong number of rows", "refused at load with the reason", group=MEM)
@pytest.mark.parametrize("damage", [k for k in DAMAGE if "chunk_id" in k or "vector" in k])
def test_bad_ids_and_vectors_are_refused_at_load(mem, damage):
    DAMAGE[damage](mem)
    with pytest.raises(store.MemoryFormatError, match="this memory cannot be opened: "):
        store.load(mem)


def test_an_undamaged_folder_still_opens_and_old_memories_without_counts_too(mem):
    _manifest(mem, lambda x: {k: v for k, v in x.items() if k != "counts"})
    assert len(store.load(mem, "hash-test").chunks) == 3


@probe("one damaged folder among the saved memories (a JSON-list manifest, a garbage memory.sqlite)",
       "the saved-memory list shows it as damaged with the reason and still lists the others", group=MEM)
def test_the_saved_memory_list_marks_a_damaged_folder_and_keeps_the_others(tmp_path, monkeypatch):
    import shutil

    from memrag.app import memory_state

    root = tmp_path / "memories"
    build(root / "good")
    for name in ("list-manifest", "garbage-sqlite"):
        shutil.copytree(root / "good", root / name)
    DAMAGE["manifest is a JSON list"](root / "list-manifest")
    DAMAGE["sqlite is garbage"](root / "garbage-sqlite")
    monkeypatch.setattr(memory_state, "memories_dir", lambda: root)
    listed = {m["folder"]: m for m in memory_state.saved_memories()}
    assert set(listed) == {"good", "list-manifest", "garbage-sqlite"}
    assert listed["good"]["error"] == "" and listed["good"]["manifest"]["counts"]["chunks"] == 3
    for bad in ("list-manifest", "garbage-sqlite"):
        assert listed[bad]["error"].startswith("this memory cannot be opened: ") and listed[bad]["manifest"] == {}


@probe("`python -m memrag ask --memory BAD …` on a damaged folder",
       "prints 'error: this memory cannot be opened: …' and exits non-zero, no traceback", group=MEM)
@pytest.mark.parametrize("damage", ["manifest is a JSON list", "sqlite lacks a table", "npy header declares 10^9 x 384"])
def test_cli_ask_on_a_damaged_memory_prints_the_reason(mem, damage, monkeypatch, capsys):
    from memrag.cli import main as cli
    from memrag import embed

    DAMAGE[damage](mem)
    monkeypatch.setattr(embed, "get_embedder", lambda *a, **k: HashEmbedder())
    assert cli.main(["ask", "--memory", str(mem), "Where is Alder1?"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: this memory cannot be opened: ") and "Traceback" not in err


# ------------------------------------------------------------------ item 2: damaged recordings
_GOOD_HEADER = '{"format": 1, "identity": {"backend": "scripted", "model": "m"}, "questions": ["q"]}'
_GOOD_LINE = ('{"key": "k", "stage": "answer", "text": "t", "prompt_tokens": 1, "prompt_tokens_cached": 0,'
              ' "completion_tokens": 1, "seconds": 0.5, "question": "q"}')
RECORDINGS = {
    "header is [1]": "[1]\n" + _GOOD_LINE,
    "header without identity": '{"format": 1, "questions": []}\n' + _GOOD_LINE,
    "identity is a string": '{"format": 1, "identity": "m"}\n',
    "questions is not a list": '{"format": 1, "identity": {}, "questions": 5}\n',
    "header is not JSON": "recordings\n",
    "format 0": '{"format": 0, "identity": {}}\n',
    "empty file": "",
}
# A bad response line does not refuse the file: its call misses, and the miss names the file and line.
BAD_LINES = {
    "a line is a list": ("[1, 2]", "line 2: it is a list, not an object"),
    "a text is a number": (_GOOD_LINE.replace('"text": "t"', '"text": 5').replace('"k"', '"k2"'),
                           "line 2: 'text' is a number"),
    "a line lacks its key": (_GOOD_LINE.replace('"key": "k", ', ""), "line 2: it names no call"),
    "a line nested 100,000 deep": ("[" * 100_000 + "]" * 100_000, "line 2: it is not JSON"),
}


@probe("responses.jsonl beside a memory with a header [1], without identity, or empty",
       "refused with a clear 'cannot be read' reason (a RecordingsFormatError), never AttributeError or KeyError",
       group=MEM)
@pytest.mark.parametrize("case", list(RECORDINGS))
def test_damaged_recordings_are_refused_with_the_reason(tmp_path, case):
    from memrag.llm.recordings import FILE_NAME, Recordings, RecordingsFormatError

    (tmp_path / FILE_NAME).write_text(RECORDINGS[case], encoding="utf-8")
    with pytest.raises(RecordingsFormatError, match="recordings .*cannot be read: "):
        Recordings.open(tmp_path)


@probe("responses.jsonl with one broken line (a list, a number for text, no key, nested 100,000 deep)",
       "the file opens; its good lines replay, and the list of problems names the file and the line", group=MEM)
@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_broken_recordings_line_is_named_and_the_rest_kept(tmp_path, case):
    from memrag.llm.recordings import FILE_NAME, Recordings

    line, says = BAD_LINES[case]
    (tmp_path / FILE_NAME).write_text(_GOOD_HEADER + "\n" + line + "\n" + _GOOD_LINE + "\n", encoding="utf-8")
    rec = Recordings.open(tmp_path)
    assert rec.responses["k"].text == "t"
    [problem] = rec.problems()
    assert problem.startswith(f"{tmp_path / FILE_NAME}, ") and says in problem, problem


def test_good_recordings_still_load(tmp_path):
    from memrag.llm.recordings import FILE_NAME, Recordings

    (tmp_path / FILE_NAME).write_text(_GOOD_HEADER + "\n" + _GOOD_LINE + "\n\n", encoding="utf-8")
    rec = Recordings.open(tmp_path)
    assert rec.model == "m" and rec.questions == ["q"] and rec.responses["k"].text == "t"


# ------------------------------------------------------------------ items 8 and 9, kill -9 probes
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

WORKER = Path(__file__).with_name("storage_worker.py")


def _start(*args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _await(marker: Path, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the worker never reached its stop"
        time.sleep(0.05)


def _titles(mem: Path) -> list[str]:
    return sorted(d.title for d in store.load(mem).documents)


@probe("two builds into one memory at once (two app processes, or the CLI beside the app)",
       "the second waits for the first and adds its documents to the first's: nothing is lost", group=MEM)
def test_a_second_build_into_the_same_memory_waits_and_nothing_is_lost(tmp_path):
    mem, a_stop, b_stop, go = tmp_path / "mem", tmp_path / "a-stop", tmp_path / "b-stop", tmp_path / "go"
    a = _start("build", mem, 0, 2, 60, 1, a_stop, go)  # stops inside its build, holding the memory
    _await(a_stop, a)
    b = _start("build", mem, 10, 2, 300, 0, b_stop, go)
    _await(Path(f"{b_stop}.ready"), b)
    # Without a lock b loads the (still empty) memory and reaches its first extraction at once;
    # with one it waits for a. Either way, let a finish after that.
    deadline = time.monotonic() + 8
    while not b_stop.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    go.touch()
    assert a.wait(300) == 0, a.communicate()
    assert b.wait(300) == 0, b.communicate()
    assert _titles(mem) == ["Title 0", "Title 1", "Title 10", "Title 11"]


@probe("a second build into a memory that another build holds, with a short wait",
       "refused with a clear 'is being written by another build' message; the memory unchanged", group=MEM)
def test_a_second_build_that_cannot_wait_is_refused_clearly(tmp_path):
    mem, started, go = tmp_path / "mem", tmp_path / "a-started", tmp_path / "go"
    build(mem, DOCS[:1], REPLIES[:1])
    a = _start("build", mem, 0, 2, 60, 0, started, go)
    _await(started, a)
    b = _start("build", mem, 10, 1, 0.5)
    _, err = b.communicate(timeout=120)
    assert b.returncode == 3 and "error: memory" in err and "is being written by another build" in err
    assert "Traceback" not in err
    go.touch()
    assert a.wait(120) == 0
    assert _titles(mem) == ["Title 0", "Title 1"]  # the refused build changed nothing


@probe("kill -9 during a save (12 kills)", "the previous memory still opens unchanged, and the dead save's "
       "temporary folder is removed by the next save", group=MEM)
def test_kill_during_a_save_keeps_the_memory_and_the_next_save_removes_the_leftover(tmp_path):
    mem, marker = tmp_path / "mem", tmp_path / "stalled"
    before = build(mem, DOCS[:2], REPLIES[:2])
    for _ in range(2):
        p = _start("save-stalls", mem, marker)
        _await(marker, p)
        p.send_signal(signal.SIGKILL)
        p.wait(30)
        marker.unlink()
    leftovers = sorted(x.name for x in mem.iterdir() if ".tmp" in x.name)
    assert len(leftovers) == 1 and leftovers[0].startswith(".v000002.tmp"), leftovers  # the 2nd removed the 1st's
    assert store.memory_to_rows(store.load(mem)) == store.memory_to_rows(before)
    store.save(build(None), mem)
    assert not [x.name for x in mem.iterdir() if ".tmp" in x.name]
    assert len(store.load(mem).chunks) == 3


def test_a_live_saver_keeps_its_temporary_folder(tmp_path):
    mem = tmp_path / "mem"
    build(mem)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live, dead = mem / f".v000009.tmp{sleeper.pid}", mem / ".v000009.tmp999999999"
        live.mkdir(), dead.mkdir()
        assert store.remove_stale_temporaries(mem) == [dead.name] and live.is_dir()
        old = time.time() - store.STALE_TEMP_S - 10
        os.utime(live, (old, old))  # a pid can be reused: an old enough folder goes anyway
        assert store.remove_stale_temporaries(mem) == [live.name]
    finally:
        sleeper.kill()
        sleeper.wait()


@probe("kill -9 in the middle of a build, then the same build again",
       "the rerun resumes from the journal: chunks already extracted cost no new call", group=MEM)
def test_kill_mid_build_then_rerun_resumes(tmp_path):
    mem, marker = tmp_path / "mem", tmp_path / "stalled"
    p = _start("build", mem, 0, 3, 10, 2, marker)  # killed while extracting its third chunk
    _await(marker, p)
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    from hostile import storage_worker

    llm = ScriptedLLM({"index.extract": [storage_worker.reply(2)]})  # only the third reply is left
    m = run_build(build_memory(mem, storage_worker.docs(0, 3), llm, HashEmbedder(), IndexParams()))
    assert len(llm.calls) == 1 and len(m.chunks) == 3 and _titles(mem) == ["Title 0", "Title 1", "Title 2"]


# ------------------------------------------------------------------ item 13 and the cache probe that held
def _garbage_cache(path: Path) -> None:
    path.write_bytes(b"this is not an SQLite file, it only has its name " * 100)


@probe("a corrupt response cache (llm_cache.sqlite is garbage) under `ask`",
       "moved aside with a message, a fresh cache is used and the call goes on", group=CACHE)
def test_a_garbage_response_cache_is_moved_aside_and_the_call_goes_on(tmp_path, caplog):
    from memrag.llm.cache import CachedLLM, ResponseCache

    path = tmp_path / "llm_cache.sqlite"
    _garbage_cache(path)
    with caplog.at_level("WARNING"):
        cache = ResponseCache(path)
    llm = CachedLLM(ScriptedLLM([{"a": "x"}]), cache)
    c = llm.complete([{"role": "user", "content": "hi"}], max_tokens=5, stage="answer")
    assert c.text == '{"a": "x"}' and len(cache) == 1
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("llm_cache.sqlite.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not an SQLite file")
    assert "moved it aside" in cache.notice and cache.notice in caplog.text


def test_a_cache_damaged_deep_inside_is_moved_aside_on_the_call_that_finds_it(tmp_path):
    from memrag.llm.base import Completion
    from memrag.llm.cache import ResponseCache

    path = tmp_path / "llm_cache.sqlite"
    cache = ResponseCache(path)
    for i in range(300):
        cache.put(f"k{i}", Completion("t" * 500, "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.1, stage="s"))
    cache.close()  # the last connection: the WAL is folded into the file
    size = path.stat().st_size
    with open(path, "r+b") as fh:  # another program scribbles over the last pages (the newest rows)
        fh.seek(size * 2 // 3)
        fh.write(os.urandom(size - size * 2 // 3))
    reopened = ResponseCache(path)
    assert reopened.get("k299") is None  # a miss, not DatabaseError
    reopened.put("k299", Completion("again", "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.1, stage="s"))
    assert reopened.get("k299").text == "again" and "moved it aside" in reopened.notice


@probe("four processes writing one response cache at once", "every write lands; none fails", group=CACHE)
def test_four_processes_writing_one_cache_at_once(tmp_path):
    import multiprocessing as mp

    from memrag.llm.cache import ResponseCache

    path = str(tmp_path / "c.sqlite")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_cache_writer, args=(path, s, 100, q)) for s in (0, 1000, 2000, 3000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert sorted(q.get(timeout=5) for _ in procs) == ["ok"] * 4
    assert len(ResponseCache(path)) == 401


@probe("four processes opening one corrupt response cache at once",
       "exactly one moves it aside; all four go on writing to the one fresh cache", group=CACHE)
def test_four_processes_on_one_corrupt_cache(tmp_path):
    import multiprocessing as mp

    from memrag.llm.cache import ResponseCache

    path = tmp_path / "c.sqlite"
    _garbage_cache(path)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_cache_writer, args=(str(path), s, 50, q)) for s in (0, 1000, 2000, 3000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert sorted(q.get(timeout=5) for _ in procs) == ["ok"] * 4
    assert len([p for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]) == 1
    assert len(ResponseCache(path)) == 201


def _cache_writer(path: str, start: int, n: int, q) -> None:
    from memrag.llm.base import Completion
    from memrag.llm.cache import ResponseCache

    try:
        cache = ResponseCache(path)
        for i in range(start, start + n):
            cache.put(f"k{i}", Completion(f"t{i}", "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.01, stage="s"))
            cache.put("shared", Completion("same", "m", prompt_tokens=1, prompt_tokens_cached=0, completion_tokens=1, seconds=0.01, stage="s"))
        assert cache.get(f"k{start}").text == f"t{start}"
        q.put("ok")
    except Exception as e:  # reported to the parent, which fails the test
        q.put(repr(e))
