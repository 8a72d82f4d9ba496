"""Method parameters through the one validator (issue 35): every `--params` shape, every method's
values against the bounds its fields declare, and the app's widgets reading the same bounds (a
BM25-like method with k1 = 1.5 crashed the Ask page, whose float boxes were hard-coded 0 to 1)."""

from __future__ import annotations

import math
import sys
import textwrap
from dataclasses import fields
from typing import get_type_hints

import pytest

from memrag.ask import ask
from memrag.fields import bounds_of, checked, value_type
from memrag.index import store
from memrag.methods import registry
from test_app_pages import QUESTION, embedder, home, scripted, tiny  # noqa: F401  (fixtures)

probe = pytest.mark.probe
GROUP = "parameters"

SHAPES = {
    "[1]": "parameters must be an object of method names",
    '{"neuropath": [1]}': "NeuroPath parameters must be an object of names and values",
    '{"neuropath": {"max_hops": "two"}}': "max_hops must be a whole number",
    '{"ecphory": {"rounds": 1e400}}': "rounds must be a whole number",
    '{"nothing": {}}': "unknown method 'nothing'",
    '{"dense": {"answer_passages": 5, "k": 1}}': "unknown DenseParams parameter(s): k",
    "[[[[": "--params is not JSON",
}


@probe("`ask --params` '[1]', '{\"neuropath\":[1]}', a text for a number, 1e400, an unknown method or name, "
       "broken JSON", "exit 1 with a sentence naming --params and what is wrong, no traceback", group=GROUP)
@pytest.mark.parametrize("given", list(SHAPES))
def test_every_params_shape_gets_a_sentence(given, tmp_path, capsys):
    from memrag.cli import main as cli

    assert cli.main(["ask", "--memory", str(tmp_path / "none"), "Who?", "--params", given]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --params") and SHAPES[given] in err and "Traceback" not in err, err


@probe("`eval --params FILE.json` holding '{\"neuropath\": [1]}'", "exit 2 with the same sentence; no run started",
       group=GROUP)
def test_eval_params_file_goes_through_the_same_validator(tmp_path, capsys):
    from memrag.cli import main as cli

    (tmp_path / "p.json").write_text('{"neuropath": [1]}')
    code = cli.main(["eval", "--dataset", "sample", "--scope", "pooled", "--out", str(tmp_path / "run"),
                     "--params", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 2 and "NeuroPath parameters must be an object of names and values" in err
    assert not (tmp_path / "run").exists()


@probe("dense answer_passages 0, -3 and 2.7 (in `ask` and `--params`)",
       "refused naming answer_passages and its range 1 to 50; on main -3 silently dropped the last three", group=GROUP)
@pytest.mark.parametrize("value", [0, -3, 2.7, True])
def test_dense_answer_passages_out_of_range_is_refused(tiny, value):
    memory = store.load(tiny, embedder().model_id)
    with pytest.raises(ValueError, match="answer_passages must be a whole number from 1 to 50"
                       if not isinstance(value, (float, bool)) else "answer_passages must be a whole number"):
        ask(memory, QUESTION, llm=scripted(), embedder=embedder(), methods=["dense"],
            params={"dense": {"answer_passages": value}})


def test_in_range_values_run_and_a_dataclass_is_checked_too(tiny):
    memory = store.load(tiny, embedder().model_id)
    [trace] = ask(memory, QUESTION, llm=scripted(), embedder=embedder(), methods=["dense"],
                  params={"dense": {"answer_passages": 2}})
    assert len(trace.answer.context_chunk_ids) <= 2
    dense = registry.get("dense").params
    with pytest.raises(ValueError, match="from 1 to 50"):
        ask(memory, QUESTION, llm=scripted(), embedder=embedder(), methods=["dense"],
            params={"dense": dense(answer_passages=-3)})


@probe("every numeric parameter of every built-in method", "declares its bounds on the field; its default and "
       "its paper setting lie inside them", group=GROUP)
def test_every_builtin_number_declares_bounds_its_defaults_keep():
    for spec in registry.methods():
        hints = get_type_hints(spec.params)
        for f in fields(spec.params):
            if value_type(hints[f.name]) in (int, float) and not isinstance(f.default, bool):
                b = bounds_of(spec.params, f.name)
                assert b.declared and math.isfinite(b.low) and math.isfinite(b.high), (spec.name, f.name)
        checked(spec.params, spec.params())  # the defaults pass
        checked(spec.params, dict(spec.paper_settings), spec.renamed)  # and the paper's settings


# ------------------------------------------------------------------ the app reads the same bounds
def _bm25_wing() -> dict[str, str]:
    """test_add_a_method's toy wing renamed, with a BM25-like k1 = 1.5 (declared 0 to 3) and an
    undeclared k3 = 7.0."""
    from test_add_a_method import TOY

    wing = {name: src.replace("toywing", "bm25wing").replace('"toy"', '"bm25like"')
            .replace("Toy Rehearsal", "BM25-like") for name, src in TOY.items()}
    init = textwrap.dedent(wing["__init__.py"])
    wing["__init__.py"] = init.replace(
        '    think: bool = helped(False,',
        '    k1: float = helped(1.5, "Term-frequency saturation.", low=0.0, high=3.0)\n'
        '    k3: float = helped(7.0, "Query-term saturation (no bounds declared).")\n'
        '    think: bool = helped(False,')
    assert "k1: float" in wing["__init__.py"]
    return wing


@pytest.fixture()
def bm25(tmp_path, monkeypatch):
    pkg = tmp_path / "bm25wing"
    pkg.mkdir()
    for name, src in _bm25_wing().items():
        (pkg / name).write_text(textwrap.dedent(src), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield registry.register("bm25wing:SPEC")
    registry.unregister("bm25like")
    for mod in [m for m in sys.modules if m == "bm25wing" or m.startswith("bm25wing.")]:
        del sys.modules[mod]


@probe("the Ask page with a registered BM25-like method whose k1 = 1.5 (declared 0 to 3) and k3 = 7.0 (undeclared)",
       "the page draws; k1's box runs 0 to 3 and holds 1.5, k3's is open; an ask runs with them", group=GROUP)
def test_the_ask_page_offers_a_methods_own_bounds(bm25, tiny):
    from memrag.app.param_widgets import param_key, value_key
    from test_app_pages import ask as ask_on_page, ask_page

    at = ask_page(tiny)
    boxes = {w.key: w for w in at.number_input}
    k1, k3 = boxes[param_key("bm25like", "k1")], boxes[param_key("bm25like", "k3")]
    assert (k1.value, k1.proto.min, k1.proto.max, k1.proto.has_max) == (1.5, 0.0, 3.0, True)
    assert k3.value == 7.0 and not k3.proto.has_min and not k3.proto.has_max  # no declared end: left open
    k1.set_value(2.5).run()
    at = ask_on_page(at)
    assert at.session_state[value_key("bm25like", "k1")] == 2.5
    with pytest.raises(ValueError, match=r"k1 must be a number from 0 to 3 \(got 4\)"):
        registry.params_of("bm25like", {"k1": 4})
