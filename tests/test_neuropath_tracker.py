"""NeuroPath's likelihood tracker (tracker="likelihood") on the hand-built world of
test_neuropath.py, with a scripted engine whose P("yes") per path is set in each test.

Hop 1 from the seeds {ada brennick, a brennick}, without pruning, lists (best score first):
  1: Ada Brennick → born in → Port Alder        (chunk 0)
  2: A. Brennick → founded → Brennick Bakery    (chunk 1)
  3: Ada Brennick → married → Olen Vask         (chunk 7)
The generative call keeps path 1 (r1: valid_ids [1, 7] → [1]); the probabilities below decide
otherwise, so every assertion on the kept set tells the two trackers apart.
"""

from __future__ import annotations

import pytest

from memrag.config import IndexParams
from memrag.methods.neuropath.params import NeuroPathParams
from memrag.index.build import build_memory, run_build
from memrag.index.readers import Document
from memrag.llm.base import LLMReplyError
from memrag.methods.base import QueryContext
from memrag.methods.neuropath import search as neuropath
from memrag.prompts import JUDGE_SYSTEM
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail
from scripted import HashEmbedder, ProbScripted, ScriptedLLM
from test_neuropath import DIM, OVERRIDES, Q, r1, r2, world

BORN = "Ada Brennick → born in → Port Alder"
FOUNDED = "A. Brennick → founded → Brennick Bakery"
MARRIED = "Ada Brennick → married → Olen Vask"
RIVER = f"{BORN}; Port of Alder → lies on → Vell River"
FAIR = f"{BORN}; Port Alder → hosts → Salt Fair"


def path_of(messages: list[dict[str, str]]) -> str:
    return messages[-1]["content"].rsplit("Path: ", 1)[1]


def judged_by(probs: dict[str, float | None]):
    """The first token's alternatives for a judge call: yes and no in the ratio `probs` gives the
    path (a tenth of the mass on another word); None for a path: the reply carries no probabilities."""
    def first(messages, stage):
        p = probs[path_of(messages)]
        return None if p is None else [("Yes", 0.9 * p), ("No", 0.9 * (1 - p)), ("Maybe", 0.1)]
    return first


def run(params: NeuroPathParams, probs: dict[str, float | None], *, hop1=None, hop2=None, judge=None,
        llm_class=ProbScripted, first=None):
    script = {"query.entities": [{"entities": ["Ada Brennick"]}],
              "neuropath.track.hop1": list(hop1 or [r1()]), "neuropath.track.hop2": list(hop2 or [r2()]),
              "neuropath.judge": judge or (lambda m, s: "Yes")}
    llm = llm_class(script, first or judged_by(probs)) if llm_class is ProbScripted else llm_class(script)
    ctx = QueryContext(world(), llm, HashEmbedder(DIM, OVERRIDES), Q)
    return neuropath.retrieve(ctx, params), llm


ONE_HOP = dict(tracker="likelihood", prune_top=None, max_hops=1, dp_position="first")
BEST_LAST = {BORN: 0.7, FOUNDED: 0.2, MARRIED: 0.9}


def judge_calls(llm) -> list[dict]:
    return [c for c in llm.calls if c["stage"].startswith("neuropath.judge")]


# ---------------------------------------------------------------- the kept set
def test_kept_paths_follow_the_probabilities_not_the_listing_order():
    t, llm = run(NeuroPathParams(**ONE_HOP), BEST_LAST)
    (h,) = t.detail(NeuroPathDetail).hops
    by_text = {p.text: p for p in h.candidates}
    assert [by_text[x].listed_as for x in (BORN, FOUNDED, MARRIED)] == [1, 2, 3]  # the best is listed last
    assert h.tracker == "likelihood"
    assert h.valid_ids == [3, 1] and h.generated_valid_ids == [1]  # the model's own pick, recorded beside
    assert {x: round(p.probability, 6) for x, p in by_text.items()} == BEST_LAST
    assert {x: p.fate for x, p in by_text.items()} == {BORN: "valid", FOUNDED: "dropped", MARRIED: "valid"}
    # D_p in probability order: the married path's chunk, then the birthplace's.
    assert t.detail(NeuroPathDetail).dp_chunk_ids == [7, 0] and t.ranked_ids()[:2] == [7, 0]
    assert "P(yes) 0.90" in t.ranked[0].why
    # One one-token call per path, with probabilities and no schema, recorded in the trace.
    calls = judge_calls(llm)
    assert [path_of(c["messages"]) for c in calls] == [BORN, FOUNDED, MARRIED]
    assert all((c["max_tokens"], c["schema"], c["top_logprobs"], c["stage"]) == (1, None, 20, "neuropath.judge.hop1")
               for c in calls)
    assert [t.llm_calls[i].stage for i in h.judge_call_indices] == ["neuropath.judge.hop1"] * 3
    # The instructions and the question form one prefix; only the path at the end differs.
    heads = {(c["messages"][0]["content"], c["messages"][-1]["content"].rsplit("Path: ", 1)[0]) for c in calls}
    assert heads == {(JUDGE_SYSTEM, f"Question: {Q}\nDoes this path help answer the question?\n")}
    assert "P(yes) ≥ 0.5" in h.tracker_note and "kept by likelihood: 2" in t.steps[1].summary


def test_threshold_and_top_m():
    def kept(**kw) -> list[int]:
        return run(NeuroPathParams(**ONE_HOP, **kw), BEST_LAST)[0].detail(NeuroPathDetail).hops[0].valid_ids

    assert kept(keep_threshold=0.8) == [3]
    assert kept(keep_threshold=0.0, keep_top=None) == [3, 1, 2]
    assert kept(keep_threshold=0.0, keep_top=2) == [3, 1]
    assert kept(keep_top=1) == [3]
    assert kept(keep_threshold=0.95) == []


def test_a_path_exactly_at_the_threshold_is_kept():
    at = {p.text: p.probability for p in run(NeuroPathParams(**ONE_HOP), BEST_LAST)[0]
          .detail(NeuroPathDetail).hops[0].candidates}[BORN]
    h = run(NeuroPathParams(**ONE_HOP, keep_threshold=at), BEST_LAST)[0].detail(NeuroPathDetail).hops[0]
    assert h.valid_ids == [3, 1]  # "at or above keep_threshold": the born-in path, at it exactly, stays


def test_a_reply_naming_neither_label_counts_as_no_evidence():
    def first(messages, stage):
        if path_of(messages) == MARRIED:
            return [("Perhaps", 0.6), ("Maybe", 0.3)]
        return judged_by(BEST_LAST)(messages, stage)
    t, _ = run(NeuroPathParams(**ONE_HOP), BEST_LAST, first=first)
    h = t.detail(NeuroPathDetail).hops[0]
    assert h.tracker == "likelihood" and h.valid_ids == [1]
    assert "1 repl(ies) listed neither yes nor no" in h.tracker_note
    assert [p.probability for p in h.candidates if p.text == MARRIED] == [0.0]


# ---------------------------------------------------------------- hops, carried paths and expansion
def test_carried_paths_keep_their_probability_and_are_not_judged_again():
    probs = {BORN: 0.8, FOUNDED: 0.3, RIVER: 0.9, FAIR: 0.1}
    # The generative call keeps and expands path 2 (the bakery); likelihood keeps path 1 and so
    # expands path 1: as many as the call asked to expand (one), the most probable kept new ones.
    t, llm = run(NeuroPathParams(tracker="likelihood", prune_top=2, dp_position="first"), probs,
                 hop1=[r1(valid_ids=[2], expand_ids=[2])], hop2=[r2(valid_ids=[3], expand_ids=[])])
    h1, h2 = t.detail(NeuroPathDetail).hops
    assert (h1.valid_ids, h1.expand_ids, h1.generated_valid_ids) == ([1], [1], [2])
    assert "the 1 most probable kept new path(s)" in h1.tracker_note
    carried = [p for p in h2.candidates if not p.is_new]
    assert [(p.text, p.listed_as, p.probability) for p in carried] == [(BORN, 1, 0.8)]
    assert [path_of(c["messages"]) for c in judge_calls(llm)] == [BORN, FOUNDED, RIVER, FAIR]
    assert [c["stage"] for c in judge_calls(llm)][2:] == ["neuropath.judge.hop2"] * 2
    listed = {p.listed_as: p.text for p in h2.candidates if p.listed_as}
    assert listed == {1: BORN, 2: RIVER, 3: FAIR}
    assert (h2.valid_ids, h2.generated_valid_ids) == ([2, 1], [3])
    assert t.detail(NeuroPathDetail).dp_chunk_ids == [0, 2]


def test_a_carried_path_is_never_expanded_however_probable():
    # hop 2 lists the carried born-in path (P .95, the most probable) and two new ones; the
    # generative call asks to expand one, so the one expanded is the most probable *new* kept path
    probs = {BORN: 0.95, FOUNDED: 0.3, RIVER: 0.9, FAIR: 0.1}
    t, _ = run(NeuroPathParams(tracker="likelihood", prune_top=2, dp_position="first"), probs,
               hop1=[r1(valid_ids=[2], expand_ids=[2])], hop2=[r2(valid_ids=[3], expand_ids=[3])])
    h2 = t.detail(NeuroPathDetail).hops[1]
    assert h2.valid_ids == [1, 2]
    assert h2.expand_ids == [2]


def test_the_generative_tracker_is_the_default_and_judges_nothing():
    assert NeuroPathParams().tracker == "generative"
    t, llm = run(NeuroPathParams(prune_top=None, max_hops=1), BEST_LAST)
    h = t.detail(NeuroPathDetail).hops[0]
    assert (h.tracker, h.valid_ids, h.generated_valid_ids, h.tracker_note) == ("generative", [1], [], "")
    assert judge_calls(llm) == [] and all(p.probability is None for p in h.candidates)


# ---------------------------------------------------------------- falling back
def test_an_engine_without_probabilities_falls_back_to_the_generative_tracker_and_says_so():
    t, llm = run(NeuroPathParams(**ONE_HOP), BEST_LAST, llm_class=ScriptedLLM)
    h = t.detail(NeuroPathDetail).hops[0]
    assert h.tracker == "generative" and h.valid_ids == [1] and h.generated_valid_ids == []
    assert h.tracker_note == ("fell back to the generative tracker: ScriptedLLM does not pass next-token "
                              "probabilities")
    assert "likelihood tracker fell back at hop 1: ScriptedLLM does not pass next-token probabilities" in t.flags
    assert judge_calls(llm) == [] and all(p.probability is None for p in h.candidates)
    generative, _ = run(NeuroPathParams(**{**ONE_HOP, "tracker": "generative"}), BEST_LAST)
    assert t.ranked_ids() == generative.ranked_ids()


def test_one_reading_without_probabilities_makes_the_hop_fall_back():
    t, llm = run(NeuroPathParams(**ONE_HOP), {**BEST_LAST, FOUNDED: None})
    h = t.detail(NeuroPathDetail).hops[0]
    assert h.tracker == "generative" and h.valid_ids == [1]
    assert h.tracker_note.startswith("fell back to the generative tracker: the scripted reply carried no token "
                                     "probabilities")
    assert len(judge_calls(llm)) == 2 and len(h.judge_call_indices) == 2  # stopped at the reading without
    assert all(p.probability is None for p in h.candidates)  # no probability left that decided nothing


def test_a_failed_judge_call_makes_the_hop_fall_back_with_the_error():
    broken = lambda m, s: LLMReplyError("the reply broke off") if path_of(m) == MARRIED else "Yes"
    t, _ = run(NeuroPathParams(**ONE_HOP), BEST_LAST, judge=broken)
    h = t.detail(NeuroPathDetail).hops[0]
    assert h.tracker == "generative" and "a judge call failed (the reply broke off)" in h.tracker_note
    assert not t.llm_calls[h.judge_call_indices[-1]].ok and len(h.judge_call_indices) == 3


def test_bad_tracker_parameters_are_refused():
    for bad, says in ((dict(tracker="vote"), "tracker"), (dict(keep_threshold=1.5), "keep_threshold"),
                      (dict(keep_top=0), "keep_top")):
        with pytest.raises(ValueError, match=says):
            run(NeuroPathParams(**bad), BEST_LAST)


# ---------------------------------------------------------------- the trace and its views
def test_the_trace_round_trips_and_an_old_trace_without_the_fields_loads():
    t, _ = run(NeuroPathParams(tracker="likelihood", prune_top=2), {BORN: 0.8, FOUNDED: 0.3, RIVER: 0.9, FAIR: 0.1})
    assert Trace.from_json(t.to_json()) == t
    old = t.to_dict()
    for h in old["details"]["neuropath"]["hops"]:
        for k in ("tracker", "tracker_note", "generated_valid_ids", "judge_call_indices"):
            del h[k]
        for p in h["candidates"]:
            del p["probability"]
    back = Trace.from_dict(old)
    assert all(h.tracker == "generative" and h.generated_valid_ids == [] for h in back.detail(NeuroPathDetail).hops)
    assert all(p.probability is None for h in back.detail(NeuroPathDetail).hops for p in h.candidates)


def test_the_hop_table_shows_the_probability():
    from memrag.viz import tables

    t, _ = run(NeuroPathParams(**ONE_HOP), BEST_LAST)
    df = tables.candidates_table(t.detail(NeuroPathDetail).hops[0])
    assert df["P(yes)"].tolist() == [0.7, 0.2, 0.9] and list(df.columns).index("P(yes)") < list(df.columns).index("fate")
    g, _ = run(NeuroPathParams(**{**ONE_HOP, "tracker": "generative"}), BEST_LAST)
    assert "P(yes)" not in tables.candidates_table(g.detail(NeuroPathDetail).hops[0]).columns


def _hop_view_script() -> None:
    from memrag.app.method_views.neuropath import detail
    from memrag.methods.neuropath.params import NeuroPathParams
    from test_neuropath_tracker import BEST_LAST, ONE_HOP, run

    t, _ = run(NeuroPathParams(**ONE_HOP), BEST_LAST)
    detail(t, None, "k")


def test_the_app_hop_view_shows_the_probabilities_and_who_kept_which_paths():
    from streamlit.testing.v1 import AppTest

    from test_app_pages import plain

    at = AppTest.from_function(_hop_view_script).run()
    assert not at.exception
    page = plain(at)
    assert ("Kept by the model's probability of 'yes': paths 3, 1, extending 3; the generative call itself "
            "picked 1, and named 7, 9, which match no listed path.") in page
    assert "**Tracker:** kept: P(yes) ≥ 0.5, at most 10, most probable first" in page
    table = next(d.value for d in at.dataframe if "P(yes)" in d.value.columns)
    assert table["P(yes)"].tolist() == [0.7, 0.2, 0.9]


def test_estimates_count_the_judge_calls_and_compare_offers_the_trackers():
    from memrag.app.estimates import expected_ask_calls
    from memrag.methods.neuropath.ablations import PRESETS
    from memrag.methods.neuropath.deviations import DEVIATIONS

    generative = expected_ask_calls(["neuropath"])
    assert expected_ask_calls(["neuropath"], {"neuropath": {"tracker": "likelihood"}}) == generative + 2 * 30
    assert expected_ask_calls(["neuropath"], {"neuropath": {"tracker": "likelihood", "prune_top": 5,
                                                            "max_hops": 1}}) == generative - 1 + 5
    preset = next(p for p in PRESETS if "likelihood" in p.name)
    assert (preset.a, preset.b) == ({"tracker": "likelihood"}, {"tracker": "generative"})
    assert any("likelihood" in d.what and "pending measurement" in d.what for d in DEVIATIONS)
    # "As the paper wrote it" turns the likelihood tracker off once it is a default.
    from dataclasses import dataclass

    from memrag.methods.neuropath import SPEC
    from memrag.methods.paper_kit import paper_preset

    @dataclass
    class LaterDefaults(NeuroPathParams):
        tracker: str = "likelihood"
    assert "tracker" not in paper_preset(NeuroPathParams, SPEC.paper_settings).b
    assert paper_preset(LaterDefaults, SPEC.paper_settings).b["tracker"] == "generative"


def test_a_recorded_likelihood_run_replays_with_the_same_judgements(tmp_path):
    """Record once, choose from recordings: the judge calls' probabilities are recorded and the
    replay keeps the same paths in the same order without a live call."""
    from memrag.llm.recordings import Recordings, RecordingLLM

    live, recorder = run(NeuroPathParams(**ONE_HOP), BEST_LAST,
                         llm_class=lambda script: RecordingLLM(ProbScripted(script, judged_by(BEST_LAST))))
    recorder.write(tmp_path, [Q], "replies.jsonl")
    replay = Recordings.load(tmp_path / "replies.jsonl").replay_llm()
    again = neuropath.retrieve(QueryContext(world(), replay, HashEmbedder(DIM, OVERRIDES), Q),
                               NeuroPathParams(**ONE_HOP))
    h, h_live = again.detail(NeuroPathDetail).hops[0], live.detail(NeuroPathDetail).hops[0]
    assert h.tracker == "likelihood" and (h.valid_ids, h.generated_valid_ids) == (h_live.valid_ids, [1]) == ([3, 1], [1])
    assert [p.probability for p in h.candidates] == [p.probability for p in h_live.candidates]
    assert all(again.llm_calls[i].cached for i in h.judge_call_indices)


# ---------------------------------------------------------------- through ask()
def test_the_likelihood_tracker_through_ask_on_a_built_memory():
    from memrag.ask import ask

    docs = [Document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder.", "test", "sample"),
            Document("olen", "Olen Vask", "Ada Brennick married Olen Vask.", "test", "sample"),
            Document("misc", "Miro Tann", "Miro Tann painted the Grey Sea.", "test", "sample")]
    extractions = [{"entities": [], "triples": [["Ada Brennick", "born in", "Port Alder"]]},
                   {"entities": [], "triples": [["Ada Brennick", "married", "Olen Vask"]]},
                   {"entities": [], "triples": [["Miro Tann", "painted", "Grey Sea"]]}]
    memory = run_build(build_memory(None, docs, ScriptedLLM({"index.extract": extractions}),
                                    HashEmbedder(DIM), IndexParams()))
    question = "Whom did Ada Brennick marry?"
    listing = {}

    def track(messages, stage):  # the generative call keeps the first listed path
        listing.update(line.split(": ", 1) for line in messages[-1]["content"].splitlines() if line[:1].isdigit())
        return {"reasoning_chain": "", "valid_ids": [1], "expansion_requirement": "", "expand_ids": [],
                "continue": 0}
    llm = ProbScripted({"query.entities": [{"entities": ["Ada Brennick"]}], "neuropath.track.hop1": track,
                        "neuropath.judge": lambda m, s: "Yes",
                        "answer": [{"reasoning": "r", "answer": "Olen Vask", "cited": [1]}]},
                       judged_by({BORN: 0.1, MARRIED: 0.95}))
    (t,) = ask(memory, question, llm=llm, embedder=HashEmbedder(DIM), methods=["neuropath"],
               params={"neuropath": {"tracker": "likelihood", "answer_passages": 1, "dp_position": "first"}})
    h = t.detail(NeuroPathDetail).hops[0]
    married = next(p for p in h.candidates if p.text.startswith(MARRIED))
    assert h.tracker == "likelihood" and h.valid_ids == [married.listed_as]
    assert h.generated_valid_ids == [1] and listing["1"].startswith(BORN)  # the generative pick differs
    assert t.answer.context_chunk_ids == married.chunk_ids == [1]
    assert [c.stage for c in t.llm_calls] == ["query.entities", "neuropath.track.hop1", "neuropath.judge.hop1",
                                              "neuropath.judge.hop1", "answer"]


# ---------------------------------------------------------------- the real embedded model
@pytest.mark.model
def test_the_likelihood_tracker_with_the_embedded_model_judges_every_new_path():
    """Real calls: one tracking call and one judge call per listed path (three). The query entity is
    given (as the shared entity call's result), so the seeds are the hand-built world's; what the
    model judges is asserted only in its shape, not its quality."""
    from memrag.config import Settings
    from memrag.llm.embedded import EmbeddedLLM

    ctx = QueryContext(world(), EmbeddedLLM(cache_dir=Settings().cache_dir), HashEmbedder(DIM, OVERRIDES), Q)
    ctx.shared["query_entities"] = (["Ada Brennick"], [], None)
    t = neuropath.retrieve(ctx, NeuroPathParams(**ONE_HOP))
    (h,) = t.detail(NeuroPathDetail).hops
    listed = [p for p in h.candidates if p.listed_as is not None]
    assert not h.failed and h.tracker == "likelihood", (h.failure, h.tracker_note)
    assert len(listed) == 3 and all(p.is_new and 0.0 <= p.probability <= 1.0 for p in listed)
    judges = [t.llm_calls[i] for i in h.judge_call_indices]
    assert [c.stage for c in judges] == ["neuropath.judge.hop1"] * 3
    assert all(c.ok and c.completion_tokens == 1 and c.backend == "embedded" for c in judges)
    probability = {p.listed_as: p.probability for p in listed}
    assert h.valid_ids == sorted((n for n in probability if probability[n] >= 0.5), key=lambda n: -probability[n])
    assert all(n in probability for n in h.generated_valid_ids)
    print(f"\n[measured] P(yes) by path: { {p.text: round(p.probability, 3) for p in listed} }; "
          f"kept {h.valid_ids}, the generative call picked {h.generated_valid_ids}")
