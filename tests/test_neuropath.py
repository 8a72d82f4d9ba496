"""NeuroPath retrieval on a small hand-built memory whose vectors are chosen by hand,
so seeds, coreference sets, pruning scores and the dense completion can be worked out
on paper (the expected values below are derived in the comments).

World (16-d vectors, e(i) = the i-th unit vector):
  chunks c0..c7 have vectors e(0)..e(7).
  triples (id: fact, chunk, vector):
    t0 Ada Brennick → born in → Port Alder        c0  0.9 e0 + 0.43589 e1
    t1 A. Brennick → founded → Brennick Bakery    c1  0.5 e0 + 0.86603 e2
    t2 Port of Alder → lies on → Vell River       c2  e1
    t3 Port Alder → hosts → Salt Fair             c3  e4
    t4 Vell River → flows into → Grey Sea         c4  e5
    t5 Brennick Bakery → sells → Rye Bread        c5  e6
    t6 Miro Tann → painted → Grey Sea             c6  e7
    t7 Ada Brennick → married → Olen Vask         c7  0.2 e0 + 0.9798 e3
    t8 Ada Brennick → born in → Port Alder        c3  (same fact as t0, another chunk)
  entity names: "ada brennick" e0; "a brennick" 0.85 e0 + 0.52678 e1 (cosine 0.85 to Ada);
    "port alder" e2; "port of alder" 0.9 e2 + 0.43589 e3 (cosine 0.9); the rest one-hot.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.methods.neuropath.params import NeuroPathParams
from memrag.index.readers import Document
from memrag.index.memory import ChunkRow, DocRow, EngramRow, Memory, TripleRow
from memrag.methods.neuropath import picture, search as neuropath
from memrag.methods.base import EmptyMemoryError, QueryContext
from memrag.methods.neuropath.paths import strip_path_refs, verbatim_keys
from memrag.index.normalise import entity_key
from memrag.eval.gold import gold_fate
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail
from scripted import HashEmbedder, LLMUnavailable, ScriptedLLM

DIM = 16
Q = "Which sea does the river by Ada Brennick's birthplace flow into?"
CHAIN1 = "Path 1 says Ada Brennick was born in Port Alder."
REQ1 = "the river that Port Alder lies on"
CHAIN2 = "Ada Brennick was born in Port Alder (path 1), which lies on the Vell River per paths 2 and 1."
REQ2 = "what the Vell River flows into"


def e(*pairs: tuple[int, float]) -> list[float]:
    v = [0.0] * DIM
    for i, x in pairs:
        v[i] = x
    return v


def unit(i: int) -> list[float]:
    return e((i, 1.0))


CHUNKS = [
    ("Ada Brennick", "Ada Brennick was born in Port Alder."),
    ("Brennick Bakery", "A. Brennick founded Brennick Bakery."),
    ("Port of Alder", "The Port of Alder lies on the Vell River."),
    ("Salt Fair", "Port Alder hosts the Salt Fair. Ada Brennick was born in Port Alder."),
    ("Vell River", "The Vell River flows into the Grey Sea."),
    ("Rye", "Brennick Bakery sells rye bread."),
    ("Miro Tann", "Miro Tann painted the Grey Sea."),
    ("Olen Vask", "Ada Brennick married Olen Vask."),
]
TRIPLES = [
    ("Ada Brennick", "born in", "Port Alder", 0, e((0, 0.9), (1, 0.43589))),
    ("A. Brennick", "founded", "Brennick Bakery", 1, e((0, 0.5), (2, 0.86603))),
    ("Port of Alder", "lies on", "Vell River", 2, unit(1)),
    ("Port Alder", "hosts", "Salt Fair", 3, unit(4)),
    ("Vell River", "flows into", "Grey Sea", 4, unit(5)),
    ("Brennick Bakery", "sells", "Rye Bread", 5, unit(6)),
    ("Miro Tann", "painted", "Grey Sea", 6, unit(7)),
    ("Ada Brennick", "married", "Olen Vask", 7, e((0, 0.2), (3, 0.9798))),
    ("Ada Brennick", "born in", "Port Alder", 3, e((0, 0.9), (1, 0.43589))),
]
ENTITY_VECS = {
    "ada brennick": unit(0), "a brennick": e((0, 0.85), (1, 0.52678)),
    "port alder": unit(2), "port of alder": e((2, 0.9), (3, 0.43589)),
    "vell river": unit(4), "salt fair": unit(5), "grey sea": unit(6), "brennick bakery": unit(7),
    "rye bread": unit(8), "miro tann": unit(9), "olen vask": unit(10),
}
TYPES = {"ada brennick": "person", "a brennick": "person", "miro tann": "person", "olen vask": "person",
         "brennick bakery": "organisation", "salt fair": "event"}


def _norm(v: list[float]) -> np.ndarray:
    a = np.asarray(v, np.float32)
    return a / np.linalg.norm(a)


def world() -> Memory:
    m = Memory("hash-test", DIM)
    for i, (title, text) in enumerate(CHUNKS):
        m.documents.append(DocRow(f"d{i}", title, text, "test", "sample"))
        m.chunks.append(ChunkRow(i, f"d{i}", 0, title, text))
    for tid, (h, r, t, c, _) in enumerate(TRIPLES):
        m.triples.append(TripleRow(tid, entity_key(h), h, r, entity_key(t), t, c))
        for name in (h, t):
            k = entity_key(name)
            m.engrams.append(EngramRow(len(m.engrams), k, name, TYPES.get(k, "place"), "", 3, c))
    m.rebuild_derived()
    m.entity_vecs = np.vstack([_norm(ENTITY_VECS[n.key]) for n in m.entities])
    m.triple_vecs = np.vstack([_norm(v) for *_, v in TRIPLES])
    m.chunk_vecs = np.vstack([_norm(unit(i)) for i in range(len(CHUNKS))])
    m.engram_vecs = np.zeros((len(m.engrams), DIM), np.float32)
    m._indices.clear()
    return m


# The completion query after hop 2 points mostly at c4, then c6, c2, c0 (cosines ∝ 0.9, 0.3, 0.2, 0.1).
DE2 = f"{Q} {CHAIN2} {REQ2}"
DE1 = f"{Q} {CHAIN1} {REQ1}"
OVERRIDES = {
    Q: unit(0), "Ada Brennick": unit(0), REQ1: unit(1),
    DE2: e((0, 0.1), (2, 0.2), (4, 0.9), (6, 0.3)),
    DE1: e((3, 1.0)),
    "Zed Unknown": e((0, 0.5), (15, 0.8660254)),
    "river": unit(4),  # a class word as close to the Vell River node as a name can be (1.0)
    "Port Alder": unit(2),  # its nearest node, then 'Port of Alder' (.9): a longer name of the same place
}


def r1(**kw) -> dict:
    return {"reasoning_chain": CHAIN1, "valid_ids": [1, 7], "expansion_requirement": REQ1,
            "expand_ids": [1, 9], "continue": 1, **kw}


def r2(**kw) -> dict:
    return {"reasoning_chain": CHAIN2, "valid_ids": [2, 1, 2], "expansion_requirement": REQ2,
            "expand_ids": [1, 2], "continue": 1, **kw}


def run(params: NeuroPathParams, hop1=None, hop2=None, entities=None, memory=None, question=Q):
    llm = ScriptedLLM({
        # `entities`: one reply, or a list of replies (a failing call is tried twice).
        "query.entities": (list(entities) if isinstance(entities, list)
                           else [entities if entities is not None else {"entities": ["Ada Brennick"]}]),
        "neuropath.track.hop1": list(hop1 if hop1 is not None else [r1()]),
        "neuropath.track.hop2": list(hop2 if hop2 is not None else [r2()]),
    })
    ctx = QueryContext(memory or world(), llm, HashEmbedder(DIM, OVERRIDES), question)
    return neuropath.retrieve(ctx, params), llm


def user_prompt(llm: ScriptedLLM, stage: str) -> str:
    return next(c for c in llm.calls if c["stage"] == stage)["messages"][-1]["content"]


def by_pid(trace: Trace, hop: int) -> dict:
    return {p.pid: p for p in trace.detail(NeuroPathDetail).hops[hop - 1].candidates}


# ---------------------------------------------------------------- seeds and hop 1
def test_seeds_and_coref_members_follow_the_query_time_threshold():
    t, _ = run(NeuroPathParams(prune_top=2))
    (seed,) = t.detail(NeuroPathDetail).seeds
    assert (seed.query_entity, seed.key, seed.accepted) == ("Ada Brennick", "ada brennick", True)
    assert seed.similarity == pytest.approx(1.0, abs=1e-5)
    assert [(m.key, round(m.similarity, 3)) for m in seed.coref] == [("a brennick", 0.85)]
    # Hop 1 from {ada brennick, a brennick}: t0, t7 (t8 repeats t0's text: the first is kept), t1.
    h1 = by_pid(t, 1)
    assert {pid: p.text for pid, p in h1.items()} == {
        "h1.1": "Ada Brennick → born in → Port Alder",
        "h1.2": "Ada Brennick → married → Olen Vask",
        "h1.3": "A. Brennick → founded → Brennick Bakery",
    }
    assert [(p.frontier, p.chunk_ids) for p in h1.values()] == [
        ("port alder", [0]), ("olen vask", [7]), ("brennick bakery", [1])]

    t90, _ = run(NeuroPathParams(prune_top=2, coref_threshold=0.9))
    assert t90.detail(NeuroPathDetail).seeds[0].coref == []
    assert [p.text for p in t90.detail(NeuroPathDetail).hops[0].candidates] == [
        "Ada Brennick → born in → Port Alder", "Ada Brennick → married → Olen Vask"]


def test_pruning_keeps_the_paths_closest_to_the_question():
    t, llm = run(NeuroPathParams(prune_top=2))
    h1 = by_pid(t, 1)
    # Path vector = its triple vector here; the question is e0: scores 0.9, 0.2, 0.5.
    assert [round(h1[p].score, 3) for p in ("h1.1", "h1.2", "h1.3")] == [0.9, 0.2, 0.5]
    assert [h1[p].rank for p in ("h1.1", "h1.2", "h1.3")] == [1, 3, 2]
    assert h1["h1.2"].fate == "pruned" and h1["h1.2"].listed_as is None
    hop = t.detail(NeuroPathDetail).hops[0]
    assert (hop.new_count, hop.pruned_count, hop.goal) == (3, 1, Q)
    prompt = user_prompt(llm, "neuropath.track.hop1")
    assert "1: Ada Brennick → born in → Port Alder   [expandable at: Port Alder]" in prompt
    assert "2: A. Brennick → founded → Brennick Bakery   [expandable at: Brennick Bakery]" in prompt
    assert "Olen Vask" not in prompt and "\n3:" not in prompt


def test_invalid_ids_are_ignored_and_counted():
    t, _ = run(NeuroPathParams(prune_top=2))
    h1, h2 = t.detail(NeuroPathDetail).hops
    assert (h1.valid_ids, h1.expand_ids, h1.invalid_ids) == ([1], [1], [7, 9])
    # Hop 2: valid [2, 1, 2] → [2, 1]; expand 1 names a kept (not expandable) path → counted.
    assert (h2.valid_ids, h2.expand_ids, h2.invalid_ids) == ([2, 1], [2], [1])


# ---------------------------------------------------------------- hop 2
def test_hop2_grows_through_the_frontiers_coreference_set_and_relists_kept_paths():
    t, llm = run(NeuroPathParams(prune_top=2))
    h2 = by_pid(t, 2)
    # h1.1's frontier is port alder; its coreference set {port of alder} brings t2; t3 touches
    # port alder itself; t8 repeats the fact already on the path and is not re-used.
    assert {pid: (p.text, p.frontier, p.parent, p.kept_from) for pid, p in h2.items()} == {
        "h1.1@h2": ("Ada Brennick → born in → Port Alder", "port alder", "h1.1", 1),
        "h2.1": ("Ada Brennick → born in → Port Alder; Port Alder → hosts → Salt Fair", "salt fair", "h1.1", None),
        "h2.2": ("Ada Brennick → born in → Port Alder; Port of Alder → lies on → Vell River",
                 "vell river", "h1.1", None),
    }
    # Goal = hop 1's requirement (e1): (t0+t2)·e1/|t0+t2| = 1.43589/1.69466; (t0+t3): 0.43589/√2.
    assert h2["h2.2"].score == pytest.approx(1.43589 / math.hypot(0.9, 1.43589), abs=1e-4)
    assert h2["h2.1"].score == pytest.approx(0.43589 / math.sqrt(2), abs=1e-4)
    assert t.detail(NeuroPathDetail).hops[1].goal == REQ1
    prompt = user_prompt(llm, "neuropath.track.hop2")
    assert "Hop 2." in prompt
    assert "1: Ada Brennick → born in → Port Alder   [kept from hop 1]" in prompt
    assert ("2: Ada Brennick → born in → Port Alder; Port of Alder → lies on → Vell River   "
            "[expandable at: Vell River]") in prompt
    assert "3: Ada Brennick → born in → Port Alder; Port Alder → hosts → Salt Fair   [expandable at: Salt Fair]" in prompt
    # The official shape: the question and the paths, nothing carried (hop_prompt="carry" is tested below)
    assert "So far" not in prompt and "Still missing" not in prompt and "Path 1" not in prompt
    # Fates after the last judgement; hop 1's path was valid (and expanded).
    assert [(p.pid, p.fate) for p in t.detail(NeuroPathDetail).hops[1].candidates] == [
        ("h1.1@h2", "valid"), ("h2.1", "dropped"), ("h2.2", "valid")]
    assert {p.pid: p.fate for p in t.detail(NeuroPathDetail).hops[0].candidates} == {
        "h1.1": "valid", "h1.2": "pruned", "h1.3": "dropped"}
    assert t.detail(NeuroPathDetail).stop_reason == "max_hops reached"


def test_hop2_expansion_without_the_coreference_link():
    t, _ = run(NeuroPathParams(prune_top=2, coref_threshold=0.95))
    assert [p.text for p in t.detail(NeuroPathDetail).hops[1].candidates if p.kept_from is None] == [
        "Ada Brennick → born in → Port Alder; Port Alder → hosts → Salt Fair"]


def test_hop2_prunes_new_paths_by_the_requirement_but_never_kept_ones():
    # prune_top=1: hop 1 keeps h1.1 only; hop 2 keeps the better extension (h2.2, 0.847 > 0.308).
    reply2 = r2(valid_ids=[2], expand_ids=[], **{"continue": 0})
    t, llm = run(NeuroPathParams(prune_top=1), hop2=[reply2])
    h2 = by_pid(t, 2)
    assert h2["h2.1"].fate == "pruned" and h2["h2.2"].listed_as == 2
    assert h2["h1.1@h2"].listed_as == 1 and h2["h1.1@h2"].score is None
    assert t.detail(NeuroPathDetail).hops[1].pruned_count == 1
    assert "Salt Fair" not in user_prompt(llm, "neuropath.track.hop2")


def test_hop_prompt_carries_the_chain_or_is_the_official_shape():
    _, carried = run(NeuroPathParams(prune_top=1, hop_prompt="carry"))
    assert NeuroPathParams().hop_prompt == "paths"
    prompt = user_prompt(carried, "neuropath.track.hop2")
    assert "So far: A path says Ada Brennick was born in Port Alder." in prompt  # path numbers stripped
    assert f"Still missing: {REQ1}" in prompt
    _, official = run(NeuroPathParams(prune_top=1))
    prompt = user_prompt(official, "neuropath.track.hop2")
    assert "born in Port Alder." not in prompt and REQ1 not in prompt and "So far" not in prompt
    assert prompt.startswith(f"Question: {Q}\nHop 2.\nPaths:\n")
    # hop 1's prompt is the same either way
    assert user_prompt(carried, "neuropath.track.hop1") == user_prompt(official, "neuropath.track.hop1")


def test_a_hop_that_repeats_the_previous_chain_and_requirement_is_flagged():
    copied = r2(reasoning_chain=CHAIN1, expansion_requirement=REQ1, **{"continue": 0})
    t, _ = run(NeuroPathParams(prune_top=1, hop_prompt="carry"), hop2=[copied])
    assert "hop 2 repeated hop 1's reasoning chain and expansion requirement word for word " \
           "(both were in its prompt)" in t.flags
    t, _ = run(NeuroPathParams(prune_top=1, hop_prompt="paths"), hop2=[copied])
    assert "hop 2 repeated hop 1's reasoning chain and expansion requirement word for word" in t.flags
    t, _ = run(NeuroPathParams(prune_top=1, hop_prompt="carry"), hop2=[r2(reasoning_chain=CHAIN1, **{"continue": 0})])
    assert not any("repeated" in f for f in t.flags)  # a new requirement is not a copy


def test_class_words_seed_nothing_when_asked():
    from memrag.methods.neuropath.search import is_class_word

    assert [is_class_word(x) for x in ("country", "city of birth", "Germany", "US", "de Niro", "1904", "東京")] \
        == [True, True, False, False, False, False, False]
    assert NeuroPathParams().skip_class_words is True
    t, _ = run(NeuroPathParams(prune_top=2), entities={"entities": ["Ada Brennick", "river"]})
    seeds = {s.query_entity: s.accepted for s in t.detail(NeuroPathDetail).seeds}
    assert seeds["Ada Brennick"] is True and seeds["river"] is False
    river = t.detail(NeuroPathDetail).seeds[1]
    assert river.key == "vell river" and river.similarity > NeuroPathParams().seed_floor  # not the floor's doing
    assert "1 written in lower case, a kind of thing rather than an entity: 'river'" in t.steps[0].summary
    t, _ = run(NeuroPathParams(prune_top=2, skip_class_words=False), entities={"entities": ["Ada Brennick", "river"]})
    assert all(s.accepted for s in t.detail(NeuroPathDetail).seeds)  # the same floor, the skip off
    t, _ = run(NeuroPathParams(prune_top=2, skip_class_words=False, seed_floor=0.0),
               entities={"entities": ["Ada Brennick", "river"]})
    assert all(s.accepted for s in t.detail(NeuroPathDetail).seeds)  # the paper's seeding


# ---------------------------------------------------------------- completion
def test_dp_in_valid_order_then_dense_completion_minus_dp():
    t, _ = run(NeuroPathParams(prune_top=2, dp_position="first"))
    d = t.detail(NeuroPathDetail)
    # Valid [2, 1]: h2.2 brings c0, c2; the kept h1.1 brings c0 again (deduplicated).
    assert d.dp_chunk_ids == [0, 2]
    assert d.de_query == DE2
    # Completion cosines: c4 .9 > c6 .3 > c2 .2 > c0 .1 > c1 = c3 = c5 = c7 = 0 (stable order).
    assert t.ranked_ids() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert [r.source for r in t.ranked] == ["path"] * 2 + ["completion"] * 6
    assert [r.rank for r in t.ranked] == list(range(8))
    assert t.ranked[0].why.startswith("path 2 of hop 2 (valid #1): Ada Brennick → born in → Port Alder; Port of")
    assert t.ranked[2].why == "completion (dense on question + chain + requirement), rank 1"
    assert t.ranked[4].why.endswith("rank 5")


def test_dp_interleaved_with_completion():
    t, _ = run(NeuroPathParams(prune_top=2, dp_position="interleave"))
    # completion c4, c6, c1, c3, c5, c7 (D_e minus D_p) alternating with D_p c0, c2, completion first
    assert t.ranked_ids() == [4, 0, 6, 2, 1, 3, 5, 7]
    assert [r.source for r in t.ranked] == ["completion", "path", "completion", "path"] + ["completion"] * 4
    assert [r.rank for r in t.ranked] == list(range(8))
    assert "dp_position=interleave" in t.steps[-1].summary
    after, _ = run(NeuroPathParams(prune_top=2, dp_position="after_head", dp_head=1))
    assert after.ranked_ids() == [4, 0, 2, 6, 1, 3, 5, 7]


def test_dp_fused_by_evidence_with_the_completion_rank():
    # k = 10; path order c0, c2 (a chunk no valid path carries counts as rank 3); completion
    # order c4, c6, c2, c0, c1, c3, c5, c7. c4: 1/13 + 1/11 = .1678; c0: 1/11 + 1/14 = .1623;
    # c2: 1/12 + 1/13 = c6: 1/13 + 1/12 = .1603 (tie: D_p's order of appearance first); c1: 1/13 + 1/15 ...
    t, _ = run(NeuroPathParams(prune_top=2, dp_position="fused", dp_fusion_k=10))
    assert NeuroPathParams().dp_position == "fused"
    assert t.ranked_ids() == [4, 0, 2, 6, 1, 3, 5, 7]
    assert [r.source for r in t.ranked] == ["completion", "path", "path"] + ["completion"] * 5
    assert t.ranked[1].why.endswith("; completion rank 4")
    assert "dp_position=fused" in t.steps[-1].summary
    t1, _ = run(NeuroPathParams(prune_top=2, dp_position="fused", dp_fusion_k=1))
    # k = 1: c0 1/2 + 1/5 = .70, c4 1/4 + 1/2 = .75, c2 1/3 + 1/4 = .583, c6 1/4 + 1/3 = .583
    assert t1.ranked_ids()[:4] == [4, 0, 2, 6]
    with pytest.raises(ValueError, match="dp_fusion_k"):
        run(NeuroPathParams(dp_position="fused", dp_fusion_k=0))


def test_fused_never_buries_a_kept_pick_below_completions_head():
    # The CARICOM shape (MuSiQue): the tracker keeps one path; completion ranks its passage 19th.
    # Fusion alone gives every other chunk the one-item path list's "past the end" score 1/(k + 2),
    # so completion's first ten outranked the pick (rank 11 here, 19 in the real run). A kept pick
    # ranks no lower than after_head puts it: after completion's first dp_head (2) chunks.
    from memrag.methods.neuropath.search import fuse_dp
    from memrag.trace import RankedChunk

    def chunks(completion_order, picks):
        dp = [RankedChunk(c, 0, None, "path", f"path {i}") for i, c in enumerate(picks, start=1)]
        de = [RankedChunk(c, 0, 0.5, "completion", "completion") for c in completion_order if c not in picks]
        return dp, de

    completion_order = list(range(100, 118)) + [7] + list(range(118, 130))
    fused = fuse_dp(*chunks(completion_order, [7]), completion_order, k=5)
    assert [x.chunk_id for x in fused] == [100, 101, 7] + [c for c in completion_order if c not in (7, 100, 101)]
    assert fused[2].why.endswith("lifted to rank 3 (a kept path's chunk ranks no lower than after_head)")
    fused = fuse_dp(*chunks(completion_order, [7]), completion_order, k=5, head=0)
    assert fused[0].chunk_id == 7
    # Fusion still lifts above the floor: a pick completion ranks 2nd leads; the second pick (completion
    # rank 19) may take index 3 at the latest and does.
    order = [100, 5] + list(range(101, 117)) + [7] + list(range(117, 130))
    fused = [x.chunk_id for x in fuse_dp(*chunks(order, [5, 7]), order, k=5)]
    assert fused[:4] == [5, 100, 101, 7]
    # floor=False is fusion alone (the merge before 2026-12-02, for replaying runs made then): the
    # lone pick falls below completion's head, past the chunks that share the path list's end score
    alone = [x.chunk_id for x in fuse_dp(*chunks(completion_order, [7]), completion_order, k=5, floor=False)]
    assert sorted(alone) == sorted(completion_order) and alone.index(7) > 2
    assert "lifted" not in " ".join(x.why for x in fuse_dp(*chunks(completion_order, [7]), completion_order,
                                                            k=5, floor=False))


def test_completion_off_gives_dp_alone():
    t, _ = run(NeuroPathParams(prune_top=2, completion=False))
    assert t.ranked_ids() == [0, 2]
    assert [s.kind for s in t.steps] == ["seeds", "hop", "hop", "completion"]


def test_no_pruning_caps_the_listing_and_flags_it():
    t, llm = run(NeuroPathParams(prune_top=None, max_listed=2, max_hops=1))
    h1 = by_pid(t, 1)
    assert {p: h1[p].fate for p in h1} == {"h1.1": "valid", "h1.2": "unlisted", "h1.3": "dropped"}
    assert t.detail(NeuroPathDetail).hops[0].capped and t.detail(NeuroPathDetail).hops[0].pruned_count == 0
    assert "capped at max_listed" in t.flags
    assert "Olen Vask" not in user_prompt(llm, "neuropath.track.hop1")
    # With room for all three, nothing is unlisted and no flag is raised.
    t3, llm3 = run(NeuroPathParams(prune_top=None, max_hops=1))
    assert "capped at max_listed" not in t3.flags
    assert "3: Ada Brennick → married → Olen Vask" in user_prompt(llm3, "neuropath.track.hop1")


def test_stop_reasons_and_forced_hops():
    t, llm = run(NeuroPathParams(prune_top=2), hop1=[r1(**{"continue": 0})])
    assert (t.detail(NeuroPathDetail).stop_reason, len(t.detail(NeuroPathDetail).hops)) == ("model said stop", 1)
    # expand_ids named but no expansion ran: h1.1 is valid, nothing is "expanded".
    assert {p.fate for p in t.detail(NeuroPathDetail).hops[0].candidates} == {"valid", "pruned", "dropped"}
    assert not any(c["stage"].endswith("hop2") for c in llm.calls)
    tf, _ = run(NeuroPathParams(prune_top=2, force_hops=True), hop1=[r1(**{"continue": 0})])
    assert (tf.detail(NeuroPathDetail).stop_reason, len(tf.detail(NeuroPathDetail).hops)) == ("max_hops reached", 2)
    tn, _ = run(NeuroPathParams(prune_top=2), hop1=[r1(expand_ids=[])])
    assert tn.detail(NeuroPathDetail).stop_reason == "no expandable paths" and len(tn.detail(NeuroPathDetail).hops) == 1


def test_expanded_fate_when_a_path_grows_without_being_valid():
    t, _ = run(NeuroPathParams(prune_top=2), hop1=[r1(valid_ids=[2], expand_ids=[1])])
    h1 = by_pid(t, 1)
    assert (h1["h1.1"].fate, h1["h1.3"].fate) == ("expanded", "valid")
    # Kept = valid ∪ expand, most helpful first: h1.3 (valid) is listed before h1.1.
    kept = [p.pid for p in t.detail(NeuroPathDetail).hops[1].candidates if p.kept_from]
    assert kept == ["h1.3@h2", "h1.1@h2"]


# ---------------------------------------------------------------- failures
def test_tracking_failure_keeps_paths_as_valid_and_runs_completion():
    t, llm = run(NeuroPathParams(prune_top=2, dp_position="first"), hop2=["not json at all", "{still not json"])
    d = t.detail(NeuroPathDetail)
    assert d.tracking_failed and d.stop_reason == "tracking failed"
    h2 = d.hops[1]
    assert h2.failed and h2.failure
    assert [c.stage for c in t.llm_calls] == ["query.entities", "neuropath.track.hop1",
                                              "neuropath.track.hop2", "neuropath.track.hop2"]
    assert h2.call_index == 2 and t.llm_calls[3].retries == 1 and not t.llm_calls[3].ok
    assert "not json at all" in t.llm_calls[3].messages[-2]["content"]  # the retry shows the bad reply
    assert {p.pid: p.fate for p in h2.candidates} == {"h1.1@h2": "valid", "h2.1": "shown", "h2.2": "shown"}
    # D_p = the kept path's chunk; completion uses hop 1's chain and requirement (DE1 → e3 → c3).
    assert d.dp_chunk_ids == [0] and d.de_query == DE1
    assert t.ranked_ids()[:2] == [0, 3] and sorted(t.ranked_ids()) == list(range(8))
    assert any(f.startswith("tracking failed at hop 2") for f in t.flags)


def test_tracking_failure_at_hop1_leaves_completion_on_the_question():
    t, _ = run(NeuroPathParams(prune_top=2), hop1=["nope", "nope again"])
    assert t.detail(NeuroPathDetail).dp_chunk_ids == [] and t.detail(NeuroPathDetail).de_query == Q
    assert t.ranked_ids() == list(range(8)) and t.ranked[0].source == "completion"
    assert {p.fate for p in t.detail(NeuroPathDetail).hops[0].candidates} == {"shown", "pruned"}


def test_no_query_entities_falls_back_to_dense():
    t, _ = run(NeuroPathParams(), entities={"entities": []})
    assert t.detail(NeuroPathDetail).fallback_dense and "fallback: no query entities" in t.flags
    assert t.ranked_ids() == list(range(8)) and {r.source for r in t.ranked} == {"dense"}
    assert t.detail(NeuroPathDetail).hops == [] and len(t.llm_calls) == 1 and t.llm_calls[0].shared
    # A failed entity call is a fallback too, with its reason.
    tf, _ = run(NeuroPathParams(), entities=["garbage", "more garbage"])
    assert tf.detail(NeuroPathDetail).fallback_dense and any(f.startswith("query-entity call failed") for f in tf.flags)


def test_seed_floor_rejects_weak_seeds_but_keeps_them_in_the_trace():
    t, llm = run(NeuroPathParams(seed_floor=0.6), entities={"entities": ["Zed Unknown"]})
    (s,) = t.detail(NeuroPathDetail).seeds
    assert (s.key, round(s.similarity, 3), s.accepted) == ("ada brennick", 0.5, False)
    assert t.detail(NeuroPathDetail).stop_reason == "no seeds" and t.detail(NeuroPathDetail).hops == []
    assert not any(c["stage"].startswith("neuropath") for c in llm.calls)
    assert t.ranked_ids() == list(range(8))  # completion on the question alone
    t0, _ = run(NeuroPathParams(prune_top=2, seed_floor=0.0), entities={"entities": ["Zed Unknown"]})
    assert t0.detail(NeuroPathDetail).seeds[0].accepted and len(t0.detail(NeuroPathDetail).hops) == 2  # the paper's
    td, _ = run(NeuroPathParams(prune_top=2), entities={"entities": ["Zed Unknown"]})  # the default floor, 0.7
    assert NeuroPathParams().seed_floor == 0.7 and not td.detail(NeuroPathDetail).seeds[0].accepted
    assert "(1 below the similarity floor 0.7)" in td.steps[0].summary


def test_a_seed_exactly_at_the_floor_is_accepted():
    t0, _ = run(NeuroPathParams(prune_top=2, seed_floor=0.0), entities={"entities": ["Zed Unknown"]})
    at = t0.detail(NeuroPathDetail).seeds[0].similarity
    t, _ = run(NeuroPathParams(prune_top=2, seed_floor=at), entities={"entities": ["Zed Unknown"]})
    assert t.detail(NeuroPathDetail).seeds[0].accepted  # "the least cosine similarity": at it, it seeds


def test_verbatim_seeds():
    m = world()
    assert verbatim_keys("Was the Port of Alder near Port Alder or port alder?", m.entity_index) == [
        ("Port of Alder", "port of alder"), ("Port Alder", "port alder")]
    q = "Did Ada Brennick live in Port Alder?"
    t, _ = run(NeuroPathParams(verbatim_seeds=True, max_hops=1), memory=m, question=q)
    assert [(s.key, s.origin) for s in t.detail(NeuroPathDetail).seeds] == [("ada brennick", "query-entity"),
                                                              ("port alder", "verbatim")]
    assert "Port Alder → hosts → Salt Fair" in [p.text for p in t.detail(NeuroPathDetail).hops[0].candidates]
    t_off, _ = run(NeuroPathParams(max_hops=1), memory=m, question=q)
    assert [s.key for s in t_off.detail(NeuroPathDetail).seeds] == ["ada brennick"]


def test_empty_memory_is_refused():
    with pytest.raises(EmptyMemoryError):
        QueryContext(Memory("hash-test", DIM), ScriptedLLM([]), HashEmbedder(DIM), Q)


def test_backend_failure_mid_query_propagates():
    with pytest.raises(LLMUnavailable, match="went away"):
        run(NeuroPathParams(prune_top=2), hop2=[LLMUnavailable("ollama went away")])


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="prune_top"):
        run(NeuroPathParams(prune_top=0))


# ---------------------------------------------------------------- the trace
def test_trace_round_trip_and_cited_chunks():
    t, _ = run(NeuroPathParams(prune_top=2))
    assert Trace.from_json(t.to_json()) == t
    texts = {c.chunk_id: c.text for c in t.chunks}
    needed = set(t.ranked_ids()[:5]) | set(t.detail(NeuroPathDetail).dp_chunk_ids)
    hops = t.detail(NeuroPathDetail).hops
    needed |= {c for h in hops for p in h.candidates if p.fate == "valid" for c in p.chunk_ids}
    for cid in needed:
        assert texts[cid] == CHUNKS[cid][1]
    assert t.retrieval_seconds > 0
    assert t.llm_calls[0].shared and not t.llm_calls[1].shared


def test_subgraph_roles_and_steps():
    t, _ = run(NeuroPathParams(prune_top=2))
    nodes = {n.id: n for n in t.nodes}
    edges = {x.id: x for x in t.edges}
    assert (nodes["e:ada brennick"].role, nodes["e:ada brennick"].step) == ("seed", 0)
    assert (nodes["e:a brennick"].role, nodes["e:a brennick"].group) == ("coref", "person")
    assert (nodes["e:port alder"].role, nodes["e:port alder"].step) == ("frontier", 1)
    assert (nodes["e:olen vask"].role, nodes["e:port of alder"].step) == ("path", 2)
    assert edges["coref:ada brennick|a brennick"].step == 0
    assert (edges["coref:port alder|port of alder"].kind, edges["coref:port alder|port of alder"].step) == ("coref", 2)
    assert {i: edges[f"t:{i}"].role for i in (0, 1, 2, 3, 7)} == {
        0: "valid", 1: "shown", 2: "valid", 3: "shown", 7: "pruned"}
    assert (edges["t:2"].label, edges["t:2"].chunk_id) == ("lies on", 2)
    assert "t:8" not in edges
    steps = t.steps
    assert "e:port alder" in steps[1].node_ids and "e:vell river" in steps[2].node_ids
    assert "t:2" in steps[2].edge_ids and "t:0" in steps[1].edge_ids


def hub_memory(spokes: int = 400) -> Memory:
    """One hub entity linked to `spokes` others, random unit vectors (seeded)."""
    m = Memory("hash-test", DIM)
    m.documents.append(DocRow("d0", "Hub", "The hub links many spokes.", "test", "sample"))
    m.chunks.append(ChunkRow(0, "d0", 0, "Hub", "The hub links many spokes."))
    for i in range(spokes):
        m.triples.append(TripleRow(i, "hub", "Hub", "links", f"spoke {i}", f"Spoke {i}", 0))
    m.engrams = [EngramRow(0, "hub", "Hub", "place", "", 3, 0)] + [
        EngramRow(i + 1, f"spoke {i}", f"Spoke {i}", "place", "", 1, 0) for i in range(spokes)]
    m.rebuild_derived()
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(spokes + 1, DIM)).astype(np.float32)
    m.entity_vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    m.entity_vecs[0] = _norm(unit(0))
    tv = rng.normal(size=(spokes, DIM)).astype(np.float32)
    m.triple_vecs = tv / np.linalg.norm(tv, axis=1, keepdims=True)
    m.chunk_vecs = _norm(unit(0))[None, :]
    return m


def ask_hub(m: Memory, params: NeuroPathParams) -> Trace:
    reply = {"reasoning_chain": "", "valid_ids": [1], "expansion_requirement": "", "expand_ids": [], "continue": 0}
    llm = ScriptedLLM({"query.entities": [{"entities": ["Hub"]}], "neuropath.track.hop1": [reply]})
    q = "What does the hub link?"
    return neuropath.retrieve(QueryContext(m, llm, HashEmbedder(DIM, {"Hub": unit(0), q: unit(1)}), q), params)


def test_subgraph_cap_leaves_out_pruned_paths_of_a_hub():
    m = hub_memory()
    t = ask_hub(m, NeuroPathParams(prune_top=5, coref_threshold=0.99))
    assert len(t.nodes) == 6 and len([x for x in t.edges if x.kind == "triple"]) == 5
    assert any(f.startswith("subgraph: nodes of 395 pruned") for f in t.flags)
    # The five listed are the five best by score.
    scores = m.triple_vecs @ _norm(unit(1))
    best = sorted(np.argsort(-scores, kind="stable")[:5].tolist())
    assert sorted(p.triples[0].triple_id for p in t.detail(NeuroPathDetail).hops[0].candidates if p.listed_as) == best
    # Small enough: pruned paths are drawn too, and nothing is flagged.
    small = ask_hub(hub_memory(40), NeuroPathParams(prune_top=5, coref_threshold=0.99))
    assert len(small.nodes) == 41 and not any(f.startswith("subgraph") for f in small.flags)


def test_subgraph_cap_keeps_valid_paths_and_fills_with_listed_ones(monkeypatch):
    monkeypatch.setattr(picture, "MAX_GRAPH_NODES", 50)
    t = ask_hub(hub_memory(), NeuroPathParams(prune_top=None, max_listed=100, coref_threshold=0.99))
    assert len(t.nodes) == 50
    valid = next(p for p in t.detail(NeuroPathDetail).hops[0].candidates if p.fate == "valid")
    assert f"e:{valid.frontier}" in {n.id for n in t.nodes}
    assert "subgraph: 51 listed path(s) that were not kept left out (over 50 nodes)" in t.flags
    assert any(f.startswith("subgraph: nodes of 300 pruned or unlisted") for f in t.flags)


def test_strip_path_refs():
    assert strip_path_refs("Path 1 says X; paths 2 and 3 agree (id 4), see path #5.") == \
        "A path says X; some paths agree (a path), see a path."
    assert strip_path_refs("No references here.") == "No references here."


# ---------------------------------------------------------------- end to end
def test_ask_end_to_end_on_a_built_memory():
    from memrag.ask import ask

    docs = [Document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder.", "test", "sample"),
            Document("port", "Port Alder", "Port Alder lies on the Vell River.", "test", "sample"),
            Document("misc", "Miro Tann", "Miro Tann painted the Grey Sea.", "test", "sample")]
    extractions = [
        {"entities": [{"name": "Ada Brennick", "type": "person", "description": "a baker", "importance": 5}],
         "triples": [["Ada Brennick", "born in", "Port Alder"]]},
        {"entities": [], "triples": [["Port Alder", "lies on", "Vell River"]]},
        {"entities": [], "triples": [["Miro Tann", "painted", "Grey Sea"]]},
    ]
    memory = run_build(build_memory(None, docs, ScriptedLLM({"index.extract": extractions}),
                                    HashEmbedder(DIM), IndexParams()))
    question = "Which river flows by the birthplace of Ada Brennick?"
    llm = ScriptedLLM({
        "query.entities": [{"entities": ["Ada Brennick"]}],
        "neuropath.track.hop1": [{"reasoning_chain": "Born in Port Alder.", "valid_ids": [1],
                                  "expansion_requirement": "river of Port Alder", "expand_ids": [1],
                                  "continue": 1}],
        "neuropath.track.hop2": [{"reasoning_chain": "Port Alder lies on the Vell River.", "valid_ids": [2],
                                  "expansion_requirement": "", "expand_ids": [], "continue": 0}],
        "answer": [{"reasoning": "path", "answer": "Vell River.", "cited": [1, 2]}],
    })
    (t,) = ask(memory, question, llm=llm, embedder=HashEmbedder(DIM), methods=["neuropath"],
               params={"neuropath": {"answer_passages": 2, "dp_position": "first"}})
    assert [p.text for p in t.detail(NeuroPathDetail).hops[1].candidates if p.kept_from is None] == [
        "Ada Brennick → born in → Port Alder; Port Alder → lies on → Vell River"]
    assert t.detail(NeuroPathDetail).dp_chunk_ids == [0, 1] and t.ranked_ids()[:3] == [0, 1, 2]
    assert t.answer.answer == "Vell River" and t.answer.context_chunk_ids == [0, 1]
    answer_prompt = llm.calls[-1]["messages"][-1]["content"]
    assert "[1] Ada Brennick" in answer_prompt and "[2] Port Alder" in answer_prompt
    assert "Miro Tann" not in answer_prompt
    assert [c.stage for c in t.llm_calls] == ["query.entities", "neuropath.track.hop1",
                                              "neuropath.track.hop2", "answer"]


# ---------------------------------------------------------------- where D_p goes (dp_position)
def test_place_dp_orders_by_hand():
    from memrag.methods.neuropath.search import place_dp

    dp, de = ["p1", "p2", "p3"], ["c1", "c2", "c3", "c4"]
    assert place_dp(dp, de, "first") == ["p1", "p2", "p3", "c1", "c2", "c3", "c4"]
    assert place_dp(dp, de, "after_head", 2) == ["c1", "c2", "p1", "p2", "p3", "c3", "c4"]
    assert place_dp(dp, de, "after_head", 0) == place_dp(dp, de, "first")
    assert place_dp(dp, de, "interleave") == ["c1", "p1", "c2", "p2", "c3", "p3", "c4"]
    assert place_dp(["p1"] * 0, de, "interleave") == de
    assert place_dp(dp, [], "interleave") == dp  # completion off: D_p alone
    with pytest.raises(ValueError, match="dp_position"):
        place_dp(dp, de, "last")


def test_the_trace_records_what_the_graph_reaches_beyond_the_listed_paths():
    # Tracking stops at hop 1. The seeds (Ada Brennick and A. Brennick) reach c0, c1, c3, c7 at hop 1;
    # through Port Alder's coreference candidate (Port of Alder) and Brennick Bakery the graph reaches
    # c2 and c5 at hop 2, and c4 (the Vell River flows into the Grey Sea) at hop 3; c6 only at hop 4.
    # c3 repeats c0's fact ("Ada Brennick born in Port Alder"): reached at hop 1, but identical path
    # texts keep the first, so no listed path touches it.
    t, _ = run(NeuroPathParams(prune_top=2, max_hops=3), hop1=[r1(**{"continue": 0})])
    reach = {r.chunk_id: r.hop for r in t.detail(NeuroPathDetail).unlisted_reach}
    assert reach == {3: 1, 2: 2, 5: 2, 4: 3}
    fates = {f["chunk_id"]: f for f in gold_fate(t, [2, 4, 6], k=1)}
    assert fates[2]["fate"] == fates[4]["fate"] == "reachable within max_hops, but tracking did not go there"
    assert "reach it at hop 3, but tracking stopped at hop 1 (model said stop)" in fates[4]["detail"]
    assert fates[6]["fate"] == "no seed reaches it within max_hops"
    assert "listed from another passage" in gold_fate(t, [3], k=1)[0]["detail"]


def test_the_expansion_probe_grows_hop_2_from_whichever_hop_1_paths_a_rule_picks():
    # Hop 1 lists 1: Ada → born in → Port Alder (c0) and 2: A. Brennick → founded → Brennick Bakery (c1).
    # Growing path 1 (Port Alder and its candidate Port of Alder) reaches c3 (Salt Fair) and c2 (Vell
    # River); growing path 2 reaches c5 (rye bread). Against the goal e1 (hop 1's requirement) the
    # Vell River path scores highest and the rye-bread path 0, so prune_top 2 drops c5.
    from memrag.methods.neuropath.reach import listed_after_hop2
    t, _ = run(NeuroPathParams(prune_top=2, max_hops=1), hop1=[r1(valid_ids=[1], expand_ids=[2])])
    hop1, memory, goal = t.detail(NeuroPathDetail).hops[0], world(), _norm(unit(1))

    def listed(rule: str, prune_top: int | None = 3) -> set[int]:
        return listed_after_hop2(memory, hop1, rule, goal, prune_top, 5, 0.8)

    assert listed("model") == {0, 1, 5}  # the model asked to expand path 2 only
    assert listed("list order") == {0, 1, 2, 3}  # as many paths (one) from the top of the listing
    assert listed("kept") == listed("every listed") == {0, 1, 2, 3, 5}  # valid [1] ∪ expand [2]
    assert listed("every listed", prune_top=2) == {0, 1, 2, 3}
    assert listed("model", prune_top=None) == {0, 1, 5}
    with pytest.raises(ValueError, match="rule"):
        listed("random")


def test_the_requirement_probe_reaches_from_the_nodes_a_requirement_names():
    # Seeds Ada Brennick and A. Brennick reach c6 (Miro Tann painted the Grey Sea) only at hop 4. A hop-1
    # requirement that names the Grey Sea would reach it at once from a hop-2 seed: c4 and c6 are the
    # Grey Sea's own triples. The probe finds the named nodes as verbatim seeds are found ('Port
    # Alderney' is no node; a name the seeds hold adds nothing).
    from memrag.methods.neuropath.reach import first_reach, seeded_reach
    memory, seeds = world(), {entity_key("Ada Brennick"), entity_key("A. Brennick")}
    need = "Still missing: who painted the Grey Sea, and the Port Alderney ferry of Ada Brennick"
    named = [key for _, key in verbatim_keys(need, memory.entity_index) if key not in seeds]
    assert named == [entity_key("Grey Sea")]
    assert 6 not in first_reach(memory, seeds, 2, 5, 0.8)
    assert seeded_reach(memory, named, 1, 5, 0.8) == {4: 1, 6: 1}
    assert seeded_reach(memory, named, 2, 5, 0.8) == {4: 1, 6: 1, 2: 2}  # on to the Vell River
    assert seeded_reach(memory, [], 1, 5, 0.8) == seeded_reach(memory, named, 0, 5, 0.8) == {}


def test_expand_kept_grows_every_path_the_model_kept_not_only_those_it_named():
    # Hop 1 keeps paths 2 (A. Brennick → Brennick Bakery) and 1 (Ada → Port Alder); the model names
    # only path 1 for expansion. The paper grows path 1 alone; expand_kept also grows path 2 (rye bread).
    hop1 = [r1(valid_ids=[2, 1], expand_ids=[1])]
    grown = {}
    for expand_kept in (False, True):
        t, _ = run(NeuroPathParams(prune_top=2, expand_kept=expand_kept), hop1=hop1)
        h1, h2 = t.detail(NeuroPathDetail).hops
        assert h1.expand_ids == [1]  # the trace keeps what the model said
        grown[expand_kept] = {p.text.split("; ")[-1] for p in h2.candidates if p.kept_from is None}
    assert "Brennick Bakery → sells → Rye Bread" in grown[True] - grown[False]
    assert "Port of Alder → lies on → Vell River" in grown[False] & grown[True]
    assert "Growing every kept path (expand_kept): 2." in t.steps[1].summary


def test_dp_takes_the_valid_paths_only_not_those_only_asked_to_expand():
    # Hop 1 alone lists three paths; valid [1], expand [2, 3]. Paths 2 and 3 were only asked to
    # expand, so their passages are no evidence (a mutant that took expand ids into D_p survived
    # every other test).
    t, _ = run(NeuroPathParams(prune_top=30, max_hops=1), hop1=[r1(valid_ids=[1], expand_ids=[2, 3])])
    listed = {p.listed_as: p for p in t.detail(NeuroPathDetail).hops[0].candidates if p.listed_as is not None}
    assert sorted(listed) == [1, 2, 3]
    assert t.detail(NeuroPathDetail).dp_chunk_ids == listed[1].chunk_ids
    assert not (set(listed[2].chunk_ids) | set(listed[3].chunk_ids)) & set(t.detail(NeuroPathDetail).dp_chunk_ids)


# ---------------------------------------------------------------- seed links and reach
def test_seed_top_links_each_query_entity_to_its_k_nearest_nodes_whose_names_nest():
    from memrag.fields import bounds_of
    from memrag.methods.neuropath.search import names_nest

    b = bounds_of(NeuroPathParams, "seed_top")
    assert NeuroPathParams().seed_top == 1 and (b.low, b.high) == (1, 20)
    assert names_nest("Nets", "New York Nets") and names_nest("Nicholas I of Russia", "Nicholas I")
    assert not names_nest("26th Chess Olympiad", "36th Chess Olympiad") and not names_nest("AD 43", "AD 41")
    # 'Port Alder' → its node (1.0), then 'Port of Alder' (.9, the names nest: a second seed), then
    # 'Ada Brennick' and the rest (another thing: no seed, whatever the similarity)
    t, _ = run(NeuroPathParams(prune_top=2, seed_top=3, seed_floor=0.0), entities={"entities": ["Port Alder"]})
    seeds = [(s.key, s.link, s.accepted) for s in t.detail(NeuroPathDetail).seeds]
    assert seeds[:2] == [("port alder", 1, True), ("port of alder", 2, True)] and seeds[2][1:] == (3, False)
    assert "(each linked to its 3 nearest graph nodes)" in t.steps[0].summary
    assert "(1 further link(s) naming another thing: the names do not nest)" in t.steps[0].summary
    # the floor holds per link: 'Port of Alder' (cosine .9) falls below 0.95, the nearest node stays
    t, _ = run(NeuroPathParams(prune_top=2, seed_top=2, seed_floor=0.95), entities={"entities": ["Port Alder"]})
    assert [(s.key, s.accepted) for s in t.detail(NeuroPathDetail).seeds] == [("port alder", True),
                                                                             ("port of alder", False)]
    assert "(1 below the similarity floor 0.95)" in t.steps[0].summary
    # more links than the memory has nodes: every node, once
    t, _ = run(NeuroPathParams(prune_top=2, seed_top=20, seed_floor=0.0))
    assert len(t.detail(NeuroPathDetail).seeds) == len(world().entities)


def test_gold_reach_counts_how_far_each_gold_passage_got():
    from memrag.methods.neuropath.reach import gold_reach

    # hop 1 lists born-in (c0) and founded (c1), prunes married (c7); hop 2 lists the Salt Fair (c3)
    # and Vell River (c2) paths; kept: c0, c2; the Rye chunk (c5) is reachable at hop 2 but listed
    # on no path; c4 (three hops away) and c6 (no path) are out of reach
    t, _ = run(NeuroPathParams(prune_top=2))
    gold = [[0], [2], [4], [5], [6], [1, 6], [7]]
    assert gold_reach(t, gold) == {"gold": 7, "within_max_hops": 5, "on_listed_paths": 3, "kept": 2}
    t, _ = run(NeuroPathParams(), entities={"entities": ["Zed Unknown"]})  # no seeds: nothing reached
    assert gold_reach(t, gold) == {"gold": 7, "within_max_hops": 0, "on_listed_paths": 0, "kept": 0}
    t.method, t.details = "dense", {}
    assert gold_reach(t, gold) is None
