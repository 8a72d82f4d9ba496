"""Removing documents: a memory of two documents sharing an entity, built with a scripted extraction
and real SQLite/faiss files; one document removed leaves no trace of itself, the other still
retrieves, and undo brings back the earlier version byte for byte."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memrag.ask import ask
from memrag.config import IndexParams
from memrag.index import removal, store
from memrag.index.build import build_memory, run_build
from memrag.index.memory import Memory
from memrag.index.readers import benchmark_document
from scripted import HashEmbedder, ScriptedLLM

REPO = Path(__file__).parent.parent
PARAMS = IndexParams(coref_threshold=0.6)  # "ada brennick" ~ "brennick" (0.71) are coreference candidates

ADA = benchmark_document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder.", "t")
MILL = benchmark_document("mill", "Brennick mill", "Brennick built a mill in Port Alder on the Vell.", "t")


def ext(entities: list[tuple[str, str]], triples: list[list[str]]) -> dict:
    return {"entities": [{"name": n, "type": t, "description": "", "importance": 3} for n, t in entities],
            "triples": triples}


REPLY = {"ada": ext([("Ada Brennick", "person"), ("Port Alder", "place")], [["Ada Brennick", "born in", "Port Alder"]]),
         "mill": ext([("Brennick", "person"), ("Port Alder", "place"), ("Vell", "river")],
                     [["Brennick", "built a mill in", "Port Alder"], ["Port Alder", "lies on", "Vell"]])}


def extraction(messages, stage):
    """The scripted extraction: the reply for whichever document the prompt holds."""
    return REPLY["ada"] if "Ada Brennick was born" in messages[-1]["content"] else REPLY["mill"]


def embedder(model_id: str) -> HashEmbedder:
    """The memory's embedder by its id, as the CLI opens it."""
    assert model_id == "hash-test"
    return HashEmbedder()


def build(path: Path | None, docs: list, emb=None) -> Memory:
    llm = ScriptedLLM({"index.extract": extraction})
    return run_build(build_memory(path, docs, llm, emb or HashEmbedder(), PARAMS))


def files(vdir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(vdir.iterdir())}


def coref_rows(path: Path) -> list[tuple]:
    con = sqlite3.connect(store.current_version_dir(path) / "memory.sqlite")
    try:
        return con.execute("SELECT key, other_key FROM coref").fetchall()
    finally:
        con.close()


def tables(m: Memory) -> dict:
    rows = store.memory_to_rows(m)
    rows["extraction_log"] = [{**x, "seconds": 0} for x in rows["extraction_log"]]
    return rows


def vectors(m: Memory) -> dict[str, np.ndarray]:
    return {name: getattr(m, name) for name in store.VECTORS}


@pytest.fixture
def two(tmp_path) -> Path:
    path = tmp_path / "mem"
    build(path, [ADA, MILL])
    return path


def test_removing_a_document_leaves_no_trace_and_keeps_the_shared_entity(two):
    before = store.load(two)
    assert ("ada brennick", "brennick") in coref_rows(two)  # the removed node has a coreference link
    done = removal.remove_documents(two, ["ada"], lambda model: pytest.fail("no name changed: nothing to embed"))
    assert (done.documents, done.chunks, done.entities) == (["ada"], 1, 1)
    after = store.load(two)
    assert removal.document_names(after) == ["mill"]
    assert all(c.doc_id == "mill" and "Ada" not in c.text for c in after.chunks)
    assert "ada brennick" not in {n.key for n in after.entities}
    assert not [e for e in after.engrams if e.key == "ada brennick"]
    assert not [t for t in after.triples if "ada brennick" in (t.head_key, t.tail_key)]
    assert all(k != "ada brennick" and o != "ada brennick" for k, o in coref_rows(two))
    # the shared entity stays, now mentioned by the remaining document only
    port = after.entity("port alder")
    assert port is not None and [after.chunks[c].doc_id for c in port.chunk_ids] == ["mill"]
    # no vector of a removed row is left, and every remaining row kept its own vector
    ada_chunk = before.chunk_vecs[0]
    assert not any(np.array_equal(ada_chunk, v) for v in after.chunk_vecs)
    assert not any(np.array_equal(before.entity_vector("ada brennick"), v) for v in after.entity_vecs)
    for name, arr in vectors(after).items():
        assert arr.shape[0] == {"chunk_vecs": len(after.chunks), "engram_vecs": len(after.engrams),
                                "entity_vecs": len(after.entities), "triple_vecs": len(after.triples)}[name]
    # the strongest check: exactly the memory a build of the remaining document alone makes
    alone = build(None, [MILL])
    assert {k: v for k, v in tables(after).items()} == tables(alone)
    for name, arr in vectors(alone).items():
        assert np.array_equal(vectors(after)[name], arr), name
    assert after.fingerprint() == alone.fingerprint() != before.fingerprint()


def test_the_remaining_document_still_retrieves_by_vectors_and_graph(two):
    removal.remove_documents(two, ["ada"], embedder)
    m = store.load(two)
    traces = ask(m, "Who built a mill in Port Alder?", llm=None, embedder=HashEmbedder(),
                 methods=("dense", "hipporag2"), params={"hipporag2": {"recognition": False}}, answer=False)
    for t in traces:
        assert t.ranked_ids() and set(t.ranked_ids()) <= set(range(len(m.chunks))), t.method
        top = t.chunk(t.ranked_ids()[0])
        assert (top.doc_id, top.text) == ("mill", m.chunks[top.chunk_id].text)
        assert t.memory_fingerprint == m.fingerprint()


def test_a_removed_name_is_named_again_and_embedded_again_when_its_most_frequent_form_goes(tmp_path):
    REPLY_LOUD = ext([("PORT ALDER", "place"), ("PORT ALDER", "place")], [])
    path = tmp_path / "m"
    llm = ScriptedLLM({"index.extract": lambda msgs, st: REPLY_LOUD if "Ada" in msgs[-1]["content"] else REPLY["mill"]})
    run_build(build_memory(path, [ADA, MILL], llm, HashEmbedder(), PARAMS))
    assert store.load(path).entity("port alder").name == "PORT ALDER"
    asked = []
    removal.remove_documents(path, ["ada"], lambda model: asked.append(model) or HashEmbedder())
    after = store.load(path)
    assert asked == ["hash-test"]  # the memory's own embedder, opened only because a name changed
    assert after.entity("port alder").name == "Port Alder"
    assert np.array_equal(after.entity_vector("port alder"), HashEmbedder().encode(["Port Alder"])[0])


def test_undo_restores_the_earlier_version_byte_for_byte(two):
    vdir = store.current_version_dir(two)
    saved, rows, vecs = files(vdir), tables(store.load(two)), vectors(store.load(two))
    removal.remove_documents(two, ["ada"], embedder)
    assert store.current_version_dir(two) != vdir
    live, undone = store.undo(two)
    assert live == vdir.name and undone["change"] == "removed ada"
    assert store.current_version_dir(two) == vdir and files(vdir) == saved
    back = store.load(two)
    assert tables(back) == rows and all(np.array_equal(vecs[k], v) for k, v in vectors(back).items())


def test_undo_survives_the_next_save_and_walks_back_along_the_versions_it_came_from(two):
    first = store.current_version_dir(two).name
    removal.remove_documents(two, ["ada"], embedder)  # v2
    store.undo(two)  # v1 live again; v2 left aside
    removal.remove_documents(two, ["mill"], embedder)  # v3, made from v1
    kept = sorted(p.name for p in two.glob("v*"))
    assert first in kept and "v000002" not in kept  # pruned by ancestry, not by number
    assert store.undo(two)[0] == first
    assert removal.document_names(store.load(two)) == ["ada", "mill"]
    with pytest.raises(store.NothingToUndoError, match="nothing to undo"):
        store.undo(two)
    assert store.current_version_dir(two).name == first


def test_undo_after_a_build_names_what_it_added_and_goes_back_to_before_it(tmp_path):
    path = tmp_path / "m"
    build(path, [ADA])
    assert store.undoable(path) is None  # a first version has nothing before it
    first = store.current_version_dir(path).name
    build(path, [MILL])
    assert store.undoable(path) == "added mill"
    assert store.undo(path)[0] == first and removal.document_names(store.load(path)) == ["ada"]


@pytest.mark.parametrize("phase", ["vectors", "rename"])
def test_a_removal_interrupted_half_way_loses_nothing(two, phase):
    vdir = store.current_version_dir(two)
    saved = files(vdir)
    with pytest.raises(RuntimeError, match="injected"):
        removal.remove_documents(two, ["ada"], embedder, _fail_after=phase)
    assert store.current_version_dir(two) == vdir and files(vdir) == saved
    assert removal.document_names(store.load(two)) == ["ada", "mill"]
    removal.remove_documents(two, ["ada"], embedder)  # the next removal goes through
    assert removal.document_names(store.load(two)) == ["mill"]
    assert store.undo(two)[0] == vdir.name  # the version a dead save left aside is not an ancestor


KILLED_REMOVAL = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from memrag.index import removal, store
from scripted import HashEmbedder

def stall(path, data):  # the new version is on disk; CURRENT is about to name it
    Path(sys.argv[2]).touch()
    time.sleep(120)

store.write_atomic = stall
removal.remove_documents(Path(sys.argv[1]), ["ada"], lambda model: HashEmbedder())
"""


def test_a_removal_killed_before_the_switch_leaves_the_memory_as_it_was(two, tmp_path):
    import signal
    import time

    vdir, marker = store.current_version_dir(two), tmp_path / "stalled"
    saved = files(vdir)
    p = subprocess.Popen([sys.executable, "-c", KILLED_REMOVAL, str(two), str(marker), str(REPO / "tests")],
                         cwd=REPO, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), p.stderr.read() if p.poll() is not None else "the removal never reached the switch"
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    assert store.current_version_dir(two) == vdir and files(vdir) == saved
    assert removal.document_names(store.load(two)) == ["ada", "mill"]
    removal.remove_documents(two, ["ada"], embedder)  # the lock died with the process
    assert removal.document_names(store.load(two)) == ["mill"] and store.undo(two)[0] == vdir.name


def test_a_removal_waits_for_a_running_build_then_is_refused_changing_nothing(two):
    import threading

    held, release = threading.Event(), threading.Event()

    def build_holding_the_lock() -> None:
        with store.writing(two):
            held.set()
            release.wait(30)

    t = threading.Thread(target=build_holding_the_lock)
    t.start()
    try:
        assert held.wait(10)
        vdir = store.current_version_dir(two)
        with pytest.raises(store.MemoryBusyError, match="Nothing was changed"):
            removal.remove_documents(two, ["ada"], embedder, lock_wait_s=0.2)
        with pytest.raises(store.MemoryBusyError):
            store.undo(two, lock_wait_s=0.2)
        assert store.current_version_dir(two) == vdir
    finally:
        release.set()
        t.join()


def test_a_wrong_name_changes_nothing_and_says_which_names_exist(two):
    vdir = store.current_version_dir(two)
    before = sorted(p.name for p in two.iterdir())
    with pytest.raises(removal.UnknownDocumentError, match=r"'mil' \(did you mean 'mill'\?\).*Nothing was changed"):
        removal.remove_documents(two, ["ada", "mil"], embedder)
    assert store.current_version_dir(two) == vdir and sorted(p.name for p in two.iterdir()) == before


def test_a_stale_trace_is_recognised_as_made_on_an_earlier_version(two):
    old = store.load(two).fingerprint()
    assert removal.stale_note(two, old) is None
    removal.remove_documents(two, ["ada"], embedder)
    assert "earlier version of this memory" in removal.stale_note(two, old)
    assert removal.stale_note(two, store.load(two).fingerprint()) is None
    assert removal.stale_note(two, "not-this-memory") is None


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memrag", "index", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def test_cli_lists_removes_undoes_and_refuses_an_unknown_name(two):
    listed = cli("--memory", str(two), "--list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == ["ada", "mill"]
    vdir = store.current_version_dir(two)
    bad = cli("--memory", str(two), "--remove", "nobody")
    assert bad.returncode == 1 and "not a document of this memory: 'nobody'" in bad.stderr
    assert "Traceback" not in bad.stderr and store.current_version_dir(two) == vdir
    gone = cli("--memory", str(two), "--remove", "ada", "--json")
    assert gone.returncode == 0, gone.stderr
    assert json.loads(gone.stdout.splitlines()[-1])["removed"] == ["ada"]
    assert "chunk numbers and fingerprint changed" in gone.stderr
    assert removal.document_names(store.load(two)) == ["mill"]
    back = cli("--memory", str(two), "--undo")
    assert back.returncode == 0 and "removed ada" in back.stdout and store.current_version_dir(two) == vdir
    nothing = cli("--memory", str(two.parent / "nowhere"), "--list")
    assert nothing.returncode == 1 and "not a memrag memory folder" in nothing.stderr


def test_the_cli_never_changes_the_shipped_sample_memory(two, monkeypatch, capsys):
    """--remove, --undo and adding documents are refused for the sample memory (the app's rule,
    memrag.demo.is_sample_memory), with the same sentence the app shows; --list still reads it."""
    from memrag import demo, sample
    from memrag.cli.main import main

    removal.remove_documents(two, ["ada"], embedder)  # an undoable change, made before it stands in for the sample
    vdir = store.current_version_dir(two)
    monkeypatch.setattr(demo, "sample_memory_dir", lambda *a: two)
    monkeypatch.setattr(sample, "sample_memory_dir", lambda *a: two)  # what the sample rule reads
    doc = two.parent / "more.txt"
    doc.write_text("Ada Brennick was born in Port Alder.", encoding="utf-8")
    for args in (["--remove", "mill"], ["--undo"], [str(doc)], ["--retry-failed"]):
        assert main(["index", "--memory", str(two), *args]) == 1, args
        err = capsys.readouterr().err
        assert demo.SAMPLE_FIXED in err and "Nothing was changed" in err and "demo extract" in err, (args, err)
        assert store.current_version_dir(two) == vdir and removal.document_names(store.load(two)) == ["mill"]
    assert main(["index", "--memory", str(two), "--list"]) == 0
    assert capsys.readouterr().out.startswith("mill\t")


def test_the_cli_recognises_the_real_sample_memory_however_its_path_is_written():
    sample = REPO / "sample_corpus" / "memory"
    vdir, names = store.current_version_dir(sample), sorted(p.name for p in sample.iterdir())
    refused = cli("--memory", "sample_corpus/../sample_corpus/memory", "--remove", "nobody")
    assert refused.returncode == 1 and "The sample memory ships with memrag" in refused.stderr, refused.stderr
    # refused before anything is opened for writing: not even the writer lock's file is made
    assert store.current_version_dir(sample) == vdir and sorted(p.name for p in sample.iterdir()) == names
