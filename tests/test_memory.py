"""Memory: mentions gathered into nodes, coreference candidates, graphs, safe persistence,
incremental add and resume — driven by a scripted LLM and hand-made vectors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import benchmark_document
from memrag.index.memory import Memory
from memrag.index.openie import import_openie
from scripted import HashEmbedder, ScriptedLLM


def ext(entities, triples):
    return {"entities": [{"name": n, "type": t, "description": d, "importance": 3} for n, t, d in entities],
            "triples": triples}


DOCS = [
    benchmark_document("d1", "Ada Brennick", "Ada Brennick was born in Port Alder.", "t"),
    benchmark_document("d2", "Port Alder", "Port Alder lies on the Vell River.", "t"),
    benchmark_document("d3", "Brennick bakery", "Brennick opened a bakery in Port Alder.", "t"),
]
REPLIES = [
    ext([("Ada Brennick", "person", "a baker"), ("Port Alder", "place", "her birthplace")],
        [["Ada Brennick", "born in", "Port Alder"]]),
    ext([("Port Alder", "place", "a town"), ("Vell River", "river", "")], [["Port Alder", "lies on", "Vell River"]]),
    ext([("Brennick", "person", "opened a bakery")], [["Brennick", "opened bakery in", "Port Alder"]]),
]


def build(path, docs=DOCS, replies=None, emb=None, **kw):
    llm = ScriptedLLM({"index.extract": list(replies or REPLIES)})
    m = run_build(build_memory(path, docs, llm, emb or HashEmbedder(), IndexParams(), **kw))
    return m, llm


def test_mentions_gather_into_entity_nodes_and_triples_keep_their_chunk():
    m, _ = build(None)
    assert [n.key for n in m.entities] == ["ada brennick", "port alder", "vell river", "brennick"]
    port = m.entity("port alder")
    assert len(port.engram_ids) == 3 and port.chunk_ids == [0, 1, 2]  # two mentions + one triple endpoint
    assert port.type == "place"
    assert [(t.head_key, t.tail_key, t.chunk_id) for t in m.triples] == [
        ("ada brennick", "port alder", 0), ("port alder", "vell river", 1), ("brennick", "port alder", 2)]
    assert m.engrams[0].description == "a baker"


def _memory_with_name_vectors(vectors: dict[str, list[float]]) -> Memory:
    m = Memory("hand", 3)
    from memrag.index.memory import EngramRow
    for i, name in enumerate(vectors):
        m.engrams.append(EngramRow(i, name.lower(), name, "x", "", 1, 0))
    m.rebuild_derived()
    v = np.array([vectors[n.name] for n in m.entities], np.float32)
    m.entity_vecs = v / np.linalg.norm(v, axis=1, keepdims=True)
    return m


def test_coreference_sets_are_per_node_asymmetric_and_not_transitive():
    # a~b 0.95, b~c 0.9 but a~c well below 0.8; d close to a but a's top-1 is b.
    m = _memory_with_name_vectors({
        "A": [1.0, 0.0, 0.0],
        "B": [0.95, 0.312, 0.0],
        "C": [0.72, 0.69, 0.0],
        "D": [0.9, 0.0, 0.436],
    })
    sims = m.entity_vecs @ m.entity_vecs.T
    assert sims[0, 1] > 0.9 and sims[1, 2] > 0.8 and sims[0, 2] < 0.8
    top1 = m.coref_sets(top=1, threshold=0.8)
    assert [c.key for c in top1["a"]] == ["b"]
    assert [c.key for c in top1["d"]] == ["a"]  # d lists a, a does not list d: not symmetric
    full = m.coref_sets(top=5, threshold=0.8)
    assert "c" not in [c.key for c in full["a"]] and "c" in [c.key for c in full["b"]]  # not transitive
    assert all(c.key != k for k, members in full.items() for c in members)  # never itself
    # other parameters at query time, from the same stored vectors
    assert m.coref_sets(top=5, threshold=0.99) == {k: [] for k in "abcd"}
    assert len(m.coref_sets(top=5, threshold=0.5)["a"]) == 3


def test_both_graphs():
    m, _ = build(None)
    g = m.triple_graph
    assert g.is_directed() and g.has_edge("ada brennick", "port alder") and not g.has_edge("port alder", "ada brennick")
    assert g["port alder"]["vell river"][1]["relation"] == "lies on"
    c = m.cooccurrence_graph
    assert c["ada brennick"]["port alder"]["weight"] == 1
    assert c["brennick"]["port alder"]["weight"] == 1
    assert not c.has_edge("ada brennick", "vell river")


def test_save_load_round_trip_keeps_every_table_and_vector(tmp_path):
    m, _ = build(tmp_path / "mem")
    back = store.load(tmp_path / "mem", "hash-test")
    assert store.memory_to_rows(back) == store.memory_to_rows(m)
    for name in store.VECTORS:
        assert np.array_equal(getattr(back, name), getattr(m, name))
    assert back.fingerprint() == m.fingerprint() == store.read_manifest(tmp_path / "mem")["fingerprint"]
    assert back.coref_sets(2, 0.1) == m.coref_sets(2, 0.1)


def test_vectors_line_up_with_rows(tmp_path):
    emb = HashEmbedder()
    m, _ = build(None, emb=emb)
    assert np.allclose(m.chunk_vecs[1], emb.encode(["Port Alder\nPort Alder lies on the Vell River."])[0])
    assert np.allclose(m.triple_vecs[1], emb.encode(["Port Alder lies on Vell River"])[0])
    assert np.allclose(m.engram_vecs[0], emb.encode(["Ada Brennick: a baker"])[0])
    assert np.allclose(m.entity_vecs[m.entity_index["vell river"]], emb.encode(["Vell River"])[0])


@pytest.mark.parametrize("phase", ["vectors", "rename"])
def test_a_failure_mid_save_leaves_the_previous_memory_loadable(tmp_path, phase):
    m, _ = build(tmp_path / "mem", docs=DOCS[:2], replies=REPLIES[:2])
    before = store.memory_to_rows(store.load(tmp_path / "mem"))
    more, _ = build(None)
    with pytest.raises(RuntimeError, match="injected"):
        store.save(more, tmp_path / "mem", _fail_after=phase)
    assert store.memory_to_rows(store.load(tmp_path / "mem")) == before
    store.save(more, tmp_path / "mem")  # and the next save still works
    assert len(store.load(tmp_path / "mem").chunks) == 3


def test_opening_with_another_embedder_or_newer_format_fails_clearly(tmp_path):
    build(tmp_path / "mem")
    with pytest.raises(store.MemoryFormatError, match="built with embedder 'hash-test'"):
        store.load(tmp_path / "mem", "all-MiniLM-L6-v2")
    vdir = store.current_version_dir(tmp_path / "mem")
    man = json.loads((vdir / "manifest.json").read_text())
    man["format_version"] = 99
    (vdir / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(store.MemoryFormatError, match="newer"):
        store.load(tmp_path / "mem")


def test_incremental_add_extracts_only_new_documents(tmp_path):
    build(tmp_path / "mem", docs=DOCS[:2], replies=REPLIES[:2])
    m, llm = build(tmp_path / "mem", docs=DOCS, replies=REPLIES[2:])  # d1, d2 already there
    assert len(llm.calls) == 1
    assert [d.doc_id for d in m.documents] == ["d1", "d2", "d3"] and len(m.chunks) == 3
    fresh, _ = build(None)
    assert store.memory_to_rows(m)["triples"] == store.memory_to_rows(fresh)["triples"]
    assert np.allclose(m.entity_vecs, fresh.entity_vecs)


def test_build_killed_half_way_resumes_without_duplicates_or_new_tokens(tmp_path):
    llm = ScriptedLLM({"index.extract": list(REPLIES)})
    events = build_memory(tmp_path / "mem", DOCS, llm, HashEmbedder(), IndexParams())
    for ev in events:
        if ev.kind == "chunk_done" and ev.data["i"] == 1:
            break  # the process "dies" after two chunks: nothing saved yet
    events.close()
    assert len(llm.calls) == 2 and not store.is_memory_dir(tmp_path / "mem")
    llm2 = ScriptedLLM({"index.extract": list(REPLIES[2:])})  # only the third reply is available
    evs = list(build_memory(tmp_path / "mem", DOCS, llm2, HashEmbedder(), IndexParams()))
    assert len(llm2.calls) == 1
    resumed = [e.data["resumed"] for e in evs if e.kind == "chunk_done"]
    assert resumed == [True, True, False]
    m = store.load(tmp_path / "mem")
    fresh, _ = build(None)
    assert store.memory_to_rows(m)["engrams"] == store.memory_to_rows(fresh)["engrams"]


def test_a_failed_chunk_is_recorded_and_the_build_goes_on(tmp_path):
    replies = [REPLIES[0], "garbage", "more garbage", REPLIES[2]]
    m, _ = build(tmp_path / "mem", replies=replies)
    log = store.load(tmp_path / "mem").extraction_log
    assert [log[i].status for i in range(3)] == ["ok", "failed", "ok"]
    assert log[1].raw_reply == "more garbage" and log[1].error
    assert m.stats()["failures"] == 1 and len(m.chunks) == 3


def test_build_events_report_coreference_links_per_document():
    emb = HashEmbedder(overrides={"Ada Brennick": [1, 0.1], "Brennick": [1, 0.2], "Port Alder": [0, 1],
                                  "Vell River": [0.1, -1]})
    llm = ScriptedLLM({"index.extract": list(REPLIES)})
    evs = list(build_memory(None, DOCS, llm, emb, IndexParams()))
    per_doc = {e.data["doc_id"]: e.data["coref_links"] for e in evs if e.kind == "document_done"}
    assert per_doc["d1"] == [] and per_doc["d2"] == []
    pairs = {(link["source"], link["target"]) for link in per_doc["d3"]}
    assert pairs == {("ada brennick", "brennick"), ("brennick", "ada brennick")}
    kinds = [e.kind for e in evs]
    assert kinds[0] == "start" and kinds[-1] == "done" and kinds.count("chunk_done") == 3


def _openie_fixture(tmp_path: Path) -> tuple[Path, Path]:
    corpus = [{"title": "Ada Brennick", "text": "Ada Brennick was born in Port Alder."},
              {"title": "Port Alder", "text": "Port Alder lies on the Vell River. It hosts a fair."}]
    openie = {"docs": [
        {"title": "Ada Brennick", "text": corpus[0]["text"], "passage": "x",
         "extracted_entities": ["Ada Brennick", "Port Alder"],
         "extracted_triples": [["Ada Brennick", "born in", "Port Alder"]]},
        {"title": "Port Alder", "text": corpus[1]["text"], "passage": "x",
         "extracted_entities": ["Port Alder", "Vell River", "fair"],
         "extracted_triples": [["Port Alder", "lies on", "Vell River"], ["Port Alder", "hosts", "fair"],
                               ["Port Alder", "bad"], ["a", "b", "c", "d"], ["Port Alder", "p1", "x1"],
                               ["Port Alder", "p2", "x2"], ["Port Alder", "p3", "x3"], ["Port Alder", "p4", "x4"]]},
    ], "ents_by_doc": []}
    (tmp_path / "corpus.json").write_text(json.dumps(corpus))
    (tmp_path / "openie.json").write_text(json.dumps(openie))
    return tmp_path / "openie.json", tmp_path / "corpus.json"


def test_openie_import_makes_descriptions_from_the_mention_own_triples(tmp_path):
    oi, corpus = _openie_fixture(tmp_path)
    m = run_build(import_openie(oi, corpus, HashEmbedder(), IndexParams(), path=tmp_path / "mem"))
    assert len(m.chunks) == 2 and len(m.triples) == 7  # malformed triples dropped
    port_in_p1 = [e for e in m.engrams if e.key == "port alder" and e.chunk_id == 1][0]
    assert port_in_p1.description.split("; ") == [
        "Port Alder lies on Vell River", "Port Alder hosts fair", "Port Alder p1 x1", "Port Alder p2 x2",
        "Port Alder p3 x3"]  # at most 5, in order
    assert [e for e in m.engrams if e.key == "port alder" and e.chunk_id == 0][0].description == \
        "Ada Brennick born in Port Alder"
    assert store.load(tmp_path / "mem").fingerprint() == m.fingerprint()


def test_openie_import_refuses_misaligned_files(tmp_path):
    from memrag.index.openie import OpenIEFormatError

    oi, corpus = _openie_fixture(tmp_path)
    corpus.write_text(json.dumps([{"title": "x", "text": "y"}]))
    with pytest.raises(OpenIEFormatError, match="index-aligned"):
        run_build(import_openie(oi, corpus, HashEmbedder(), IndexParams()))


def test_cli_index_import_prints_one_json_summary(tmp_path):
    oi, corpus = _openie_fixture(tmp_path)
    out = subprocess.run([sys.executable, "-m", "memrag", "index", "--memory", str(tmp_path / "m"),
                          "--import-openie", str(oi), "--corpus", str(corpus), "--json"],
                         capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["documents"] == 2 and summary["chunks"] == 2 and summary["triples"] == 7
    assert summary["prompt_tokens"] == 0 and summary["failures"] == 0
    assert set(summary) == {"documents", "chunks", "entities", "engrams", "triples", "coref_sets", "failures",
                            "prompt_tokens", "completion_tokens", "seconds", "names", "cleanup"}
    assert summary["names"]["entity names"] == summary["entities"]


def test_parallel_extraction_keeps_requests_in_flight_and_stores_in_document_order():
    import threading
    import time as _time

    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    by_title = {d.title: r for d, r in zip(DOCS, REPLIES)}

    def slow_reply(messages, stage):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        # Later documents answer sooner: results must still land in document order.
        title = messages[-1]["content"].split("\n", 1)[0].removeprefix("Title: ")
        _time.sleep({"Ada Brennick": 0.3, "Port Alder": 0.2}.get(title, 0.05))
        with lock:
            state["now"] -= 1
        return by_title[title]

    llm = ScriptedLLM({"index.extract": slow_reply})
    m = run_build(build_memory(None, DOCS, llm, HashEmbedder(), IndexParams(), parallel=3))
    assert state["peak"] >= 2  # requests were in flight together
    sequential, _ = build(None)
    assert store.memory_to_rows(m)["triples"] == store.memory_to_rows(sequential)["triples"]
    assert [c.doc_id for c in m.chunks] == ["d1", "d2", "d3"]


def test_coreference_sets_hold_top_others_not_counting_the_node_itself():
    # Five names whose vectors are all within cosine 0.8 of each other: each node has four others
    # above the threshold, so top = 3 must give three others (the search asks for top + 1 rows because
    # the node finds itself first; asking for top rows gave two). Both the whole-set and one-row paths.
    from hand_vectors import DIM, unit

    from memrag.index.memory import ChunkRow, DocRow, EngramRow, Memory

    m = Memory("hash-test", DIM)
    m.documents.append(DocRow("d0", "t", "x", "test", "text"))
    m.chunks.append(ChunkRow(0, "d0", 0, "t", "x"))
    names = ["Ada", "Ada B", "Ada Br", "Ada Bre", "Ada Bren"]
    for i, name in enumerate(names):
        m.engrams.append(EngramRow(i, name.lower(), name, "person", "", 3, 0))
    m.rebuild_derived()
    rows = [[1.0] + [0.0] * (DIM - 1)]
    rows += [[1.0] + [0.1 * (j == k) for j in range(1, DIM)] for k in range(1, 5)]
    m.entity_vecs = unit(rows)
    for node in m.entities:
        assert len(m.coref_of(node.key, top=3, threshold=0.8)) == 3  # one row at a time
    sets = m.coref_sets(top=3, threshold=0.8)
    assert all(len(v) == 3 and all(c.key != k for c in v) for k, v in sets.items())
    assert all(len(v) == 4 for v in m.coref_sets(top=10, threshold=0.8).values())  # only four others exist
