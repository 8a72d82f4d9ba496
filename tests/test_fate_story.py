"""A gold passage's first miss and final loss (issue 29), on the sample's recorded NeuroPath traces
and by hand: the earliest hop whose listing could have kept it, and where it was lost for good."""

from __future__ import annotations

import pytest

from memrag.app.question_gold import gold_fate_line, gold_of
from memrag.eval.gold import gold_fate_records
from memrag.index.normalise import entity_key
from memrag.methods.fate_kit import DenseFate
from memrag.methods.neuropath.fates import NeuroPathFate
from memrag.methods.neuropath.detail import NeuroPathDetail
from sample_replay import replay_sample

NOT_KEPT = ("dropped", "shown", "pruned", "unlisted")


@pytest.fixture(scope="module")
def neuropath_sample():
    return replay_sample(["dense", "neuropath"])


def _leads(trace, cid, p):
    ends = {entity_key(x) for h in trace.detail(NeuroPathDetail).hops for c in h.candidates for t in c.triples
            if t.chunk_id == cid for x in (t.head, t.tail)}
    return cid in p.chunk_ids or (p.kept_from is None and p.frontier in ends)


def _could_have_kept(trace, cid):
    """(hop, path) pairs that could have kept the passage: listed or cut and not kept, or kept and not
    extended though a later hop ran (the docstring's rules, written out again here)."""
    d = trace.detail(NeuroPathDetail)
    last = d.hops[-1].hop if d.hops else 0
    return [(h.hop, p) for h in d.hops for p in h.candidates if _leads(trace, cid, p)
            and (p.fate in NOT_KEPT or (p.fate == "valid" and cid not in p.chunk_ids and not h.failed
                                        and (h.hop < last or d.stop_reason != "max_hops reached")))]


def test_the_first_miss_is_the_earliest_listing_that_could_have_kept_the_passage(neuropath_sample):
    memory, asked = neuropath_sample
    checked = 0
    for q, (dense, np) in asked:
        gold = gold_of(q, memory)
        for r in gold_fate_records(np, gold.chunk_ids, k=5, unit_of=lambda c: memory.chunks[c].doc_id):
            if r.clean:
                assert r.first_miss is None and r.final_loss is None
                continue
            could = _could_have_kept(np, r.chunk_id)
            m = r.first_miss
            if not could:  # no path came near: the memory graph's reach says why
                assert m.path_id is None and m.text.startswith(("no listed path came near", "no path started")), m
                continue
            assert m is not None and m.hop == min(h for h, _ in could), (q["id"], r)
            p = next(p for h, p in could if p.pid == m.path_id)
            assert f"hop {m.hop}: path #{p.listed_as}" in m.text or p.listed_as is None
            checked += 1
            if r.kind is NeuroPathFate.VALID_BEYOND_K:
                assert r.final_loss.text.endswith(f"ranked {r.rank} by the merge")
            elif r.rank is None or r.rank > 5:
                assert r.final_loss is not None
    assert checked, "the sample should have a NeuroPath gold passage with a first miss"


def test_q14_first_miss_on_the_sample_names_each_passage(neuropath_sample):
    """Issue 36 on the recorded q14: Corwin Penhallow's passage was lost by not extending the kept
    path #1 (hop 1 extended only #17); Osric Penhallow's by not keeping #28, a fact of his own passage."""
    memory, asked = neuropath_sample
    q, (_, np) = next((q, t) for q, t in asked if q["id"] == "q14")
    line = gold_fate_line(np, gold_of(q, memory), memory)
    first = {w.passage: w.text for w in line.moments if w.label == "first miss"}
    assert first["Corwin Penhallow"].startswith("hop 1: path #1 kept, not extended"), first
    assert "Corwin Penhallow, is in the passage; the model extended only #17" in first["Corwin Penhallow"]
    assert first["Osric Penhallow"].startswith("hop 1: path #28 listed, not kept"), first
    assert {w.passage for w in line.moments if w.label == "finally lost"} == {"Corwin Penhallow", "Osric Penhallow"}


def test_the_answer_card_offers_both_moments_with_their_rows(neuropath_sample):
    memory, asked = neuropath_sample
    found = 0
    for q, (dense, np) in asked:
        line = gold_fate_line(np, gold_of(q, memory), memory)
        for w in line.moments:
            if w.label == "first miss" and w.step is not None:
                hop = int(str(w.step).split()[-1])
                assert w.tab == "Retrieval" and w.step == f"Hop {hop}"
                assert w.row in {p.pid for p in np.detail(NeuroPathDetail).hops[hop - 1].candidates}
                found += 1
            if w.label == "finally lost" and w.step is None:
                assert w.tab == "Ranked passages" and w.row in {r.chunk_id for r in np.ranked}
        # dense: a passage beyond k was lost where the list placed it
        for r in gold_fate_records(dense, gold_of(q, memory).chunk_ids, k=5):
            if r.kind is DenseFate.BEYOND_K and r.rank is not None:
                assert r.final_loss.text == f"ranked {r.rank}, beyond k = 5" and r.final_loss.rank == r.rank
    assert found


def test_q12_no_fresh_trace_is_said_to_predate_the_reach(neuropath_sample):
    """q12 has no seeds: its passages' fates say so, never that the trace predates the recorded reach
    (every trace made now records the reach, or has no seeds to reach from)."""
    memory, asked = neuropath_sample
    for q, (_, np) in asked:
        for r in gold_fate_records(np, gold_of(q, memory).chunk_ids, k=5):
            assert "predates" not in r.detail and (r.first_miss is None or "predates" not in r.first_miss.text), q["id"]
    q, (_, np) = next((q, t) for q, t in asked if q["id"] == "q12")
    assert np.detail(NeuroPathDetail).stop_reason == "no seeds"
    lost = [r for r in gold_fate_records(np, gold_of(q, memory).chunk_ids, k=5) if not r.clean]
    assert lost and all(r.first_miss.text.endswith("(no seeds)") for r in lost)
