"""The OpenAI-compatible backend against a real OpenAI-compatible server: llama.cpp's own HTTP
server, started from `xllamacpp` on 127.0.0.1 with the embedded GGUF. Three calls, each with
memrag's own prompt and schema (extraction, one tracking hop, an answer), real token counts and
the structured-output mode the server's reply decided.
"""

from __future__ import annotations

import json

import pytest

from memrag import prompts
from memrag.config import Settings
from memrag.index.extract import extract_chunk
from memrag.llm.jsoncall import call_json
from memrag.llm.llamacpp_server import SERVED_MODEL, serve_gguf
from memrag.llm.model_file import MODEL_FILE, ensure_model
from memrag.llm.openai_backend import OpenAICompatibleLLM

pytestmark = pytest.mark.model


@pytest.fixture(scope="session")
def llamacpp_url():
    path = Settings().cache_dir / "models" / MODEL_FILE
    ensure_model(path)
    with serve_gguf(path, slots=1, n_ctx=4096) as url:
        yield url


@pytest.fixture
def llm(llamacpp_url) -> OpenAICompatibleLLM:
    llm = OpenAICompatibleLLM(base_url=llamacpp_url, timeout=900)  # 2 busy cores: minutes per call
    ok, why = llm.check()  # the server lists one model: its alias
    assert ok and llm.model == SERVED_MODEL, why
    return llm


def _counted(record) -> None:
    assert record.prompt_tokens and record.prompt_tokens > 50
    assert record.completion_tokens and record.completion_tokens > 3
    assert record.backend == "openai" and not record.cached


def test_extraction_through_the_server_is_schema_constrained(llm) -> None:
    out = extract_chunk(llm, "Tekezé River", "The Tekezé River rises in the Ethiopian Highlands and "
                        "flows into Sudan, where it joins the Atbara River.")
    assert out.error is None, out.error
    names = {m.name.lower() for m in out.extraction.entities}
    assert any("tekez" in n for n in names) and out.extraction.triples
    _counted(out.calls[-1])
    assert out.calls[-1].structured == "json_schema"  # llama.cpp honours response_format's schema


def test_a_tracking_hop_through_the_server(llm) -> None:
    lines = ["[1] Tekezé River → flows into → Atbara River (expandable)",
             "[2] Atbara River → joins → Nile (expandable)",
             "[3] Ethiopian Highlands → located in → Ethiopia"]
    msgs = prompts.track_messages("Which river does the Tekezé eventually reach?", 1, lines, "", "")
    res = call_json(llm, msgs, prompts.TRACK_SCHEMA, "neuropath.track.hop1", lambda v: v)
    assert res.ok, res.error
    assert set(res.value) >= {"reasoning_chain", "valid_ids", "continue"} and res.value["continue"] in (0, 1)
    assert all(1 <= i <= 3 for i in res.value["valid_ids"])
    _counted(res.calls[-1])


def test_an_answer_through_the_server(llm) -> None:
    msgs = prompts.answer_messages("Into which river does the Tekezé flow?",
                                   [("Tekezé River", "The Tekezé River flows into the Atbara River in Sudan.")])
    c = llm.complete(msgs, schema=prompts.ANSWER_SCHEMA, max_tokens=prompts.max_tokens_for("answer"),
                     stage="answer")
    reply = json.loads(c.text)
    assert "atbara" in reply["answer"].lower()
    assert c.prompt_tokens and c.prompt_tokens > 100 and c.completion_tokens and c.structured == "json_schema"
