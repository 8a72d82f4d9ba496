"""The Memory and Ask pages under streamlit's AppTest, driven by a scripted LLM and a hash embedder.

Each test runs the real app script (`app.py` → page) in-process: widgets are set the way a user
would set them, background jobs run in their worker threads, and the graphs are read back from the
iframe's `srcdoc`. Nothing here loads the embedded model or the sentence-transformers embedder.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memrag import tracefile
from memrag.app import jobs, param_widgets, session
from memrag.app.work import build_work
from memrag import demo, sample
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import Document
from scripted import HashEmbedder, ScriptedLLM

APP = str(Path(__file__).resolve().parent.parent / "app.py")
DIM = 64
HOSTILE_TITLE = "<img src=x onerror=alert(2)> ![x](http://example.invalid/leak)"
DOCS = [
    Document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder.", "test", "sample"),
    Document("port", "Port Alder", "Port Alder lies on the Vell River.", "test", "sample"),
    Document("hostile", HOSTILE_TITLE, "Miro Tann painted the Grey Sea. <script>alert(1)</script>", "test", "sample"),
]
EXTRACTIONS = [
    {"entities": [{"name": "Ada Brennick", "type": "person", "description": "a baker", "importance": 5},
                  {"name": "Ada Brenick", "type": "person", "description": "a misspelling", "importance": 1}],
     "triples": [["Ada Brennick", "born in", "Port Alder"]]},
    {"entities": [], "triples": [["Port Alder", "lies on", "Vell River"]]},
    {"entities": [], "triples": [["Miro Tann", "painted", "Grey Sea"], ["Miro Tann", "wrote", "<script>alert(1)</script>"]]},
]
QUESTION = "Which river flows by the birthplace of Ada Brennick?"
# name vectors: the two spellings of Ada are 0.87 alike, so a 0.8 threshold links them and 0.9 does not
NAMES = {"Ada Brennick": [1, 0, 0], "Ada Brenick": [0.87, 0.493, 0]}


def embedder() -> HashEmbedder:
    return HashEmbedder(DIM, overrides=NAMES)


def scripted(answer: str = "Vell River") -> ScriptedLLM:
    track = {"reasoning_chain": "Ada Brennick was born in Port Alder.", "valid_ids": [1],
             "expansion_requirement": "the river of Port Alder", "expand_ids": [1], "continue": 1}
    return ScriptedLLM({
        "index.extract": lambda m, s: _extraction_for(m),
        "query.entities": lambda m, s: {"entities": ["Ada Brennick"]},
        "neuropath.track": lambda m, s: track,
        "hipporag2.recognition": lambda m, s: {"keep": [1]},  # the fourth method's one call
        "answer": lambda m, s: {"reasoning": "from the passages", "answer": answer, "cited": [1]},
    })


def _extraction_for(messages) -> dict:
    prompt = messages[-1]["content"]
    for doc, ex in zip(DOCS, EXTRACTIONS):
        if doc.text in prompt:
            return ex
    return {"entities": [{"name": "Lone Fact", "type": "concept", "description": "", "importance": 1}],
            "triples": []}


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture()
def tiny(home) -> Path:
    path = home / "memories" / "tiny"
    run_build(build_memory(path, DOCS, scripted(), embedder(), IndexParams(), name="tiny"))
    return path


def app(memory_dir: Path | None = None, llm=None, page: str | None = "app_pages/memory.py") -> AppTest:
    """The app on `page` (the Memory page by default; None: the default page, the start page)."""
    at = AppTest.from_file(APP, default_timeout=60)
    if page is not None:
        at.switch_page(page)
    at.session_state[session.TEST_LLM_KEY] = llm or scripted()
    at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
    if memory_dir is not None:
        at.session_state[session.AppState.active_memory.key] = str(memory_dir)
    return at


def no_exception(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def frames(at: AppTest) -> list[str]:
    """The frames holding anything but a scroll script (memrag.app.focus): every graph is a typed
    picture drawn by plotly on the page, so none should be there."""
    return [f.proto.srcdoc for f in at.get("iframe") if not f.proto.srcdoc.startswith("<script>")]


def pictures(at: AppTest) -> list[dict[str, str]]:
    """The typed pictures (memrag.viz.figure) on the page as the browser receives them: each clickable
    point's customdata ("node|<id>", "edge|<id>") → its hover text."""
    out = []
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        points = {c: h for t in spec["data"] for c, h in zip(t.get("customdata") or [], t.get("hovertext") or [])
                  if isinstance(c, str) and c.startswith(("node|", "edge|"))}
        if points:
            out.append(points)
    return out


def route_charts(at: AppTest) -> list[list[str]]:
    """The hover texts of the nodes of every typed picture drawn by plotly (memrag.viz.figure)."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [t.get("hovertext", []) for spec in specs for t in spec["data"] if t.get("name") == "nodes"]


def wait_for(at: AppTest, job_key: str) -> jobs.Job:
    job = jobs.get_job(at.session_state[job_key])
    assert job is not None and job.wait(60), "the background job did not finish"
    return job


def table_with(at: AppTest, column: str):
    """The first dataframe on the page that has `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def click(at: AppTest, label: str) -> AppTest:
    return next(b for b in at.button if b.label == label).click().run()


def all_markdown(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [getattr(e, "value", "") for kind in ("error", "warning", "info", "success") for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def plain(at: AppTest) -> str:
    """What the markdown elements display (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", all_markdown(at))


def assert_nothing_raw(at: AppTest) -> None:
    """No untrusted markup reached a markdown element unescaped."""
    md = all_markdown(at)
    assert not re.search(r"(?<!\\)<(script|img)", md), md
    assert "](http" not in md


# ================================================================== Memory page
def numbers(value) -> list:
    """A plotly array as sent: a list, or numpy's bytes in base64 ({"dtype", "bdata"})."""
    if isinstance(value, dict):
        import numpy as np
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def chart_spec(at: AppTest, legend_title: str) -> dict:
    """A plotly chart of the knowledge-graph tab as the browser receives it: the map ("type
    (entities)") or the chosen entity's neighbourhood ("lit (entities)")."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (spec,) = [s for s in specs if s["layout"]["legend"]["title"]["text"] == legend_title]
    return spec


def legend_counts(spec: dict) -> dict[str, int]:
    return {t["name"].rsplit(" (", 1)[0]: int(t["name"].rsplit("(", 1)[1].rstrip(")").replace(",", ""))
            for t in spec["data"] if t.get("showlegend") is not False and t["name"] != "links"}


def test_memory_page_draws_the_whole_memory_and_a_choice_lights_its_neighbourhood(tiny):
    at = no_exception(app(tiny).run())
    assert legend_counts(chart_spec(at, "type (entities)")) == {"other": 5, "person": 2}
    assert "All 7 entities and 4 links of this memory" in plain(at)
    assert_nothing_raw(at)
    # part of a name chooses its best match at once: its panel and its lit neighbourhood
    at.text_input(key="mem_kg_find").set_value("tann").run()
    no_exception(at)
    assert at.selectbox(key="mem_kg_pick").value == "miro tann"
    assert "Miro Tann" in [h.value for h in at.subheader]
    assert "Lit: Miro Tann, its neighbours: 3 entities, 2 links." in plain(at)
    lit = chart_spec(at, "lit (entities)")
    assert sum(legend_counts(lit).values()) == 3
    words = {a["text"] for a in lit["layout"]["annotations"]}
    assert {"Miro Tann", "Grey Sea", "&lt;script&gt;alert(1)&lt;/script&gt;"} <= words  # hostile: escaped text
    relations = next(df for df in (d.value for d in at.dataframe) if "relation" in df.columns)
    assert set(relations["relation"]) == {"painted", "wrote"}
    assert_nothing_raw(at)
    # expanding: the caption, the legend and the drawing grow together; the map stays as it was
    the_map = chart_spec(at, "type (entities)")
    at.text_input(key="mem_kg_find").set_value("Port Alder").run()
    at.button(key="mem_kg_expand").click().run()
    lit = chart_spec(no_exception(at), "lit (entities)")
    assert "Lit: Port Alder, its neighbours and the neighbours of 3 expanded: 3 entities, 2 links." in plain(at)
    drawn = sum(len(numbers(t["customdata"])) for t in lit["data"] if t.get("mode") == "markers")
    assert sum(legend_counts(lit).values()) == 3 == drawn
    assert at.button(key="mem_kg_expand").disabled  # expanded already
    assert chart_spec(at, "type (entities)") == the_map
    # a type filter draws only those types on the map
    at.multiselect(key="mem_kg_types").set_value(["person"]).run()
    assert "2 of 7 entities (person)" in plain(no_exception(at))
    assert legend_counts(chart_spec(at, "type (entities)")) == {"person": 2}


def test_coreference_threshold_slider_changes_the_links(tiny):
    at = app(tiny).run()
    at.session_state["mem_tabs"] = "Coreference candidates"
    at = no_exception(at.run())
    (drawn,) = pictures(at)
    assert {"node|e:ada brennick", "node|e:ada brenick"} <= set(drawn)
    assert any("Ada Brenick is in Ada Brennick's candidate set" in h for c, h in drawn.items() if c.startswith("edge|"))
    preview = table_with(at, "weakest links")
    assert preview["threshold"].tolist() == [0.7, 0.8, 0.9]
    assert preview.set_index("threshold").loc[0.9, "links"] < preview.set_index("threshold").loc[0.8, "links"]
    at.select_slider(key="mem_coref_th").set_value(0.9).run()
    assert pictures(no_exception(at)) == []  # no links at 0.9: no empty picture, a sentence instead
    assert "No entity has a candidate at cosine ≥ 0.9." in plain(at)


def test_other_memory_tabs_render_tables_and_chunk_text(tiny):
    at = app(tiny).run()
    for tab in ("Engrams", "Documents and chunks", "Indexing cost"):
        at.session_state["mem_tabs"] = tab
        no_exception(at.run())
        assert at.dataframe, tab
        assert_nothing_raw(at)
    cost = table_with(at, "completion tokens")
    assert cost.loc[0, "stage"] == "index.extract" and cost.loc[0, "calls"] == 3
    at.session_state["mem_tabs"] = "Documents and chunks"
    at.run()
    at.number_input(key="mem_chunk").set_value(2).run()
    assert any("<script>alert(1)</script>" in t.value for t in at.text)  # shown literally, as text


def test_upload_builds_in_the_background_and_opens_the_new_memory(home):
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain"),
                                   ("empty.txt", b"   ", "text/plain")])
    next(t for t in at.text_input if t.label == "memory name").set_value("My Notes!").run()
    no_exception(at)
    md = plain(at)
    assert "1 document(s), 1 chunk(s) → memory 'my-notes'" in md
    assert "empty.txt: empty file" in md  # refused with its reason, the other file kept
    click(at, "Build memory")
    job = wait_for(at, session.AppState.build_job.key)
    assert job.status == jobs.DONE, job.error
    at = no_exception(at.run())
    assert at.session_state[session.AppState.active_memory.key] == str(home / "memories" / "my-notes")
    assert sum(legend_counts(chart_spec(at, "type (entities)")).values()) >= 2  # the new memory's map
    at.text_input(key="mem_kg_find").set_value("Ada Brennick").run()
    assert "Ada Brennick" in [h.value for h in no_exception(at).subheader]
    kinds = [e.kind for e in job.events]
    assert kinds[0] == "start" and "chunk_done" in kinds and kinds[-1] == "done"


def test_an_upload_is_parsed_once_not_on_every_rerun(home, monkeypatch):
    from memrag.index import chunk, readers

    reads, chunkings = [], []
    real_read, real_chunk = readers.read_bytes, chunk.chunk_document
    monkeypatch.setattr(readers, "read_bytes", lambda name, *a, **k: reads.append(name) or real_read(name, *a, **k))
    monkeypatch.setattr(chunk, "chunk_document", lambda *a, **k: chunkings.append(1) or real_chunk(*a, **k))
    at = no_exception(app().run())
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain"),
                                   ("....txt", b"Dots before the suffix.", "text/plain")]).run()
    assert "2 document(s), 2 chunk(s)" in plain(no_exception(at))
    assert sorted(reads) == ["....txt", "notes.txt"] and len(chunkings) == 2
    for name in ("first", "second"):  # reruns: typing a name, any widget
        next(t for t in at.text_input if t.label == "memory name").set_value(name).run()
        assert f"2 document(s), 2 chunk(s) → memory '{name}'" in plain(no_exception(at))
    assert len(reads) == 2 and len(chunkings) == 2, (reads, chunkings)
    # another file set is read afresh
    at.file_uploader[0].set_value([("other.md", b"# Other\n\nOther words.", "text/markdown")]).run()
    assert "1 document(s), 1 chunk(s)" in plain(no_exception(at)) and reads[-1] == "other.md"


def test_a_build_job_survives_leaving_the_page(tiny):
    """A job started elsewhere is found by id after a page switch, and its panel shows progress."""
    gate = threading.Event()

    def slow(job: jobs.Job) -> dict:
        job.report("start", total=2, done=1, note="reading chunk 2 of 2")
        gate.wait(30)
        return {"path": str(tiny), "memory": None}

    job = jobs.start_job("build", "building tiny", slow, total=2, meta={"path": str(tiny)})
    at = app(tiny)
    at.session_state[session.AppState.build_job.key] = job.id
    at = no_exception(at.run())
    assert at.get("progress")[0].proto.value == 50
    at.switch_page("app_pages/ask.py").run()
    at.switch_page("app_pages/memory.py").run()
    assert at.get("progress") and job.status == jobs.RUNNING
    gate.set()
    assert job.wait(10)
    at = no_exception(at.run())
    assert not at.get("progress") and any("finished" in s.value for s in at.success)


def test_a_running_build_shows_the_chunk_being_read_failures_and_the_growing_graph(home):
    """While a build waits on its second chunk, the panel shows that chunk, the first chunk's
    failure with the model's raw reply, and the graph made so far."""
    gate = threading.Event()

    def extract(messages, stage):
        prompt = messages[-1]["content"]
        if "Port Alder lies" in prompt:
            gate.wait(30)
            return EXTRACTIONS[1]
        if "Ada Brennick was born" in prompt:
            return EXTRACTIONS[0]
        return "<img src=x onerror=alert(1)> not JSON"

    llm = ScriptedLLM({"index.extract": extract})
    docs = [DOCS[2], DOCS[0], DOCS[1]]  # the hostile one fails, Ada's is read, Port Alder's waits
    path = home / "memories" / "live"
    job = jobs.start_job("build", "building live", build_work(path, docs, llm, embedder(), IndexParams()),
                         total=3)
    try:
        deadline = time.time() + 20
        while job.state.get("chunks_done", 0) < 2 and time.time() < deadline:
            job.wait(0.05)
        at = app()
        at.session_state[session.AppState.build_job.key] = job.id
        at = no_exception(at.run())
        assert any(t.value == "Port Alder lies on the Vell River." for t in at.text)  # the chunk being read
        assert any("not JSON" in c.value for c in at.code)  # the failed chunk's raw reply, as code
        (drawn,) = pictures(at)
        assert {c for c in drawn if c.startswith("node|")} == {"node|e:ada brennick", "node|e:ada brenick",
                                                                "node|e:port alder"}
        links = [h for c, h in drawn.items() if c.startswith("edge|")]
        assert any(" born in " in h for h in links) and any("0.87" in h for h in links)
        assert_nothing_raw(at)
    finally:
        gate.set()
        job.wait(30)
    assert job.status == jobs.DONE


def test_cancel_button_stops_a_build_between_steps(home):
    def looping(job: jobs.Job) -> None:
        job.report("start", total=10, done=0)
        while True:
            job.check_cancel()
            time.sleep(0.02)

    job = jobs.start_job("build", "building forever", looping, total=10)
    at = app()
    at.session_state[session.AppState.build_job.key] = job.id
    at = click(no_exception(at.run()), "Cancel")
    assert job.wait(10) and job.status == jobs.CANCELLED
    at = no_exception(at.run())
    assert "The build was cancelled" in plain(at)


# ================================================================== Ask page
def ask_page(tiny: Path, llm=None) -> AppTest:
    at = app(tiny, llm).run()
    at.switch_page("app_pages/ask.py")
    return no_exception(at.run())


def ask(at: AppTest, question: str = QUESTION) -> AppTest:
    if question:
        at.radio(key="ask_kind").set_value("Your own question").run()
        at.text_area(key="ask_free").set_value(question).run()
    click(at, "Ask")
    job = wait_for(at, session.AppState.ask_job.key)
    assert job.status == jobs.DONE, job.error
    return no_exception(at.run())


def test_ask_shows_four_methods_with_graphs_tables_and_costs(tiny):
    llm = scripted()
    at = ask(ask_page(tiny, llm))
    answers = [m.value for m in at.markdown if m.value.startswith("**Answer:**")]
    assert answers == ["**Answer:** Vell River"] * 4
    graphs = frames(at)
    # EcphoryRAG's, HippoRAG 2's and Dense's small typed pictures beside the focused NeuroPath route, and
    # NeuroPath's hop 1 route in its Retrieval tab: no pyvis frame
    assert len(graphs) == 0
    routes = route_charts(at)
    assert len(routes) == 5  # typed pictures: plotly charts whose clicks reach Python
    drawn = pictures(at)
    # EcphoryRAG: the question, its cue, the engrams it activated, joined by what activated them
    assert any("node|cue:0" in p and any(c.startswith("edge|a:q->") for c in p) for p in drawn)
    assert any("edge|q>c:0" in p for p in drawn)  # Dense: the question and its ranked passages
    assert any(any(h.startswith("#1 · ") for h in p.values()) and any(c.startswith("edge|context:") for c in p)
               for p in drawn)  # HippoRAG 2: passages by rank, each joined to the phrases in it
    # the kept paths go through Port Alder; the listed path that reached the river is folded into a count
    assert any(any(n.startswith("Port Alder") for n in r) and any("not kept" in n for n in r) for r in routes), routes
    stages = [c["stage"] for c in llm.calls]
    assert stages.count("query.entities") == 1 and stages.count("answer") == 4
    assert stages.count("hipporag2.recognition") == 1
    totals = table_with(at, "recorded calls")
    assert totals["method"].tolist()[-1].startswith("all methods")
    charts = len(at.get("plotly_chart"))  # the cost chart is drawn only when its tab is opened
    at.session_state["res_cost_tabs"] = "As a chart"
    at = no_exception(at.run())
    assert len(at.get("plotly_chart")) == charts + 1
    assert_nothing_raw(at)


def test_ask_widgets_change_what_is_computed(tiny):
    llm = scripted()
    at = app(tiny, llm).run()  # set on the Memory page: parameters live in the session, not the page
    at.number_input(key=param_widgets.param_key("neuropath", "max_hops")).set_value(1).run()
    at.switch_page("app_pages/ask.py").run()
    assert at.number_input(key=param_widgets.param_key("neuropath", "max_hops")).value == 1
    assert at.session_state[param_widgets.value_key("neuropath", "max_hops")] == 1
    at.session_state["ask_methods"] = ["neuropath"]
    at = ask(at.run())
    assert [c["stage"] for c in llm.calls] == ["query.entities", "neuropath.track.hop1", "answer"]
    # one method: no side-by-side row, only the detail's hop 1 route
    assert len(frames(at)) == 0 and len(route_charts(at)) == 1
    # the LLM-call inspector shows one call in full
    at.session_state["res_neuropath_tabs"] = "LLM calls"
    at = no_exception(at.run())
    codes = [c.value for c in at.code]
    assert any("Ada Brennick" in c for c in codes)


def test_ecphory_replay_slider_and_inspector(tiny):
    at = ask(ask_page(tiny))
    at.session_state["res_pick"] = "ecphory"
    at = no_exception(at.run())
    slider = at.select_slider(key="res_ecphory_ec_step")
    assert slider.options[-1] == "Context" and slider.value == len(slider.options) - 1
    final_nodes = {c for c in pictures(at)[-1] if c.startswith("node|")}  # the Retrieval tab's picture
    at.select_slider(key="res_ecphory_ec_step").set_value(0).run()
    first = pictures(no_exception(at))[-1]
    # the cues step draws the question and its cues, nothing activated yet; the last step the passages
    assert {c for c in first if c.startswith("node|")} == {"node|q", "node|cue:0"}, first
    assert any(c.startswith("node|c:") for c in final_nodes) and any(c.startswith("node|e:") for c in final_nodes)
    assert "Cues: 1 cue from the question" in plain(at)


@pytest.fixture()
def recorded(tiny, monkeypatch):
    """The tiny memory stands in for the sample, with gold questions and recordings."""
    from memrag.index import store

    questions = [{"id": "t1", "question": QUESTION, "answer": "Vell River", "answer_aliases": ["the Vell"],
                  "gold_docs": ["ada", "port"], "hops": 2, "kind": "bridge"}]
    monkeypatch.setattr(demo, "sample_memory_dir", lambda: tiny)
    monkeypatch.setattr(sample, "sample_memory_dir", lambda: tiny)  # what the sample rule reads
    monkeypatch.setattr(demo, "sample_questions", lambda: questions)
    memory = store.load(tiny, embedder().model_id)
    demo.record(memory, scripted("Vell River"), embedder(), tiny, questions=questions)
    return tiny


def test_recorded_demo_question_shows_badge_gold_and_a_live_switch(recorded):
    live_llm = scripted("Grey Sea")
    at = ask_page(recorded, live_llm)
    assert at.radio(key="ask_kind").value == "Demo question"
    at = ask(at, question="")
    assert ":violet-badge[:material/history: recorded with scripted\\-1]" in [m.value for m in at.markdown]
    assert re.search(r"original run: \d+\.\d s and \d+ tokens", plain(at))
    assert live_llm.calls == []  # the replay made every call
    # per method R@2, R@5, EM, F1: NeuroPath's valid path holds both gold chunks; the others rank
    # the hostile chunk first (it shares the most words with the question under the hash embedder)
    metrics = [(m.label, m.value) for m in at.metric]
    assert metrics[:4] == [("R@2", "1.00"), ("R@5", "1.00"), ("EM", "1.00"), ("F1", "1.00")]
    assert metrics[4] == ("R@2", "0.50") and len(metrics) == 16
    at.session_state["res_neuropath_tabs"] = "Gold"
    at = no_exception(at.run())
    fates = table_with(at, "fate")
    assert len(fates) == 2 and set(fates["chunk"]) == {0, 1}
    # the switch runs the same question on the current backend
    at.toggle(key="ask_live").set_value(True).run()
    at = ask(at, question="")
    assert live_llm.calls and all(m.value != "**Answer:** Vell River" for m in at.markdown)
    assert any(m.value == "**Answer:** Grey Sea" for m in at.markdown)


def test_traces_download_and_open_again(tiny):
    at = ask(ask_page(tiny))
    job = jobs.get_job(at.session_state[session.AppState.ask_job.key])
    data = tracefile.traces_json(job.result, {"question": QUESTION, "mode": "live", "model": "scripted-1"}).encode()
    at.file_uploader(key="ask_trace_file").set_value(("t.json", data, "application/json")).run()
    click(at, "Open these traces")
    at = no_exception(at)
    assert "Showing traces opened from a file." in all_markdown(at)
    assert len([m for m in at.markdown if m.value.startswith("**Answer:**")]) == 4
    # a broken file is refused with a reason and changes nothing
    at.file_uploader(key="ask_trace_file").set_value(("bad.json", b'{"version": 99}', "application/json")).run()
    click(at, "Open these traces")
    assert any("not a valid memrag trace" in e.value for e in at.error)


def test_read_traces_validates_and_limits():
    with pytest.raises(ValueError, match="at most"):
        tracefile.read_traces(b" " * (tracefile.MAX_TRACE_BYTES + 1))
    with pytest.raises(ValueError, match="not a JSON trace file"):
        tracefile.read_traces(b"\xff\xfe")
    with pytest.raises(ValueError, match="non-empty"):
        tracefile.read_traces(json.dumps({"memrag": "traces", "traces": []}).encode())
    from memrag.trace import Trace

    t = Trace(method="evil<script>", question="q")
    with pytest.raises(ValueError, match="unknown method"):
        tracefile.read_traces(t.to_json().encode())
    ok, meta = tracefile.read_traces(Trace(method="dense", question="q").to_json().encode())
    assert ok[0].method == "dense" and meta == {}
