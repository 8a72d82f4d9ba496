"""The gate of the one-wing architecture: a method the rest of memrag has never heard of — a toy
wing written here into a temporary package, registered with one `registry.register` call — works in
`ask` (library and CLI), `eval` (CLI), the report, the estimates and the app's Ask, Compare,
Evaluate and Learn pages, without touching any other module. Beside it, scans of the library: no
module outside the wings, their app views and the registry names a method, and no fate is read
back from its sentence."""

from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from memrag.methods import registry
from test_app_pages import home, tiny  # noqa: F401  (fixtures: a small memory built with a scripted LLM)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memrag"

TOY = {
    "__init__.py": '''
        from dataclasses import dataclass

        from memrag.fields import helped
        from memrag.methods.spec import wing_spec
        from toywing.detail import ToyDetail


        @dataclass
        class ToyParams:
            answer_passages: int = helped(5, "Chunks given to the answer step.")
            think: bool = helped(False, "Ask the model to think first (one more LLM call).")


        SPEC = wing_spec(
            __name__, name="toy", label="Toy Rehearsal", params=ToyParams,
            renderer_at="toywing.picture:overview", detail=ToyDetail,
            view_at="toywing.views:VIEWS",  # outside memrag, its app views live in the wing too
            expected_stages=lambda p: ("toy.think",) if p.think else (),
            stage_tokens={"toy.think": (100.0, 1000.0)},
            paper_settings={"answer_passages": 3},
            learn_title="Toy · rehearsal",
        )
    ''',
    "detail.py": '''
        from dataclasses import dataclass, field


        @dataclass
        class Rehearsal:
            chunk_id: int
            times: int


        @dataclass
        class ToyDetail:
            rehearsed: list[Rehearsal] = field(default_factory=list)
            mood: str = ""
    ''',
    "search.py": '''
        from memrag.fields import params_dict
        from memrag.methods.base import new_trace, set_ranked
        from memrag.methods.dense.search import dense_ranking
        from memrag.trace import RankedChunk
        from toywing.detail import Rehearsal, ToyDetail
        from toywing.picture import draw


        def retrieve(ctx, params):
            """The dense ranking, rehearsed in one step (so recorded answers replay)."""
            trace = new_trace(ctx, "toy", params_dict(params))
            if params.think:
                ctx.llm.complete([{"role": "user", "content": ctx.question}], max_tokens=8, stage="toy.think")
            step = trace.add_step("rehearse", "Rehearse", "The toy rehearses the dense ranking.")
            ranking = dense_ranking(ctx)
            set_ranked(trace, ctx.memory, [RankedChunk(c, r, s, "toy", "rehearsed") for r, (c, s) in enumerate(ranking)])
            head = ranking[: params.answer_passages]  # it rehearses what it will answer from
            trace.details[trace.method] = ToyDetail([Rehearsal(c, len(head) - r) for r, (c, _) in enumerate(head)],
                                                    "calm")
            draw(trace, ctx.memory, step.index)
            return trace
    ''',
    "picture.py": '''
        from memrag.methods.picture_kit import add_edge, add_node, passage_tip, question_node
        from memrag.picture import Picture, PictureEdge, PictureNode
        from memrag.trace import GraphEdge, GraphNode
        from toywing.detail import ToyDetail


        def draw(trace, memory, step):
            """The question and each rehearsed passage, an edge saying how often."""
            add_node(trace, question_node(trace, step))
            for r in trace.detail(ToyDetail).rehearsed:
                c = memory.chunks[r.chunk_id]
                add_node(trace, GraphNode(f"c:{r.chunk_id}", "TOYNODE " + c.title, "chunk", step=step,
                                          chunk_ids=[r.chunk_id], role="context", tooltip=passage_tip(c.text)))
                add_edge(trace, GraphEdge(f"q>c:{r.chunk_id}", "q", f"c:{r.chunk_id}", "provenance",
                                          f"{r.times}x", step=step))


        def overview(trace, *, gold_chunk_ids=None):
            """The trace's graph as a typed picture (memrag.viz draws it; a click reaches Python)."""
            d = trace.detail(ToyDetail)
            kinds = {"query": "question", "chunk": "passage"}
            nodes = tuple(PictureNode(n.id, n.label, kind=kinds.get(n.kind, "entity"), role=n.role,
                                      labelled=True, tooltip=n.tooltip, ref=n.id.partition(":")[2])
                          for n in trace.nodes)
            edges = tuple(PictureEdge(e.id, e.source, e.target, kind="passage", relation=e.label)
                          for e in trace.edges)
            return Picture("toy-overview", nodes, edges, note=f"TOY PICTURE: {len(d.rehearsed)} rehearsed")
    ''',
    "fates.py": '''
        from memrag.methods.fate_kit import FateInfo, FateKind, FateRecord, FateRules, in_top, rank_of


        class ToyFate(FateKind):
            REHEARSED = FateInfo("rehearsed into the head", 0, "rehearsed", clean=True)
            FORGOTTEN = FateInfo("forgotten by the toy", 1, "forgotten")


        def judge(trace, chunk_id, pos, k):
            kind = ToyFate.REHEARSED if in_top(pos, k) else ToyFate.FORGOTTEN
            return FateRecord(chunk_id, kind, f"toy rank {rank_of(pos)}", rank_of(pos))


        RULES = FateRules(ToyFate, judge)
    ''',
    "views.py": '''
        import streamlit as st

        from memrag.app.method_views import MethodViews
        from memrag.app.method_views.common import method_picture


        def detail(trace, gold_ids, key):
            st.caption("TOY DETAIL: rehearsed " + str(len(trace.ranked)) + " passages")


        def overview(trace, gold_ids, height):
            st.caption("TOY OVERVIEW")
            method_picture(trace, gold_ids, height, drawable=True)  # the spec's picture


        VIEWS = MethodViews(detail, overview)
    ''',
    "lessons.py": '''
        from memrag.methods.lesson_kit import Lesson, LessonPlan, Pair


        def _rehearse(trace, step):
            return Lesson(step.index, step.title, "rehearsal ↔ toy step", "Saying it again keeps it.",
                          f"TOY LESSON: {len(trace.ranked)} passages rehearsed")


        LESSON = LessonPlan("TOY INTRO: the toy rehearses.", [Pair("rehearsal", "saying it again", "toy step",
                                                                  "the dense ranking again")],
                            {"rehearse": _rehearse})
    ''',
    "ablations.py": '''
        from memrag.methods.paper_kit import Preset

        PRESETS = [Preset("toy five / two", "fewer passages", {"answer_passages": 5}, {"answer_passages": 2},
                          "five", "two")]
    ''',
    "deviations.py": '''
        from memrag.methods.paper_kit import Deviation

        DEVIATIONS = (Deviation("toy", "Everything", "no paper", "a toy", "a test"),)
    ''',
}


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """The toy wing on sys.path and in the registry: one register call, undone afterwards."""
    pkg = tmp_path / "toywing"
    pkg.mkdir()
    for name, src in TOY.items():
        (pkg / name).write_text(textwrap.dedent(src), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = registry.register("toywing:SPEC")
    yield spec
    registry.unregister("toy")
    for mod in [m for m in sys.modules if m == "toywing" or m.startswith("toywing.")]:
        del sys.modules[mod]


# ------------------------------------------------------------------ library, CLI, report, estimates
def test_the_toy_is_one_register_call_away(toy):
    assert "toy" in registry.names() and registry.display_order()[-2:] == ("toy", "dense")
    assert registry.get("toy").label == "Toy Rehearsal" and registry.labels()["toy"] == "Toy Rehearsal"
    from memrag.ask import METHODS
    from memrag.explain import ablations, lessons
    from memrag.methods import deviations

    assert "toy" in METHODS and "toy" in ablations.METHODS and "toy" in lessons.TEACHABLE
    assert [d["what"] for d in deviations.deviations_for("toy")] == ["Models", "Everything"]
    assert registry.settings_preset("paper", ["toy"]) == {"toy": {"answer_passages": 3}}


def test_estimates_ask_the_toys_spec(toy):
    from memrag.app import estimates

    assert estimates.expected_ask_calls(["toy"]) == 1
    assert estimates.expected_ask_calls(["toy"], {"toy": {"think": True}}) == 2
    t = estimates.Throughput(load=lambda: (0.0, 2))  # a quiet machine: the real load scales the embedded estimate
    think = estimates.ask_estimate(["toy"], "embedded", {"toy": {"think": True}}, answer=False, throughput=t)
    assert think.seconds == pytest.approx(100 / 40 + 1000 / 10)  # the toy's own typical tokens, default rates
    assert estimates.expected_compare_calls("toy", [{"think": True}, {}]) == 3


def test_cli_ask_eval_and_report_run_the_toy(toy, tmp_path, capsys):
    from memrag.cli.main import main
    from memrag.demo import sample_memory_dir
    from memrag.eval import report

    question = json.loads((ROOT / "sample_corpus" / "questions.json").read_text())[0]["question"]
    assert main(["ask", question, "--memory", str(sample_memory_dir()), "--method", "toy", "--json"]) == 0
    traces = json.loads(capsys.readouterr().out)["traces"]
    assert [t["method"] for t in traces] == ["toy"] and traces[0]["answer"]["answer"]
    out = tmp_path / "run"
    assert main(["eval", "--dataset", "sample", "--scope", "pooled", "--limit", "2", "--methods", "toy,dense",
                 "--recorded", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    fates = summary["methods"]["toy"]["gold_fate"]
    assert set(fates) == {"rehearsed into the head", "forgotten by the toy"} and sum(fates.values()) >= 2
    assert summary["same_top5_as_dense"]["toy"] == 2  # it rehearses dense's ranking
    assert "toy" in (out / "summary.md").read_text() and (out / "report.html").is_file()
    assert "| Toy Rehearsal |" in report.markdown_table(summary)


def test_the_toys_detail_and_picture_travel_through_a_trace_file(toy, tmp_path):
    from memrag.cli.main import main
    from memrag.demo import sample_memory_dir
    from memrag.explain import step_picture
    from memrag.explain.learn_picture import learn_pictures
    from memrag.tracefile import read_traces
    from toywing.detail import Rehearsal, ToyDetail

    question = json.loads((ROOT / "sample_corpus" / "questions.json").read_text())[0]["question"]
    out = tmp_path / "toy.json"
    assert main(["ask", question, "--memory", str(sample_memory_dir()), "--method", "toy", "--out", str(out)]) == 0
    assert '"details": {"toy": {"rehearsed": [{"chunk_id"' in out.read_text()  # the generic slot, by name
    (t,), _ = read_traces(out.read_bytes())
    d = t.detail(ToyDetail)
    assert type(d) is ToyDetail and d.mood == "calm" and [r.times for r in d.rehearsed] == [5, 4, 3, 2, 1]
    assert all(type(r) is Rehearsal for r in d.rehearsed) and d.rehearsed[0].chunk_id == t.ranked[0].chunk_id
    # its picture: the nodes its picture.py built, drawn by the renderer its spec names
    picture = toy.picture
    assert picture.step_style == "plain"
    drawn = picture.overview(t)
    assert drawn.note == "TOY PICTURE: 5 rehearsed" and sum(n.label.startswith("TOYNODE ") for n in drawn.nodes) >= 5
    assert [n.id for n in step_picture.known_nodes(t, 0)] == ["q"] + [f"c:{r.chunk_id}" for r in d.rehearsed]
    assert any(n.label.startswith("TOYNODE ") for n in learn_pictures(t)[0].nodes)  # the Learn page's step


# ------------------------------------------------------------------ the app's pages
def test_the_ask_page_shows_the_toy_beside_the_others_and_in_detail(toy, tiny):
    from memrag.app import param_widgets as app_state
    from test_app_pages import ask, ask_page, no_exception, pictures, plain

    at = ask_page(tiny)
    assert "Toy Rehearsal" in at.pills(key="ask_methods").options
    at = ask(at)
    text = plain(at)
    assert text.count("**Answer:** Vell River") == 5 and "TOY OVERVIEW" in text
    # its spec's picture, drawn small beside the others by memrag's renderer: the toy's own edges
    assert any(c.startswith("edge|q>c:") for chart in pictures(at) for c in chart)
    assert "Toy Rehearsal" in [s.value for s in at.subheader]
    at.session_state["res_pick"] = "toy"
    at.session_state["res_toy_tabs"] = "Retrieval"
    at = no_exception(at.run())
    assert "TOY DETAIL: rehearsed" in plain(at)
    at.session_state["res_toy_tabs"] = "Deviations from the paper"
    at = no_exception(at.run())
    assert any("Everything" in str(d.value.values) for d in at.dataframe)
    assert app_state.METHOD_LABELS["toy"] == "Toy Rehearsal"


def test_compare_mode_offers_the_toys_presets(toy, tiny):
    from test_app_compare import compare_page, run_compare

    at = compare_page(tiny)
    at.segmented_control(key="cmp_method").set_value("toy").run()
    assert at.selectbox(key="cmp_preset_toy").value == "toy five / two"
    at, job = run_compare(at)
    a, b = (v.trace for v in job.result)
    assert a.method == b.method == "toy" and len(b.answer.context_chunk_ids) == 2


def test_the_evaluate_page_runs_and_shows_the_toy(toy, tmp_path, monkeypatch):
    import test_app_evaluate as ev_tests
    from memrag.app import jobs
    from memrag.app import eval_views as ev

    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    bench = tmp_path / "bench"
    (bench / "hotpotqa").mkdir(parents=True)
    (bench / "hotpotqa" / "hotpotqa_subset.jsonl").write_bytes(ev_tests.HOTPOT.read_bytes())
    monkeypatch.setenv(ev.BENCH_ENV, str(bench))
    at = ev_tests.hotpot_run(ev_tests.app().run())
    ev_tests.click(at, "Run evaluation")
    job = jobs.get_job(at.session_state[ev.EvalState.eval_job.key])
    assert job is not None and job.wait(60) and job.status == jobs.DONE, job.error_detail
    at = ev_tests.no_exception(at.run())
    assert "Toy Rehearsal" in list(at.dataframe[0].value["method"])  # its display name, as every method
    per_q = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert "Toy Rehearsal" in per_q.columns  # the compact table: one column per method
    at = ev_tests.no_exception(at.toggle(key="eval_full").set_value(True).run())
    per_q = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert {"Toy Rehearsal R@5", "Toy Rehearsal gold fates"} <= set(per_q.columns)


def test_the_learn_page_teaches_the_toy(toy, tiny):
    from test_app_learn import asked
    from test_app_pages import plain

    at, traces = asked(tiny)
    assert "toy" in traces
    at.segmented_control(key="learn_method").set_value("toy").run()
    text = plain(at)
    assert "TOY INTRO: the toy rehearses." in text and "TOY LESSON:" in text and "rehearsal" in text


# ------------------------------------------------------------------ scans of the library
# Where a method may be named: its wing, its app views, the registry, and readers of old files.
NAMING_ALLOWED = ("memrag/methods/", "memrag/app/method_views/")
OLD_FORMAT_READERS: tuple[str, ...] = ("memrag/trace_legacy.py",)
READS_TEXT = {"search", "match", "fullmatch", "findall", "finditer", "split", "rsplit", "partition", "rpartition"}


def _library() -> list[Path]:
    return [*sorted(PACKAGE.rglob("*.py")), *sorted((ROOT / "app_pages").glob("*.py")), ROOT / "app.py"]


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def method_name_literals(path: Path, names: set[str], root: Path = ROOT) -> list[str]:
    """'file:line name' for each string literal equal to a method's name (docstrings aside; "dense"
    where a line speaks of a ranked passage's source, the label it also is)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    docs = _docstrings(tree)
    lines = source.splitlines()
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names and id(n) not in docs:
            if n.value == "dense" and "source" in lines[n.lineno - 1].lower():
                continue
            out.append(f"{path.relative_to(root)}:{n.lineno} {n.value}")
    return out


def fate_text_reads(path: Path, root: Path = ROOT) -> list[str]:
    """'file:line' for each regex or split applied to an expression that speaks of a fate."""
    source = path.read_text(encoding="utf-8")
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in READS_TEXT:
            segment = ast.get_source_segment(source, n) or ""
            if "fate" in segment.lower():
                out.append(f"{path.relative_to(root)}:{n.lineno}")
    return sorted(out)


def _scanned(path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return not rel.startswith(NAMING_ALLOWED) and rel not in OLD_FORMAT_READERS


def test_no_library_module_outside_the_wings_names_a_method():
    names = set(registry.names())
    assert names >= {"dense", "neuropath", "ecphory", "hipporag2"}
    found = [hit for p in _library() if _scanned(p) for hit in method_name_literals(p, names)]
    assert found == []


def test_no_fate_is_read_back_from_its_sentence():
    found = [hit for p in _library() if p.relative_to(ROOT).as_posix() != "memrag/methods/fate_kit.py"
             for hit in fate_text_reads(p)]
    assert found == []


def test_the_scans_see_what_they_look_for(tmp_path):
    # scans that found nothing anywhere would pass; each finds its offence in a file made to have one
    bad = tmp_path / "bad.py"
    bad.write_text('import re\n\ndef f(trace, fate):\n    if trace.method == "ecphory":\n'
                   '        return int(fate.split()[3])\n    return re.search(r"hop (\\d+)", fate)\n'
                   'SOURCES = ("path", "dense")\n', encoding="utf-8")
    assert method_name_literals(bad, set(registry.names()), tmp_path) == ["bad.py:4 ecphory"]
    assert fate_text_reads(bad, tmp_path) == ["bad.py:5", "bad.py:6"]
