"""EcphoryRAG retrieval on small hand-built memories whose vectors are chosen by hand,
so every expected activation below is worked out on paper (arithmetic in the comments)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hand_vectors import DIM, unit, vec
from scripted import HashEmbedder, ScriptedLLM

from memrag.ask import ask
from memrag.methods.ecphory.params import EcphoryParams
from memrag.index.memory import ChunkRow, DocRow, EngramRow, Memory
from memrag.methods.dense import search as dense
from memrag.methods.ecphory import search as ecphory
from memrag.methods.ecphory.picture import SUBGRAPH_CAP
from memrag.methods.base import QueryContext
from memrag.index.normalise import entity_key
from memrag.trace import Trace
from memrag.methods.ecphory.detail import EcphoryDetail

QUESTION = "Which mill did the Brennick family sell to the Lantern Guild?"


def make_memory(chunks: list[tuple[str, list[float]]],
                engrams: list[tuple[str, str, str, int, list[float]]]) -> Memory:
    """chunks: (title, vector); engrams: (name, type, description, chunk id, vector)."""
    m = Memory("hash-test", DIM)
    for i, (title, _) in enumerate(chunks):
        m.documents.append(DocRow(f"d{i}", title, f"{title} text.", "test", "text"))
        m.chunks.append(ChunkRow(i, f"d{i}", 0, title, f"{title} text."))
    for i, (name, typ, desc, cid, _) in enumerate(engrams):
        m.engrams.append(EngramRow(i, entity_key(name), name, typ, desc, 3, cid))
    m.rebuild_derived()
    m.chunk_vecs = unit([v for _, v in chunks])
    m.engram_vecs = unit([e[4] for e in engrams]) if engrams else np.zeros((0, DIM), np.float32)
    m.entity_vecs = (np.vstack([m.engram_vecs[n.engram_ids[0]] for n in m.entities])
                     if m.entities else np.zeros((0, DIM), np.float32))
    return m


def embedder(**cues: list[float]) -> HashEmbedder:
    return HashEmbedder(dim=DIM, overrides={QUESTION: vec(d0=1.0), **cues})


def cue_llm(*cues: str) -> ScriptedLLM:
    return ScriptedLLM({"query.entities": [{"entities": list(cues)}]})


# ---------------------------------------------------------------- world W: a chain away from the question
# Q = d0. Engram sims to Q: A 1.0, B .8, B2 .6, C .3, D 0, H 0.
# Round 1 (seed A, centroid d0): top 3 = A, B, B2 → new B, B2.
# Round 2 moving (seed B = (.8,.6)): cos to C = .8*.3 + .6*.954 = .812, A .8, B2 .48 → top 3 = B, C, A → new C.
# Round 2 paper: seed = most Q-similar of E_all = A again → nothing new.
# Chunk cosines to Q: c0 .95, c2 .9, c5 .8, c3 .7, c1 .5, c4 .2 (dense order 0, 2, 5, 3, 1, 4).
W_CHUNKS = [
    ("Harbour notes", vec(d0=.95, d4=.31)),
    ("Brennick family", vec(d0=.5, d5=.866)),
    ("The mill", vec(d0=.9, d6=.436)),
    ("The quay", vec(d0=.7, d7=.714)),
    ("Harrow river", vec(d0=.2, d4=.98)),
    ("Lantern Guild hall", vec(d0=.8, d5=.6)),
]
W_ENGRAMS = [
    ("Ada Brennick", "person", "baker who owned the mill", 1, vec(d0=1.0)),  # 0 = A
    ("Brennick Mill", "place", "a water mill", 2, vec(d0=.8, d1=.6)),  # 1 = B
    ("Old Quay", "place", "a quay", 3, vec(d0=.6, d2=.8)),  # 2 = B2
    ("Harrow River", "place", "river by the mill", 4, vec(d0=.3, d1=.954)),  # 3 = C
    ("Lantern Guild", "organisation", "a guild of lamp makers", 5, vec(d3=1.0)),  # 4 = D
    ("Harbour", "place", "", 0, vec(d4=1.0)),  # 5 = H
]
A, B, B2, C, D, H = range(6)


def w_params(**kw) -> EcphoryParams:
    # World W's tests were worked out for Algorithm 1's context list (c_init); fused has its own test
    base = dict(k_initial=1, seeds=1, rounds=2, cue_k=1, direct_chunks=2, k_final=3, context_chunks=2,
                graph_expansion=False, context_source="c_init")
    return EcphoryParams(**{**base, **kw})


def run_w(llm=None, **kw):
    memory = make_memory(W_CHUNKS, W_ENGRAMS)
    llm = llm if llm is not None else cue_llm("Lantern Guild")
    ctx = QueryContext(memory, llm, embedder(**{"Lantern Guild": vec(d3=1.0)}), QUESTION)
    return ecphory.retrieve(ctx, w_params(**kw)), memory, ctx


def activated(trace: Trace) -> set[int]:
    d = trace.detail(EcphoryDetail)
    return {e.engram_id for e in d.initial} | {e.engram_id for r in d.rounds for e in r.new}


def test_initial_activation_cue_hits_and_c_init_order():
    trace, memory, _ = run_w()
    d = trace.detail(EcphoryDetail)
    assert d.cues == ["Lantern Guild"]
    assert d.cue_hits == {"Lantern Guild": [D]}
    assert [(e.engram_id, e.origin, e.round, e.via) for e in d.initial] == [
        (A, "query", 0, ""), (D, "cue", 0, "Lantern Guild")]
    # C_assoc in activation order (query hit's chunk c1, then the cue hit's c5), then C_direct;
    # chunk cosine would order them 5 (.8) before 1 (.5), and all four 0, 2, 5, 1.
    assert d.c_assoc == [1, 5]
    assert d.c_direct == [0, 2]
    assert [(r.chunk_id, r.source) for r in trace.ranked] == [
        (1, "c_assoc"), (5, "c_assoc"), (0, "c_direct"), (2, "c_direct"), (3, "dense-tail"), (4, "dense-tail")]
    assert "cue 'Lantern Guild'" in trace.ranked[1].why
    assert "recall@k" in trace.ranked[-1].why
    assert d.context_chunk_ids == [1, 5]
    assert [r.rank for r in trace.ranked] == list(range(6))
    assert trace.retrieval_seconds > 0
    cue_calls = [c for c in trace.llm_calls if c.stage == "query.entities"]
    assert len(cue_calls) == 1 and cue_calls[0].shared


def test_paper_policy_depth_two_adds_nothing_beyond_depth_one():
    one, _, _ = run_w(seed_policy="paper", rounds=1)
    two, _, _ = run_w(seed_policy="paper", rounds=2)
    r1, r2 = two.detail(EcphoryDetail).rounds
    assert [e.engram_id for e in r1.new] == [B, B2]
    assert {e.origin for e in r1.new} == {"semantic"}
    assert r1.seed_ids == r2.seed_ids == [A]
    assert r2.new == []
    assert "round 2 added nothing new: seeds identical to round 1" in two.flags
    assert r2.note == "round 2 added nothing new: seeds identical to round 1"
    assert activated(one) == activated(two) == {A, D, B, B2}
    one_final, two_final = one.detail(EcphoryDetail).final, two.detail(EcphoryDetail).final
    assert [e.engram_id for e in one_final] == [e.engram_id for e in two_final]


def test_moving_policy_activates_what_depth_one_did_not():
    one, _, _ = run_w(rounds=1)
    two, _, _ = run_w(rounds=2)
    r2 = two.detail(EcphoryDetail).rounds[1]
    assert r2.seed_ids == [B]
    assert [(e.engram_id, e.origin, e.round) for e in r2.new] == [(C, "semantic", 2)]
    assert "Brennick Mill" in r2.new[0].via  # the only seed, so the nearest one
    assert C not in activated(one) and C in activated(two)
    # the centroid of round 2 is B itself: B 1.0, C .812, A .8
    assert [e.engram_id for e in r2.centroid_neighbours[:3]] == [B, C, A]
    assert r2.centroid_scores[:3] == pytest.approx([1.0, .812, .8], abs=2e-3)
    assert not any("added nothing" in f for f in two.flags)


def test_moving_policy_stops_when_a_round_adds_nothing():
    # round 3: seed C → top 3 = C, B (.812), A (.3): nothing new; round 4 has no seeds.
    trace, _, _ = run_w(rounds=4)
    r3, r4 = trace.detail(EcphoryDetail).rounds[2:]
    assert r3.seed_ids == [C] and r3.new == [] and r3.note == "round 3 added nothing new"
    assert r4.seed_ids == [] and "round 4 not run" in r4.note
    assert any("round 4 not run: round 3 activated no new engrams" in f for f in trace.flags)
    assert [s.kind for s in trace.steps] == ["cues", "initial", "round", "round", "round", "round",
                                             "rerank", "context"]


# ---------------------------------------------------------------- seed weights
def test_weights_follow_similarity_and_move_the_centroid():
    # Q = d0; X sim .9, Y sim .3 are E_init (k_initial 2); N1, N2 sim .2.
    # Weights .9/1.2 = .75 and .25: centroid ∝ .75X + .25Y = (.880, .384, .280) →
    #   cos X .959, N1 .552, Y .531, N2 .450.
    # Equal weights (the released code) give (.753, .274, .599): N2 .737 ahead of N1 .419.
    chunks = [(f"c{i}", vec(**{"d0": .5, f"d{i + 3}": .5})) for i in range(4)]
    engrams = [("Xavier", "person", "x", 0, vec(d0=.9, d1=.436)),
               ("Yara", "person", "y", 1, vec(d0=.3, d2=.954)),
               ("Nemo One", "person", "n1", 2, vec(d0=.2, d1=.98)),
               ("Nemo Two", "person", "n2", 3, vec(d0=.2, d2=.98))]
    memory = make_memory(chunks, engrams)
    ctx = QueryContext(memory, cue_llm(), embedder(), QUESTION)
    trace = ecphory.retrieve(ctx, EcphoryParams(k_initial=2, seeds=2, rounds=1, graph_expansion=False))
    rnd = trace.detail(EcphoryDetail).rounds[0]
    assert rnd.seed_ids == [0, 1]
    assert rnd.weights == pytest.approx([.75, .25], abs=1e-3)
    assert [e.name for e in rnd.centroid_neighbours] == ["Xavier", "Nemo One", "Yara", "Nemo Two"]
    assert rnd.centroid_scores == pytest.approx([.959, .552, .531, .450], abs=2e-3)


def test_weights_stay_positive_for_a_dissimilar_seed():
    # A cue hit pointing away from the question (sim -.6) is a seed in round 1: its weight is floored.
    chunks = [("c0", vec(d0=1.0)), ("c1", vec(d1=1.0)), ("c2", vec(d2=1.0))]
    engrams = [("Ada", "person", "a", 0, vec(d0=1.0)), ("Opposite", "thing", "o", 1, vec(d0=-.6, d1=.8)),
               ("Other", "thing", "t", 2, vec(d2=1.0))]
    memory = make_memory(chunks, engrams)
    ctx = QueryContext(memory, cue_llm("Opposite"), embedder(Opposite=vec(d0=-.6, d1=.8)), QUESTION)
    trace = ecphory.retrieve(ctx, EcphoryParams(k_initial=1, cue_k=1, seeds=2, rounds=1, graph_expansion=False))
    rnd = trace.detail(EcphoryDetail).rounds[0]
    assert rnd.seed_ids == [0, 1]
    assert all(w > 0 for w in rnd.weights) and rnd.weights[1] < 0.01
    assert sum(rnd.weights) == pytest.approx(1.0)


# ---------------------------------------------------------------- world G: co-occurrence expansion
# Q = d0. Seed Person has mentions in c0 (sim 1) and c1 (sim .9); k_initial 1 → seed = the c0 mention.
# Round 1 centroid d0: top 3 = Seed c0, Seed c1, Filler One (.8); Filler Two .7, Gammas ≤ .2 stay out.
# Co-occurrence of "seed person": Gamma One (c0 and c1: weight 2), Gamma Two (c1: 1, best sim .2),
# Gamma Three (c0: 1, sim .1). With graph_neighbours 2: Gamma One (both mentions) and Gamma Two.
# The graph lists the seed's neighbours as Gamma Three, Gamma One, Gamma Two (insertion order),
# so taking them as listed, or by weight alone, would pick Gamma Three.
G_CHUNKS = [("g0", vec(d0=.6, d5=.8)), ("g1", vec(d0=.5, d6=.866)), ("g2", vec(d0=.4, d7=.917))]
G_ENGRAMS = [
    ("Seed Person", "person", "the seed", 0, vec(d0=1.0)),  # 0
    ("Seed Person", "person", "the seed again", 1, vec(d0=.9, d1=.436)),  # 1
    ("Filler One", "thing", "first filler", 2, vec(d0=.8, d2=.6)),  # 2
    ("Filler Two", "thing", "second filler", 2, vec(d0=.7, d3=.714)),  # 3
    ("Gamma Three", "place", "gamma three", 0, vec(d0=.1, d7=.995)),  # 4
    ("Gamma Two", "place", "gamma two", 1, vec(d0=.2, d6=.98)),  # 5
    ("Gamma One", "place", "gamma in c0", 0, vec(d5=1.0)),  # 6
    ("Gamma One", "place", "gamma in c1", 1, vec(d5=1.0)),  # 7
]


def run_g(**kw):
    memory = make_memory(G_CHUNKS, G_ENGRAMS)
    ctx = QueryContext(memory, cue_llm(), embedder(), QUESTION)
    base = dict(k_initial=1, seeds=1, rounds=1, graph_neighbours=2, k_final=3)
    return ecphory.retrieve(ctx, EcphoryParams(**{**base, **kw})), memory


def test_graph_expansion_adds_cooccurring_entities_within_the_cap():
    trace, _ = run_g()
    new = trace.detail(EcphoryDetail).rounds[0].new
    assert [(e.engram_id, e.origin) for e in new] == [
        (1, "semantic"), (2, "semantic"), (6, "graph"), (7, "graph"), (5, "graph")]
    assert {e.via for e in new if e.origin == "graph"} == {"Seed Person"}
    assert 4 not in activated(trace)  # Gamma Three: third neighbour, over graph_neighbours = 2
    edges = {(e.source, e.target, e.role) for e in trace.edges if e.kind == "activation"}
    assert ("e:seed person", "e:gamma one", "graph") in edges
    assert ("e:seed person", "e:gamma two", "graph") in edges

    one, _ = run_g(graph_neighbours=1)
    assert [e.engram_id for e in one.detail(EcphoryDetail).rounds[0].new if e.origin == "graph"] == [6, 7]
    off, _ = run_g(graph_expansion=False)
    assert not [e for e in off.detail(EcphoryDetail).rounds[0].new if e.origin == "graph"]
    assert activated(off) == {0, 1, 2}


def test_k_final_keeps_one_engram_per_entity():
    # E_all sims: Seed 1.0 and .9, Filler One .8, Gamma Two .2, Gamma One 0 (twice).
    trace, _ = run_g(k_final=3)
    final = trace.detail(EcphoryDetail).final
    assert [(e.engram_id, e.name) for e in final] == [(0, "Seed Person"), (2, "Filler One"), (5, "Gamma Two")]
    assert trace.context_facts == ["Seed Person (person): the seed", "Filler One (thing): first filler",
                                   "Gamma Two (place): gamma two"]
    wide, _ = run_g(k_final=10)
    assert [e.engram_id for e in wide.detail(EcphoryDetail).final] == [0, 2, 5, 6]  # 4 entities, one mention each


def test_no_cues_is_flagged_and_retrieval_goes_on():
    trace, _ = run_g()
    assert trace.detail(EcphoryDetail).cues == [] and trace.detail(EcphoryDetail).cue_hits == {}
    assert any("found no entities" in f for f in trace.flags)
    assert [e.origin for e in trace.detail(EcphoryDetail).initial] == ["query"]
    assert trace.detail(EcphoryDetail).final


def test_failed_cue_call_is_flagged_and_retrieval_goes_on():
    llm = ScriptedLLM({"query.entities": ["not json at all", "still not json"]})
    trace, _, _ = run_w(llm=llm)
    assert any(f.startswith("the cue call failed") for f in trace.flags)
    assert [e.origin for e in trace.detail(EcphoryDetail).initial] == ["query"]
    assert len(trace.llm_calls) == 2 and not any(c.ok for c in trace.llm_calls)
    assert trace.detail(EcphoryDetail).context_chunk_ids == [1, 0]  # C_assoc [1], then C_direct [0, 2]


def test_without_an_llm_retrieval_runs_on_the_question_vector():
    memory = make_memory(W_CHUNKS, W_ENGRAMS)
    trace = ecphory.retrieve(QueryContext(memory, None, embedder(), QUESTION), w_params())
    assert any(f.startswith("no LLM") for f in trace.flags)
    assert trace.detail(EcphoryDetail).c_assoc == [1]


# ---------------------------------------------------------------- context
def test_context_source_changes_context_and_ranked_list():
    # moving, depth 2: E_all = A, D, B, B2, C → E_final (k_final 3) = A (c1), B (c2), B2 (c3).
    c_init, _, _ = run_w(context_source="c_init")
    act, _, _ = run_w(context_source="activated")
    assert c_init.detail(EcphoryDetail).context_chunk_ids == [1, 5]
    assert act.detail(EcphoryDetail).context_chunk_ids == [1, 2]
    assert [(r.chunk_id, r.source) for r in act.ranked] == [
        (1, "activated"), (2, "activated"), (3, "activated"), (5, "c_assoc"), (0, "c_direct"),
        (4, "dense-tail")]
    assert act.ranked[1].why.startswith("E_final #2: engram 'Brennick Mill'")
    assert [e.engram_id for e in act.detail(EcphoryDetail).final] == [A, B, B2]


def test_fused_ranking_by_hand():
    # E_all (moving, depth 2) = A c1, D c5 (cue), B c2, B2 c3 (round 1), C c4 (round 2). Activation
    # ranking by each chunk's best engram similarity: c1 (A 1.0), c2 (B .8), c3 (B2 .6), c4 (C .3),
    # c5 (D 0); c0 not activated → rank 6 (just past the end). Dense: c0, c2, c5, c3, c1, c4.
    # 1/(60+a) + 1/(60+d): c2 2/62; c1 1/61+1/65; c0 1/66+1/61; c3 1/63+1/64; c5 1/65+1/63; c4 1/64+1/66
    trace, _, _ = run_w(context_source="fused", fusion_k=60)
    assert [r.chunk_id for r in trace.ranked] == [2, 1, 0, 3, 5, 4]
    assert trace.detail(EcphoryDetail).context_chunk_ids == [2, 1]
    assert [r.source for r in trace.ranked] == ["fused", "fused", "similarity", "fused", "fused", "fused"]
    assert "round 1" in trace.ranked[0].why and "similarity rank 2" in trace.ranked[0].why
    # a round-2 activation (C's chunk 4) is in the ranking on activation's word, not on similarity alone
    assert "round 2" in trace.ranked[5].why


def test_fuse_ranks_treats_a_missing_id_as_just_past_the_end():
    assert ecphory.fuse_ranks([[7], [3, 7]], 1) == [(7, 1 / 2 + 1 / 3), (3, 1 / 3 + 1 / 2)]
    got = dict(ecphory.fuse_ranks([[1, 2], [3, 1, 2]], 60))
    assert got[3] == pytest.approx(1 / 63 + 1 / 61) and got[1] == pytest.approx(1 / 61 + 1 / 62)


def test_context_differs_from_dense_retrieval_when_activation_points_elsewhere():
    trace, memory, ctx = run_w()
    d = dense.retrieve(ctx)
    assert d.ranked_ids()[:2] == [0, 2]
    assert trace.detail(EcphoryDetail).context_chunk_ids == [1, 5]
    assert d.ranked_ids().index(1) == 4  # the chunk EcphoryRAG reads first is dense's 5th


def test_context_chunk_texts_are_in_the_trace_and_json_round_trips():
    trace, memory, _ = run_w(context_chunks=4, context_source="activated")
    for cid in trace.detail(EcphoryDetail).context_chunk_ids:
        assert trace.chunk(cid) is not None and trace.chunk(cid).text == memory.chunks[cid].text
    again = Trace.from_json(trace.to_json())
    assert again == trace
    assert again.detail(EcphoryDetail).rounds[1].new[0].origin == "semantic"


def test_subgraph_and_steps_tell_the_story():
    trace, _, _ = run_w()
    nodes = {n.id: n for n in trace.nodes}
    assert nodes["q"].kind == "query" and nodes["cue:0"].label == "Lantern Guild"
    harrow = nodes["e:harrow river"]
    assert (harrow.round, harrow.role, harrow.group) == (2, "semantic", "place")
    assert harrow.score == pytest.approx(.3, abs=1e-3)
    assert nodes["e:lantern guild"].role == "cue"
    edges = {(e.source, e.target, e.role) for e in trace.edges if e.kind == "activation"}
    assert {("q", "e:ada brennick", "query"), ("cue:0", "e:lantern guild", "cue"),
            ("e:ada brennick", "e:brennick mill", "semantic"),
            ("e:brennick mill", "e:harrow river", "semantic")} <= edges
    ids = {e.id for e in trace.edges}
    assert len(ids) == len(trace.edges)
    for step in trace.steps:
        assert set(step.node_ids) <= set(nodes) and set(step.edge_ids) <= ids
    round2 = trace.steps[3]
    assert "e:harrow river" in round2.node_ids and "e:brennick mill" in round2.node_ids  # new + seed
    assert [n for n in trace.steps[-1].node_ids] == ["c:1", "c:5"]
    assert not any("capped" in f for f in trace.flags)


def test_subgraph_is_capped_with_final_entities_kept():
    # one chunk with a seed and 400 co-occurring entities, all activated by graph expansion
    chunks = [("hub", vec(d0=1.0)), ("other", vec(d1=1.0))]
    engrams = [("Hub", "place", "hub", 0, vec(d0=1.0))]
    engrams += [(f"Member {i}", "person", "m", 0, vec(d0=.5 - i / 1000, d1=.8)) for i in range(400)]
    memory = make_memory(chunks, engrams)
    ctx = QueryContext(memory, cue_llm(), embedder(), QUESTION)
    trace = ecphory.retrieve(ctx, EcphoryParams(k_initial=1, rounds=1, graph_neighbours=400, k_final=5))
    # round 1: the centroid's 3 nearest (centroid = Hub = d0) are Hub, Member 0, Member 1 (largest d0
    # part); graph expansion brings the other 398 members
    rnd = trace.detail(EcphoryDetail).rounds[0]
    assert rnd.new_counts == {"semantic": 2, "graph": 398}
    assert [e.name for e in rnd.new[:3]] == ["Member 0", "Member 1", "Member 2"]
    assert [e.origin for e in rnd.new[1:3]] == ["semantic", "graph"]
    assert len(rnd.new) == ecphory.NEW_LISTED
    assert "round 1 newly activated 400 engrams; the trace lists the first 200" in trace.flags
    final = trace.detail(EcphoryDetail).final
    assert [e.name for e in final] == ["Hub", "Member 0", "Member 1", "Member 2", "Member 3"]
    assert len(trace.nodes) <= SUBGRAPH_CAP
    assert any("subgraph capped" in f for f in trace.flags)
    drawn = {n.id for n in trace.nodes}
    assert {f"e:{e.key}" for e in trace.detail(EcphoryDetail).final} <= drawn


def test_memory_without_engrams_uses_direct_chunks():
    memory = make_memory(W_CHUNKS, [])
    trace = ecphory.retrieve(QueryContext(memory, cue_llm("Lantern Guild"), embedder(), QUESTION), w_params())
    assert any("no engrams" in f for f in trace.flags)
    assert trace.detail(EcphoryDetail).context_chunk_ids == [0, 2] and trace.detail(EcphoryDetail).final == []
    assert trace.detail(EcphoryDetail).rounds[0].note.startswith("round 1 not run")


def test_default_fusion_k_lets_the_head_of_either_ranking_lead():
    # World W with the chunk vectors moved so dense ranks c0 .95, c2 .9, c3 .8, c5 .7, c4 .5, c1 .2;
    # activation is unchanged (c1 1, c2 2, c3 3, c4 4, c5 5, c0 past the end: 6). With the default
    # k 5: c2 2/7; c1 1/6 + 1/11 = c0 (tie, activation's first); c3 2/8; c4 1/9 + 1/10 = c5.
    # With k 60 c3 (3, 3) would beat c1 (1, 6): 2/63 > 1/61 + 1/66, and take c1's context slot.
    chunks = [(t, v) for t, v in W_CHUNKS]
    chunks[1] = ("Brennick family", vec(d0=.2, d5=.98))
    chunks[3] = ("The quay", vec(d0=.8, d7=.6))
    chunks[4] = ("Harrow river", vec(d0=.5, d4=.866))
    chunks[5] = ("Lantern Guild hall", vec(d0=.7, d5=.714))
    ctx = QueryContext(make_memory(chunks, W_ENGRAMS), cue_llm("Lantern Guild"),
                       embedder(**{"Lantern Guild": vec(d3=1.0)}), QUESTION)
    trace = ecphory.retrieve(ctx, w_params(context_source="fused", fusion_k=EcphoryParams().fusion_k))
    assert EcphoryParams().fusion_k == 5
    assert [r.chunk_id for r in trace.ranked] == [2, 1, 0, 3, 4, 5]
    assert trace.detail(EcphoryDetail).context_chunk_ids == [2, 1]


def test_bad_parameters_are_refused_by_name():
    memory = make_memory(W_CHUNKS, W_ENGRAMS)
    ctx = QueryContext(memory, cue_llm(), embedder(), QUESTION)
    with pytest.raises(ValueError, match="k_initial.*seed_policy"):
        ecphory.retrieve(ctx, EcphoryParams(k_initial=0, seed_policy="sideways"))
    with pytest.raises(ValueError, match="unknown EcphoryParams"):
        ask(memory, QUESTION, llm=cue_llm(), embedder=embedder(), methods=["ecphory"],
            params={"ecphory": {"k_intial": 3}})


# ---------------------------------------------------------------- through memrag.ask
def test_ask_end_to_end_gives_facts_and_context_to_the_answer_step():
    memory = make_memory(W_CHUNKS, W_ENGRAMS)
    llm = ScriptedLLM({"query.entities": [{"entities": ["Lantern Guild"]}],
                       "answer": [{"reasoning": "the guild hall passage", "answer": "Brennick Mill.", "cited": [2]}]})
    (trace,) = ask(memory, QUESTION, llm=llm, embedder=embedder(**{"Lantern Guild": vec(d3=1.0)}),
                   methods=["ecphory"], params={"ecphory": w_params()})
    assert trace.answer.answer == "Brennick Mill"
    assert trace.answer.context_chunk_ids == trace.detail(EcphoryDetail).context_chunk_ids == [1, 5]
    # passage [2] is chunk 5: the citation maps passage numbers to chunk ids (raw numbers would say 2)
    assert trace.answer.cited_chunk_ids == [5]
    prompt = llm.calls[-1]["messages"][-1]["content"]
    facts = ["Ada Brennick (person): baker who owned the mill", "Brennick Mill (place): a water mill",
             "Old Quay (place): a quay"]
    for n, line in enumerate(facts, start=1):
        assert f"F{n}. {line}" in prompt
    assert "[1] Brennick family" in prompt and "[2] Lantern Guild hall" in prompt
    assert "[3]" not in prompt
    # the facts come after the passages, so the answer step reads the passages first
    assert prompt.index("[2] Lantern Guild hall") < prompt.index("Facts from the memory:") < prompt.index("F1.")
    assert [c["stage"] for c in llm.calls] == ["query.entities", "answer"]


@pytest.mark.skipif(importlib.util.find_spec("memrag.methods.neuropath") is None,
                    reason="memrag/methods/neuropath.py is not written yet")
def test_neuropath_and_ecphory_share_one_query_entity_call():
    memory = make_memory(W_CHUNKS, W_ENGRAMS)
    stop = {"reasoning_chain": "", "valid_ids": [], "expansion_requirement": "", "expand_ids": [], "continue": 0}
    llm = ScriptedLLM({"query.entities": [{"entities": ["Lantern Guild"]}],
                       "neuropath": lambda messages, stage: stop,
                       "answer": lambda messages, stage: {"reasoning": "", "answer": "x", "cited": []}})
    traces = ask(memory, QUESTION, llm=llm, embedder=embedder(**{"Lantern Guild": vec(d3=1.0)}),
                 methods=["neuropath", "ecphory"], params={"ecphory": w_params()})
    assert [c["stage"] for c in llm.calls].count("query.entities") == 1
    for t in traces:
        shared = [c for c in t.llm_calls if c.stage == "query.entities"]
        assert len(shared) == 1 and shared[0].shared
    assert traces[1].detail(EcphoryDetail).cue_hits == {"Lantern Guild": [D]}


def test_the_old_name_of_rounds_is_still_read():
    """EcphoryRAG's rounds were called depth: parameter files, CLI JSON and old run folders say so."""
    from memrag.ask import resolve_params

    assert resolve_params("ecphory", {"depth": 1}) == EcphoryParams(rounds=1)
    assert resolve_params("ecphory", {"rounds": 0, "k_final": 3}) == EcphoryParams(rounds=0, k_final=3)
    with pytest.raises(ValueError, match="both 'depth'"):
        resolve_params("ecphory", {"depth": 1, "rounds": 2})


def test_what_the_rounds_added_is_counted_from_the_trace():
    from memrag.methods.ecphory.activation import RoundsAdded, rounds_added, rounds_added_sentence
    from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail

    def a(i, key, rnd, origin, sim):
        return ActivatedEngram(i, key, key, "t", "", i, sim, rnd, origin)

    q1, q2, c1, c2 = a(1, "q1", 0, "query", .9), a(2, "q2", 0, "query", .8), a(3, "c1", 0, "cue", .3), \
        a(4, "c2", 0, "cue", .2)
    s1 = a(5, "s1", 1, "semantic", .5)
    d = EcphoryDetail(initial=[q1, q2, c1, c2], final=[q1, q2, s1, c1])
    # without the rounds E_final would be q1, q2, c1, c2: s1 took c2's place
    assert rounds_added(d) == RoundsAdded(recalled=4, from_rounds=1, displaced=1, above_a_query_hit=0)
    said = rounds_added_sentence(rounds_added(d))
    assert "1 of the 4 recalled engrams" in said and "in place of 1 initially" in said and "none can" in said
    # a re-rank that put a round engram above a query hit (not the paper's algorithm) is said, not hidden
    odd = EcphoryDetail(initial=[q1, q2], final=[q1, s1, q2])
    assert rounds_added(odd).above_a_query_hit == 1
    assert "1 of them rank above an initial query hit" in rounds_added_sentence(rounds_added(odd))
    assert rounds_added(EcphoryDetail(initial=[q1], final=[q1])).from_rounds == 0
