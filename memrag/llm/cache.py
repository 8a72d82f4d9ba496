"""SQLite response cache and the wrapper that makes any backend use it.

Key = SHA-256 of (backend identity, messages, schema, params, prompt version).
Several processes may write at once: WAL mode, a busy timeout, and INSERT OR
IGNORE so two writers of the same key both succeed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from memrag.ledger import Ledger
from memrag.llm.base import LLM, Completion, Message

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    model TEXT NOT NULL,
    backend TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER,
    prompt_tokens_cached INTEGER,
    completion_tokens INTEGER,
    seconds REAL NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
)
"""


def cache_key(identity: dict[str, Any], messages: list[Message], schema: dict[str, Any] | None,
              params: dict[str, Any]) -> str:
    blob = json.dumps(
        {"id": identity, "messages": messages, "schema": schema, "params": params},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as con:
            con.execute(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA busy_timeout=30000")
            self._local.con = con
        return con

    def get(self, key: str) -> Completion | None:
        row = self._conn().execute(
            "SELECT text, prompt_tokens, prompt_tokens_cached, completion_tokens, seconds, model,"
            " backend, stage FROM responses WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        text, pt, ptc, ct, secs, model, backend, stage = row
        return Completion(text=text, prompt_tokens=pt, prompt_tokens_cached=ptc, completion_tokens=ct,
                          seconds=secs, cached=True, model=model, backend=backend, stage=stage, raw=None)

    def put(self, key: str, c: Completion) -> None:
        self._conn().execute(
            "INSERT OR IGNORE INTO responses (key, stage, model, backend, text, prompt_tokens,"
            " prompt_tokens_cached, completion_tokens, seconds) VALUES (?,?,?,?,?,?,?,?,?)",
            (key, c.stage, c.model, c.backend, c.text, c.prompt_tokens, c.prompt_tokens_cached,
             c.completion_tokens, c.seconds))

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def call_params(max_tokens: int, stage: str, prompt_version: str | None = None) -> dict[str, Any]:
    """The non-message part of a cache key: token budget and the stage's prompt version."""
    from memrag.prompts import version_for

    return {"max_tokens": max_tokens, "prompt_version": prompt_version or version_for(stage)}


class CachedLLM:
    """Wraps a backend: answers repeated calls from the cache and records every call in a ledger.

    `recordings` (an optional dict key → Completion) are replies shipped with a
    memory; they are consulted before the SQLite cache and count as cached.
    """

    def __init__(self, inner: LLM, cache: ResponseCache | None, ledger: Ledger | None = None,
                 prompt_version: str | None = None) -> None:
        self.inner = inner
        self.cache = cache
        self.ledger = ledger or Ledger()
        self.prompt_version = prompt_version
        self.recordings: dict[str, Completion] = {}
        self.backend = inner.backend
        self.model = inner.model
        self.last_key: str | None = None

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def key_for(self, messages: list[Message], schema: dict[str, Any] | None, max_tokens: int,
                stage: str) -> str:
        return cache_key(self.inner.identity(), messages, schema,
                         call_params(max_tokens, stage, self.prompt_version))

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str) -> Completion:
        key = self.key_for(messages, schema, max_tokens, stage)
        self.last_key = key
        hit = self.recordings.get(key)
        if hit is None and self.cache is not None:
            hit = self.cache.get(key)
        if hit is not None:
            hit = Completion(**{**hit.__dict__, "cached": True, "stage": stage})
            self.ledger.record(hit)
            return hit
        c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage)
        c.stage = stage
        # Only a completed, well-formed reply reaches here: backends raise on broken replies.
        if self.cache is not None:
            self.cache.put(key, c)
        self.ledger.record(c)
        return c
