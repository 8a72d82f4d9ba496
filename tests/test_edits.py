"""Memory edits on a memory of two documents sharing entities (scripted extraction, real SQLite and
faiss files): after each edit, what every method reads — NeuroPath's triples and coreference sets,
EcphoryRAG's engrams and co-occurrence graph, HippoRAG 2's phrase / fact / synonymy graph, dense's
chunks — follows it; only the vectors of what changed are new, every other one is byte-identical;
a split undoes a merge to the byte; bad requests are refused with a reason and change nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from edit_memory import build_two, content, hash_embedder
from memrag.index import edit_log, edits, store, versions
from memrag.index.edits import Edit
from memrag.index.memory import Memory
from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.methods.hipporag2.search import graph_for
from scripted import HashEmbedder

SYNONYMY = HippoRAG2Params(synonymy_threshold=0.6)  # the memory's coreference threshold: both see the same pairs


@pytest.fixture
def mem(tmp_path) -> Path:
    path = tmp_path / "mem"
    build_two(path)
    return path


def edit(path: Path, kind: str, **args) -> edits.EditDone:
    return edits.edit_memory(path, Edit(kind, args), hash_embedder)


def entity_vectors(m: Memory) -> dict[str, bytes]:
    return {n.key: m.entity_vecs[i].tobytes() for i, n in enumerate(m.entities)}


def coref(m: Memory, threshold: float = 0.6) -> dict[str, list[str]]:
    return {k: [c.key for c in v] for k, v in m.coref_sets(5, threshold).items()}


def stored_coref(path: Path) -> set[tuple[str, str]]:
    con = sqlite3.connect(store.current_version_dir(path) / "memory.sqlite")
    try:
        return set(con.execute("SELECT key, other_key FROM coref"))
    finally:
        con.close()


def hippo(m: Memory, params: HippoRAG2Params = SYNONYMY) -> dict[frozenset, str]:
    """HippoRAG 2's graph as {pair of phrase keys: edge kind} (passage edges left out), and its facts."""
    g, _ = graph_for(m, params)
    keys = [n.key for n in m.entities]
    out = {}
    for e in g.graph.es:
        a, b = e.tuple
        if a < g.n_phrases and b < g.n_phrases:
            out[frozenset((keys[a], keys[b]))] = e["kind"]
    return out


def facts(m: Memory) -> list[str]:
    g, _ = graph_for(m, SYNONYMY)
    return sorted(m.triples[t].text for t in g.fact_rows)


def neighbours(m: Memory, key: str) -> set[str]:
    return set(m.cooccurrence_graph[key])


# ------------------------------------------------------------------ merge and split
def test_merge_moves_mentions_and_triple_ends_and_every_method_reads_one_node(mem):
    before = store.load(mem)
    assert coref(before)["varrow coast lines"] == ["varrow coast"]  # the candidate being accepted
    done = edit(mem, "merge", entity="Varrow Coast", into="Varrow Coast Lines")
    assert done.version == "v000002" and "merged 'Varrow Coast' into 'Varrow Coast Lines'" in done.text
    m = store.load(mem)
    assert "varrow coast" not in m.entity_index and m.entity("varrow coast lines").name == "Varrow Coast Lines"
    # NeuroPath: the node's triples now include the other document's; no set names the old node
    assert sorted(m.triples[i].text for i in m.triples_of["varrow coast lines"]) == [
        "Ada Brennick founded Varrow Coast Lines", "Varrow Coast ran ferries from Port Alder"]
    assert all("varrow coast" not in members for members in coref(m).values())
    assert ("varrow coast lines", "varrow coast") not in stored_coref(mem)
    # EcphoryRAG: both mentions are engrams of one node, in both passages; it co-occurs across them
    node = m.entity("varrow coast lines")
    assert [(m.engrams[i].name, m.engrams[i].chunk_id) for i in node.engram_ids] == [
        ("Varrow Coast Lines", 0), ("Varrow Coast", 1)]
    assert neighbours(m, "varrow coast lines") == {"ada brennick", "port alder", "brennick", "vell"}
    # HippoRAG 2: one phrase node with both triple edges, no synonymy edge to a node that is gone
    edges = hippo(m)
    assert edges[frozenset(("varrow coast lines", "port alder"))] == "triple"
    assert edges[frozenset(("varrow coast lines", "ada brennick"))] == "triple"
    assert all("varrow coast" not in pair for pair in edges)
    assert len(facts(m)) == 5 and graph_for(m, SYNONYMY)[0].n_phrases == len(before.entities) - 1
    # dense, mention and triple vectors are untouched; each remaining node keeps its vector
    for name in ("chunk_vecs", "engram_vecs", "triple_vecs"):
        assert getattr(m, name).tobytes() == getattr(before, name).tobytes(), name
    old = entity_vectors(before)
    assert entity_vectors(m) == {k: v for k, v in old.items() if k != "varrow coast"}
    assert m.chunks == before.chunks and m.fingerprint() != before.fingerprint()


def test_a_merge_that_changes_the_node_name_embeds_that_node_alone():
    m0 = build_two(None)
    m1, done = edits.merge(m0, "Port Alder", "Vell", HashEmbedder())  # Port Alder: 2 mentions, Vell: 1
    assert m1.entity("vell").name == "Port Alder" and done.embedded == 1
    assert any("named 'Port Alder'" in n for n in done.notes)
    assert m1.entity_vector("vell").tobytes() == HashEmbedder().encode(["Port Alder"])[0].tobytes()
    assert m1.triples[3].head_key == m1.triples[3].tail_key == "vell"  # Port Alder → lies on → Vell
    assert any("join 'Port Alder' to itself" in n for n in done.notes)
    assert frozenset(("vell",)) not in hippo(m1)  # HippoRAG 2 draws no self-loop
    others = {k: v for k, v in entity_vectors(m0).items() if k not in ("vell", "port alder")}
    assert {k: v for k, v in entity_vectors(m1).items() if k != "vell"} == others


def test_split_undoes_the_merge_to_the_byte_with_no_embedding(mem):
    original = content(store.load(mem))
    fingerprint = store.load(mem).fingerprint()
    edit(mem, "merge", entity="Port Alder", into="Vell")  # renames the merged node: its vector changes
    assert content(store.load(mem)) != original
    done = edits.edit_memory(mem, Edit("split", {"entity": "vell"}),
                             lambda model: pytest.fail("a split back to the names before needs no embedding"))
    assert "split 'Port Alder' out of 'Vell'" in done.text
    back = store.load(mem)
    assert content(back) == original and back.fingerprint() == fingerprint
    assert coref(back) == coref(build_two(None))


def test_merges_nest_and_split_in_any_order(mem):
    original = content(store.load(mem))
    edit(mem, "merge", entity="Ada Brennick", into="Brennick")
    edit(mem, "merge", entity="Brennick", into="Port Alder")
    m = store.load(mem)
    assert {n.key for n in m.entities} == {"port alder", "varrow coast lines", "vell", "varrow coast"}
    with pytest.raises(edits.EditError, match="'Ada Brennick' was merged into 'Port Alder'"):
        edit(mem, "rename", entity="Ada Brennick", name="Ada B.")
    # the first merge, undone out of order, takes back only its own rows
    edit(mem, "split", entity="Port Alder", joined="Ada Brennick")
    m = store.load(mem)
    assert [m.engrams[i].name for i in m.entity("ada brennick").engram_ids] == ["Ada Brennick"]
    assert "brennick" not in m.entity_index
    edit(mem, "split", entity="Port Alder")
    assert content(store.load(mem)) == original


def test_a_rename_after_a_merge_moves_it_along_and_a_removal_keeps_it(mem):
    from memrag.index import removal

    edit(mem, "merge", entity="Varrow Coast", into="Varrow Coast Lines")
    edit(mem, "rename", entity="Varrow Coast Lines", name="Varrow Lines")
    removal.remove_documents(mem, ["ada"], hash_embedder)  # renumbers every row; the merge keeps its own
    m = store.load(mem)
    assert [r.joined_key for r in m.merges] == ["varrow coast"]
    edit(mem, "split", entity="varrow lines")
    m = store.load(mem)
    assert m.entity("varrow coast").name == "Varrow Lines"  # its mention was renamed while it was merged
    assert "varrow lines" not in m.entity_index and not m.merges


# ------------------------------------------------------------------ coreference links
def test_unlink_removes_the_link_both_ways_at_every_threshold_and_the_synonymy_edge(mem):
    before = store.load(mem)
    assert "brennick" in coref(before)["ada brennick"] and "ada brennick" in coref(before)["brennick"]
    assert hippo(before)[frozenset(("ada brennick", "brennick"))] == "synonymy"
    done = edit(mem, "unlink-coref", entity="Brennick", other="ada brennick")
    assert "cosine 0.707" in done.text and not done.notes
    m = store.load(mem)
    for threshold in (0.6, 0.3, 0.0):
        sets = coref(m, threshold)
        assert "brennick" not in sets["ada brennick"] and "ada brennick" not in sets["brennick"], threshold
    assert m.coref_of("brennick", 5, 0.0) and all(c.key != "ada brennick" for c in m.coref_of("brennick", 5, 0.0))
    assert coref(m)["brennick"] == ["varrow coast"]  # the other candidates stay
    assert not {("ada brennick", "brennick"), ("brennick", "ada brennick")} & stored_coref(mem)
    assert frozenset(("ada brennick", "brennick")) not in hippo(m)
    assert content(m)["vectors"] == content(before)["vectors"] and m.fingerprint() != before.fingerprint()
    with pytest.raises(edits.EditError, match="removed already"):
        edit(mem, "unlink-coref", entity="Ada Brennick", other="Brennick")


def test_unlinking_a_pair_that_is_no_candidate_says_so(mem):
    done = edit(mem, "unlink-coref", entity="Vell", other="Port Alder")
    assert "were not coreference candidates" in done.notes[0]


# ------------------------------------------------------------------ rename
def test_rename_renames_every_mention_and_triple_and_embeds_only_those(mem):
    before = store.load(mem)
    done = edit(mem, "rename", entity="port alder", name="Port Aldermoor")
    m = store.load(mem)
    emb = HashEmbedder()
    assert "port alder" not in m.entity_index and m.entity("port aldermoor").name == "Port Aldermoor"
    changed_e = [e.engram_id for e in before.engrams if e.key == "port alder"]
    changed_t = [t.triple_id for t in before.triples if "port alder" in (t.head_key, t.tail_key)]
    assert done.embedded == len(changed_e) + len(changed_t) + 1 and set(done.triples) == set(changed_t)
    for i, e in enumerate(m.engrams):
        want = emb.encode([f"Port Aldermoor: {e.description}"])[0] if i in changed_e else before.engram_vecs[i]
        assert m.engram_vecs[i].tobytes() == want.tobytes(), i
    for i, t in enumerate(m.triples):
        want = emb.encode([t.text])[0] if i in changed_t else before.triple_vecs[i]
        assert m.triple_vecs[i].tobytes() == want.tobytes(), i
    assert sorted(m.triples[i].text for i in m.triples_of["port aldermoor"]) == [
        "Ada Brennick born in Port Aldermoor", "Brennick built a mill in Port Aldermoor",
        "Port Aldermoor lies on Vell", "Varrow Coast ran ferries from Port Aldermoor"]
    assert hippo(m)[frozenset(("port aldermoor", "vell"))] == "triple"
    assert {k: v for k, v in entity_vectors(m).items() if k != "port aldermoor"} == {
        k: v for k, v in entity_vectors(before).items() if k != "port alder"}
    assert m.chunk_vecs.tobytes() == before.chunk_vecs.tobytes()


def test_rename_keeps_removed_links_with_the_node(mem):
    edit(mem, "unlink-coref", entity="Ada Brennick", other="Brennick")
    edit(mem, "rename", entity="Brennick", name="Old Brennick")
    m = store.load(mem)
    assert m.coref_unlinked == {("ada brennick", "old brennick")}


# ------------------------------------------------------------------ triples
def test_remove_triple_removes_that_instance_and_its_vector_alone(mem):
    before = store.load(mem)
    gone = before.triples[1]
    assert gone.text == "Ada Brennick founded Varrow Coast Lines"
    edit(mem, "remove-triple", triple=1)
    m = store.load(mem)
    assert [t.text for t in m.triples] == [t.text for t in before.triples if t.triple_id != 1]
    assert [t.triple_id for t in m.triples] == list(range(len(before.triples) - 1))
    assert m.triple_vecs.tobytes() == np.delete(before.triple_vecs, 1, axis=0).tobytes()
    assert m.triples_of.get("varrow coast lines", []) == []  # NeuroPath: no path leaves it now
    assert frozenset(("ada brennick", "varrow coast lines")) not in hippo(m)
    assert gone.text not in facts(m) and len(facts(m)) == len(facts(before)) - 1
    # the mention stays (it is in the passage): EcphoryRAG still reads it, unchanged
    assert m.engrams == before.engrams and m.engram_vecs.tobytes() == before.engram_vecs.tobytes()
    assert entity_vectors(m) == entity_vectors(before)


def test_a_merge_survives_a_triple_removal_before_it_is_split(mem):
    original = store.load(mem)
    edit(mem, "merge", entity="Varrow Coast", into="Varrow Coast Lines")
    edit(mem, "remove-triple", triple=0)  # every later triple id moves up one, the merged one too
    edit(mem, "split", entity="Varrow Coast Lines")
    m = store.load(mem)
    assert [(t.head_key, t.text) for t in m.triples] == [(t.head_key, t.text) for t in original.triples[1:]]


def test_add_triple_adds_it_to_its_passage_with_the_mention_it_lacks(mem):
    before = store.load(mem)
    done = edit(mem, "add-triple", head="ada brennick", relation="married", tail="Corwin Penhallow", passage=0)
    assert done.notes == ("'Corwin Penhallow' does not appear in passage 0's text as written",)
    m = store.load(mem)
    emb = HashEmbedder()
    new = m.triples[-1]
    assert (new.head, new.relation, new.tail, new.chunk_id) == ("Ada Brennick", "married", "Corwin Penhallow", 0)
    assert m.engrams[-1].name == "Corwin Penhallow" and m.engrams[-1].chunk_id == 0
    assert len(m.engrams) == len(before.engrams) + 1  # Ada Brennick was mentioned there already
    assert m.triple_vecs[:-1].tobytes() == before.triple_vecs.tobytes()
    assert m.triple_vecs[-1].tobytes() == emb.encode(["Ada Brennick married Corwin Penhallow"])[0].tobytes()
    assert m.engram_vecs[:-1].tobytes() == before.engram_vecs.tobytes()
    assert {k: v for k, v in entity_vectors(m).items() if k != "corwin penhallow"} == entity_vectors(before)
    assert len(m.triples) - 1 in m.triples_of["corwin penhallow"]
    assert hippo(m)[frozenset(("ada brennick", "corwin penhallow"))] == "triple"
    assert "Ada Brennick married Corwin Penhallow" in facts(m)
    assert neighbours(m, "corwin penhallow") == {"ada brennick", "port alder", "varrow coast lines"}
    assert m.chunk_vecs.tobytes() == before.chunk_vecs.tobytes() and m.chunks == before.chunks


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("kind, args, said", [
    ("merge", {"entity": "Brenick", "into": "Vell"}, "not an entity of this memory: 'Brenick' (did you mean 'Brennick'"),
    ("merge", {"entity": "Port Alder", "into": "PORT  ALDER"}, "name one entity ('Port Alder')"),
    ("merge", {"entity": "Vell", "into": "Vell"}, "'Vell' names one entity"),
    ("split", {"entity": "Vell"}, "'Vell' is not the result of a merge on record"),
    ("unlink-coref", {"entity": "Vell", "other": "Nowhere"}, "not an entity of this memory: 'Nowhere'"),
    ("rename", {"entity": "Vell", "name": "Port Alder"}, "'Port Alder' names the entity 'Port Alder' already: merge"),
    ("rename", {"entity": "Vell", "name": "Vell"}, "is named 'Vell' already"),
    ("rename", {"entity": "Vell", "name": "!!"}, "has no letters or digits"),
    ("remove-triple", {"triple": 99}, "no triple 99: this memory's triples are numbered 0 to 4"),
    ("add-triple", {"head": "Vell", "relation": "feeds", "tail": "Port Alder", "passage": 7},
     "no passage 7: this memory's passages are numbered 0 to 1"),
    ("add-triple", {"head": "Vell", "relation": "lies on", "tail": "vell", "passage": 1}, "are one"),
    ("add-triple", {"head": "Port Alder", "relation": "Lies  on", "tail": "Vell", "passage": 1},
     "passage 1 holds this triple already (triple 3)"),
    ("add-triple", {"head": "Vell", "relation": " ", "tail": "Port Alder", "passage": 1}, "relation must be"),
    ("merge", {"entity": "Vell"}, "the merge edit needs 'into'"),
    ("regroup", {}, "'regroup' is not an edit"),
])
def test_a_bad_edit_is_refused_with_its_reason_and_changes_nothing(mem, kind, args, said):
    vdir = store.current_version_dir(mem)
    listing = sorted(p.name for p in mem.iterdir())
    with pytest.raises(edits.EditError) as e:
        edit(mem, kind, **args)
    assert said in str(e.value) and "Nothing was changed" in str(e.value)
    assert store.current_version_dir(mem) == vdir and sorted(p.name for p in mem.iterdir()) == listing


def test_the_shipped_sample_is_never_edited(mem, monkeypatch):
    from memrag import demo, sample

    monkeypatch.setattr(demo, "sample_memory_dir", lambda *a: mem)
    monkeypatch.setattr(sample, "sample_memory_dir", lambda *a: mem)  # what the sample rule reads
    vdir = store.current_version_dir(mem)
    with pytest.raises(edits.EditError, match="The sample memory ships with memrag.*Edits go to a copy.*Nothing was changed"):
        edit(mem, "rename", entity="Vell", name="River Vell")
    assert store.current_version_dir(mem) == vdir


# ------------------------------------------------------------------ versions and the log
def test_every_edit_is_a_version_undo_goes_back_and_the_log_says_what_is_kept(mem):
    first = content(store.load(mem))
    edit(mem, "unlink-coref", entity="Ada Brennick", other="Brennick")
    after_unlink = content(store.load(mem))
    edit(mem, "rename", entity="Vell", name="River Vell")
    assert store.undo(mem)[0] == "v000002" and content(store.load(mem)) == after_unlink
    assert store.undo(mem)[0] == "v000001" and content(store.load(mem)) == first
    versions.use_version(mem, "v000003")
    for kind, entity in (("merge", "Varrow Coast"), ("remove-triple", None), ("rename", "Brennick")):
        args = {"triple": 0} if entity is None else {"entity": entity, ("into" if kind == "merge" else "name"):
                                                       "Varrow Coast Lines" if kind == "merge" else "Brennick Sr"}
        edit(mem, kind, **args)
    rows = versions.history(mem)
    assert [(r.entry.kind, r.entry.version) for r in rows] == [
        ("build", "v000001"), ("unlink-coref", "v000002"), ("rename", "v000003"), ("undo", "v000002"),
        ("undo", "v000001"), ("use", "v000003"), ("merge", "v000004"), ("remove-triple", "v000005"),
        ("rename", "v000006")]
    assert rows[2].entry.args == {"entity": "Vell", "name": "River Vell"} and rows[2].entry.previous == "v000002"
    # a small memory keeps every ancestor of the live version: v000003 came from v000002, from v000001
    assert [r.state() for r in rows] == ["kept", "kept", "kept", "kept", "kept", "kept", "kept", "kept", "live"]
    assert store.kept_versions(mem) == [f"v{i:06d}" for i in range(1, 7)] and rows[-1].before_kept


def test_a_damaged_log_line_is_skipped_and_the_rest_read(mem):
    edit(mem, "rename", entity="Vell", name="River Vell")
    with open(mem / edit_log.LOG, "ab") as fh:
        fh.write(b'{"at": 1, "kind": []}\n\xff\xfe not json\n{"at": "x", "kind": "merge", "text": "t", "vers')
    assert [e.kind for e in edit_log.read(mem)] == ["build", "rename"]


def test_the_log_is_read_through_the_bounded_reader_a_pipe_never_waits_and_a_long_log_reads_its_tail(
        mem, monkeypatch):
    import os
    import threading

    edit(mem, "rename", entity="Vell", name="River Vell")
    lines = (mem / edit_log.LOG).read_bytes().splitlines(keepends=True)
    assert [e.kind for e in edit_log.read(mem)] == ["build", "rename"]
    monkeypatch.setattr(edit_log, "READ_MAX_BYTES", len(lines[-1]) + 10)  # the last entry and part of one
    assert [e.kind for e in edit_log.read(mem)] == ["rename"]  # the tail, whole lines only
    (mem / edit_log.LOG).unlink()
    os.mkfifo(mem / edit_log.LOG)  # no writer: a plain open() would wait forever
    got: list = []
    reader = threading.Thread(target=lambda: got.append(edit_log.read(mem)), daemon=True)
    reader.start()
    reader.join(5)
    assert got == [[]], "reading a pipe as the log waited"


# ------------------------------------------------------------------ storage
def test_edits_survive_save_and_load_and_a_folder_from_before_edits_opens(mem, tmp_path):
    edit(mem, "merge", entity="Varrow Coast", into="Varrow Coast Lines")
    edit(mem, "unlink-coref", entity="Ada Brennick", other="Brennick")
    m = store.load(mem)
    assert m.coref_unlinked == {("ada brennick", "brennick")} and [r.joined_key for r in m.merges] == ["varrow coast"]
    assert m.merges[0].vectors.shape == (2, m.dim)
    old = tmp_path / "old"
    build_two(old)
    con = sqlite3.connect(store.current_version_dir(old) / "memory.sqlite")
    con.executescript("DROP TABLE coref_unlinked; DROP TABLE merges;")
    con.close()
    assert store.check(old) and not store.load(old).merges and not store.load(old).coref_unlinked


@pytest.mark.parametrize("sql, said", [
    ("UPDATE merges SET rows = '{\"engrams\": [99]}'", "merge 1's engrams must list row ids below"),
    ("UPDATE merges SET vectors = x'00'", "merge 1's vectors are 1 bytes"),
    ("UPDATE merges SET names = '[1]'", "merge 1's names is a JSON list, not an object"),
    ("INSERT INTO coref_unlinked VALUES (NULL, 'x')", "table coref_unlinked, row 0: column key_a holds NULL"),
])
def test_a_damaged_edit_table_is_refused_with_the_reason(mem, sql, said):
    edit(mem, "merge", entity="Varrow Coast", into="Varrow Coast Lines")
    con = sqlite3.connect(store.current_version_dir(mem) / "memory.sqlite")
    con.execute(sql)
    con.commit()
    con.close()
    with pytest.raises(store.MemoryFormatError, match=said.replace("(", r"\(").replace("[", r"\[")):
        store.load(mem)


def test_a_small_memory_keeps_a_long_line_of_edits_and_a_large_one_three_versions(mem, monkeypatch):
    names = ["River Vell", "Vell Water", "The Vell", "Vellbrook", "Vell"]
    for old, new in zip(["Vell", *names], names):
        edit(mem, "rename", entity=old, name=new)
    assert store.kept_versions(mem) == [f"v{i:06d}" for i in range(1, 7)]  # a few KB each: all kept
    assert all(r.before_kept for r in versions.history(mem)[1:])
    monkeypatch.setattr(store, "KEEP_BYTES", 1)  # as if each version were large
    edit(mem, "rename", entity="Vell", name="Vell River")
    assert store.kept_versions(mem) == ["v000005", "v000006", "v000007"]
    states = [r.state() for r in versions.history(mem)]
    assert states == ["pruned"] * 4 + ["kept", "kept", "live"]


# ------------------------------------------------------------------ an editable copy
def test_a_copy_of_the_sample_replays_like_it_and_can_be_edited(tmp_path):
    from memrag import demo
    from memrag.index import copies
    from memrag.llm.recordings import Recordings

    sample = demo.sample_memory_dir()
    copy = copies.copy_memory(sample, tmp_path / "my-sample")
    assert not demo.is_sample_memory(copy)
    assert content(store.load(copy)) == content(store.load(sample))
    assert [p.name for p in sorted(copy.iterdir())] == ["CURRENT", "edit-log.jsonl", "extraction.jsonl",
                                                       "responses.jsonl", store.current_version_dir(sample).name]
    assert Recordings.open(copy).responses.keys() == Recordings.open(sample).responses.keys()
    assert [e.kind for e in edit_log.read(copy)] == ["copy"]
    node = store.load(copy).entities[0]
    done = edits.edit_memory(copy, Edit("rename", {"entity": node.key, "name": node.name + " Renamed"}),
                             lambda model: HashEmbedder(dim=store.load(copy).dim, model_id=model))
    assert done.version == "v000002" and store.load(sample).entities[0].name == node.name
    with pytest.raises(copies.CopyError, match="exists already"):
        copies.copy_memory(sample, copy)


def test_a_damaged_memory_is_not_copied(mem, tmp_path):
    from memrag.index import copies

    (store.current_version_dir(mem) / "triple_vecs.npy").write_bytes(b"garbage")
    with pytest.raises(store.MemoryFormatError, match="triple_vecs.npy"):
        copies.copy_memory(mem, tmp_path / "copy")
    assert not (tmp_path / "copy").exists() and not list(tmp_path.glob(".copy*"))


# ------------------------------------------------------------------ coreference sets carried over
EDITS = [Edit("merge", {"entity": "Varrow Coast", "into": "Varrow Coast Lines"}),
         Edit("merge", {"entity": "Port Alder", "into": "Vell"}),
         Edit("unlink-coref", {"entity": "Ada Brennick", "other": "Brennick"}),
         Edit("rename", {"entity": "Vell", "name": "Brennick Vell"}),
         Edit("rename", {"entity": "Ada Brennick", "name": "Ada"}),
         Edit("remove-triple", {"triple": 2}),
         Edit("add-triple", {"head": "Brennick", "relation": "sailed with", "tail": "Varrow Coast Brennick",
                             "passage": 1})]


@pytest.mark.parametrize("edit_", EDITS, ids=lambda e: f"{e.kind}-{'-'.join(map(str, e.args.values()))}")
@pytest.mark.parametrize("threshold", [0.6, 0.3])
def test_coreference_sets_carried_over_an_edit_are_those_computed_afresh(edit_, threshold):
    memory = build_two(None)
    memory.params = {**memory.params, "coref_threshold": threshold}
    memory.coref_sets(5, threshold)  # what the app holds
    edited, _ = edits.apply(memory, edit_, HashEmbedder())
    carried = edited._coref_cache[(5, round(threshold, 6))]
    fresh = edited.copy()
    fresh.rebuild_derived()
    afresh = fresh.coref_sets(5, threshold)
    assert {k: [c.key for c in v] for k, v in carried.items()} == {k: [c.key for c in v] for k, v in afresh.items()}
    assert all(abs(a.similarity - b.similarity) < 1e-5 for k in afresh for a, b in zip(carried[k], afresh[k]))


def test_an_opened_memory_lends_its_sets_only_when_it_matches_the_folder(mem):
    opened = store.load(mem)
    opened.coref_sets(5, 0.6)
    loaded = store.load(mem)
    assert loaded.adopt_coref_sets(opened) and (5, 0.6) in loaded._coref_cache
    other = build_two(None, HashEmbedder(overrides={"Vell": [1.0, 0.0]}))
    assert not store.load(mem).adopt_coref_sets(other)
    done = edits.edit_memory(mem, Edit("rename", {"entity": "Vell", "name": "River Vell"}), hash_embedder,
                             opened=opened)
    assert done.version == "v000002" and stored_coref(mem) == {
        (k, c.key) for k, v in store.load(mem).coref_sets(5, 0.6).items() for c in v}
