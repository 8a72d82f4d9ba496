"""HippoRAG 2 retrieval on small hand-built memories whose vectors are chosen by hand, so every
seed weight and PageRank mass below is worked out on paper (arithmetic in the comments)."""

from __future__ import annotations

import numpy as np
import pytest
from hand_vectors import DIM, unit, vec
from scripted import HashEmbedder, ScriptedLLM

from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.eval.gold import gold_fate
from memrag.methods.hipporag2.fates import HippoRAG2Fate

HIPPO_IN_TOP_K, HIPPO_BEYOND, HIPPO_UNREACHED = (k.info.sentence for k in HippoRAG2Fate)
from memrag.index.memory import ChunkRow, DocRow, EngramRow, Memory, TripleRow
from memrag.index.normalise import entity_key
from memrag.methods.hipporag2 import search as hipporag2
from memrag.methods.base import QueryContext
from memrag.trace import Trace
from memrag.methods.hipporag2 import mass_picture
from memrag.methods.hipporag2.detail import HippoRAG2Detail

QUESTION = "Which river runs through the town where Ada Brennick opened her bakery?"


def make_memory(chunks, mentions, names, triples) -> Memory:
    """chunks: (title, vector); mentions: (entity name, chunk id); names: entity name → name vector;
    triples: (head, relation, tail, chunk id, vector)."""
    m = Memory("hash-test", DIM)
    for i, (title, _) in enumerate(chunks):
        m.documents.append(DocRow(f"d{i}", title, f"{title} text.", "test", "text"))
        m.chunks.append(ChunkRow(i, f"d{i}", 0, title, f"{title} text."))
    for i, (name, cid) in enumerate(mentions):
        m.engrams.append(EngramRow(i, entity_key(name), name, "other", "", 3, cid))
    for i, (h, r, t, cid, _) in enumerate(triples):
        m.triples.append(TripleRow(i, entity_key(h), h, r, entity_key(t), t, cid))
    m.rebuild_derived()
    m.chunk_vecs = unit([v for _, v in chunks])
    m.engram_vecs = unit([names[n] for n, _ in mentions])
    m.entity_vecs = unit([names[e.name] for e in m.entities])
    m.triple_vecs = unit([t[4] for t in triples])
    return m


# ---------------------------------------------------------------- world W
# Question vector q = d0. Fact cosines to q: T0 1.0, T1 .6, T2 .2, T3 0 → min-max scores 1, .6, .2, 0.
# Passages containing each phrase: Ada 2 (c0, c2), Tollmere 2 (c0, c1), Harrow River 1, Brennick Mill 1.
# "Ada Brenick" (a misspelling, c3) has a name vector at cosine .9 to Ada's: one synonymy pair.
# c4 holds Quellhaven alone: no triple, no synonym, the lowest dense score → no seed and no path to one.
W_CHUNKS = [("Ada's bakery", vec(d0=.9, d1=.436)), ("Tollmere", vec(d0=.8, d2=.6)),
            ("The mill", vec(d0=.5, d3=.866)), ("Misspelt note", vec(d0=.3, d4=.954)),
            ("Quellhaven", vec(d0=.1, d5=.995))]
W_MENTIONS = [("Ada Brennick", 0), ("Tollmere", 0), ("Tollmere", 1), ("Harrow River", 1),
              ("Brennick Mill", 2), ("Ada Brennick", 2), ("Ada Brenick", 3), ("Quellhaven", 4)]
W_NAMES = {"Ada Brennick": vec(d4=1.0), "Ada Brenick": vec(d4=.9, d5=.43589), "Tollmere": vec(d6=1.0),
           "Harrow River": vec(d7=1.0), "Brennick Mill": vec(d3=1.0), "Quellhaven": vec(d1=1.0)}
W_TRIPLES = [("Ada Brennick", "opened bakery in", "Tollmere", 0, vec(d0=1.0)),  # T0
             ("Tollmere", "lies on", "Harrow River", 1, vec(d0=.6, d1=.8)),  # T1
             ("Brennick Mill", "owned by", "Ada Brennick", 2, vec(d0=.2, d2=.9798)),  # T2
             ("Ada Brenick", "wrote", "a note", 3, vec(d3=1.0))]  # T3 ("a note" is a value: no phrase node)


def world() -> Memory:
    return make_memory(W_CHUNKS, W_MENTIONS, W_NAMES, W_TRIPLES)


def ctx(memory: Memory, llm=None) -> QueryContext:
    return QueryContext(memory, llm, HashEmbedder(dim=DIM, overrides={QUESTION: vec(d0=1.0)}), QUESTION)


def keep(*numbers: int) -> ScriptedLLM:
    return ScriptedLLM({"hipporag2.recognition": [{"keep": list(numbers)}]})


P3 = HippoRAG2Params(linking_top_k=3)


def seeds(trace: Trace) -> dict[str, float]:
    return {s.name: s.weight for s in trace.detail(HippoRAG2Detail).phrase_seeds}


def near(values):  # float32 vectors: hand-worked figures hold to about 1e-6
    return pytest.approx(values, abs=1e-5)


# ---------------------------------------------------------------- graph
def test_synonymy_edges_come_from_the_stored_name_vectors_and_the_threshold():
    m = world()
    g = hipporag2.HippoGraph(m, 0.8, 100)
    assert g.counts["synonymy edges"] == 1
    a, a2 = m.entity_index["ada brennick"], m.entity_index["ada brenick"]
    e = g.graph.es[g.graph.get_eid(a, a2)]
    assert e["kind"] == "synonymy"
    assert e["weight"] == pytest.approx(2 * 0.9, abs=1e-4)  # found from both sides: .9 per direction
    assert hipporag2.HippoGraph(m, 0.95, 100).counts["synonymy edges"] == 0
    assert hipporag2.HippoGraph(m, 0.8, 0).counts["synonymy edges"] == 0


def test_graph_is_built_once_per_memory_and_reused():
    m = world()
    first = hipporag2.retrieve(ctx(m), HippoRAG2Params(recognition=False))
    second = hipporag2.retrieve(ctx(m), HippoRAG2Params(recognition=False))
    assert first.detail(HippoRAG2Detail).graph_built and not second.detail(HippoRAG2Detail).graph_built
    assert first.detail(HippoRAG2Detail).graph_seconds > 0 and second.detail(HippoRAG2Detail).graph_seconds == 0
    assert first.detail(HippoRAG2Detail).graph == second.detail(HippoRAG2Detail).graph
    other = hipporag2.retrieve(ctx(m), HippoRAG2Params(recognition=False, synonymy_threshold=0.95))
    assert other.detail(HippoRAG2Detail).graph_built  # another synonymy setting is another graph


# ---------------------------------------------------------------- seeds
def test_seed_weights_without_recognition():
    # top 3 facts T0 (1), T1 (.6), T2 (.2); a phrase's weight = mean over its facts of score / passages:
    # Ada (1/2 + .2/2)/2 = .3, Tollmere (1/2 + .6/2)/2 = .4, Harrow River .6/1 = .6, Brennick Mill .2/1 = .2;
    # the 3 heaviest stay: Harrow River, Tollmere, Ada.
    t = hipporag2.retrieve(ctx(world()), HippoRAG2Params(linking_top_k=3, recognition=False))
    d = t.detail(HippoRAG2Detail)
    assert [f.score for f in d.facts] == near([1.0, 0.6, 0.2])
    assert seeds(t) == near({"Harrow River": 0.6, "Tollmere": 0.4, "Ada Brennick": 0.3})
    assert list(seeds(t)) == ["Harrow River", "Tollmere", "Ada Brennick"]
    # passage seeds: dense cosines .9 .8 .5 .3 .1 → min-max 1, .875, .5, .25, 0 → × .05
    assert [p.chunk_id for p in d.passage_seeds] == [0, 1, 2, 3, 4]
    assert [p.weight for p in d.passage_seeds] == near([0.05, 0.04375, 0.025, 0.0125, 0.0])
    assert d.passage_seed_total == pytest.approx(0.13125, abs=1e-5)


def test_phrase_seeds_use_the_min_max_score_not_the_raw_cosine():
    # q = .8 d0 + .6 d3: fact cosines T0 .8, T1 .48, T2 .16, T3 .6 → min-max 1, .5, 0, .6875; the top 3
    # are T0, T3, T1. Ada Brenick (1 passage) .6875; Ada Brennick 1/2 = .5; Harrow River .5/1 = .5;
    # Tollmere (1/2 + .5/2)/2 = .375. From raw cosines the weights would be .6, .4, .48, .32.
    q = vec(d0=.8, d3=.6)
    c = QueryContext(world(), None, HashEmbedder(dim=DIM, overrides={QUESTION: q}), QUESTION)
    t = hipporag2.retrieve(c, HippoRAG2Params(linking_top_k=3, recognition=False))
    assert [f.cosine for f in t.detail(HippoRAG2Detail).facts] == near([0.8, 0.6, 0.48])
    assert seeds(t) == near({"Ada Brenick": 0.6875, "Ada Brennick": 0.5, "Harrow River": 0.5})


def test_recognition_verdicts_change_the_seeds():
    # keeping T0 and T2: Ada (.5 + .1)/2 = .3, Tollmere .5, Brennick Mill .2; Harrow River is no seed
    llm = keep(1, 3)
    t = hipporag2.retrieve(ctx(world(), llm), P3)
    assert [f.verdict for f in t.detail(HippoRAG2Detail).facts] == ["kept", "dropped", "kept"]
    assert seeds(t) == near({"Tollmere": 0.5, "Ada Brennick": 0.3, "Brennick Mill": 0.2})
    assert [c.stage for c in t.llm_calls] == ["hipporag2.recognition"]
    assert t.detail(HippoRAG2Detail).recognition_call == 0
    assert "Tollmere | lies on | Harrow River" in t.llm_calls[0].messages[-1]["content"]
    # keeping T1 only: Tollmere .6/2 = .3, Harrow River .6
    t = hipporag2.retrieve(ctx(world(), keep(2)), P3)
    assert seeds(t) == near({"Harrow River": 0.6, "Tollmere": 0.3})


def test_retrieval_only_variant_makes_no_llm_call():
    llm = ScriptedLLM({})  # any call would fail the test
    t = hipporag2.retrieve(ctx(world(), llm), HippoRAG2Params(recognition=False))
    assert llm.calls == [] and t.llm_calls == []
    assert all(f.verdict == "kept" for f in t.detail(HippoRAG2Detail).facts)


# ---------------------------------------------------------------- fallback
def test_dense_fallback_when_no_fact_survives():
    m = world()
    t = hipporag2.retrieve(ctx(m, keep()), P3)
    assert t.detail(HippoRAG2Detail).fallback_dense and "kept no fact" in t.detail(HippoRAG2Detail).fallback_reason
    assert any(f.startswith("fallback to dense ranking") for f in t.flags)
    assert t.ranked_ids() == [0, 1, 2, 3, 4]  # dense order
    assert {r.source for r in t.ranked} == {"dense"}
    fates = gold_fate(t, [0, 4], k=2)
    assert fates[0]["fate"] == "in the top k" and "fell back" in fates[0]["detail"]
    assert fates[1]["fate"] == "beyond k"


def test_dense_fallback_when_the_recognition_call_fails():
    llm = ScriptedLLM({"hipporag2.recognition": ["not json", {"keep": [9]}]})  # unreadable, then out of range
    t = hipporag2.retrieve(ctx(world(), llm), P3)
    assert len(t.llm_calls) == 2 and not t.llm_calls[-1].ok
    assert t.detail(HippoRAG2Detail).fallback_dense and "failed" in t.detail(HippoRAG2Detail).fallback_reason
    assert {f.verdict for f in t.detail(HippoRAG2Detail).facts} == {"unjudged"}


# ---------------------------------------------------------------- PageRank
@pytest.mark.parametrize("d", [0.5, 0.85, 0.3])
def test_pagerank_mass_agrees_with_a_closed_form_solve_on_five_nodes(d):
    # 0.5 alone cannot tell damping from 1 − damping (a mutant that swapped them survived): 0.85 and 0.3 can
    # nodes x, y (phrases), c0, c1, c2 (passages); x in c0 and c1, y in c1 and c2, one triple x–y in c1.
    # Undirected weights: x–y 2 (a triple counts once per direction), each context edge 1.
    m = make_memory([("zero", vec(d0=1.0)), ("one", vec(d0=.5, d1=.866)), ("two", vec(d1=1.0))],
                    [("Xan", 0), ("Xan", 1), ("Yor", 1), ("Yor", 2)],
                    {"Xan": vec(d2=1.0), "Yor": vec(d3=1.0)},
                    [("Xan", "meets", "Yor", 1, vec(d0=1.0))])
    t = hipporag2.retrieve(ctx(m), HippoRAG2Params(recognition=False, damping=d))
    # Reset: the one fact scores 1 (min-max of a single value), so x = y = 1/2; passages:
    # cosines 1, .5, 0 → 1, .5, 0 → × .05.
    s = np.array([0.5, 0.5, 0.05, 0.025, 0.0])
    s /= s.sum()
    W = np.zeros((5, 5))
    for a, b, w in [(0, 1, 2.0), (0, 2, 1), (0, 3, 1), (1, 3, 1), (1, 4, 1)]:
        W[a, b] = W[b, a] = w
    P = W / W.sum(axis=1, keepdims=True)  # walk: an edge with probability ∝ its weight
    # x = (1 − d)·s + d·Pᵀx  ⇔  (I − d·Pᵀ) x = (1 − d)·s
    x = np.linalg.solve(np.eye(5) - d * P.T, (1 - d) * s)
    assert x.sum() == pytest.approx(1.0)
    got = {r.chunk_id: r.score for r in t.ranked}
    for cid in range(3):
        assert got[cid] == pytest.approx(x[2 + cid], abs=1e-6)
    masses = {sd.name: sd.mass for sd in t.detail(HippoRAG2Detail).phrase_seeds}
    assert masses["Xan"] == pytest.approx(x[0], abs=1e-6) and masses["Yor"] == pytest.approx(x[1], abs=1e-6)
    assert t.ranked_ids() == sorted(range(3), key=lambda c: -x[2 + c])
    assert t.detail(HippoRAG2Detail).phrase_mass == pytest.approx(x[:2].sum(), abs=1e-6)


# ---------------------------------------------------------------- the ranked list and the trace
def test_ranked_list_covers_every_chunk_once_with_reasons():
    t = hipporag2.retrieve(ctx(world()), HippoRAG2Params(recognition=False))
    assert sorted(t.ranked_ids()) == [0, 1, 2, 3, 4]
    masses = [r.score for r in t.ranked]
    assert masses == sorted(masses, reverse=True)
    assert all(r.source == "pagerank" and r.why.startswith("PageRank mass") for r in t.ranked)
    assert t.ranked[-1].chunk_id == 4 and t.ranked[-1].score == 0.0  # nothing leads to Quellhaven
    assert "no seeded phrase" in t.ranked[-1].why


def test_trace_round_trips_and_draws():
    t = hipporag2.retrieve(ctx(world(), keep(1, 2)), P3)
    again = Trace.from_json(t.to_json())
    assert again.detail(HippoRAG2Detail) == t.detail(HippoRAG2Detail)
    kinds = {n.kind for n in t.nodes}
    assert {"query", "entity", "chunk"} <= kinds
    assert {n.role for n in t.nodes if n.kind == "entity"} >= {"seed"}
    assert all(n.score is not None for n in t.nodes if n.kind != "query")
    pic = mass_picture.picture(t, gold_chunk_ids=[1])
    assert "seeded phrase" in pic.note
    # a drawn synonymy edge is named as one in the legend, not as NeuroPath's coreference jump
    assert any(e.kind == "synonymy" for e in t.edges)  # Ada Brennick ~ Ada Brenick
    meanings = [x.label for x in pic.legend]
    assert "synonym edge (similar names)" in meanings
    assert not any("coreference" in m for m in meanings)


def test_the_graph_edges_join_what_they_say():
    """Each drawn triple joins two phrases a triple of the memory joins; each context edge a phrase
    and a passage that mentions it (the subgraph's vertices are numbered in the graph's order)."""
    m = world()
    t = hipporag2.retrieve(ctx(m, keep(1, 2)), P3)
    pairs = {frozenset((x.head_key, x.tail_key)) for x in m.triples}
    kinds = {e.kind for e in t.edges}
    assert {"triple", "provenance"} <= kinds
    for e in t.edges:
        a, b = e.source.partition(":"), e.target.partition(":")
        if e.kind == "triple":
            assert a[0] == b[0] == "e" and frozenset((a[2], b[2])) in pairs, e
        elif e.kind == "provenance":
            key, cid = (a[2], b[2]) if a[0] == "e" else (b[2], a[2])
            assert int(cid) in m.entity(key).chunk_ids, e


# ---------------------------------------------------------------- gold fates
def test_gold_fates_for_the_three_cases():
    t = hipporag2.retrieve(ctx(world()), HippoRAG2Params(recognition=False))
    first, seeded_later = t.ranked[0].chunk_id, 2  # c2 holds the seeded phrase Ada Brennick
    assert seeded_later != first
    fates = {f["chunk_id"]: f for f in gold_fate(t, [first, seeded_later, 4], k=1)}
    assert fates[first]["fate"] == HIPPO_IN_TOP_K and fates[first]["rank"] == 1
    assert fates[seeded_later]["fate"] == HIPPO_BEYOND and "Ada Brennick" in fates[seeded_later]["detail"]
    assert fates[4]["fate"] == HIPPO_UNREACHED and "1%" in HIPPO_UNREACHED


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError, match="damping"):
        hipporag2.retrieve(ctx(world()), HippoRAG2Params(damping=1.0, recognition=False))
    with pytest.raises(ValueError, match="linking_top_k"):
        hipporag2.retrieve(ctx(world()), HippoRAG2Params(linking_top_k=0, recognition=False))


def test_retrieval_only_variant_runs_on_the_sample_memory_without_a_model():
    from memrag.ask import ask
    from memrag.demo import sample_memory_dir
    from memrag.embed import get_embedder
    from memrag.index import store

    emb = get_embedder()
    memory = store.load(sample_memory_dir(), emb.model_id)
    (t,) = ask(memory, "Which river runs past the town where the founder of the Lantern Guild was born?", llm=None,
               embedder=emb, methods=["hipporag2"], params={"hipporag2": {"recognition": False}}, answer=False)
    assert t.llm_calls == [] and not t.detail(HippoRAG2Detail).fallback_dense
    assert sorted(t.ranked_ids()) == list(range(len(memory.chunks)))
    d = t.detail(HippoRAG2Detail)
    assert d.phrase_seeds and d.graph["passage nodes"] == len(memory.chunks)
