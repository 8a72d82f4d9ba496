"""Fuzz the parsers of outside input on the LLM side (issue 15): model replies (extraction,
tracking, answers), trace files and benchmark files. Each input parses or raises the project's
own error (ValueError) — never RecursionError, OverflowError, TypeError — within a time bound,
and what parses holds valid text only."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memrag.methods.answer import _validate as validate_answer
from memrag.tracefile import read_traces
from memrag.eval.datasets import load_dataset
from memrag.index.extract import extract_chunk
from memrag.llm.jsoncall import parse_json
from memrag.methods.neuropath.search import _validate_track
from memrag.textsafe import valid_text
from scripted import ScriptedLLM

FUZZ = settings(max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.too_slow])

# Any character a str can hold, lone surrogates and controls included.
any_text = st.text(st.characters(exclude_categories=()), max_size=40)
numbers = (st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([1e999, -1e999, 10**30, -0.0]))
scalars = st.none() | st.booleans() | numbers | any_text
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=25)


def keyed(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects using the keys a parser looks for, with any values."""
    return st.dictionaries(st.sampled_from(keys) | any_text, json_values, max_size=len(keys) + 1)


def reply_text(values: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """How a model's reply can look: the JSON, fenced, cut short, nested deep, or anything."""
    dumped = values.map(lambda v: json.dumps(v, ensure_ascii=False))
    return st.one_of(
        dumped,
        dumped.map(lambda s: f"```json\n{s}\n```"),
        st.tuples(dumped, st.integers(0, 200)).map(lambda t: t[0][: t[1]]),
        st.integers(100, 50_000).map(lambda n: "[" * n + "]" * n),
        st.integers(100, 50_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
        any_text,
    )


entities = st.lists(keyed(["name", "entity", "type", "description", "importance"])
                    | st.lists(json_values, max_size=5) | any_text, max_size=5)
triples = st.lists(st.lists(json_values | any_text, max_size=4) | keyed(["subject", "relation", "object"]),
                   max_size=5)
extraction_obj = st.fixed_dictionaries({"entities": entities, "triples": triples}) | json_values


def all_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in all_strings(v)]
    if isinstance(value, dict):
        return [s for kv in value.items() for v in kv for s in all_strings(v)]
    if hasattr(value, "__dict__"):
        return all_strings(vars(value))
    return []


@FUZZ
@given(reply_text(extraction_obj))
@example('{"entities": [{"name": "Ada", "importance": 1e999}, {"name": "Bo", "importance": NaN}], "triples": []}')
def test_extraction_replies_never_escape(text: str) -> None:
    out = extract_chunk(ScriptedLLM([text, text]), "T", "a chunk")  # never raises for a bad reply
    assert (out.extraction is None) == (out.error is not None)
    if out.extraction is not None:
        assert all(valid_text(s) == s for s in all_strings(out.extraction))
        assert all(1 <= e.importance <= 5 for e in out.extraction.entities)


def _validated(validate: Any, text: str) -> Any:
    try:
        return validate(parse_json(text))
    except ValueError:
        return None


id_lists = st.lists(numbers | scalars, max_size=5) | json_values
tracking_obj = st.fixed_dictionaries(
    {"valid_ids": id_lists, "expand_ids": id_lists, "continue": scalars},
    optional={"reasoning_chain": scalars, "expansion_requirement": scalars})
answer_obj = st.fixed_dictionaries({"answer": scalars, "cited": id_lists}, optional={"reasoning": scalars})


@FUZZ
@given(reply_text(tracking_obj | keyed(["reasoning_chain", "valid_ids", "expansion_requirement",
                                        "expand_ids", "continue"]) | json_values))
@example('{"valid_ids": [1e999, NaN, true], "expand_ids": [-1e999], "continue": 1e999}')
def test_tracking_replies_parse_or_raise_value_error(text: str) -> None:
    _validated(_validate_track, text)


@FUZZ
@given(reply_text(answer_obj | keyed(["reasoning", "answer", "cited"]) | json_values))
@example('{"answer": "x", "cited": [1e999, NaN, true, 2]}')  # found by a user, kept as a case
def test_answer_replies_parse_or_raise_value_error(text: str) -> None:
    v = _validated(validate_answer, text)
    if v is not None:
        assert all(valid_text(s) == s for s in all_strings(v))


trace_like = st.fixed_dictionaries({"memrag": st.just("traces"), "traces": st.lists(
    keyed(["method", "question", "ranked", "llm_calls", "steps", "answer", "stamp"]), max_size=3)}) | json_values


@FUZZ
@given(st.one_of(reply_text(trace_like).map(lambda s: s.encode("utf-8", "surrogatepass")),
                 st.binary(max_size=200)))
def test_trace_files_read_or_raise_value_error(data: bytes) -> None:
    try:
        read_traces(data)
    except ValueError:
        pass


question = keyed(["id", "question", "answer", "answer_aliases", "paragraphs", "chunks", "supporting_facts"])


@FUZZ
@given(st.sampled_from(["musique", "2wiki", "hotpotqa"]),
       st.one_of(reply_text(st.lists(question, max_size=3)),
                 st.lists(reply_text(question), min_size=1, max_size=3).map("\n".join)))
def test_benchmark_files_load_or_raise_value_error(name: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions.json"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            load_dataset(name, path)
        except ValueError:
            pass
