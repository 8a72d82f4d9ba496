"""Extraction replies parsed defensively; one retry; failures recorded, never fatal."""

from __future__ import annotations

import pytest

from memrag.index.extract import extract_chunk, validate_extraction
from memrag.llm.jsoncall import parse_json
from memrag.index.normalise import entity_key
from scripted import ScriptedLLM

GOOD = {"entities": [{"name": "Ada Brennick", "type": "person", "description": "a baker", "importance": 4}],
        "triples": [["Ada Brennick", "born in", "Port Alder"]]}


@pytest.mark.parametrize("text", [
    '```json\n{"entities": [], "triples": [["A", "r", "B"],]}\n```',
    'Sure! Here it is: {"entities": [], "triples": [["A", "r", "B"]]} Hope that helps.',
    '[["A", "r", "B"]]',
])
def test_parse_repairs_fences_trailing_commas_prose_and_bare_arrays(text):
    ex = validate_extraction(parse_json(text))
    assert ex.triples == [["A", "r", "B"]]
    assert [e.name for e in ex.entities] == ["A", "B"]  # endpoints added as entities


def test_truncated_reply_does_not_parse():
    with pytest.raises(ValueError):
        parse_json('{"entities": [{"name": "Ada", "type": "pers')


def test_wrong_types_and_empty_fields_are_cleaned_not_fatal():
    ex = validate_extraction({
        "entities": [{"name": "Ada", "type": None, "description": 7, "importance": "9"},
                     {"name": "   "}, "Bob", 42, {"name": "ADA", "description": "longer text here"}],
        "triples": [["Ada", "knows", "Bob"], ["Ada", "", "Bob"], ["x", "y"], {"subject": "Bob", "relation": "met",
                    "object": "Cy"}, ["Ada", "knows", "bob"], ["Ada", "is", "ada"]],
    })
    names = [e.name for e in ex.entities]
    assert names == ["Ada", "Bob", "Cy"]
    ada = ex.entities[0]
    assert (ada.type, ada.importance, ada.description) == ("other", 5, "longer text here")
    assert ex.triples == [["Ada", "knows", "Bob"], ["Bob", "met", "Cy"]]  # duplicates and self-loops dropped


def test_object_without_known_keys_is_an_error():
    with pytest.raises(ValueError):
        validate_extraction({"people": ["Ada"]})


def test_one_retry_shows_the_model_its_error_then_succeeds():
    llm = ScriptedLLM(["{not json", GOOD])
    out = extract_chunk(llm, "T", "Ada Brennick was born in Port Alder.")
    assert out.error is None and out.extraction.triples == [["Ada Brennick", "born in", "Port Alder"]]
    assert len(out.calls) == 2 and out.calls[0].ok is False and out.calls[0].parse_errors
    retry_prompt = llm.calls[1]["messages"]
    assert retry_prompt[-2] == {"role": "assistant", "content": "{not json"}
    assert "could not be used" in retry_prompt[-1]["content"]


def test_failure_after_retry_keeps_reason_and_raw_reply():
    llm = ScriptedLLM(["nope", "still nope"])
    out = extract_chunk(llm, "T", "text")
    assert out.extraction is None and out.error and out.raw_reply == "still nope"
    assert len(out.calls) == 2


def test_entity_key_folds_accents_first():
    assert entity_key("Tekezé River") == "tekeze river"
    assert entity_key("  Port-Alder  ") == "port alder"
    assert entity_key("Ærø") == "aero"
    assert entity_key("東京") == "東京"  # non-Latin names keep a key


def test_schema_rows_become_mentions():
    ex = validate_extraction({"entities": [["Ada Brennick", "person", 4, "a baker"], ["Vell River", "river"]],
                              "triples": []})
    assert [(e.name, e.type, e.importance, e.description) for e in ex.entities] == [
        ("Ada Brennick", "person", 4, "a baker"), ("Vell River", "river", 3, "")]
