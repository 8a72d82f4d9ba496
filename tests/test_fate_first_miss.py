"""NeuroPath's first miss, one per missed gold passage, by the rules of its fates docstring: a trace
with q14's shape built by hand (issue 36), each rule on its own, the reach when no path came near,
and the answer card naming each passage's moments."""

from __future__ import annotations

from memrag.app.question_gold import Gold, gold_fate_line
from memrag.eval.gold import gold_fate, gold_fate_records
from memrag.methods.neuropath.detail import (NeuroPathDetail, NeuroPathHop, NeuroPathSeed, PathCandidate, PathTriple,
                                             ReachedChunk)
from memrag.methods.neuropath.fates import NeuroPathFate
from memrag.trace import ChunkRef, RankedChunk, Trace

VCL, CORWIN, OSRIC, PORT_ALDER, OTHER = 37, 7, 19, 22, 38
TITLES = {VCL: "Varrow Coast Lines", CORWIN: "Corwin Penhallow", OSRIC: "Osric Penhallow",
          PORT_ALDER: "Port Alder", OTHER: "Varrow Coast", 3: "Far Away", 4: "Farther"}


def fact(n: int, head: str, relation: str, tail: str, chunk: int) -> PathTriple:
    return PathTriple(n, head, relation, tail, chunk)


def path(pid: str, hop: int, triples: list[PathTriple], fate: str, listed_as: int | None, end: str, *,
         kept_from: int | None = None, rank: int | None = None) -> PathCandidate:
    """A candidate path whose growing end is the entity named `end`."""
    return PathCandidate(pid=pid, hop=hop, triples=triples, frontier=end.lower(), frontier_name=end,
                         chunk_ids=list(dict.fromkeys(t.chunk_id for t in triples)),
                         text=" ; ".join(f"{t.head} → {t.relation} → {t.tail}" for t in triples),
                         score=0.5, rank=rank or listed_as, fate=fate, listed_as=listed_as, kept_from=kept_from)


CHAIRMAN = fact(1, "Varrow Coast Lines", "first chairman", "Corwin Penhallow", VCL)
OPERATED = fact(2, "Varrow Coast Lines", "operated passenger and mail services", "Port Alder", VCL)
BUILT = fact(3, "Port Alder", "built where", "Varrow Coast", PORT_ALDER)
SHIPOWNER = fact(4, "Osric Penhallow", "was a shipowner", "Varrow Coast", OSRIC)
BORN = fact(5, "Corwin Penhallow", "born in", "Port Alder", CORWIN)
SHIPOWNER_PA = fact(6, "Osric Penhallow", "was a shipowner", "Port Alder", OSRIC)


def q14_trace(stop: str = "max_hops reached") -> Trace:
    """q14's shape: hop 1 keeps #1 (ending on Corwin Penhallow) and extends only #17 (Port Alder),
    drops #11 (ending on Port Alder, an entity of Corwin's and Osric's passages) and #28 (a fact of
    Osric's own passage); hop 2 lists Corwin's and Osric's passages through Port Alder and keeps
    neither. Only the company's passage is ranked inside k."""
    hop1 = NeuroPathHop(hop=1, goal="q", new_count=4, valid_ids=[1], expand_ids=[17], candidates=[
        path("h1.5", 1, [CHAIRMAN], "valid", 1, "Corwin Penhallow"),
        path("h1.8", 1, [OPERATED], "dropped", 11, "Port Alder"),
        path("h1.22", 1, [BUILT], "expanded", 17, "Port Alder"),
        path("h1.21", 1, [SHIPOWNER], "dropped", 28, "Osric Penhallow")])
    hop2 = NeuroPathHop(hop=2, goal="next", new_count=2, candidates=[
        path("h1.5@h2", 1, [CHAIRMAN], "dropped", 1, "Corwin Penhallow", kept_from=1),
        path("h2.11", 2, [BUILT, BORN], "dropped", 13, "Corwin Penhallow"),
        path("h2.18", 2, [BUILT, SHIPOWNER_PA], "dropped", 15, "Osric Penhallow")])
    detail = NeuroPathDetail(query_entities=["Varrow Coast Lines"], hops=[hop1, hop2], dp_chunk_ids=[VCL],
                             seeds=[NeuroPathSeed("Varrow Coast Lines", "varrow coast lines", "Varrow Coast Lines", 1.0)],
                             stop_reason=stop, unlisted_reach=[ReachedChunk(3, 2)])
    order = [(VCL, "path"), (OTHER, "completion"), (31, "completion"), (35, "completion"), (24, "completion"),
             (13, "completion"), (CORWIN, "completion"), (3, "completion"), (OSRIC, "completion")]
    return Trace(method="neuropath", question="By what nickname was the father of the first chairman known?",
                 details={"neuropath": detail}, params={"max_hops": 2},
                 chunks=[ChunkRef(c, TITLES.get(c, f"doc{c}").lower().replace(" ", "-"), TITLES.get(c, f"doc{c}"), "")
                         for c, _ in order],
                 ranked=[RankedChunk(c, i, None, src, "") for i, (c, src) in enumerate(order)])


def by_chunk(trace: Trace, ids: list[int], k: int = 5) -> dict:
    return {r.chunk_id: r for r in gold_fate_records(trace, ids, k=k)}


def test_q14_first_miss_is_the_kept_path_not_extended_and_the_direct_listing():
    got = by_chunk(q14_trace(), [VCL, CORWIN, OSRIC])
    assert got[VCL].kind is NeuroPathFate.FOUND_BY_PATH and got[VCL].first_miss is None
    # Corwin: hop 1 kept #1, whose end is Corwin Penhallow, and extended only #17 — not #11's listing
    corwin = got[CORWIN]
    assert corwin.kind is NeuroPathFate.SHOWN_NOT_VALID
    m = corwin.first_miss
    assert (m.hop, m.path_id, m.chunk_id) == (1, "h1.5", CORWIN), m
    assert m.text == ("hop 1: path #1 kept, not extended (its end, Corwin Penhallow, is in the passage; "
                      "the model extended only #17)")
    assert (corwin.final_loss.hop, corwin.final_loss.path_id) == (2, "h2.11")
    assert corwin.final_loss.text.startswith("hop 2: path #13 listed, not kept")
    # Osric: the direct miss — hop 1 listed #28, a fact of his own passage, and did not keep it
    osric = got[OSRIC]
    m = osric.first_miss
    assert (m.hop, m.path_id, m.chunk_id) == (1, "h1.21", OSRIC), m
    assert m.text.startswith("hop 1: path #28 listed, not kept") and "its end" not in m.text
    assert (osric.final_loss.hop, osric.final_loss.path_id) == (2, "h2.18")


def test_q14_first_miss_on_the_answer_card_names_each_passage():
    trace = q14_trace()
    docs = [TITLES[c].lower().replace(" ", "-") for c in (VCL, CORWIN, OSRIC)]
    line = gold_fate_line(trace, Gold(["Old Osric"], docs, [VCL, CORWIN, OSRIC]), None)
    told = [(w.passage, w.label, w.row) for w in line.moments]
    assert told == [("Corwin Penhallow", "first miss", "h1.5"), ("Corwin Penhallow", "finally lost", "h2.11"),
                    ("Osric Penhallow", "first miss", "h1.21"), ("Osric Penhallow", "finally lost", "h2.18")], told
    assert all((w.tab, w.step) == ("Retrieval", f"Hop {1 if w.label == 'first miss' else 2}") for w in line.moments)


def test_a_kept_path_at_max_hops_could_not_be_extended():
    # hop 2 is the last hop allowed: a path kept there whose end is in a passage is no miss (nothing
    # could extend it), unless the model chose to stop
    trace = q14_trace()
    hop2 = trace.detail(NeuroPathDetail).hops[1]
    hop2.candidates += [path("h2.30", 2, [BUILT, fact(9, "Port Alder", "harbour of", "Tresswick", 30)], "valid", 2,
                             "Tresswick"),
                        path("h2.31", 2, [fact(10, "Tresswick", "fishing village", "Quay", 31)], "pruned", None,
                             "Quay")]
    assert by_chunk(trace, [31])[31].first_miss.path_id == "h2.31"  # the pruned path through it
    trace.detail(NeuroPathDetail).stop_reason = "model said stop"
    m = by_chunk(trace, [31])[31].first_miss
    assert m.path_id == "h2.30" and "kept, not extended" in m.text and "extended none" in m.text


def test_each_rule_of_a_hop_in_order():
    """Within one hop: through-and-not-kept, kept-not-extended, end-not-kept, through-pruned, end-pruned;
    each candidate removed in turn leaves the next one the first miss."""
    passage = 50
    paths = [path("through", 1, [fact(20, "Ada", "wrote", "Book", passage)], "dropped", 9, "Book"),
             path("kept", 1, [fact(21, "X", "read", "Book", 51)], "valid", 8, "Book"),
             path("end", 1, [fact(22, "Y", "sold", "Book", 52)], "dropped", 3, "Book"),
             path("through-pruned", 1, [fact(23, "Book", "about", "Sea", passage)], "pruned", None, "Sea"),
             path("end-pruned", 1, [fact(24, "Z", "burnt", "Book", 53)], "unlisted", None, "Book")]
    for n in range(len(paths)):
        hop = NeuroPathHop(hop=1, goal="q", expand_ids=[], candidates=paths[n:])
        detail = NeuroPathDetail(hops=[hop, NeuroPathHop(hop=2, goal="g")], stop_reason="max_hops reached",
                                 seeds=[NeuroPathSeed("X", "x", "X", 1.0)], unlisted_reach=[])
        t = Trace(method="neuropath", question="q", details={"neuropath": detail},
                  ranked=[RankedChunk(1, 0, None, "completion", "")])
        m = by_chunk(t, [passage])[passage].first_miss
        if n < 4:
            assert m.path_id == paths[n].pid, (n, m)
        else:  # no path carries a fact of the passage any more: "Book" is not known to be in it
            assert m.path_id is None and m.text.startswith("no listed path came near it"), m


def test_a_passage_no_path_came_near_gets_the_reach():
    trace = q14_trace()
    got = by_chunk(trace, [3, 4])
    assert got[3].kind is NeuroPathFate.NOT_FOLLOWED
    assert got[3].first_miss.text == ("no listed path came near it; the memory graph's reach: a path from the "
                                      "seeds reaches it at hop 2")
    assert got[3].first_miss.chunk_id == 3 and got[3].first_miss.hop is None
    assert got[4].kind is NeuroPathFate.NO_PATH
    assert got[4].first_miss.text == ("no listed path came near it, and no path from the seeds reaches it within "
                                      "max_hops = 2 (the memory graph's reach: 1 more passage(s))")
    trace.detail(NeuroPathDetail).unlisted_reach = None
    assert "predates the recorded reach" in by_chunk(trace, [4])[4].first_miss.text


def test_q12_a_question_without_seeds_is_not_said_to_predate_the_reach():
    """q12: no seed accepted, so tracking never ran and no reach was recorded: the fate says why."""
    detail = NeuroPathDetail(query_entities=["Lantern Festival"], stop_reason="no seeds",
                             seeds=[NeuroPathSeed("Lantern Festival", "lantern festival", "Lantern Festival", 0.4,
                                                  accepted=False)])
    t = Trace(method="neuropath", question="q", details={"neuropath": detail},
              ranked=[RankedChunk(c, i, None, "completion", "") for i, c in enumerate((14, 11, 16, 19, 7, 6, 0, 39))])
    got = {e["chunk_id"]: e for e in gold_fate(t, [39, 99], k=5)}
    for e in got.values():
        assert "predates" not in e["detail"] and "no seeds: no path could start" in e["detail"], e
    rec = by_chunk(t, [39])[39]
    assert rec.first_miss.text == "no path started: no query entity matched an entity of the memory (no seeds)"
