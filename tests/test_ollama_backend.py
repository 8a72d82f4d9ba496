"""OllamaLLM against a loopback server that speaks Ollama's HTTP API (tests/fake_ollama.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fake_ollama import ChatReply, FakeOllama, closed_port_host, running_fake_ollama
from memrag.llm.base import LLM, LLMError, LLMReplyError, LLMUnavailable, ModelNotFound
from memrag.llm.ollama_backend import NUM_CTX_LADDER, OllamaLLM, choose_num_ctx

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 50}},
    "required": ["answer"],
}


def ask(text: str = "Who wrote it?") -> list[dict[str, str]]:
    return [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": text}]


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    # Every fake listens on a fresh port, so each test gets its own num_ctx memory (keyed by host).
    with running_fake_ollama(models=["phi4", "qwen2.5:1.5b"]) as server:
        yield server


@pytest.fixture
def llm(fake: FakeOllama) -> OllamaLLM:
    return OllamaLLM(host=fake.host, model="phi4", seed=7, timeout=10)


def test_implements_the_llm_protocol(llm: OllamaLLM) -> None:
    assert isinstance(llm, LLM)
    assert llm.backend == "ollama" and llm.model == "phi4"


def test_schema_is_sent_as_format_and_reply_parsed(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script(ChatReply(content='{"answer": "Ada"}', prompt_eval_count=31, eval_count=9))
    done = llm.complete(ask(), schema=SCHEMA, max_tokens=64, stage="answer")

    body = fake.chat_bodies()[0]
    assert body["format"] == SCHEMA
    assert body["model"] == "phi4"
    assert body["stream"] is False
    assert body["messages"] == ask()
    assert json.loads(done.text) == {"answer": "Ada"}
    assert done.stage == "answer" and done.backend == "ollama" and done.model == "phi4"
    assert done.cached is False


def test_no_schema_sends_no_format(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script("plain words")
    assert llm.complete(ask(), max_tokens=16, stage="answer").text == "plain words"
    assert "format" not in fake.chat_bodies()[0]


def test_options_temperature_zero_seed_and_num_predict(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script("x")
    llm.complete(ask(), max_tokens=123, stage="answer")
    options = fake.chat_bodies()[0]["options"]
    assert options["temperature"] == 0
    assert options["seed"] == 7
    assert options["num_predict"] == 123
    assert options["num_ctx"] == NUM_CTX_LADDER[0]


def test_num_ctx_grows_for_a_big_prompt_and_never_shrinks(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script("small", "big", "small again")
    llm.complete(ask("short"), max_tokens=100, stage="s")
    # ~6000 estimated prompt tokens + 1000 for the reply: past the first rung.
    llm.complete(ask("w" * 18_000), max_tokens=1000, stage="s")
    llm.complete(ask("short"), max_tokens=100, stage="s")

    sent = [b["options"]["num_ctx"] for b in fake.chat_bodies()]
    assert sent == [4096, 8192, 8192]


def test_num_ctx_is_shared_by_instances_for_the_same_host_and_model(fake: FakeOllama) -> None:
    fake.script("a", "b", "c")
    first = OllamaLLM(host=fake.host, model="phi4")
    first.complete(ask("w" * 30_000), max_tokens=500, stage="s")  # ~10k tokens → 16384
    OllamaLLM(host=fake.host, model="phi4").complete(ask(), max_tokens=10, stage="s")
    # A different model on the same server has its own window.
    OllamaLLM(host=fake.host, model="qwen2.5:1.5b").complete(ask(), max_tokens=10, stage="s")

    sent = [b["options"]["num_ctx"] for b in fake.chat_bodies()]
    assert sent == [16384, 16384, 4096]


def test_small_calls_send_the_same_num_ctx_every_time(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.default_reply = ChatReply(content="ok")
    for n in (1, 50, 500, 2000, 20):
        llm.complete(ask("word " * n), max_tokens=200, stage="s")
    sent = {b["options"]["num_ctx"] for b in fake.chat_bodies()}
    assert sent == {4096}


def test_prompt_beyond_the_top_rung_is_refused_before_sending(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.default_reply = ChatReply(content="ok")
    with pytest.raises(LLMError, match="silently cut"):
        llm.complete(ask("w" * 60_000), max_tokens=100, stage="index.extract")
    assert fake.chat_bodies() == []


def test_ladder_choice_without_a_server() -> None:
    key = ("http://ladder.test:1", "m")
    assert choose_num_ctx(*key, needed_tokens=100) == 4096
    assert choose_num_ctx(*key, needed_tokens=4097) == 8192
    assert choose_num_ctx(*key, needed_tokens=10) == 8192


def test_usage_comes_from_the_reply(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script(ChatReply(content="x", prompt_eval_count=321, eval_count=45))
    done = llm.complete(ask(), max_tokens=64, stage="answer")
    assert done.prompt_tokens == 321
    assert done.completion_tokens == 45
    assert done.prompt_tokens_cached is None
    assert done.seconds > 0
    # Ollama's own timings are kept in raw.
    assert done.raw is not None and done.raw["total_duration"] == 2_500_000_000
    assert done.raw["message"]["content"] == "x"


def test_missing_counts_are_none_not_zero(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script(ChatReply(content="x", prompt_eval_count=None, eval_count=None))
    done = llm.complete(ask(), max_tokens=64, stage="answer")
    assert done.prompt_tokens is None
    assert done.completion_tokens is None


def test_model_not_pulled_names_the_pull_command(fake: FakeOllama) -> None:
    absent = OllamaLLM(host=fake.host, model="llama3.3")
    with pytest.raises(ModelNotFound, match=r"ollama pull llama3\.3"):
        absent.complete(ask(), max_tokens=10, stage="answer")


def test_connection_refused_is_unavailable() -> None:
    host = closed_port_host()
    down = OllamaLLM(host=host, model="phi4", timeout=5)
    with pytest.raises(LLMUnavailable) as caught:
        down.complete(ask(), max_tokens=10, stage="answer")
    message = str(caught.value)
    assert host in message and "ollama serve" in message


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        pytest.param(ChatReply(content='{"answer": "a long reply"}', cut_off=True), "broke off", id="cut-off"),
        pytest.param(ChatReply(raw_body=b"<html>proxy says hello</html>"), "not JSON", id="not-json"),
        pytest.param(ChatReply(include_message=False), "did not answer like Ollama", id="no-message"),
        pytest.param(ChatReply(content=None), "no text", id="null-content"),
        pytest.param(ChatReply(content=""), "no text", id="empty-content"),
        pytest.param(ChatReply(content='{"answer": "unfinished', done_reason="length"), "not valid JSON", id="bad-json"),
        pytest.param(ChatReply(content='{"answer": "x"}', done=False), "not finished", id="not-done"),
    ],
)
def test_broken_replies_raise_reply_error(
    fake: FakeOllama, llm: OllamaLLM, reply: ChatReply, says: str
) -> None:
    fake.script(reply)
    with pytest.raises(LLMReplyError, match=says):
        llm.complete(ask(), schema=SCHEMA, max_tokens=64, stage="answer")


def test_unfinished_json_at_the_token_limit_says_so(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script(ChatReply(content='{"answer": "unfin', done_reason="length"))
    with pytest.raises(LLMReplyError, match="64-token limit"):
        llm.complete(ask(), schema=SCHEMA, max_tokens=64, stage="answer")


def test_non_json_text_is_fine_without_a_schema(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script("not { json")
    assert llm.complete(ask(), max_tokens=64, stage="answer").text == "not { json"


def test_server_error_is_reported_with_its_message(fake: FakeOllama, llm: OllamaLLM) -> None:
    fake.script(ChatReply(status=500, content="model requires more system memory"))
    with pytest.raises(LLMError, match="more system memory") as caught:
        llm.complete(ask(), max_tokens=10, stage="answer")
    assert not isinstance(caught.value, ModelNotFound)


def test_slow_server_times_out_with_a_clear_error(fake: FakeOllama) -> None:
    fake.script(ChatReply(content="late", delay_s=2.0))
    impatient = OllamaLLM(host=fake.host, model="phi4", timeout=0.3)
    with pytest.raises(LLMError, match="did not finish answering within 0.3 s"):
        impatient.complete(ask(), max_tokens=10, stage="answer")


def test_bad_arguments_are_refused_before_sending(fake: FakeOllama, llm: OllamaLLM) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        llm.complete(ask(), max_tokens=0, stage="answer")
    with pytest.raises(ValueError, match="message 0"):
        llm.complete([{"role": "user"}], max_tokens=5, stage="answer")  # type: ignore[list-item]
    assert fake.chat_bodies() == []


def test_identity_names_backend_model_and_seed_not_host(llm: OllamaLLM, fake: FakeOllama) -> None:
    # Same model and seed on another host must hit the same cache entries and recordings.
    assert llm.identity() == {"backend": "ollama", "model": "phi4", "seed": 7}


def test_host_defaults_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "http://10.1.2.3:9999")
    assert OllamaLLM().host == "http://10.1.2.3:9999"
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaLLM().host == "http://127.0.0.1:11434"


def test_check_up_with_model(fake: FakeOllama) -> None:
    ok, reason = OllamaLLM(host=fake.host, model="phi4").check()
    assert ok is True
    assert reason == f"Ollama at {fake.host} has phi4"
    # An explicit tag matches too.
    assert OllamaLLM(host=fake.host, model="qwen2.5:1.5b").check()[0] is True


def test_check_up_without_model(fake: FakeOllama) -> None:
    ok, reason = OllamaLLM(host=fake.host, model="qwen2.5:7b").check()
    assert ok is False
    assert "not pulled" in reason and "`ollama pull qwen2.5:7b`" in reason


def test_check_down() -> None:
    host = closed_port_host()
    ok, reason = OllamaLLM(host=host, model="phi4").check()
    assert ok is False
    assert f"not reachable at {host}" in reason
