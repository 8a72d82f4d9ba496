"""One deadline and one size bound per HTTP call, for every HTTP backend.

httpx's timeouts apply to each read, so a server that drips a byte a second keeps a call alive
for as long as it likes (issue 15, item 5). Every socket operation on a backend's connections
goes through a limited stream, which shortens its timeout to what is left of the current call's
deadline and counts the bytes read against the call's bound. The limits are per call (a context
variable set by `limited_call`), so pooled connections and parallel extraction threads each keep
their own.

The bound is on the reply as it will be read, not as it crossed the wire: every request asks for
no compression (`Accept-Encoding: identity`), and a reply compressed anyway (gzip, deflate, any
number of times over) is decoded here, a slice at a time, each decoded byte counted against the
same bound, so a 2 KB reply that inflates to 1 GB stops at the bound (issue 27, probe 3). An
encoding memrag does not decode (br, zstd, anything else) is refused before a byte is read.

A watched call (memrag.llm.watch, a background job's) reads in slices of at most
`CANCEL_POLL_S` and checks between them whether its caller cancelled: a cancel closes the
connection within that time (the server then stops writing the reply) and raises CallCancelled.

The `ollama` client runs on httpx/httpcore and the `openai` client on httpx2/httpcore2, which
share one API; `limited_transport(httpx, httpcore)` builds the transport for either pair.
"""

from __future__ import annotations

import contextlib
import time
import zlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from memrag.llm import watch


@dataclass
class _CallLimits:
    deadline: float  # time.monotonic()
    bytes_left: int


_limits: ContextVar[_CallLimits | None] = ContextVar("memrag_http_call_limits", default=None)


class ReplyTooLarge(Exception):
    """The reply passed the call's byte bound (raised inside the HTTP stack; backends map it)."""


class UnreadableReply(Exception):
    """The reply's encoding is one memrag does not decode, or its compressed data is broken
    (raised inside the HTTP stack; the message says which; backends map it)."""


# Content-Encodings decoded here; zlib's 32 + MAX_WBITS reads both gzip and zlib headers.
_DECODED_ENCODINGS = ("gzip", "x-gzip", "deflate")
_AUTO_HEADER_WBITS = 32 + zlib.MAX_WBITS
_SLICE = 64 * 1024  # decoded bytes produced per step: memory stays this small per stage
CANCEL_POLL_S = 0.5  # a watched call's socket reads wait at most this long before checking for a cancel


@contextlib.contextmanager
def limited_call(seconds: float, max_bytes: int) -> Iterator[None]:
    """Every socket operation inside the block shares one deadline and one byte bound."""
    token = _limits.set(_CallLimits(time.monotonic() + seconds, max_bytes))
    try:
        yield
    finally:
        _limits.reset(token)


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """`timeout` shortened to the current call's remaining time; `expired` once none is left."""
    limits = _limits.get()
    if limits is None:
        return timeout
    left = limits.deadline - time.monotonic()
    if left <= 0:
        raise expired("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


def _watched_read(stream: Any, max_bytes: int, timeout: float | None, expired: type[Exception]) -> bytes:
    """One read, waited for in slices with a cancel check between them; the read's own timeout and
    the call's deadline hold as for an unwatched read."""
    ends = None if timeout is None else time.monotonic() + timeout
    while True:
        if watch.stop_requested():
            raise watch.CallCancelled("the call was stopped while waiting for the server's reply, as asked")
        left = _left(None if ends is None else max(0.0, ends - time.monotonic()), expired)
        piece = CANCEL_POLL_S if left is None else min(left, CANCEL_POLL_S)
        try:
            return stream.read(max_bytes, piece)
        except expired:
            if left is not None and piece >= left:
                raise  # the read's own time (or the call's) is up, not only the slice


def _count(data: bytes) -> bytes:
    limits = _limits.get()
    if limits is not None:
        limits.bytes_left -= len(data)
        if limits.bytes_left < 0:
            raise ReplyTooLarge()
    return data


def _encodings(header: str) -> list[str]:
    """The codings applied to a reply, first applied first; identity dropped."""
    return [c.strip().lower() for c in header.split(",") if c.strip() and c.strip().lower() != "identity"]


def _inflate(stages: list[Any], i: int, data: bytes) -> Iterator[bytes]:
    """`data` through decoders `stages[i:]`, a slice at a time, each final slice counted."""
    if i == len(stages):
        yield _count(data)
        return
    while True:
        out = stages[i].decompress(data, _SLICE)
        data = stages[i].unconsumed_tail
        if out:
            yield from _inflate(stages, i + 1, out)
        elif not data:
            return


def decoded(chunks: Iterable[bytes], codings: list[str]) -> Iterator[bytes]:
    """The body `chunks` with `codings` (as `_encodings` gives them) undone, under the call's bound."""
    unknown = [c for c in codings if c not in _DECODED_ENCODINGS]
    if unknown:
        raise UnreadableReply(f"it came compressed as {', '.join(unknown)!r}, which memrag does not "
                              "decode (it asks for uncompressed replies)")
    stages = [zlib.decompressobj(_AUTO_HEADER_WBITS) for _ in codings]  # the last coding is undone first
    try:
        for chunk in chunks:
            yield from _inflate(stages, 0, chunk)
        for i, stage in enumerate(stages):
            yield from _inflate(stages, i + 1, stage.flush())
            if not stage.eof:
                raise UnreadableReply("its compressed data ends before it is complete")
    except zlib.error as e:
        raise UnreadableReply(f"its compressed data is broken ({e})") from e


_built: dict[str, type] = {}


def limited_transport(httpx: ModuleType, httpcore: ModuleType) -> Any:
    """A new httpx transport (of the given httpx flavour) whose sockets obey `limited_call`."""
    cls = _built.get(httpx.__name__)
    if cls is None:
        cls = _built[httpx.__name__] = _transport_class(httpx, httpcore)
    return cls()


def _transport_class(httpx: ModuleType, httpcore: ModuleType) -> type:
    class LimitedStream(httpcore.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            if watch.current() is None:
                return _count(self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout)))
            return _count(_watched_read(self._inner, max_bytes, timeout, httpcore.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                      timeout: float | None = None) -> Any:
            return LimitedStream(self._inner.start_tls(ssl_context, server_hostname,
                                                       _left(timeout, httpcore.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class LimitedBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None, socket_options: Any = None) -> Any:
            return LimitedStream(self._inner.connect_tcp(
                host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Any = None) -> Any:
            return LimitedStream(self._inner.connect_unix_socket(
                path, _left(timeout, httpcore.ConnectTimeout), socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    class LimitedTransport(httpx.HTTPTransport):
        """httpx's own transport over `LimitedBackend` (httpx takes no backend argument, so the
        connection pool it builds is replaced by one built the same way with the backend given)."""

        def __init__(self) -> None:
            super().__init__(verify=False)  # its own pool is replaced: skip loading certificates for it
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
            self._pool = httpcore.ConnectionPool(
                ssl_context=None,  # httpcore builds its verified default when an https host needs it
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry, network_backend=LimitedBackend())

        def handle_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"
            response = super().handle_request(request)
            codings = _encodings(response.headers.get("content-encoding", ""))
            if codings:
                # Decoded here, bounded; httpx must not decode it again (unbounded).
                del response.headers["content-encoding"]
                response.stream = DecodedStream(response.stream, codings)
            return response

    class DecodedStream(httpx.SyncByteStream):
        def __init__(self, inner: Any, codings: list[str]) -> None:
            self._inner = inner
            self._codings = codings

        def __iter__(self) -> Iterator[bytes]:
            return decoded(self._inner, self._codings)

        def close(self) -> None:
            self._inner.close()

    return LimitedTransport
