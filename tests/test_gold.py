"""Gold fate on hand-built traces: every fate of every method, worked out by hand."""

from __future__ import annotations

import pytest

from memrag.eval.gold import NOT_IN_MEMORY, best_fate, fate_order, gold_fate
from memrag.methods.ecphory.fates import outside_context as ecphory_outside_context
from memrag.methods.neuropath.fates import RULES as NEUROPATH_RULES
from memrag.trace import RankedChunk, Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate, ReachedChunk
from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail, EcphoryRound


def ranked(*items: tuple[int, str]) -> list[RankedChunk]:
    return [RankedChunk(cid, r, None, source, f"why {cid}") for r, (cid, source) in enumerate(items)]


def by_chunk(entries):
    return {e["chunk_id"]: e for e in entries}


# ------------------------------------------------------------------ dense
def test_dense_fates_are_ranks_within_or_beyond_k():
    t = Trace(method="dense", question="q", ranked=ranked((3, "dense"), (1, "dense"), (2, "dense"), (0, "dense")))
    got = by_chunk(gold_fate(t, [1, 0, 9], k=2))
    assert (got[1]["fate"], got[1]["rank"], got[1]["detail"]) == ("in the top k", 2, "rank 2")
    assert (got[0]["fate"], got[0]["rank"]) == ("beyond k", 4)
    assert got[0]["detail"].startswith("beyond k at rank 4")
    assert (got[9]["fate"], got[9]["rank"]) == ("beyond k", None)  # not ranked at all
    assert list(got) == [1, 0, 9]  # one entry per gold chunk, in the order given


def test_ranks_count_recall_units_when_given():
    # Chunks 3 and 4 are two pieces of one passage: with units, chunk 1 is the 2nd distinct unit.
    t = Trace(method="dense", question="q", ranked=ranked((3, "dense"), (4, "dense"), (1, "dense")))
    unit = {3: "A", 4: "A", 1: "B"}
    assert gold_fate(t, [1], k=2)[0]["fate"] == "beyond k"  # chunk rank 3
    with_units = gold_fate(t, [1], k=2, unit_of=unit.__getitem__)[0]
    assert (with_units["fate"], with_units["rank"]) == ("in the top k", 2)


# ------------------------------------------------------------------ NeuroPath
def path(pid: str, hop: int, chunks: list[int], fate: str, score: float | None = None, rank: int | None = None,
         listed_as: int | None = None) -> PathCandidate:
    return PathCandidate(pid=pid, hop=hop, triples=[], frontier="x", frontier_name="X", chunk_ids=chunks,
                         text=f"path {pid}", score=score, rank=rank, fate=fate, listed_as=listed_as)


def neuropath_trace() -> Trace:
    """Hop 1: A (chunk 1) expanded, B (chunk 3) dropped, C and D (chunk 4) pruned, E (chunk 8) left
    out by the listing cap, H (chunk 9) judged valid; hop 2: H's re-listing dropped, F (1, 5) and
    G (1, 7) valid. Ranked: D_p = 1, 7, 5, then completion 2, 3, 4, 6, 8, 9. Chunk 6 is touched by
    no path."""
    hop1 = NeuroPathHop(hop=1, goal="q", new_count=40, candidates=[
        path("h1.1", 1, [1], "expanded", 0.9, 1, 1), path("h1.2", 1, [3], "dropped", 0.8, 2, 2),
        path("h1.31", 1, [4], "pruned", 0.21, 32), path("h1.30", 1, [4], "pruned", 0.35, 31),
        path("h1.40", 1, [8], "unlisted", 0.1, 40), path("h1.3", 1, [9], "valid", 0.7, 3, 3)])
    hop2 = NeuroPathHop(hop=2, goal="next", new_count=2, candidates=[
        path("h1.3@h2", 1, [9], "dropped", listed_as=1), path("h2.1", 2, [1, 5], "valid", 0.8, 1, 2),
        path("h2.2", 2, [1, 7], "valid", 0.7, 2, 3)])
    detail = NeuroPathDetail(query_entities=["X"], hops=[hop1, hop2], dp_chunk_ids=[1, 7, 5],
                             stop_reason="model said stop")
    return Trace(method="neuropath", question="q", details={"neuropath": detail},
                 ranked=ranked((1, "path"), (7, "path"), (5, "path"), (2, "completion"), (3, "completion"),
                               (4, "completion"), (6, "completion"), (8, "completion"), (9, "completion")))


def test_neuropath_each_fate_by_hand():
    t = neuropath_trace()
    got = by_chunk(gold_fate(t, [1, 5, 2, 3, 4, 8, 9, 6], k=2))
    assert got[1]["fate"] == "found by a path" and got[1]["rank"] == 1
    assert got[5]["fate"] == "valid but beyond k" and got[5]["rank"] == 3
    assert got[3]["fate"] == "shown but not judged valid" and "judged not useful" in got[3]["detail"]
    # chunk 9 was valid at hop 1 but its re-listing was dropped at hop 2
    assert got[9]["fate"] == "shown but not judged valid"
    assert "judged valid at hop 1" in got[9]["detail"]
    # chunk 4: reached by two pruned paths; the better one (score 0.35, score rank 31 of 40) is reported
    assert got[4]["fate"] == "reachable but pruned"
    assert "score 0.350" in got[4]["detail"] and "score rank 31 of 40" in got[4]["detail"]
    assert got[8]["fate"] == "reachable but pruned" and "max_listed" in got[8]["detail"]
    # chunk 2 is ranked 4th by completion, outside k = 2, and no path touches it; this trace predates
    # the recorded reach, so nothing tells tracking from seeds
    assert got[2]["fate"] == "no seed reaches it within max_hops" and "model said stop" in got[2]["detail"]
    assert "predates the recorded reach" in got[2]["detail"]
    assert got[6]["fate"] == "no seed reaches it within max_hops"


def test_neuropath_tells_a_stopped_tracker_from_unreachable_seeds():
    # The same trace with the memory graph's reach recorded: chunk 2 lies at hop 3 from the seeds
    # (tracking said stop at hop 2); chunk 6 is out of reach.
    t = neuropath_trace()
    t.detail(NeuroPathDetail).unlisted_reach = [ReachedChunk(2, 3)]
    got = by_chunk(gold_fate(t, [2, 6], k=2))
    assert got[2]["fate"] == "reachable within max_hops, but tracking did not go there"
    assert "reach it at hop 3" in got[2]["detail"] and "tracking stopped at hop 2 (model said stop)" in got[2]["detail"]
    assert got[6]["fate"] == "no seed reaches it within max_hops" and "predates" not in got[6]["detail"]
    d = t.detail(NeuroPathDetail)
    d.hops = d.hops[:1]  # had it reached hop 2 and grown nothing that way
    t.detail(NeuroPathDetail).unlisted_reach = [ReachedChunk(6, 1)]
    assert "the paths towards it were not expanded" in by_chunk(gold_fate(t, [6], k=2))[6]["detail"]


def test_neuropath_inside_k_path_beats_completion():
    t = neuropath_trace()
    got = by_chunk(gold_fate(t, [5, 2, 3], k=5))
    assert got[5]["fate"] == "found by a path"
    assert got[2]["fate"] == "recovered only by completion" and got[2]["rank"] == 4
    # chunk 3 comes back by completion at rank 5; the model had seen it and dropped it
    assert got[3]["fate"] == "recovered only by completion" and "did not keep it" in got[3]["detail"]


def test_neuropath_dense_fallback_uses_dense_fates():
    t = Trace(method="neuropath", question="q", details={"neuropath": NeuroPathDetail(fallback_dense=True)},
              ranked=ranked((4, "dense"), (2, "dense")))
    got = by_chunk(gold_fate(t, [2, 7], k=1))
    assert got[2]["fate"] == "beyond k" and "fell back" in got[2]["detail"]
    assert gold_fate(t, [4], k=1)[0]["fate"] == "in the top k"


# ------------------------------------------------------------------ EcphoryRAG
def engram(eid: int, chunk: int, round_: int, origin: str = "query") -> ActivatedEngram:
    return ActivatedEngram(eid, f"e{eid}", f"E{eid}", "x", "", chunk, 0.5, round_, origin)


def ecphory_trace(new_listed_all: bool = True) -> Trace:
    detail = EcphoryDetail(
        initial=[engram(0, 10, 0), engram(1, 13, 0, "cue")],
        rounds=[EcphoryRound(1, [0], [1.0], new=[engram(2, 11, 1, "semantic")], new_counts={"semantic": 1}),
                EcphoryRound(2, [2], [1.0], new=[engram(3, 12, 2, "graph")],
                             new_counts={"graph": 1 if new_listed_all else 5})],
        final=[engram(3, 12, 2, "graph")], c_assoc=[13, 10], c_direct=[14])
    return Trace(method="ecphory", question="q", details={"ecphory": detail},
                 ranked=ranked((13, "c_assoc"), (10, "c_assoc"), (14, "c_direct"), (11, "dense-tail"),
                               (12, "dense-tail"), (15, "dense-tail")))


def test_ecphory_each_fate_by_hand():
    got = by_chunk(gold_fate(ecphory_trace(), [10, 11, 12, 13, 14, 15], k=2))
    assert got[13]["fate"] == got[10]["fate"] == "in the context"
    assert got[10]["rank"] == 2
    # under c_init a round-1 activation never enters the context list: the fate says so
    assert got[11]["fate"] == "activated in round 1 but outside the context" and got[11]["rank"] == 4
    assert "never takes a later round" in got[11]["detail"]
    assert got[12]["fate"] == ecphory_outside_context(2) and "E_final" in got[12]["detail"]
    assert got[14]["fate"] == "directly retrieved but beyond k" and "C_direct" in got[14]["detail"]
    assert got[15]["fate"] == "never activated"
    # chunk 10 is C_assoc's second: outside k = 1 it was lost in the C_assoc order, not by a re-rank
    assert gold_fate(ecphory_trace(), [10], k=1)[0]["fate"] == "lost in the C_assoc order"


def test_ecphory_fates_under_the_other_context_rankings():
    t = ecphory_trace()
    t.ranked = ranked((12, "activated"), (13, "fused"), (11, "fused"), (10, "activated"), (15, "similarity"))
    got = by_chunk(gold_fate(t, [10, 11, 15], k=2))
    assert got[10]["fate"] == "in E_final but beyond k"
    assert got[11]["fate"] == "activated in round 1 but outside the context" and "fused" in got[11]["detail"]
    assert got[15]["fate"] == "never activated"


def test_ecphory_says_when_a_round_listed_only_part_of_its_activations():
    entry = gold_fate(ecphory_trace(new_listed_all=False), [15], k=2)[0]
    assert entry["fate"] == "never activated" and "round(s) 2 list only part" in entry["detail"]


# ------------------------------------------------------------------ combining and errors
def test_best_fate_picks_the_chunk_that_got_furthest():
    entries = [{"chunk_id": 1, "fate": "reachable but pruned", "detail": "", "rank": 9},
               {"chunk_id": 2, "fate": "valid but beyond k", "detail": "", "rank": 7},
               {"chunk_id": 3, "fate": "valid but beyond k", "detail": "", "rank": 6}]
    assert best_fate(entries)["chunk_id"] == 3
    assert fate_order("in the context") < fate_order(ecphory_outside_context(0)) < fate_order(ecphory_outside_context(2))
    assert fate_order(ecphory_outside_context(2)) < fate_order("never activated") < fate_order(NOT_IN_MEMORY)
    assert [fate_order(f) for f in NEUROPATH_RULES.family] == sorted(fate_order(f) for f in NEUROPATH_RULES.family)
    with pytest.raises(ValueError):
        best_fate([])


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="no gold-fate rules"):
        gold_fate(Trace(method="hybrid", question="q"), [1])
    with pytest.raises(ValueError, match="k must be"):
        gold_fate(Trace(method="dense", question="q"), [1], k=0)
    with pytest.raises(ValueError, match="EcphoryRAG trace without"):
        gold_fate(Trace(method="ecphory", question="q"), [1])


# ------------------------------------------------------------------ typed records, old files
def test_every_fate_in_the_committed_summaries_maps_onto_a_declared_record():
    import json
    from pathlib import Path

    from memrag.eval.gold import fate_record
    from memrag.methods.fate_kit import UnknownFate

    root = Path(__file__).resolve().parent.parent
    summaries = sorted([*root.glob("docs/runs/*/summary.json"), *root.glob("sample_corpus/**/summary.json")])
    seen = 0
    for path in summaries:
        for method, entry in json.loads(path.read_text(encoding="utf-8"))["methods"].items():
            for sentence in entry.get("gold_fate", {}):
                record = fate_record({"fate": sentence}, method)
                assert not isinstance(record.kind, UnknownFate), (path, method, sentence)
                seen += 1
    assert len(summaries) >= 20 and seen >= 150


def test_legacy_and_templated_sentences_read_back_as_records_with_their_round():
    from memrag.eval.gold import fate_record
    from memrag.methods.ecphory.fates import EcphoryFate

    old = fate_record({"fate": "activated in round 2 then re-ranked out", "chunk_id": 4, "rank": 9}, "ecphory")
    assert (old.kind, old.round, old.chunk_id, old.rank) == (EcphoryFate.ACTIVATED_OUTSIDE, 2, 4, 9)
    assert old.fate == ecphory_outside_context(2)  # shown in today's words
    now = fate_record({"fate": ecphory_outside_context(11)})
    assert (now.kind, now.round) == (EcphoryFate.ACTIVATED_OUTSIDE, 11)
    unknown = fate_record({"fate": "eaten by a grue"})
    assert unknown.fate == "eaten by a grue" and unknown.order == fate_order(NOT_IN_MEMORY)


def test_records_carry_the_hop_and_round_that_decided_them():
    from memrag.eval.gold import gold_fate_records

    got = {r.chunk_id: r for r in gold_fate_records(neuropath_trace(), [3, 4, 9, 2], k=2)}
    assert (got[3].hop, got[3].path_id) == (1, "h1.2")  # shown at hop 1 on path h1.2, dropped
    assert (got[9].hop, got[9].path_id) == (1, "h1.3")  # judged valid at hop 1, re-listing dropped at 2
    assert (got[4].hop, got[4].path_id, got[4].score) == (1, "h1.30", 0.35)  # the better pruned path
    assert got[2].hop == 2  # no path touches it: the last hop run
    ec = {r.chunk_id: r for r in gold_fate_records(ecphory_trace(), [12], k=2)}
    assert ec[12].round == 2 and ec[12].fate == ecphory_outside_context(2)
