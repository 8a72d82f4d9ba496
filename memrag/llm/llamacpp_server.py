"""llama.cpp's own OpenAI-compatible HTTP server, started in this process from `xllamacpp` on
loopback: a real server for the OpenAI-compatible backend's tests and for bench/index_bench.py.

    with serve_gguf(model_path, slots=2) as base_url:   # http://127.0.0.1:PORT/v1
        llm = OpenAICompatibleLLM(base_url=base_url, model=SERVED_MODEL)

It listens on 127.0.0.1 only. xllamacpp offers no way to stop a server, so the engine lives until
the process ends (keep one per process; the tests hold it in a session fixture).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memrag.llm.base import LLMUnavailable

SERVED_MODEL = "memrag-embedded"  # the model id the server lists (its alias)
READY_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/models", timeout=2) as r:  # noqa: S310 - loopback only
            return r.status == 200 and bool(json.load(r).get("data"))
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def serve_gguf(path: Path, *, slots: int = 1, n_ctx: int = 8192, threads: int | None = None) -> Iterator[str]:
    """Serve the GGUF at `path` with `slots` parallel slots (n_ctx is shared among them)."""
    try:
        import xllamacpp
    except ImportError as e:  # pragma: no cover - depends on the install
        raise LLMUnavailable("xllamacpp is not installed: pip install xllamacpp") from e
    threads = threads or max(1, os.cpu_count() or 1)
    p = xllamacpp.CommonParams()
    p.model.path = str(path)
    p.model_alias = {SERVED_MODEL}
    p.n_ctx = n_ctx * slots  # each slot gets n_ctx
    p.n_parallel = slots
    p.cpuparams.n_threads = threads
    p.cpuparams_batch.n_threads = threads
    p.warmup = False
    p.hostnames = ["127.0.0.1"]
    p.port = free_port()
    if not os.environ.get("MEMRAG_LLAMA_VERBOSE"):
        p.verbosity = -1
        p.log_json = False
    server: Any = xllamacpp.Server(p)
    base_url = f"http://127.0.0.1:{p.port}/v1"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not _ready(base_url):
        if time.monotonic() > deadline:
            raise LLMUnavailable(f"llama.cpp's server did not come up at {base_url} within {READY_TIMEOUT_S:g} s")
        time.sleep(0.5)
    try:
        yield base_url
    finally:
        del server  # no stop in the API; the last reference goes, the process keeps the rest
