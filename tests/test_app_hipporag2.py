"""HippoRAG 2 in the app: its Ask-page views (AppTest, scripted LLM, hash embedder), its Compare
presets, its Learn lessons, and the tables behind the views on the hand-worked memory of
test_hipporag2 (whose seed weights and verdicts are worked out there)."""

from __future__ import annotations

import json
from dataclasses import fields, replace

import pytest

from memrag.app import param_widgets, session
from memrag.app.method_views.hipporag2 import fallback_message
from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.explain import ablations as compare
from memrag.explain import lessons as learn
from memrag.methods.hipporag2 import search as hipporag2
from memrag.viz import tables
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from scripted import ScriptedLLM
from test_app_compare import changed, compare_page, run_compare
from test_app_learn import LEARN, slider
from test_app_pages import (QUESTION, app, ask, ask_page, assert_nothing_raw, frames, home, no_exception,  # noqa: F401
                            plain, scripted, table_with, tiny)
from test_hipporag2 import P3, ctx, keep, world


def only_hipporag2(at):
    at.session_state["ask_methods"] = ["hipporag2"]
    return at.run()


def retrieval_tab(at):
    at.session_state["res_hipporag2_tabs"] = "Retrieval"
    return no_exception(at.run())


def chart_nodes(at) -> list[dict[str, tuple[float, str]]]:
    """Per typed picture on the page (plotly): node id → (marker size, symbol), as the browser gets them."""
    out = []
    for chart in at.get("plotly_chart"):
        for t in json.loads(chart.proto.spec)["data"]:
            if t.get("name") == "nodes":
                m = t["marker"]
                out.append({c.removeprefix("node|"): (size, symbol)
                            for c, size, symbol in zip(t["customdata"], m["size"], m["symbol"])})
    return out


def hippo_trace(at):
    from memrag.app import jobs

    job = jobs.get_job(at.session_state[session.AppState.ask_job.key])
    return next(t for t in job.result if t.method == "hipporag2")


# ------------------------------------------------------------------ the Ask page
def test_the_retrieval_tab_shows_facts_verdicts_seeds_and_masses(tiny):
    at = ask(only_hipporag2(ask_page(tiny)))
    t = hippo_trace(at)
    d = t.detail(HippoRAG2Detail)
    assert not d.fallback_dense and d.phrase_seeds
    at = retrieval_tab(at)
    facts = table_with(at, "verdict")
    assert list(facts["fact"]) == [f"{f.head} | {f.relation} | {f.tail}" for f in d.facts]
    # the script keeps fact 1 only
    assert list(facts["verdict"]) == ["kept"] + ["dropped by recognition memory"] * (len(d.facts) - 1)
    seeds = table_with(at, "passages containing it")
    assert list(seeds["phrase"]) == [s.name for s in d.phrase_seeds]
    assert list(seeds["seed weight"]) == [round(s.weight, 4) for s in d.phrase_seeds]
    kept = d.facts[0]
    assert set(seeds["phrase"]) <= {kept.head, kept.tail}  # only the kept fact's phrases seed
    masses = table_with(at, "share")
    assert list(masses["node"]) == [n.label for n in d.top_nodes]
    assert list(masses["PageRank mass"]) == sorted(masses["PageRank mass"], reverse=True)
    assert "Recognition memory (one LLM call) kept 1 of" in plain(at)
    assert not frames(at)  # no pyvis frame: the PageRank picture is a typed one (plotly)
    (by_id,) = chart_nodes(at)  # node size by mass, seeds as stars
    top = max(d.top_nodes, key=lambda n: n.mass)
    assert by_id[top.node_id][0] == max(size for i, (size, _) in by_id.items() if i != "q")
    assert {by_id[f"e:{s.key}"][1] for s in d.phrase_seeds} == {"star"}
    assert {shape for i, (_, shape) in by_id.items() if i.startswith("c:")} == {"square"}
    ranked = table_with(at, "why")
    assert ranked["why"].str.startswith("PageRank mass").all()
    # the picture steps through the retrieval: at the seeds only the question and its stars are drawn
    picker = at.segmented_control(key="res_hipporag2_hr_step")
    assert picker.options == ["Seeds", "Personalised PageRank", "Passages by PageRank mass"]
    assert picker.value == "Passages by PageRank mass"
    picker.set_value("Seeds").run()
    (seeds_only,) = chart_nodes(no_exception(at))
    assert set(seeds_only) == {"q"} | {f"e:{s.key}" for s in d.phrase_seeds}
    assert_nothing_raw(at)


def test_no_kept_fact_falls_back_to_dense_and_says_so(tiny):
    llm = ScriptedLLM({**scripted().script, "hipporag2.recognition": lambda m, s: {"keep": []}})
    at = ask_page(tiny, llm)
    at.session_state["ask_methods"] = ["hipporag2", "dense"]
    at = ask(at.run())
    d = hippo_trace(at).detail(HippoRAG2Detail)
    assert d.fallback_dense and d.fallback_reason == "recognition memory kept no fact"
    said = "HippoRAG 2 fell back to dense retrieval: recognition memory kept no fact."
    assert said in plain(at)  # beside the other method's answer
    at.session_state["res_pick"] = "hipporag2"
    at = retrieval_tab(at)
    assert plain(at).count(said) == 2  # the side-by-side picture and the Retrieval tab
    assert list(table_with(at, "verdict")["verdict"]) == ["dropped by recognition memory"] * len(d.facts)
    assert not any("passages containing it" in df.value.columns for df in at.dataframe)  # no seeds table
    assert fallback_message(d).startswith("HippoRAG 2 fell back to dense retrieval")


def test_the_sidebar_edits_hipporag2s_parameters(tiny):
    llm = scripted()
    at = app(tiny, llm).run()
    at.checkbox(key=param_widgets.param_key("hipporag2", "recognition")).uncheck().run()
    at.switch_page("app_pages/ask.py").run()
    at = ask(only_hipporag2(at))
    assert [c["stage"] for c in llm.calls] == ["answer"]  # retrieval only: no recognition call
    at = retrieval_tab(at)
    assert set(table_with(at, "verdict")["verdict"]) == {"kept (recognition off)"}
    assert "Recognition memory is off (the retrieval-only variant)" in plain(at)


# ------------------------------------------------------------------ Compare mode
def test_compare_recognition_on_off_and_the_paper_settings_button(tiny):
    at = compare_page(tiny)
    at.segmented_control(key="cmp_method").set_value("hipporag2").run()
    at = no_exception(at)
    assert at.selectbox(key="cmp_preset_hipporag2").value == "recognition memory on / off (retrieval only)"
    at, job = run_compare(at)
    a, b = job.result
    assert (a.label, b.label) == ("A · recognition on", "B · retrieval only")
    assert [c.stage for c in a.trace.llm_calls] == ["hipporag2.recognition", "answer"]
    assert [c.stage for c in b.trace.llm_calls] == ["answer"]
    rows = changed(at)
    assert rows["parameter: recognition"][:2] == ("True", "False")
    kept_a = sum(f.verdict == "kept" for f in a.trace.detail(HippoRAG2Detail).facts)
    assert rows["facts kept"][:2] == (str(kept_a), str(len(b.trace.detail(HippoRAG2Detail).facts)))
    # the paper's settings replace a changed sidebar value in both sets, in one click
    at.session_state[param_widgets.value_key("hipporag2", "damping")] = 0.7
    at.selectbox(key="cmp_preset_hipporag2").set_value("synonymy threshold 0.8 / 0.9").run()
    assert [s.damping for s in _sets(at)] == [0.7, 0.7]  # the preset starts from the sidebar
    next(b for b in at.button if b.label == "Start both from the paper's settings").click().run()
    a_set, b_set = _sets(no_exception(at))
    assert (a_set, b_set) == compare.preset_params("hipporag2", compare.paper_params("hipporag2"),
                                                   compare.preset("hipporag2", "synonymy threshold 0.8 / 0.9"))
    assert (a_set.damping, a_set.synonymy_threshold, b_set.synonymy_threshold) == (0.5, 0.8, 0.9)


def _sets(at) -> list[HippoRAG2Params]:
    """Compare mode's two stored parameter sets."""
    def value(scope: str, name: str):
        return at.session_state[param_widgets.value_key("hipporag2", name, scope)]
    return [HippoRAG2Params(**{f.name: value(scope, f.name) for f in fields(HippoRAG2Params)})
            for scope in ("cmp_a", "cmp_b")]


def test_paper_params_are_the_defaults_with_paper_settings():
    assert compare.paper_params("hipporag2") == HippoRAG2Params()
    assert compare.paper_params("neuropath").dp_position == "first"
    names = [p.name for p in compare.PRESETS["hipporag2"]]
    assert "recognition memory on / off (retrieval only)" in names and "synonymy threshold 0.8 / 0.9" in names


def test_compare_facts_of_a_hipporag2_run():
    t = hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)
    assert compare.retrieval_facts(t) == {"facts kept": 2, "phrase seeds": 3,
                                          "PageRank mass on phrases": t.detail(HippoRAG2Detail).phrase_mass,
                                          "dense fallback (1 = yes)": 0}


# ------------------------------------------------------------------ the tables, on the hand-worked memory
def test_tables_show_the_verdicts_and_the_seed_arithmetic():
    # keeping T0 and T2 of 3 (test_hipporag2): Tollmere 1/2 = .5, Ada (1/2 + .2/2)/2 = .3, Brennick Mill .2
    t = hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)
    facts = tables.hippo_facts_table(t)
    assert list(facts["verdict"]) == ["kept", "dropped by recognition memory", "kept"]
    assert list(facts["score"]) == pytest.approx([1.0, 0.6, 0.2], abs=1e-4)
    seeds = tables.hippo_phrase_seeds_table(t)
    assert list(seeds["phrase"]) == ["Tollmere", "Ada Brennick", "Brennick Mill"]
    assert list(seeds["seed weight"]) == pytest.approx([0.5, 0.3, 0.2], abs=1e-4)
    assert list(seeds["passages containing it"]) == [2, 2, 1]
    assert seeds["how"][0] == "1.000 ÷ 2 passage(s)"
    passages = tables.hippo_passage_seeds_table(t)
    assert list(passages["seed weight"]) == pytest.approx([0.05, 0.04375, 0.025, 0.0125, 0.0], abs=1e-5)
    mass = tables.hippo_mass_table(t)
    assert list(mass["PageRank mass"]) == sorted(mass["PageRank mass"], reverse=True)
    assert mass["seed weight"].notna().sum() == 3 + 4  # three phrase seeds, four passages with a dense seed
    off = hipporag2.retrieve(ctx(world()), replace(P3, recognition=False))
    assert set(tables.hippo_facts_table(off)["verdict"]) == {"kept (recognition off)"}


# ------------------------------------------------------------------ the Learn page
def test_lessons_name_the_kept_facts_seeded_phrases_mass_and_winning_passages():
    t = hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)
    ls = learn.lessons(t)
    assert [x.title for x in ls] == [s.title for s in t.steps]
    assert [x.concept for x in ls] == ["parahippocampal regions ↔ the encoder", "recognition memory ↔ the fact filter",
                                       "hippocampal index ↔ the graph", "pattern completion ↔ personalised PageRank",
                                       "index → neocortex"]
    assert "kept 2 of 3 facts" in ls[1].here and "dropped 'Tollmere | lies on | Harrow River'" in ls[1].here
    assert ls[2].names == ["Tollmere", "Ada Brennick", "Brennick Mill"]  # the trace's own seeds
    assert "'Tollmere' 0.5 (in 2 passage(s))" in ls[2].here
    assert ls[3].names[0] == "Harrow River"  # reached by the walk, never seeded
    assert f"{t.detail(HippoRAG2Detail).phrase_mass:.0%} of its mass on phrase nodes" in ls[3].here
    assert ls[4].names[0] == t.chunk(t.ranked[0].chunk_id).title
    fallback = learn.lessons(hipporag2.retrieve(ctx(world(), keep()), P3))
    assert fallback[-1].concept == "no cue to complete" and "fell back to dense retrieval" in fallback[-1].here
    assert {p.brain for p in learn.ANALOGIES["hipporag2"]} >= {"neocortex", "hippocampal index",
                                                               "parahippocampal regions", "pattern completion"}
    assert "Teyler & DiScenna, 1986" in learn.SOURCES and "Gutiérrez et al., 2025" in learn.SOURCES


def test_the_learn_step_picture_uses_the_pagerank_marks_and_mass_sizes():
    from memrag.explain.learn_picture import learn_pictures
    from memrag.viz import figure, style
    from memrag.viz.look import Look

    t = hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)
    last = learn_pictures(t)[-1]
    nodes = {n.id: n for n in last.nodes}
    assert nodes["e:tollmere"].role == "seed" and nodes["e:harrow river"].role == "phrase"
    look = Look()
    fills = {i: style.node_mark(nodes[i], look).fill for i in ("e:tollmere", "e:harrow river")}
    assert fills["e:tollmere"] != fills["e:harrow river"]  # a seeded phrase and a reached one look apart
    drawn = next(tr for tr in figure.picture_figure(last, look, step=len(t.steps) - 1).data if tr.name == "nodes")
    size = dict(zip((c.removeprefix(figure.NODE) for c in drawn.customdata), drawn.marker.size))
    assert size["e:tollmere"] > size["e:harrow river"]  # more PageRank mass, larger


def test_learn_replays_the_users_hipporag2_trace(tiny):
    at = ask(ask_page(tiny))
    t = hippo_trace(at)
    at.switch_page(LEARN).run()
    at.segmented_control(key="learn_method").set_value("hipporag2").run()
    at = no_exception(at)
    assert [o.split(". ", 1)[1] for o in slider(at).options] == [s.title for s in t.steps]
    assert "hippocampal index" in plain(at) and "Teyler & DiScenna" in plain(at)
    slider(at).set_value(2).run()  # the seeds
    text = plain(no_exception(at))
    assert "hippocampal index ↔ the graph" in text
    for s in t.detail(HippoRAG2Detail).phrase_seeds:
        assert f"'{s.name}'" in text
    assert_nothing_raw(at)


def test_the_ask_pages_gold_answer_is_named_on_the_picture():
    """The page says the question's gold answers around its pictures (a view's arguments carry only the
    gold passages); HippoRAG 2's picture labels the entity named like one, and only inside the block."""
    from memrag.app.method_views import common, hipporag2 as views

    t = hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)
    with common.gold_answers(["Harrow River"]):
        inside = views.overview_picture(t, None, 400).build(frozenset())
    outside = views.first_detail_picture(t, None).build(frozenset())
    assert next(n for n in inside.nodes if n.id == "e:harrow river").label == "Harrow River (gold answer)"
    assert next(n for n in outside.nodes if n.id == "e:harrow river").label == "Harrow River"
