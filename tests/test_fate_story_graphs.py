"""A gold passage's first miss and final loss for EcphoryRAG and HippoRAG 2 (issue 29), on the sample's
recorded traces (chosen by property: a gold passage the method held and did not keep) and by hand:
the activation step that first held it / the fact recognition memory dropped, and its place beyond k,
each opening a view with its row."""

from __future__ import annotations

import pytest
from sample_replay import replay_sample
from test_app_hipporag2 import hippo_trace, only_hipporag2
from test_app_ecphory import ecphory_page
from test_app_pages import ask, ask_page, home, no_exception, plain, tiny  # noqa: F401
from test_gold import ecphory_trace

from memrag.app.question_gold import gold_fate_line, gold_of
from memrag.eval.gold import gold_fate_records
from memrag.methods.ecphory.detail import EcphoryDetail
from memrag.methods.ecphory.fates import EcphoryFate, passage_engrams, step_words
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.hipporag2.fates import fact_row
from memrag.viz import tables
from memrag import words

K = 5


@pytest.fixture(scope="module")
def sample():
    return replay_sample(["ecphory", "hipporag2"])


def _lost(memory, q, trace, k: int = K):
    """The trace's gold records outside the ones its own step found."""
    unit = lambda c: memory.chunks[c].doc_id  # noqa: E731
    return [r for r in gold_fate_records(trace, gold_of(q, memory).chunk_ids, k=k, unit_of=unit) if not r.clean]


def test_ecphory_first_miss_is_the_activation_step_that_first_held_the_passage(sample):
    memory, asked = sample
    held = 0
    for q, (ec, _) in asked:
        d = ec.detail(EcphoryDetail)
        for r in _lost(memory, q, ec):
            rounds = [e.round for e in [*d.initial, *(e for x in d.rounds for e in x.new)] if e.chunk_id == r.chunk_id]
            if not rounds:
                assert r.first_miss is None, (q["id"], r)
            else:  # the sample ranks by fusion: every round counts, so the first activation is the miss
                m = r.first_miss
                assert m is not None and m.round == min(rounds) and m.chunk_id == r.chunk_id, (q["id"], r)
                assert m.text.startswith(step_words(m.round) + ": engram '") and "activated, not kept" in m.text
                held += 1
            if r.rank is not None and r.rank > K:
                assert r.final_loss.rank == r.rank and r.final_loss.text.startswith(f"ranked {r.rank} by ")
                assert r.final_loss.text.endswith(f"beyond k = {K}")
    assert held, "the sample should have an EcphoryRAG gold passage activated but outside the context"


def card_moments(sample, column: int, k: int = K):
    """(trace, moment) for each moment the sample's answer cards offer, the method's trace at `column`."""
    memory, asked = sample
    for q, traces in asked:
        trace = traces[column]
        yield from ((trace, w) for w in gold_fate_line(trace, gold_of(q, memory), memory, k=k).moments)


def test_ecphory_show_where_opens_the_step_with_the_passage_and_its_place_in_the_list(sample):
    opened = 0
    for ec, w in card_moments(sample, 0):
        if w.label == "first miss":
            # the Retrieval tab at that activation step; the row is the passage (its engrams)
            assert w.tab == "Retrieval" and isinstance(w.step, int) and isinstance(w.row, int)
            # the Retrieval tab's step picker is the trace's steps: the one that ran that activation round
            rnd = next(e.round for e in passage_engrams(ec.detail(EcphoryDetail), w.row))
            step = ec.steps[w.step]
            assert step.kind == ("initial" if rnd == 0 else "round") and step.title.endswith(
                "Initial activation" if rnd == 0 else f"Round {rnd}"), (w, step.title)
            opened += 1
        else:
            assert w.tab == "Ranked passages" and w.row in {x.chunk_id for x in ec.ranked}
    assert opened


def test_ecphory_first_miss_under_c_init_is_the_initial_activation():
    """C_init (C_assoc then C_direct) takes no later round: chunk 11, first activated in round 1, could
    only have been kept by the initial activation."""
    (r,) = gold_fate_records(ecphory_trace(), [11], k=2)
    assert r.kind is EcphoryFate.ACTIVATED_OUTSIDE and r.round == 1
    assert r.first_miss.round == 0 and r.first_miss.text.startswith("initial activation: no engram of it")
    assert r.final_loss.text == "ranked 4 by the dense tail, after the context list, beyond k = 2"


# On the sample at k = 5 recognition memory never lost a gold passage (every passage with a dropped
# fact is in the top 5: PageRank lost them); at k = 2, the cut of R@2, three were (q09, q10, q18).
HIPPO_K = 2


def test_hipporag2_first_miss_is_the_first_dropped_fact_of_the_passage(sample):
    memory, asked = sample
    dropped = 0
    for q, (_, hr) in asked:
        d = hr.detail(HippoRAG2Detail)
        facts = tables.hippo_facts_table(hr)
        for r in _lost(memory, q, hr, HIPPO_K):
            from_it = [n for n, f in enumerate(d.facts, start=1) if f.verdict != "kept" and r.chunk_id in f.chunk_ids]
            if from_it:
                m = r.first_miss
                assert m is not None and m.row == fact_row(from_it[0]), (q["id"], r)
                # said in the Ask page's words: the hop tables' "listed, not kept", the facts table's verdict
                row = facts[facts["#"] == from_it[0]].iloc[0]
                assert words.path_fate("dropped") in m.text and row["verdict"] in m.text and row["fact"] in m.text
                assert m.text.startswith(f"recognition memory: fact #{from_it[0]} ")
                dropped += 1
            elif r.first_miss is not None:  # a dropped fact naming a phrase of the passage
                assert "a phrase of this one" in r.first_miss.text
            if r.rank is not None and r.rank > HIPPO_K:
                assert r.final_loss.text.startswith(f"ranked {r.rank} by PageRank mass (")
                assert r.final_loss.rank == r.rank
    assert dropped, "the sample should have a HippoRAG 2 gold passage beyond k = 2 whose fact recognition dropped"


def test_hipporag2_show_where_opens_the_facts_table_row(sample):
    opened = 0
    for hr, w in card_moments(sample, 1, k=HIPPO_K):
        if w.label == "first miss":
            rows = {fact_row(n) for n in tables.hippo_facts_table(hr)["#"]}
            assert w.tab == "Retrieval" and w.step is None and w.row in rows
            opened += 1
        else:
            assert w.tab == "Ranked passages" and w.row in {x.chunk_id for x in hr.ranked}
    assert opened


# ------------------------------------------------------------------ the views the moments open (AppTest)
def _focus(at, method: str, row) -> None:
    """What a "show where" button leaves for the view (memrag.app.focus.set_focus under key 'res')."""
    at.session_state[f"res_{method}_focus"] = row
    at.session_state[f"res_{method}_focus_scroll"] = True
    at.session_state[f"res_{method}_tabs"] = "Retrieval"


def test_hipporag2_retrieval_tab_shows_the_dropped_fact_first_and_highlighted(tiny):
    at = ask(only_hipporag2(ask_page(tiny)))
    d = hippo_trace(at).detail(HippoRAG2Detail)
    n = next(i for i, f in enumerate(d.facts, start=1) if f.verdict == "dropped")
    _focus(at, "hipporag2", fact_row(n))
    at = no_exception(at.run())
    assert "The fact 'show where' points at, highlighted in the list below:" in plain(at)
    (one,) = [x.value for x in at.dataframe if "verdict" in x.value.columns and len(x.value) == 1]
    assert one["#"].iloc[0] == n and one["verdict"].iloc[0] == tables.VERDICT_WORDS["dropped"]
    _focus(at, "hipporag2", n)  # a passage's row (a chunk id) is not a fact: nothing is singled out
    assert "The fact 'show where' points at" not in plain(no_exception(at.run()))


def test_ecphory_retrieval_tab_shows_the_passages_engrams_first(tiny):
    at, trace = ecphory_page(tiny)
    d = trace.detail(EcphoryDetail)
    chunk = d.initial[0].chunk_id
    _focus(at, "ecphory", chunk)
    at = no_exception(at.run())
    assert f"The passage 'show where' points at (chunk {chunk})" in plain(at)
    engrams = next(x.value for x in at.dataframe if "activated in" in x.value.columns)
    assert list(engrams["engram"]) == [e.name for e in passage_engrams(d, chunk)]
    assert engrams["activated in"].iloc[0] == step_words(0)
