"""Hostile probes of what a reply may do (issue 27, probes 3, 5 and 10): compressed bombs are
bounded as they decode, absurd token counts are unknown, and redirects, untrusted certificates and
list-shaped content get messages that say what happened. Every server is a loopback fake.

The bombs inflate to 64 MB, not the probe's 1 GB: the bound they must hit is about 300 KB, and a
smaller bomb keeps the test fast; memory is measured with tracemalloc to show nothing near the
decoded size is held."""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import ssl
import subprocess
import time
import tracemalloc
import zlib
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from fake_openai import Reply, running_fake_openai
from loopback import serving
from memrag.llm.base import Completion, LLMReplyError, LLMUnavailable
from memrag.llm.cache import CachedLLM, ResponseCache
from memrag.llm.ollama_backend import OllamaLLM
from memrag.llm.openai_backend import OpenAICompatibleLLM

probe = pytest.mark.probe
MSGS = [{"role": "user", "content": "Who wrote it?"}]
INFLATED_MB = 64
PEAK_BYTES = 24 * 1024 * 1024  # far below the inflated size: the reply was never held whole


def _gzip(pieces: Iterable[bytes]) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(c.compress(p) for p in pieces) + c.flush()


def _bomb(prefix: str, suffix: str, times: int) -> bytes:
    """`prefix` + 64 MB of 'a' + `suffix`, gzip-encoded `times` times (built without holding 64 MB)."""
    body = _gzip(itertools.chain([prefix.encode()], itertools.repeat(b"a" * (1 << 20), INFLATED_MB),
                                 [suffix.encode()]))
    for _ in range(times - 1):
        body = _gzip([body])
    return body


def _codings(times: int) -> dict[str, str]:
    return {"Content-Encoding": ", ".join(["gzip"] * times)}


OPENAI_CHAT = ('{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
               '"content": "', '"}}]}')
OLLAMA_CHAT = ('{"model": "phi4", "created_at": "2025-01-01T00:00:00Z", "done": true, "done_reason": "stop", '
               '"message": {"role": "assistant", "content": "', '"}}')


def _bounded(call) -> tuple[Exception | None, float, int]:
    """(what the call raised, seconds, peak bytes traced) for one call."""
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        call()
        raised = None
    except Exception as e:  # noqa: BLE001 - the test asserts on it
        raised = e
    finally:
        seconds = time.monotonic() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return raised, seconds, peak


@pytest.fixture
def openai_fake() -> Iterator:
    with running_fake_openai(models=["default"]) as fake:
        yield fake


@pytest.fixture
def ollama_fake() -> Iterator:
    with running_fake_ollama(models=["phi4"]) as fake:
        yield fake


# ------------------------------------------------------------------ probe 3: the decoded reply is bounded
@contextlib.contextmanager
def _serving_a_bomb(backend: str, times: int) -> Iterator[tuple[object, object]]:
    """(backend, fake server) where the fake's next chat reply is a bomb gzip-encoded `times` times."""
    if backend == "openai":
        with running_fake_openai(models=["default"]) as fake:
            fake.script(Reply(raw_body=_bomb(*OPENAI_CHAT, times), headers=_codings(times)))
            yield OpenAICompatibleLLM(base_url=fake.base_url, model="default", timeout=30), fake
    else:
        with running_fake_ollama(models=["phi4"]) as fake:
            fake.script(ChatReply(raw_body=_bomb(*OLLAMA_CHAT, times), headers=_codings(times)))
            yield OllamaLLM(host=fake.host, model="phi4", timeout=30), fake


@probe("a reply gzip-encoded once, or twice (a few KB that inflate to 64 MB), from an OpenAI-compatible "
       "server or Ollama", "LLMReplyError 'larger than' within seconds, memory far below the inflated "
       "size; the request asked for no compression", group="replies")
@pytest.mark.parametrize("backend", ["openai", "ollama"])
@pytest.mark.parametrize("times", [1, 2], ids=["gzip", "gzip-twice"])
def test_compressed_bomb(backend: str, times: int) -> None:
    with _serving_a_bomb(backend, times) as (llm, fake):
        raised, seconds, peak = _bounded(lambda: llm.complete(MSGS, max_tokens=50, stage="answer"))
        if backend == "openai":
            assert fake.requests[-1].headers.get("Accept-Encoding") == "identity"
    assert isinstance(raised, LLMReplyError) and "larger than" in str(raised), raised
    assert seconds < 10 and peak < PEAK_BYTES, (seconds, peak)


@probe("GET /models (check()) answers a compressed list holding a 64 MB model id",
       "check() fails with 'larger than', quickly and in bounded memory; it never raises", group="replies")
def test_openai_check_with_a_bomb(openai_fake) -> None:
    openai_fake.list_reply = Reply(raw_body=_bomb('{"object": "list", "data": [{"id": "', '"}]}', 2),
                                   headers=_codings(2))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    result, seconds, peak = _bounded(llm.check)
    assert result is None and seconds < 10 and peak < PEAK_BYTES, (result, seconds, peak)
    ok, why = llm.check()
    assert ok is False and "larger than" in why and len(why) < 1000


@probe("Ollama's /api/tags (check()) answers a compressed bomb",
       "check() fails with 'larger than', quickly and in bounded memory", group="replies")
def test_ollama_check_with_a_bomb(ollama_fake) -> None:
    ollama_fake.tags_reply = ChatReply(raw_body=_bomb('{"models": [{"model": "', '"}]}', 2), headers=_codings(2))
    llm = OllamaLLM(host=ollama_fake.host, model="phi4")
    result, seconds, peak = _bounded(llm.check)
    assert result is None and seconds < 10 and peak < PEAK_BYTES, (result, seconds, peak)
    ok, why = llm.check()
    assert ok is False and "larger than" in why


@probe("a reply in an encoding memrag does not decode (br), or gzip data that is broken",
       "LLMReplyError saying the reply could not be read and why", group="replies")
@pytest.mark.parametrize("coding,body,said", [
    ("br", b"\x1b\x00\x00", "does not decode"),
    ("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff garbage", "compressed data is broken"),
    ("gzip", _gzip([b'{"choices": []}'])[:-12], "ends before it is complete")], ids=["br", "corrupt", "cut"])
def test_an_encoding_not_read(openai_fake, coding: str, body: bytes, said: str) -> None:
    openai_fake.script(Reply(raw_body=body, headers={"Content-Encoding": coding}))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    with pytest.raises(LLMReplyError, match=said):
        llm.complete(MSGS, max_tokens=20, stage="answer")


# ------------------------------------------------------------------ probe 5: absurd token counts
@probe("usage.prompt_tokens = 2**63 and completion_tokens = 10**30 from the server",
       "the counts are unknown (None), the reply is cached, and a rerun is a cache hit (not paid again)",
       group="replies")
def test_absurd_token_counts_are_unknown(openai_fake, tmp_path: Path) -> None:
    openai_fake.script(Reply(content="fine", prompt_tokens=2**63, completion_tokens=10**30))
    llm = CachedLLM(OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default"),
                    ResponseCache(tmp_path / "cache.sqlite"))
    first = llm.complete(MSGS, max_tokens=20, stage="answer")
    again = llm.complete(MSGS, max_tokens=20, stage="answer")
    assert (first.prompt_tokens, first.completion_tokens) == (None, None)
    assert again.cached and again.text == "fine" and len(openai_fake.chat_bodies()) == 1


@probe("a completion carrying prompt_tokens = 2**63 reaches the response cache (from any backend or a "
       "recordings file)", "stored with its counts unknown; no OverflowError", group="replies")
def test_the_cache_never_stores_an_absurd_count(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", Completion(text="t", model="m", prompt_tokens=2**63, prompt_tokens_cached=-1,
                              completion_tokens=10**30))
    got = cache.get("k")
    assert got is not None and (got.prompt_tokens, got.prompt_tokens_cached, got.completion_tokens) == (None,) * 3


@probe("Ollama's prompt_eval_count = 2**63", "the count is unknown (None), never a number", group="replies")
def test_absurd_ollama_counts_are_unknown(ollama_fake) -> None:
    ollama_fake.script(ChatReply(content="fine", prompt_eval_count=2**63, eval_count=10**30))
    c = OllamaLLM(host=ollama_fake.host, model="phi4").complete(MSGS, max_tokens=20, stage="answer")
    assert (c.prompt_tokens, c.completion_tokens) == (None, None)


# ------------------------------------------------------------------ probe 10: messages that say what happened
@probe("the OpenAI-compatible server answers 307 Temporary Redirect",
       "LLMUnavailable: a redirect memrag does not follow, naming where it points (without its query)",
       group="replies")
def test_openai_redirect(openai_fake) -> None:
    openai_fake.script(Reply(status=307, content="moved",
                             headers={"Location": "https://elsewhere.invalid/v1/chat/completions?sig=s3cr"}))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    with pytest.raises(LLMUnavailable, match="redirect.*does not follow") as e:
        llm.complete(MSGS, max_tokens=20, stage="answer")
    assert "elsewhere.invalid" in str(e.value) and "s3cr" not in str(e.value)


@probe("Ollama answers 307 Temporary Redirect", "LLMUnavailable: a redirect memrag does not follow",
       group="replies")
def test_ollama_redirect(ollama_fake) -> None:
    ollama_fake.script(ChatReply(status=307, content="moved", headers={"Location": "http://127.0.0.1:9/api/chat"}))
    with pytest.raises(LLMUnavailable, match="redirect.*does not follow"):
        OllamaLLM(host=ollama_fake.host, model="phi4").complete(MSGS, max_tokens=20, stage="answer")
    assert len(ollama_fake.chat_bodies()) == 1


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> Iterator[str]:
    """An https://127.0.0.1:PORT server with a self-signed certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
                    "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True, timeout=30)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server, "self-signed"):
        yield f"https://127.0.0.1:{server.server_address[1]}"


@probe("the server's certificate is self-signed", "check() names a TLS certificate problem, not "
       "'not reachable … is it running?'", group="replies")
def test_a_self_signed_certificate(self_signed: str) -> None:
    ok, why = OpenAICompatibleLLM(base_url=self_signed + "/v1", model="m").check()
    assert ok is False and "certificate could not be verified" in why and "is it running" not in why
    ok, why = OllamaLLM(host=self_signed, model="phi4").check()
    assert ok is False and "certificate could not be verified" in why and "is it running" not in why


@probe("choices[0].message.content sent as a list of parts",
       "the text parts are read, joined; a list without text parts is named precisely", group="replies")
def test_content_as_a_list_of_parts(openai_fake) -> None:
    def body(content) -> bytes:
        return json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}]}).encode()

    openai_fake.script(Reply(raw_body=body([{"type": "text", "text": '{"answer": '},
                                            {"type": "text", "text": '"Ada"}'}])),
                       Reply(raw_body=body([{"type": "image_url", "image_url": {"url": "x"}}])))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    assert llm.complete(MSGS, max_tokens=20, stage="answer").text == '{"answer": "Ada"}'
    with pytest.raises(LLMReplyError, match="content as a list of 1 parts, none of them text"):
        llm.complete(MSGS, max_tokens=20, stage="answer")
