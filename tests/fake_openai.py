"""A loopback HTTP server that speaks enough of the OpenAI API for the `openai` client.

    with running_fake_openai(models=["default"]) as fake:   # base_url: http://127.0.0.1:PORT/v1
        fake.script(Reply(content='{"a": 1}'))
        llm = OpenAICompatibleLLM(base_url=fake.base_url, model="default")
        ...
        fake.chat_bodies()[0]["response_format"]

It answers `POST /v1/chat/completions`, `GET /v1/models` and `POST /v1/embeddings`, records every
request (body and headers), and misbehaves on purpose (see `Reply`). It only listens on 127.0.0.1.
`refuse_json_schema` / `refuse_json_object` make it answer 400 to those `response_format`s, as
servers without structured output do.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback import serving


@dataclass
class Reply:
    """One scripted answer to `POST /v1/chat/completions`.

    `status` sends an error `{"error": {"message": content, "code": code}}` with `headers`;
    `raw_body` replaces the whole body; `cut_off` announces a longer body than it sends and hangs
    up; `delay_s` waits first; `drip_s` sends the body one byte every `drip_s` seconds;
    `logprobs`, when not None, is sent as `choices[0].logprobs` as it stands.
    """

    content: str | None = "ok"
    prompt_tokens: int | None = 12
    completion_tokens: int | None = 5
    cached_tokens: int | None = None
    finish_reason: str = "stop"
    status: int = 200
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes | None = None
    cut_off: bool = False
    delay_s: float = 0.0
    drip_s: float = 0.0
    logprobs: Any = None


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAI:
    def __init__(self, models: list[str]) -> None:
        self.models = list(models)
        self.replies: deque[Reply] = deque()
        self.default = Reply()
        self.requests: list[Request] = []
        self.refuse_json_schema = False
        self.refuse_json_object = False
        self.list_status = 200
        self.list_reply: Reply | None = None  # GET /models sends this reply's raw_body and headers
        self.embedding_dim = 4
        self.responder: Callable[[dict[str, Any]], Reply] | None = None  # a reply made from the request
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        self.base_url = ""

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply:
        with self.lock:
            return self.replies.popleft() if self.replies else self.default

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]


def _chat_body(reply: Reply, model: str) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    if reply.prompt_tokens is not None:
        usage["prompt_tokens"] = reply.prompt_tokens
    if reply.completion_tokens is not None:
        usage["completion_tokens"] = reply.completion_tokens
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason,
                              "message": {"role": "assistant", "content": reply.content}}
    if reply.logprobs is not None:
        choice["logprobs"] = reply.logprobs
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [choice], **({"usage": usage} if usage else {})}


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                  length: int | None = None, drip_s: float = 0.0) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                if drip_s:
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(drip_s)
                else:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _error(self, status: int, message: str, code: str | None = None,
                   headers: dict[str, str] | None = None) -> None:
            body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
            self._send(status, json.dumps(body).encode(), headers)

        def _record(self) -> Any:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            fake.requests.append(Request(self.command, self.path, dict(self.headers), body))
            return body

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            if self.path.rstrip("/") != "/v1/models":
                return self._error(404, "File Not Found")
            if fake.list_status != 200:
                return self._error(fake.list_status, "no model list here")
            listed = fake.list_reply
            if listed is not None:
                return self._send(listed.status, listed.raw_body or b"", listed.headers)
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in fake.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())

        def do_POST(self) -> None:  # noqa: N802
            body = self._record()
            if self.path == "/v1/embeddings":
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [{"object": "embedding", "index": i,
                         "embedding": [float(len(t) + 1)] + [1.0] * (fake.embedding_dim - 1)}
                        for i, t in enumerate(texts)]
                return self._send(200, json.dumps({"object": "list", "data": data, "model": body["model"],
                                                   "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode())
            if self.path != "/v1/chat/completions":
                return self._error(404, "File Not Found")
            if body.get("model") not in fake.models:
                return self._error(404, f"The model `{body.get('model')}` does not exist", "model_not_found")
            kind = (body.get("response_format") or {}).get("type")
            if (kind == "json_schema" and fake.refuse_json_schema) or (kind == "json_object" and fake.refuse_json_object):
                return self._error(400, f"response_format type {kind} is not supported")
            reply = fake.responder(body) if fake.responder is not None else fake.next_reply()
            with fake.lock:
                fake.in_flight += 1
                fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
            try:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
            finally:
                with fake.lock:
                    fake.in_flight -= 1
            if reply.status != 200:
                return self._error(reply.status, reply.content or "", reply.code, reply.headers)
            data = reply.raw_body if reply.raw_body is not None else json.dumps(_chat_body(reply, body["model"])).encode()
            if reply.cut_off:
                self._send(200, data[: len(data) // 2], length=len(data))
                self.close_connection = True
                return
            self._send(200, data, reply.headers, drip_s=reply.drip_s)

    return Handler


@contextlib.contextmanager
def running_fake_openai(models: list[str] | None = None) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(models or ["default"])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with serving(server, "fake-openai"):
        yield fake

