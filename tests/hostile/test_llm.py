"""Hostile probes of the LLM side (issue 15, items 4-7 and 14): misbehaving Ollama servers, replies
that do not parse, and builds that meet them. Every server here is tests/fake_ollama.py on loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fake_ollama import ChatReply, FakeOllama, closed_port_host, running_fake_ollama
from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams, Settings
from memrag.index.extract import extract_chunk
from memrag.index.readers import benchmark_document
from memrag.llm.base import LLMCallError, LLMError, LLMReplyError, LLMUnavailable, ModelNotFound
from memrag.llm.factory import choose_backend
from memrag.llm.jsoncall import parse_json
from memrag.llm.ollama_backend import CHECK_TIMEOUT_S, OllamaLLM
from scripted import HashEmbedder, ScriptedLLM

probe = pytest.mark.probe
ASK = [{"role": "user", "content": "Who wrote it?"}]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
NOT_AN_OBJECT = [b"[]", b'[{"model": "phi4"}]', b'"just text"', b"42", b"null", b"true",
                 b"<html><body>proxy login</body></html>", b""]


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with running_fake_ollama(models=["phi4"]) as server:
        yield server


def _chat(host: str, timeout: float = 5.0, max_tokens: int = 50) -> float:
    """One call; returns how long the call itself took (time bounds leave room for a busy CI box)."""
    llm = OllamaLLM(host=host, model="phi4", timeout=timeout)
    t0 = time.monotonic()
    try:
        llm.complete(ASK, schema=SCHEMA, max_tokens=max_tokens, stage="answer")
    finally:
        _chat.seconds = time.monotonic() - t0  # type: ignore[attr-defined]
    return _chat.seconds  # type: ignore[attr-defined]


# ------------------------------------------------------------------ item 4: not an object
@probe("Ollama's /api/chat answers a JSON array (or a string, a number, null, HTML, nothing)",
       "the call raises LLMReplyError saying the server did not answer like Ollama", group="ollama")
@pytest.mark.parametrize("body", NOT_AN_OBJECT, ids=lambda b: b[:12].decode() or "empty")
def test_chat_reply_that_is_not_an_object(fake: FakeOllama, body: bytes) -> None:
    fake.script(ChatReply(raw_body=body))
    with pytest.raises(LLMReplyError, match="did not answer like Ollama"):
        _chat(fake.host)


@probe("Ollama's /api/tags answers a JSON array (or a string, a number, null, HTML, nothing)",
       "check() returns a failed check with the reason and never raises", group="ollama")
@pytest.mark.parametrize("body", NOT_AN_OBJECT, ids=lambda b: b[:12].decode() or "empty")
def test_tags_reply_that_is_not_an_object(fake: FakeOllama, body: bytes) -> None:
    fake.tags_reply = ChatReply(raw_body=body)
    ok, reason = OllamaLLM(host=fake.host, model="phi4").check()
    assert ok is False and "did not answer like Ollama" in reason


@probe("auto backend while /api/tags answers a JSON array",
       "doctor's choice falls back to the embedded model, with the reason", group="ollama")
def test_auto_falls_back_to_embedded_when_tags_is_an_array(fake: FakeOllama, tmp_path: Path) -> None:
    fake.tags_reply = ChatReply(raw_body=b"[1, 2, 3]")
    settings = Settings(backend="auto", ollama_host=fake.host, data_dir=tmp_path, cache_dir=tmp_path)
    llm, choice = choose_backend(settings)  # the embedded model loads lazily: nothing is loaded here
    assert choice.backend == "embedded" and "did not answer like Ollama" in choice.reason


# ------------------------------------------------------------------ item 5: one deadline per call
@probe("a server that sends its whole reply one byte every 50 ms, to a timeout=1 s call",
       "LLMError within the call's deadline, not after the ~20 s the drip takes", group="ollama")
def test_a_dripping_server_cannot_outlast_the_deadline(fake: FakeOllama) -> None:
    fake.script(ChatReply(content=json.dumps({"answer": "x" * 300}), drip_s=0.05))
    with pytest.raises(LLMError, match="within 1 s"):
        _chat(fake.host, timeout=1.0)
    assert _chat.seconds < 4.0  # type: ignore[attr-defined]


@probe("/api/tags dripped one byte every 50 ms",
       "check() fails within its own short deadline", group="ollama")
def test_check_has_its_own_short_deadline(fake: FakeOllama) -> None:
    fake.tags_reply = ChatReply(drip_s=0.05)
    llm = OllamaLLM(host=fake.host, model="phi4")
    t0 = time.monotonic()
    ok, reason = llm.check()
    assert ok is False and f"within {CHECK_TIMEOUT_S:g} s" in reason
    assert time.monotonic() - t0 < CHECK_TIMEOUT_S + 2.5  # the drip takes ~20 s


@probe("a 200 MB reply to a 50-token request",
       "LLMReplyError once the reply passes a bound derived from max_tokens; it is not read whole",
       group="ollama")
def test_a_huge_reply_is_not_read_whole(fake: FakeOllama) -> None:
    fake.script(ChatReply(huge_bytes=200_000_000))
    with pytest.raises(LLMReplyError, match="larger than"):
        _chat(fake.host, timeout=60.0, max_tokens=50)
    assert _chat.seconds < 5.0  # type: ignore[attr-defined]


# ------------------------------------------------------------------ held: down, garbage, 500, cut-off, stall
@probe("Ollama down (connection refused)", "LLMUnavailable naming the host and `ollama serve`",
       group="ollama")
def test_ollama_down() -> None:
    with pytest.raises(LLMUnavailable, match="ollama serve"):
        _chat(closed_port_host())
    assert _chat.seconds < 5.0  # type: ignore[attr-defined]


@probe("Ollama answers garbage bytes", "LLMReplyError, within the deadline", group="ollama")
def test_ollama_garbage(fake: FakeOllama) -> None:
    fake.script(ChatReply(raw_body=b"\x00\xff\xfe garbage {{{"))
    with pytest.raises(LLMReplyError):
        _chat(fake.host)


@probe("Ollama answers HTTP 500", "LLMCallError with the server's message", group="ollama")
def test_ollama_500(fake: FakeOllama) -> None:
    fake.script(ChatReply(status=500, content="out of memory"))
    with pytest.raises(LLMCallError, match="out of memory"):
        _chat(fake.host)


@probe("HTTP 500 whose body is a JSON array, nested 100,000 deep, or HTML",
       "LLMCallError naming the status (the client's own error parsing is never reached)", group="ollama")
@pytest.mark.parametrize("body", [b"[1, 2]", b"[" * 100_000, b"<html>oops</html>"], ids=["array", "deep", "html"])
def test_ollama_500_with_an_odd_body(fake: FakeOllama, body: bytes) -> None:
    fake.script(ChatReply(status=500, raw_body=body))
    with pytest.raises(LLMCallError, match="HTTP 500"):
        _chat(fake.host)


@probe("Ollama's reply is cut off half-way", "LLMReplyError saying it broke off", group="ollama")
def test_ollama_cut_off(fake: FakeOllama) -> None:
    fake.script(ChatReply(content='{"answer": "a long one"}', cut_off=True))
    with pytest.raises(LLMReplyError, match="broke off"):
        _chat(fake.host)


@probe("Ollama stalls (accepts, then says nothing)", "LLMError within the timeout", group="ollama")
def test_ollama_stalled(fake: FakeOllama) -> None:
    fake.script(ChatReply(content="late", delay_s=6.0))
    with pytest.raises(LLMError, match="within 0.5 s"):
        _chat(fake.host, timeout=0.5)
    assert _chat.seconds < 3.0  # type: ignore[attr-defined]


# ------------------------------------------------------------------ item 7: parsing escapes
DEEP = "[" * 100_000 + "]" * 100_000


@probe("an extraction reply nested 100,000 deep", "the chunk is recorded as failed (ValueError), "
       "no RecursionError", group="parsers")
def test_deep_extraction_reply() -> None:
    with pytest.raises(ValueError, match="nested"):
        parse_json(DEEP)
    out = extract_chunk(ScriptedLLM([DEEP, DEEP]), "T", "text")
    assert out.extraction is None and "nested" in (out.error or "")


@probe("a traces file nested 100,000 deep", "read_traces raises ValueError", group="parsers")
def test_deep_traces_file() -> None:
    from memrag.tracefile import read_traces

    with pytest.raises(ValueError, match="nested"):
        read_traces(('{"traces": ' + DEEP + "}").encode())


@probe("benchmark files nested 100,000 deep (JSON and JSON lines)", "the loader raises ValueError",
       group="parsers")
@pytest.mark.parametrize("name", ["musique", "2wiki", "hotpotqa"])
def test_deep_benchmark_file(tmp_path: Path, name: str) -> None:
    from memrag.eval.datasets import load_dataset

    path = tmp_path / ("q.json" if name == "musique" else "q.jsonl")
    path.write_text('{"id": ' + DEEP + "}\n" if name != "musique" else DEEP, encoding="utf-8")
    corpus = tmp_path / "corpus.json"
    corpus.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="nested"):
        load_dataset(name, path, corpus if name == "musique" else None)


@probe('an extraction reply with "importance": 1e999', "the entity is kept with a default importance",
       group="parsers")
def test_importance_overflow() -> None:
    reply = '{"entities": [{"name": "Ada", "type": "person", "importance": 1e999}], "triples": []}'
    out = extract_chunk(ScriptedLLM([reply]), "T", "Ada.")
    assert out.error is None and out.extraction is not None
    assert [(e.name, 1 <= e.importance <= 5) for e in out.extraction.entities] == [("Ada", True)]


# ------------------------------------------------------------------ item 6: one bad reply, one chunk
def _docs(n: int) -> list:
    return [benchmark_document(f"d{i}", f"Town {i}", f"Town {i} lies on River {i}.", "t") for i in range(n)]


def _good(i: int) -> ChatReply:
    return ChatReply(content=json.dumps({"entities": [{"name": f"Town {i}", "type": "place",
                                                       "description": "a town", "importance": 3}],
                                         "triples": [[f"Town {i}", "lies on", f"River {i}"]]}))


def _build(path: Path, host: str, n: int, **kw) -> list:
    llm = OllamaLLM(host=host, model=kw.pop("model", "phi4"), timeout=5)
    return list(build_memory(path, _docs(n), llm, HashEmbedder(), IndexParams(), **kw))


@probe("a build whose server answers one chunk with HTTP 500 and one with garbage",
       "those two chunks are recorded as failed with the raw reply, the rest is built and saved; "
       "a rerun with retry_failed extracts only them", group="builds")
def test_one_bad_reply_fails_one_chunk_not_the_build(fake: FakeOllama, tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    fake.script(_good(0), ChatReply(status=500, content="CUDA error"),
                ChatReply(raw_body=b"<html>bad gateway</html>"), _good(3))
    events = _build(mem, fake.host, 4)
    log = store.load(mem).extraction_log
    assert [log[i].status for i in range(4)] == ["ok", "failed", "failed", "ok"]
    assert "CUDA error" in log[1].raw_reply and "bad gateway" in log[2].raw_reply
    assert events[-1].kind == "done"

    fake.script(_good(1), _good(2))
    _build(mem, fake.host, 4, retry_failed=True)
    again = store.load(mem)
    assert [again.extraction_log[i].status for i in range(4)] == ["ok"] * 4
    assert {e.name for e in again.engrams} >= {"Town 1", "Town 2"}
    assert len(fake.chat_bodies()) == 6


@probe("a build whose server starts refusing credentials (HTTP 401) half-way",
       "the build stops with a clear LLMError; the chunks done are kept and a rerun reuses them",
       group="builds")
def test_401_stops_the_build_keeping_done_chunks(fake: FakeOllama, tmp_path: Path) -> None:
    mem = tmp_path / "mem"
    fake.script(_good(0), _good(1), ChatReply(status=401, content="unauthorized"))
    with pytest.raises(LLMError, match="401"):
        _build(mem, fake.host, 4)
    fake.script(_good(2), _good(3))
    events = _build(mem, fake.host, 4)
    assert [e.data["resumed"] for e in events if e.kind == "chunk_done"] == [True, True, False, False]


@probe("a build whose model is not pulled", "the build stops at once with ModelNotFound", group="builds")
def test_missing_model_stops_the_build(fake: FakeOllama, tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound):
        _build(tmp_path / "mem", fake.host, 3, model="llama3.3")
    assert len(fake.chat_bodies()) == 1


@probe("a build whose server goes away", "the build stops with LLMUnavailable", group="builds")
def test_unreachable_server_stops_the_build(tmp_path: Path) -> None:
    with pytest.raises(LLMUnavailable):
        _build(tmp_path / "mem", closed_port_host(), 3)


@probe("a build whose server fails five chunks in a row", "the build stops saying so; the chunks done "
       "are kept", group="builds")
def test_five_failures_in_a_row_stop_the_build(fake: FakeOllama, tmp_path: Path) -> None:
    fake.script(_good(0), *[ChatReply(status=500, content="busy")] * 5)
    with pytest.raises(LLMError, match="5 chunks in a row"):
        _build(tmp_path / "mem", fake.host, 8)
    assert len(fake.chat_bodies()) == 6


# ------------------------------------------------------------------ item 14: lone surrogates
@probe("an extraction reply whose description ends in half a surrogate pair ('amalgam\\ud83d')",
       "the memory builds, saves and loads, the text repaired", group="builds")
def test_lone_surrogate_in_a_reply_builds_a_memory(tmp_path: Path) -> None:
    reply = {"entities": [{"name": "Northern Rockies", "type": "place",
                           "description": "an amalgam\ud83d", "importance": 3}],
             "triples": [["Northern Rockies\udc00", "is in", "British Columbia"]]}
    llm = ScriptedLLM({"index.extract": [reply]})
    doc = benchmark_document("d1", "Northern Rockies", "The Northern Rockies Regional Municipality.", "t")
    run_build(build_memory(tmp_path / "mem", [doc], llm, HashEmbedder(), IndexParams()))
    m = store.load(tmp_path / "mem")
    assert [e.description for e in m.engrams if e.name == "Northern Rockies"] == ["an amalgam"]
    assert all(t.head == "Northern Rockies" for t in m.triples)


@probe("the embedder given lone surrogates, control characters, an empty and a huge string",
       "vectors for all of them, no exception", group="builds")
def test_the_embedder_takes_any_str() -> None:
    from memrag.embed import get_embedder

    texts = ["amalgam\ud83d", "\udc00", "bell\x07 nul\x00", "", "word " * 5_000]
    e = get_embedder()
    for batch in (texts, texts * 5):  # the small-batch (traced) and the eager path
        v = e.encode(batch)
        assert v.shape == (len(batch), e.dim) and np.isfinite(v).all()
    assert np.allclose(e.encode(["amalgam\ud83d"]), e.encode(["amalgam"]), atol=1e-5)
