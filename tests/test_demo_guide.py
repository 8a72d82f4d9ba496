"""The demo guide's groups, recomputed from the sample's recordings by a second, plainer route, and
its rules on hand-made outcomes (a passage only NeuroPath's completion found is not a bridge)."""

from __future__ import annotations

import pytest

from memrag.app.question_gold import gold_of, gold_scores
from memrag.ask import METHODS
from memrag.demo import sample_memory_dir
from memrag.embed import get_embedder
from memrag.eval.gold import fate_record, gold_fate
from memrag.explain import demo_guide as dg
from memrag.llm.recordings import Recordings
from memrag.methods.fate_kit import DenseFate, FateRecord
from memrag.methods.neuropath.fates import NeuroPathFate
from sample_replay import replay_sample


@pytest.fixture(scope="module")
def replayed():
    memory, asked = replay_sample(METHODS)
    qs = [q for q, _ in asked]
    traces = {q["id"]: ts for q, ts in asked}
    # the guide as the app works it out (its own replay), against the plain recomputation below
    emb = get_embedder()
    guide = dg.build_guide(dg.replay_outcomes(memory, Recordings.open(sample_memory_dir()), emb, qs))
    return memory, qs, traces, guide


def _plain_groups(memory, qs, traces) -> dict[str, set[str]]:
    """The three groups by the Ask page's own scoring (gold_scores' EM, gold_fate's entries per chunk)."""
    out = {dg.BRIDGE: set(), dg.ALL_RIGHT: set(), dg.ALL_WRONG: set()}
    for q in qs:
        gold = gold_of(q, memory)
        ts = traces[q["id"]]
        em = [gold_scores(t, gold, memory)["EM"] for t in ts]
        if all(e == 1.0 for e in em):
            out[dg.ALL_RIGHT].add(q["id"])
        if all(e == 0.0 for e in em):
            out[dg.ALL_WRONG].add(q["id"])
        per = {t.method: {e["chunk_id"]: e for e in gold_fate(t, gold.chunk_ids, k=dg.K,
                                                               unit_of=lambda c: memory.chunks[c].doc_id)}
               for t in ts}
        for cid in gold.chunk_ids:
            dense_entry = per["dense"][cid]
            if dense_entry["rank"] is not None and dense_entry["rank"] <= dg.K:
                continue
            for m, entries in per.items():
                rec = fate_record(entries[cid], m)
                if m != "dense" and rec.clean and entries[cid]["rank"] is not None and entries[cid]["rank"] <= dg.K:
                    out[dg.BRIDGE].add(q["id"])
    return out


def test_the_guide_groups_match_a_recomputation_from_the_recordings(replayed):
    memory, qs, traces, guide = replayed
    got = {g.key: {p.qid for p in g.picks} for g in guide.groups}
    assert got == _plain_groups(memory, qs, traces)
    assert all(g.picks for g in guide.groups), "the sample should have a question in every group"
    assert all(g.how for g in guide.groups)


def test_the_default_question_shows_a_difference_honestly(replayed):
    memory, qs, traces, guide = replayed
    bridge = next(g for g in guide.groups if g.key == dg.BRIDGE)
    assert guide.default == bridge.picks[0].qid
    q = next(q for q in qs if q["id"] == guide.default)
    gold = gold_of(q, memory)
    em = {t.method: gold_scores(t, gold, memory)["EM"] for t in traces[guide.default]}
    assert em["dense"] == 0.0 and any(v == 1.0 for m, v in em.items() if m != "dense")
    wrong = next(g for g in guide.groups if g.key == dg.ALL_WRONG)
    assert guide.default not in {p.qid for p in wrong.picks}
    assert guide.default in dg.how_computed(guide)


def _outcome(qid: str, np_fate: FateRecord, np_right: bool) -> dg.QuestionOutcome:
    def mo(method, fate, correct):
        return dg.MethodOutcome(method, 1.0 if fate.rank and fate.rank <= 5 else 0.0, correct, "x", {"d": fate})
    return dg.QuestionOutcome(qid, "?", ["d"], {"d": "D"}, {
        "dense": mo("dense", FateRecord(1, DenseFate.BEYOND_K, rank=9), False),
        "neuropath": mo("neuropath", np_fate, np_right)})


def test_a_passage_only_completion_found_is_not_a_bridge():
    by_path = _outcome("p", FateRecord(1, NeuroPathFate.FOUND_BY_PATH, rank=2), True)
    by_completion = _outcome("c", FateRecord(1, NeuroPathFate.BY_COMPLETION, rank=2), True)
    assert dg.bridges(by_path, "dense") == [("neuropath", "d")]
    assert dg.bridges(by_completion, "dense") == []
    guide = dg.build_guide([by_completion, by_path], baseline="dense")
    assert [p.qid for p in guide.groups[0].picks] == ["p"] and guide.default == "p"
    assert "answered right" in guide.groups[0].picks[0].why
