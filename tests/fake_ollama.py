"""A loopback HTTP server that speaks enough of Ollama's API for the `ollama` client.

Use it as a context manager:

    with running_fake_ollama(models=["phi4"]) as fake:
        fake.script("first reply", ChatReply(content='{"a": 1}', eval_count=None))
        llm = OllamaLLM(host=fake.host, model="phi4")
        ...
        fake.chat_bodies()[0]["options"]["num_ctx"]

It answers `POST /api/chat` (non-streaming), `GET /api/tags` and `POST /api/show`,
records every request body, and can misbehave on purpose (see `ChatReply`; set
`fake.tags_reply` to make `/api/tags` misbehave the same ways). It only ever listens
on 127.0.0.1, and every misbehaviour is bounded (a drip ends with its reply, a huge
reply ends at its size or when the client hangs up).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback import serving

_TIMESTAMP = "2025-01-01T00:00:00Z"
MAX_TOP_LOGPROBS = 20  # Ollama's server refuses more alternatives per token


@dataclass
class ChatReply:
    """One scripted answer to `POST /api/chat`.

    The normal fields fill an Ollama-shaped JSON reply; the others break it:
    `status` sends an error reply `{"error": content}` (or `raw_body`), `raw_body` replaces the
    whole body with these bytes, `cut_off` announces a longer body than it sends
    and hangs up, `delay_s` waits before answering, `drip_s` sends the whole
    response (status line and headers too) one byte every `drip_s` seconds, and
    `huge_bytes` sends a JSON-looking body of that many bytes, `headers` are sent with the reply
    (a `Content-Encoding`, a redirect's `Location`), `logprobs` (when not None) is sent as the
    reply's top-level `logprobs` as it stands.
    """

    content: str | None = "ok"
    prompt_eval_count: int | None = 12
    eval_count: int | None = 5
    done: bool = True
    done_reason: str = "stop"
    include_message: bool = True
    status: int = 200
    raw_body: bytes | None = None
    cut_off: bool = False
    delay_s: float = 0.0
    drip_s: float = 0.0
    huge_bytes: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    logprobs: Any = None


@dataclass
class RecordedRequest:
    method: str
    path: str
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None


def _full_name(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


class FakeOllama:
    """State shared by the request handlers: installed models, the reply script, the log."""

    def __init__(self, models: list[str]) -> None:
        self.models = list(models)
        self.default_reply: ChatReply | None = None  # used when the script is empty
        self.tags_reply: ChatReply | None = None  # None: list the models normally
        self.requests: list[RecordedRequest] = []
        self._script: deque[ChatReply] = deque()
        self._lock = threading.Lock()
        self.host = ""  # set once the server listens

    def script(self, *replies: ChatReply | str) -> None:
        """Queue replies for the next chat requests, in order (a str is the message text)."""
        with self._lock:
            for r in replies:
                self._script.append(ChatReply(content=r) if isinstance(r, str) else r)

    def chat_bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests if r.path == "/api/chat"]

    def has_model(self, name: str) -> bool:
        return _full_name(name) in {_full_name(m) for m in self.models}

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self) -> ChatReply | None:
        with self._lock:
            return self._script.popleft() if self._script else self.default_reply


def _chat_body(model: str, reply: ChatReply) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "created_at": _TIMESTAMP,
        "done": reply.done,
        "done_reason": reply.done_reason,
        "total_duration": 2_500_000_000,
        "load_duration": 100_000_000,
        "prompt_eval_duration": 400_000_000,
        "eval_duration": 2_000_000_000,
    }
    if reply.include_message:
        body["message"] = {"role": "assistant", "content": reply.content}
    if reply.prompt_eval_count is not None:
        body["prompt_eval_count"] = reply.prompt_eval_count
    if reply.eval_count is not None:
        body["eval_count"] = reply.eval_count
    if reply.logprobs is not None:
        body["logprobs"] = reply.logprobs
    return body


def _model_entry(name: str) -> dict[str, Any]:
    details = {"format": "gguf", "family": "fake", "parameter_size": "1B", "quantization_level": "Q4_K_M"}
    return {
        "name": _full_name(name),
        "model": _full_name(name),
        "modified_at": _TIMESTAMP,
        "size": 1_000_000,
        "digest": _digest(_full_name(name)),
        "details": details,
    }


def _make_handler(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like Ollama; every reply sends Content-Length

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _read_body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            text = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            if not text:
                return None
            try:
                return json.loads(text)
            except ValueError:
                return text

        def _send(self, status: int, payload: Any, content_type: str = "application/json",
                  headers: dict[str, str] | None = None) -> None:
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _not_found_model(self, model: Any) -> None:
            self._send(404, {"error": f"model '{model}' not found"})

        def do_GET(self) -> None:
            fake._record(RecordedRequest("GET", self.path, None))
            if self.path == "/api/tags":
                listing = json.dumps({"models": [_model_entry(m) for m in fake.models]}).encode()
                self._deliver(fake.tags_reply or ChatReply(raw_body=listing), listing)
            else:
                self._send(404, b"404 page not found", "text/plain")

        def do_POST(self) -> None:
            body = self._read_body()
            fake._record(RecordedRequest("POST", self.path, body))
            model = body.get("model") if isinstance(body, dict) else None
            if self.path == "/api/show":
                if not fake.has_model(str(model)):
                    return self._not_found_model(model)
                self._send(200, {
                    "modelfile": f"FROM {model}",
                    "parameters": "",
                    "template": "{{ .Prompt }}",
                    "details": _model_entry(str(model))["details"],
                    "model_info": {"general.architecture": "fake"},
                    "capabilities": ["completion"],
                    "modified_at": _TIMESTAMP,
                })
            elif self.path == "/api/chat":
                self._chat(str(model), body if isinstance(body, dict) else {})
            elif self.path == "/api/embed":  # a vector per input, its first component the text's length
                if not fake.has_model(str(model)):
                    return self._not_found_model(model)
                texts = body.get("input")
                texts = texts if isinstance(texts, list) else [texts]
                self._send(200, {"model": model, "embeddings": [[float(len(t) + 1), 1.0, 1.0] for t in texts]})
            else:
                self._send(404, b"404 page not found", "text/plain")

        def _chat(self, model: str, body: dict[str, Any]) -> None:
            if not fake.has_model(model):
                return self._not_found_model(model)
            top = body.get("top_logprobs")
            if isinstance(top, int) and not 0 <= top <= MAX_TOP_LOGPROBS:  # as Ollama's server refuses it
                return self._send(400, {"error": f"top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}"})
            if body.get("think") is True:  # no fake model can think; Ollama refuses only think=true then
                return self._send(400, {"error": f'"{model}" does not support thinking'})
            reply = fake._next_reply()
            if reply is None:
                return self._send(500, {"error": "fake ollama: no scripted reply left"})
            self._deliver(reply, json.dumps(_chat_body(model, reply)).encode())

        def _deliver(self, reply: ChatReply, normal_body: bytes) -> None:
            """Send `normal_body` (or the reply's raw body), misbehaving as the reply says."""
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.status != 200:
                return self._send(reply.status, reply.raw_body if reply.raw_body is not None
                                  else {"error": reply.content}, headers=reply.headers)
            data = reply.raw_body if reply.raw_body is not None else normal_body
            if reply.huge_bytes:
                return self._send_huge(reply.huge_bytes)
            if reply.drip_s:
                return self._drip(data, reply.drip_s)
            if reply.cut_off:
                # Promise the whole body, send half of it, hang up.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self._send(200, data, headers=reply.headers)

        def _drip(self, data: bytes, every_s: float) -> None:
            """The whole response, one byte at a time; ends with the response or the client."""
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n").encode()
            self.close_connection = True
            for i, byte in enumerate(head + data):
                if i:
                    time.sleep(every_s)
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

        def _send_huge(self, size: int) -> None:
            """A body of `size` bytes that starts like a chat reply; made piece by piece."""
            start = b'{"model": "phi4", "message": {"role": "assistant", "content": "'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.close_connection = True
            self.wfile.write(start[:size])
            sent, piece = min(len(start), size), b"x" * 65536
            while sent < size:
                n = min(len(piece), size - sent)
                self.wfile.write(piece[:n])
                sent += n

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler sleeping in a timeout test must not hold up teardown

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout tests) leaves a broken pipe behind; that is expected.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def running_fake_ollama(models: list[str] | None = None) -> Iterator[FakeOllama]:
    """Serve a FakeOllama on 127.0.0.1 (a free port) for the duration of the block."""
    fake = FakeOllama(models if models is not None else ["phi4"])
    server = _QuietServer(("127.0.0.1", 0), _make_handler(fake))
    fake.host = f"http://127.0.0.1:{server.server_address[1]}"
    with serving(server, "fake-ollama"):
        yield fake


def closed_port_host() -> str:
    """An http://127.0.0.1:PORT address where nothing listens (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
