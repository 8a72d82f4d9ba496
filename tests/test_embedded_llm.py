"""The embedded backend for real: Qwen2.5-Coder-1.5B through xllamacpp (a few real calls)."""

from __future__ import annotations

import json

import pytest

from memrag.config import Settings
from memrag.llm.embedded import EmbeddedLLM, engine_status
from memrag.llm.factory import choose_backend
from fake_ollama import closed_port_host

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def llm(tmp_path_factory) -> EmbeddedLLM:
    return EmbeddedLLM(cache_dir=Settings().cache_dir)


def test_schema_constrained_completion_parses_and_counts_tokens(llm):
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                               "country": {"type": "string", "maxLength": 30}},
              "required": ["city", "country"]}
    c = llm.complete([{"role": "user", "content": "Name the capital of Japan and its country as JSON."}],
                     schema=schema, max_tokens=60, stage="test")
    data = json.loads(c.text)
    assert set(data) == {"city", "country"}
    assert "tokyo" in data["city"].lower()
    assert c.prompt_tokens and c.prompt_tokens > 5 and c.completion_tokens and c.completion_tokens > 3
    assert c.backend == "embedded" and not c.cached and c.seconds > 0
    assert engine_status()["loaded"] and engine_status()["waiting"] == 0


def test_max_length_stops_a_runaway_string_and_same_prompt_same_reply(llm):
    schema = {"type": "object", "properties": {"word": {"type": "string", "maxLength": 12}},
              "required": ["word"]}
    msgs = [{"role": "user", "content": "Reply with JSON whose 'word' is the word 'banana' repeated 300 times."}]
    first = llm.complete(msgs, schema=schema, max_tokens=200, stage="test")
    assert len(json.loads(first.text)["word"]) <= 12
    assert first.completion_tokens < 60  # the grammar closed the string long before the token limit
    second = llm.complete(msgs, schema=schema, max_tokens=200, stage="test")
    assert second.text == first.text  # temperature 0, one slot, fixed seed: deterministic
    assert second.prompt_tokens == first.prompt_tokens
    assert second.prompt_tokens_cached and second.prompt_tokens_cached > 0  # the prefix was reused


def test_auto_with_ollama_unreachable_picks_embedded_and_says_why():
    s = Settings(backend="auto", ollama_host=closed_port_host())
    llm, choice = choose_backend(s)
    assert choice.backend == "embedded" and isinstance(llm, EmbeddedLLM)
    assert "not reachable" in choice.reason.lower() or "cannot reach" in choice.reason.lower()
    assert "embedded" in choice.reason


def test_next_token_probabilities_are_a_distribution_led_by_the_greedy_token(llm):
    from memrag.llm.base import LLMReplyError
    from memrag.llm.logprobs import label_probabilities

    msgs = [{"role": "user", "content": "Is Paris the capital of France? Answer with one word, yes or no."}]
    c = llm.complete(msgs, max_tokens=1, stage="test", top_logprobs=5)
    [position] = c.top_logprobs
    probs = [a.probability for a in position]
    assert len(position) == 5 and all(0 < p <= 1 for p in probs) and sum(probs) <= 1 + 1e-6
    assert probs == sorted(probs, reverse=True)
    assert position[0].token == c.text and c.completion_tokens == 1  # temperature 0: the likeliest is written
    try:  # the same prompt without probabilities, a few tokens: greedy decoding starts with that token
        plain = llm.complete(msgs, max_tokens=4, stage="test").text
    except LLMReplyError as e:  # stopped at its 4-token limit: the text so far is what counts
        plain = e.completion.text
    assert plain.startswith(position[0].token)
    assert label_probabilities(position, ["yes", "no"]).probabilities["yes"] > 0.5
