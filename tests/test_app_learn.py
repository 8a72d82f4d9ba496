"""The Learn page (AppTest, scripted LLM, hash embedder) and the lessons it teaches from a trace."""

from __future__ import annotations

import json

import pytest

from memrag.app import jobs, session
from memrag import demo, sample
from memrag.explain import lessons as learn
from memrag.index import store
from memrag.ask import ask as run_ask
from memrag.methods.neuropath.params import NeuroPathParams
from memrag.app.learn_views import DEMO, LAST_ASK
from memrag.explain import step_picture
from memrag.viz import figure
from memrag.methods.ecphory.detail import EcphoryDetail
from scripted import ScriptedLLM
from test_app_pages import (QUESTION, app, assert_nothing_raw, embedder, frames, no_exception, plain,  # noqa: F401
                            recorded, scripted, tiny, home)

LEARN = "app_pages/learn.py"


def known(trace, step: int) -> set[str]:
    """Ids of the trace's graph nodes added by steps 0..step (what the replay has shown so far)."""
    return {n.id for n in step_picture.known_nodes(trace, step)}


def drawn(at) -> set[str]:
    """Ids of the nodes the step's picture draws (a plotly chart, memrag.viz.figure: nothing of later steps)."""
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    return {c.removeprefix(figure.NODE) for t in spec["data"] if t.get("name") == "nodes" for c in t["customdata"]}


def slider(at):
    return next(s for s in at.select_slider if s.key.startswith("learn_step_"))


def asked(tiny_dir, llm=None):
    """The Ask page's last result for QUESTION, then the Learn page."""
    at = app(tiny_dir, llm).run()
    at.switch_page("app_pages/ask.py").run()
    at.radio(key="ask_kind").set_value("Your own question").run()
    at.text_area(key="ask_free").set_value(QUESTION).run()
    next(b for b in at.button if b.label == "Ask").click().run()
    job = jobs.get_job(at.session_state[session.AppState.ask_job.key])
    assert job.wait(60) and job.status == jobs.DONE, job.error
    at.run()  # the Ask page stores the finished result
    at.switch_page(LEARN).run()
    return no_exception(at), {t.method: t for t in job.result}


def test_learn_replays_the_last_ask_and_the_slider_moves_the_graph(tiny):
    at, traces = asked(tiny)
    assert at.radio(key="learn_source").options == [LAST_ASK]
    np_trace = traces["neuropath"]
    s = slider(at)
    assert s.options == ["1. Seeds", "2. Hop 1", "3. Hop 2", "4. Completion"] and s.value == 0
    assert drawn(at) == known(np_trace, 0) == {"e:ada brennick", "e:ada brenick"}
    text = plain(at)
    assert "place cells ↔ entities" in text and "'Ada Brennick' → 'Ada Brennick'" in text
    slider(at).set_value(2).run()
    assert drawn(no_exception(at)) == known(np_trace, 2)
    assert {"e:port alder", "e:vell river"} <= drawn(at)
    text = plain(at)
    assert "Hop 2:" in text and "the river of Port Alder" in text  # the model's requirement, quoted
    slider(at).set_value(3).run()
    assert "replay ↔ post-retrieval completion" in plain(no_exception(at))

    at.segmented_control(key="learn_method").set_value("ecphory").run()
    ec_trace = traces["ecphory"]
    s = slider(no_exception(at))
    assert [o.split(". ", 1)[1] for o in s.options] == [st.title for st in ec_trace.steps]
    first = drawn(at)
    assert first == known(ec_trace, 0)
    slider(at).set_value(len(s.options) - 1).run()
    last = drawn(no_exception(at))
    assert first < last and any(i.startswith("c:") for i in last)  # the context chunks arrive last
    assert "cue ↔ query cue" not in plain(at) and "recollection → answer" in plain(at)
    assert_nothing_raw(at)


def test_learn_replays_a_recorded_demo_question_without_asking_the_model(recorded):
    live = scripted("Grey Sea")
    at = app(recorded, live).run()
    at.switch_page(LEARN).run()
    at = no_exception(at)
    assert at.radio(key="learn_source").options == [DEMO]
    assert at.selectbox(key="learn_demo").value == 0
    assert live.calls == []
    assert len(at.get("plotly_chart")) == 1 and slider(at).options[0] == "1. Seeds"
    before = drawn(at)
    slider(at).set_value(1).run()
    assert drawn(no_exception(at)) > before


def test_hostile_names_in_a_lesson_stay_text(tiny):
    track = {"reasoning_chain": "Miro Tann wrote <script>alert(1)</script> ![x](http://example.invalid/leak)",
             "valid_ids": [1, 2], "expansion_requirement": "", "expand_ids": [], "continue": 0}
    llm = ScriptedLLM({"query.entities": lambda m, s: {"entities": ["Miro Tann"]},
                       "neuropath.track": lambda m, s: track,
                       "hipporag2.recognition": lambda m, s: {"keep": [1]},
                       "answer": lambda m, s: {"reasoning": "", "answer": "<img src=x onerror=alert(3)>",
                                               "cited": []}})
    at, _ = asked(tiny, llm)
    slider(at).set_value(1).run()
    text = plain(no_exception(at))
    assert "<script>alert(1)</script>" in text and "![x](http://example.invalid/leak)" in text
    assert_nothing_raw(at)


def test_learn_without_a_trace_says_what_to_do(home, monkeypatch, tmp_path):
    monkeypatch.setattr(demo, "sample_memory_dir", lambda: tmp_path / "no-sample")
    monkeypatch.setattr(sample, "sample_memory_dir", lambda: tmp_path / "no-sample")  # what the sample rule reads
    at = app().run()
    at.switch_page(LEARN).run()
    assert "Ask a question with NeuroPath, EcphoryRAG or HippoRAG 2 on the Ask page first" in plain(no_exception(at))
    assert not frames(at)


# ------------------------------------------------------------------ the lessons alone
@pytest.fixture()
def traces(tiny):
    memory = store.load(tiny, embedder().model_id)

    def run(params=None):
        return {t.method: t for t in run_ask(memory, QUESTION, llm=scripted(), embedder=embedder(),
                                             methods=["neuropath", "ecphory"], params=params)}
    return run


def test_lessons_follow_the_steps_and_name_what_the_trace_did(traces):
    t = traces()
    np_lessons = learn.lessons(t["neuropath"])
    assert [x.title for x in np_lessons] == ["Seeds", "Hop 1", "Hop 2", "Completion"]
    assert [x.concept for x in np_lessons] == ["place cells ↔ entities"] + \
        ["place fields ↔ triples · preplay ↔ path tracking"] * 2 + ["replay ↔ post-retrieval completion"]
    assert np_lessons[0].names == ["Ada Brennick", "Ada Brenick"]  # the seed, then its coreference candidate
    assert "Ada Brennick was born in Port Alder." in np_lessons[1].here and "It asked to go on." in np_lessons[1].here
    # hop 2 lists the kept path and its extension; the script judges the kept one (#1) valid
    assert ("1 new path(s) grew from the ends of the paths it chose to extend; 2 were listed for the model. "
            "Its judgement: 1 valid; 1 listed, not kept") in np_lessons[2].here  # the tables' words
    assert np_lessons[2].names == ["Ada Brennick", "Port Alder"]
    assert "searched again" in np_lessons[3].here

    ec_lessons = learn.lessons(t["ecphory"])
    assert [x.title for x in ec_lessons] == [s.title for s in t["ecphory"].steps]
    assert ec_lessons[0].names == ["Ada Brennick"] and "cue" in ec_lessons[0].concept
    assert ec_lessons[2].concept == "ecphory ↔ associative activation" and "Round 1: seeds" in ec_lessons[2].here
    assert ec_lessons[-2].names == [a.name for a in t["ecphory"].detail(EcphoryDetail).final]


def test_a_lesson_tells_what_the_parameters_changed(traces):
    off = traces({"neuropath": NeuroPathParams(completion=False, max_hops=1)})["neuropath"]
    lessons = learn.lessons(off)
    assert [x.title for x in lessons] == ["Seeds", "Hop 1", "Completion"]
    assert "Completion is off in this run" in lessons[-1].here


def test_dense_is_not_taught(traces):
    from memrag.trace import Trace

    with pytest.raises(ValueError, match="teaches"):
        learn.lessons(Trace(method="dense", question="q"))
    assert set(learn.teachable([*traces().values(), Trace(method="dense", question="q")])) == {"neuropath",
                                                                                                 "ecphory"}
    assert learn.TEACHABLE == ("neuropath", "ecphory", "hipporag2")


def test_a_click_on_the_learn_graph_opens_the_panel_python_writes(recorded):
    """A click on a node of the step's picture (what graph_view._clicked keeps) opens the panel: the
    node's name, what the step says of it and, from the memory, its relations."""
    from memrag.app import graph_view

    at = app(recorded, scripted()).run()
    at.switch_page(LEARN).run()
    slider(no_exception(at)).set_value(1).run()
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    nodes = next(t for t in spec["data"] if t.get("name") == "nodes")
    ident, hover = next((c.removeprefix(figure.NODE), h) for c, h in zip(nodes["customdata"], nodes["hovertext"])
                        if c.startswith(figure.NODE + "e:"))
    at.session_state[graph_view.chosen_key(f"{slider(at).key}_graph")] = ("node", ident)
    text = plain(no_exception(at.run()))
    assert "relation(s)" in text and "mention(s)" in text, text[-1500:]  # the memory's facts
    assert [t.value for t in at.text if t.value == hover]  # what the step says of it, as text
    assert at.get("plotly_chart")[0].proto.spec == chart.proto.spec  # the same step's picture
    assert slider(at).value == 1  # the step stays
