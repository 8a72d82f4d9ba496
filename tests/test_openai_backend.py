"""The OpenAI-compatible backend against a loopback fake of the OpenAI API (the real `openai`
client end to end): structured output and its fallbacks, token counts, identity and the key,
error families, choice rules, parallel extraction and the served embedders."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from fake_ollama import closed_port_host, running_fake_ollama
from fake_openai import Reply, running_fake_openai
from memrag.config import IndexParams, Settings
from memrag.llm.base import LLM, LLMCallError, LLMRefused, LLMReplyError, LLMUnavailable, ModelNotFound
from memrag.llm.cache import CachedLLM
from memrag.llm.factory import BackendChoice, choose_backend, extraction_slots
from memrag.llm.jsoncall import call_json
from memrag.llm.egress import egress_notice, egress_warning, is_loopback
from memrag.llm.openai_backend import OpenAICompatibleLLM, base_url_hash, normalise_base_url

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
MSGS = [{"role": "user", "content": "Reply with JSON {\"a\": 1}."}]
KEY = "sk-test-secret-0123456789"


@pytest.fixture
def fake():
    with running_fake_openai(models=["default"]) as f:
        yield f


@pytest.fixture
def llm(fake) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(base_url=fake.base_url, model="default", api_key=KEY, seed=7)


def test_implements_the_llm_protocol(llm) -> None:
    assert isinstance(llm, LLM) and llm.backend == "openai"


def test_schema_goes_as_json_schema_with_temperature_zero_seed_and_token_limit(fake, llm) -> None:
    fake.script(Reply(content='{"a": 1}', prompt_tokens=30, completion_tokens=4, cached_tokens=16))
    c = llm.complete(MSGS, schema=SCHEMA, max_tokens=50, stage="test")
    body = fake.chat_bodies()[0]
    assert body["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False}}
    assert (body["temperature"], body["seed"], body["max_tokens"], body["model"]) == (0, 7, 50, "default")
    assert json.loads(c.text) == {"a": 1} and c.structured == "json_schema"
    assert (c.prompt_tokens, c.prompt_tokens_cached, c.completion_tokens) == (30, 16, 4)
    assert c.backend == "openai" and c.stage == "test" and not c.cached


def test_unknown_counts_stay_unknown(fake, llm) -> None:
    fake.script(Reply(content="hi", prompt_tokens=None, completion_tokens=None))
    c = llm.complete(MSGS, max_tokens=10, stage="test")
    assert (c.prompt_tokens, c.prompt_tokens_cached, c.completion_tokens) == (None, None, None)
    assert "response_format" not in fake.chat_bodies()[0] and c.structured == "text"


def test_a_server_without_json_schema_gets_json_mode_and_the_parser(fake, llm) -> None:
    fake.refuse_json_schema = True
    fake.script(Reply(content='```json\n{"a": 2,}\n```'), Reply(content='{"a": 3}'))
    c = llm.complete(MSGS, schema=SCHEMA, max_tokens=50, stage="test")
    assert c.structured == "json_object" and c.text.startswith("```")
    kinds = [b.get("response_format", {}).get("type") for b in fake.chat_bodies()]
    assert kinds == ["json_schema", "json_object"]
    # The refusal is remembered: the next call asks for JSON mode at once.
    llm.complete(MSGS, schema=SCHEMA, max_tokens=50, stage="test")
    assert [b["response_format"]["type"] for b in fake.chat_bodies()][2:] == ["json_object"]


def test_a_server_without_any_json_mode_gets_plain_text_and_the_trace_says_so(fake) -> None:
    fake.refuse_json_schema = fake.refuse_json_object = True
    llm = OpenAICompatibleLLM(base_url=fake.base_url + "/", model="default")  # another key in the mode table
    fake.script(Reply(content='Sure: {"a": 4}'))
    result = call_json(llm, MSGS, SCHEMA, "query.entities", lambda v: v["a"])
    assert result.ok and result.value == 4
    assert "response_format" not in fake.chat_bodies()[-1]
    assert result.calls[-1].structured == "text"


def test_a_schema_constrained_reply_that_is_not_json_is_a_reply_error(fake, llm) -> None:
    fake.script(Reply(content="not json"))
    with pytest.raises(LLMReplyError, match="not valid JSON") as e:
        llm.complete(MSGS, schema=SCHEMA, max_tokens=50, stage="test")
    assert e.value.completion is not None and e.value.completion.text == "not json"


def test_the_key_goes_in_the_header_only(fake, llm, tmp_path) -> None:
    fake.script(Reply(content='{"a": 1}'))
    cached = CachedLLM(llm, None)
    result = call_json(cached, MSGS, SCHEMA, "query.entities", lambda v: v)
    assert {k.lower(): v for k, v in fake.requests[-1].headers.items()}.get("authorization") == f"Bearer {KEY}"
    for text in (json.dumps(llm.identity()), cached.last_key or "", repr(llm), repr(Settings(openai_api_key=KEY)),
                 json.dumps(result.calls[-1].__dict__), json.dumps(fake.chat_bodies()[-1])):
        assert KEY not in text


def test_identity_has_model_and_a_hash_of_the_base_url(fake, llm) -> None:
    other = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="default")
    assert llm.identity() == {"backend": "openai", "model": "default", "server": base_url_hash(fake.base_url),
                              "seed": 7}
    assert fake.base_url.split("//")[1] not in json.dumps(llm.identity())
    assert CachedLLM(llm, None).key_for(MSGS, None, 10, "answer") != \
        CachedLLM(other, None).key_for(MSGS, None, 10, "answer")


def test_base_urls_are_normalised() -> None:
    assert normalise_base_url("http://h:8000") == "http://h:8000/v1"
    assert normalise_base_url("http://h:8000/v1/") == "http://h:8000/v1"
    assert base_url_hash("http://h:8000") == base_url_hash("http://h:8000/v1/")
    with pytest.raises(Exception, match="http:// or https://"):
        normalise_base_url("h:8000")


# ------------------------------------------------------------------ errors
def test_server_down_is_unavailable() -> None:
    llm = OpenAICompatibleLLM(base_url=closed_port_host() + "/v1", model="default")
    with pytest.raises(LLMUnavailable, match="not reachable"):
        llm.complete(MSGS, max_tokens=10, stage="test")
    ok, why = llm.check()
    assert not ok and "not reachable" in why


def test_model_not_found(fake) -> None:
    llm = OpenAICompatibleLLM(base_url=fake.base_url, model="gpt-nothing")
    with pytest.raises(ModelNotFound, match="gpt-nothing"):
        llm.complete(MSGS, max_tokens=10, stage="test")
    ok, why = llm.check()
    assert not ok and "does not serve the model gpt-nothing" in why and "default" in why


def test_401_is_refused_and_the_echoed_key_is_scrubbed(fake, llm) -> None:
    fake.script(Reply(status=401, content=f"Incorrect API key provided: {KEY}. Check it.",
                      code="invalid_api_key"))
    with pytest.raises(LLMRefused, match="OPENAI_API_KEY") as e:
        llm.complete(MSGS, max_tokens=10, stage="test")
    assert KEY not in str(e.value) and "sk-" not in str(e.value)


def test_429_waits_as_asked_within_the_deadline(fake, llm) -> None:
    fake.script(Reply(status=429, content="slow down", headers={"retry-after": "0.3"}), Reply(content="fine"))
    t0 = time.monotonic()
    c = llm.complete(MSGS, max_tokens=10, stage="test")
    assert c.text == "fine" and time.monotonic() - t0 >= 0.3 and len(fake.chat_bodies()) == 2


def test_429_with_a_long_wait_fails_this_call_and_says_how_long(fake, llm) -> None:
    fake.script(Reply(status=429, content="Rate limit reached", headers={"retry-after": "120"}))
    with pytest.raises(LLMCallError, match="wait 120 s") as e:
        llm.complete(MSGS, max_tokens=10, stage="test")
    assert not isinstance(e.value, LLMReplyError) and len(fake.chat_bodies()) == 1


def test_429_quota_used_up_stops_everything(fake, llm) -> None:
    fake.script(Reply(status=429, content="You exceeded your current quota", code="insufficient_quota"))
    with pytest.raises(LLMRefused, match="quota"):
        llm.complete(MSGS, max_tokens=10, stage="test")


def test_cut_off_at_the_token_limit_carries_the_reply(fake, llm) -> None:
    fake.script(Reply(content='{"a": ', finish_reason="length", completion_tokens=50))
    with pytest.raises(LLMReplyError, match="50-token limit") as e:
        llm.complete(MSGS, schema=SCHEMA, max_tokens=50, stage="test")
    assert e.value.completion is not None and e.value.completion.completion_tokens == 50


@pytest.mark.parametrize("reply, match", [
    (Reply(raw_body=b"<html>proxy error</html>"), "not JSON"),
    (Reply(raw_body=b"[1, 2]"), "JSON list"),
    (Reply(raw_body=b'{"choices": []}'), "choices"),
    (Reply(content="x", cut_off=True), "broke off"),
])
def test_malformed_or_broken_replies_are_reply_errors(fake, llm, reply, match) -> None:
    fake.script(reply)
    with pytest.raises(LLMReplyError, match=match):
        llm.complete(MSGS, max_tokens=10, stage="test")


def test_server_error_fails_this_call_with_its_message(fake, llm) -> None:
    fake.script(Reply(status=500, content="CUDA out of memory"))
    with pytest.raises(LLMCallError, match="CUDA out of memory.*HTTP 500"):
        llm.complete(MSGS, max_tokens=10, stage="test")


def test_a_dripping_server_meets_one_deadline(fake) -> None:
    llm = OpenAICompatibleLLM(base_url=fake.base_url, model="default", timeout=1.0)
    fake.script(Reply(content="x" * 50, drip_s=0.1))
    t0 = time.monotonic()
    with pytest.raises(LLMCallError, match="within 1 s"):
        llm.complete(MSGS, max_tokens=10, stage="test")
    assert time.monotonic() - t0 < 3


# ------------------------------------------------------------------ check and choice
def test_check_uses_the_one_model_of_a_single_model_server(fake) -> None:
    llm = OpenAICompatibleLLM(base_url=fake.base_url)
    ok, why = llm.check()
    assert ok and llm.model == "default" and "serves one model" in why


def test_check_without_a_model_list_trusts_the_named_model(fake) -> None:
    fake.list_status = 404
    ok, why = OpenAICompatibleLLM(base_url=fake.base_url, model="default").check()
    assert ok and "does not list models" in why


def test_an_api_key_alone_never_selects_the_server(monkeypatch) -> None:
    monkeypatch.delenv("MEMRAG_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OLLAMA_HOST", closed_port_host())
    settings = Settings()
    assert settings.backend == "auto"
    _, choice = choose_backend(Settings(ollama_host=closed_port_host()))
    assert choice.backend == "embedded"  # auto: Ollama or the embedded model, never the server


def test_a_typed_base_url_selects_the_server(fake, monkeypatch) -> None:
    monkeypatch.setenv("MEMRAG_OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("MEMRAG_OPENAI_MODEL", "default")
    settings = Settings()
    assert settings.backend == "openai"
    llm, choice = choose_backend(settings)
    assert choice.backend == "openai" and choice.model == "default" and choice.warning == ""
    assert extraction_slots(choice.backend, settings) == settings.extract_parallel == 4
    assert extraction_slots("embedded", settings) == 1


def test_a_server_elsewhere_is_announced_before_the_first_call() -> None:
    assert is_loopback("http://127.0.0.1:8080/v1") and is_loopback("http://localhost:1234/v1")
    assert is_loopback("http://[::1]:8000/v1") and not is_loopback("https://api.openai.com/v1")
    warning = egress_warning("https://api.openai.com/v1")
    assert "your documents leave this machine" in warning and "api.openai.com" in warning
    settings = Settings(backend="openai", openai_base_url="https://api.openai.com/v1")
    notice = egress_notice(settings, "openai")  # what the backend choice shows
    assert "your documents leave this machine" in notice and "api.openai.com (the LLM)" in notice
    text = BackendChoice("openai", "gpt-4o-mini", "why", warning).describe()
    assert text.splitlines()[1] == f"WARNING: {warning}"


def test_choosing_the_server_when_it_is_down_says_so() -> None:
    with pytest.raises(LLMUnavailable, match="not reachable"):
        choose_backend(Settings(backend="openai", openai_base_url=closed_port_host() + "/v1",
                                openai_model="m"))
    with pytest.raises(Exception, match="base URL"):
        choose_backend(Settings(backend="openai", openai_base_url=""))


def test_cli_parallel_and_base_url_reach_the_settings() -> None:
    from memrag.cli.common import settings_from
    from memrag.cli.main import build_parser

    args = build_parser()[0].parse_args(["index", "x.txt", "--memory", "m", "--backend", "openai",
                                      "--base-url", "http://127.0.0.1:8000/v1", "--model", "qwen",
                                      "--parallel", "8", "--embedder", "ollama:bge-m3"])
    s = settings_from(args)
    assert (s.backend, s.openai_base_url, s.openai_model, s.extract_parallel, s.embedder) == \
        ("openai", "http://127.0.0.1:8000/v1", "qwen", 8, "ollama:bge-m3")
    with pytest.raises(SystemExit):
        build_parser()[0].parse_args(["index", "x", "--memory", "m", "--parallel", "0"])


# ------------------------------------------------------------------ parallel extraction
def _extraction_responder(seen: list[str], fail_titles: set[str] = frozenset()):
    def respond(body: dict) -> Reply:
        user = body["messages"][-1]["content"]
        title = user.split("\n", 1)[0].removeprefix("Title: ")
        seen.append(title)
        if title in fail_titles:
            return Reply(status=401, content="key revoked")
        name = f"Entity of {title}"
        reply = {"entities": [{"name": name, "type": "thing", "description": "d", "importance": 3}],
                 "triples": [[name, "appears in", title]]}
        # Earlier chunks answer later, so replies arrive out of order.
        return Reply(content=json.dumps(reply), delay_s=0.05 * (6 - int(title.split()[-1])))
    return respond


def test_extraction_fans_out_keeps_chunk_order_and_resumes(fake, tmp_path) -> None:
    from memrag.index.build import BuildStopped, build_memory, run_build
    from memrag.index.readers import Document
    from scripted import HashEmbedder

    docs = [Document(f"d{i}", f"Doc {i}", f"Passage number {i} about things.", "test", "text") for i in range(1, 6)]
    llm = OpenAICompatibleLLM(base_url=fake.base_url, model="default")
    seen: list[str] = []
    fake.responder = _extraction_responder(seen, fail_titles={"Doc 4"})
    with pytest.raises(LLMRefused):
        run_build(build_memory(tmp_path / "m", docs, CachedLLM(llm, None), HashEmbedder(), IndexParams(),
                               parallel=3))
    assert fake.most_in_flight >= 2
    first = len(seen)

    fake.responder = _extraction_responder(seen)
    memory = run_build(build_memory(tmp_path / "m", docs, CachedLLM(llm, None), HashEmbedder(), IndexParams(),
                                    parallel=3))
    again = seen[first:]
    assert "Doc 1" not in again and "Doc 2" not in again and "Doc 3" not in again and "Doc 4" in again
    assert [c.title for c in memory.chunks] == [f"Doc {i}" for i in range(1, 6)]
    for e in memory.engrams:  # each chunk's entity (and the triple's tail) stayed with its chunk
        assert e.name in (f"Entity of {memory.chunks[e.chunk_id].title}", memory.chunks[e.chunk_id].title)
    assert len(memory.engrams) == 10
    assert memory.llm["backend"] == "openai"
    assert BuildStopped  # imported: the build's own stop type is a backend error too


# ------------------------------------------------------------------ served embedders
def test_openai_embeddings_are_normalised_and_named_by_server(fake, monkeypatch) -> None:
    from memrag.served_embedders import served_embedder

    emb = served_embedder("openai:emb", Settings(openai_base_url=fake.base_url))
    assert emb.model_id == f"openai:emb@{base_url_hash(fake.base_url)}"
    v = emb.encode(["a", "abc", "abcdef"], batch_size=2)
    assert v.shape == (3, 4) and emb.dim == 4 and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0) and v[2, 0] > v[0, 0]
    assert len([r for r in fake.requests if r.path == "/v1/embeddings"]) == 2


def test_ollama_embeddings_and_a_memory_refuses_another_embedder(tmp_path) -> None:
    from memrag.index import store
    from memrag.index.build import build_memory, run_build
    from memrag.served_embedders import served_embedder

    with running_fake_ollama(models=["bge-m3"]) as fake:
        emb = served_embedder("ollama:bge-m3", Settings(ollama_host=fake.host))
        assert emb.model_id == "ollama:bge-m3" and emb.dim == 3
        run_build(build_memory(tmp_path / "m", [], None, emb, IndexParams()))
        assert store.load(tmp_path / "m", emb.model_id).embedder_id == "ollama:bge-m3"
        with pytest.raises(Exception, match="cannot be mixed"):
            store.load(tmp_path / "m", "all-MiniLM-L6-v2")
        with pytest.raises(ModelNotFound, match="ollama pull nomic"):
            served_embedder("ollama:nomic", Settings(ollama_host=fake.host)).encode(["x"])
