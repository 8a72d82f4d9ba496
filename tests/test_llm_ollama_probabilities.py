"""Ollama's token probabilities (issue 37): the server gives at most 20 alternatives per token and
refuses a request for more, and a thinking model's first token is its hidden reasoning unless the
call says `think: false`. Against tests/fake_ollama.py, which refuses both as Ollama's server does."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from memrag.llm.base import MAX_TOP_LOGPROBS
from memrag.llm.logprobs import read_labels
from memrag.llm.ollama_backend import OLLAMA_MAX_TOP_LOGPROBS, OllamaLLM

MSGS = [{"role": "user", "content": "Does this path help? Answer yes or no."}]
ROOT = Path(__file__).resolve().parent.parent


def _position(n: int) -> list[dict]:
    """One generated token with `n` listed alternatives whose probabilities sum below 1."""
    alts = [{"token": "yes" if i == 0 else f"t{i}", "logprob": math.log(0.5 / (i + 1) ** 2)} for i in range(n)]
    return [{"token": "yes", "logprob": alts[0]["logprob"], "top_logprobs": alts}]


def test_a_request_for_more_than_twenty_alternatives_asks_ollama_for_twenty() -> None:
    assert OLLAMA_MAX_TOP_LOGPROBS == 20 < MAX_TOP_LOGPROBS
    with running_fake_ollama(["phi4"]) as fake:
        fake.script(ChatReply(content="yes", logprobs=_position(20)))
        llm = OllamaLLM(host=fake.host, model="phi4", timeout=10)
        reading = read_labels(llm, MSGS, ["yes", "no"], stage="s", top=MAX_TOP_LOGPROBS)
        assert fake.chat_bodies()[0]["top_logprobs"] == 20
    assert reading.labels is not None and reading.labels.probabilities["yes"] == pytest.approx(0.5)


def test_probability_calls_turn_thinking_off_and_plain_calls_leave_it_to_the_model() -> None:
    with running_fake_ollama(["phi4"]) as fake:
        fake.script(ChatReply(content="yes", logprobs=_position(4)), ChatReply(content="plain"))
        llm = OllamaLLM(host=fake.host, model="phi4", timeout=10)
        read_labels(llm, MSGS, ["yes", "no"], stage="s", top=4)
        llm.complete(MSGS, max_tokens=5, stage="s")
        probability, plain = fake.chat_bodies()
    assert probability["think"] is False
    assert "think" not in plain or plain["think"] is None


def test_requirements_ask_for_the_client_that_passes_probabilities() -> None:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    assert "ollama>=0.6.1,<0.7" in lines
