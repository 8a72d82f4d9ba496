"""SQLite response cache and the wrapper that makes any backend use it.

Key = SHA-256 of (backend identity, messages, schema, params, prompt version); a request for
next-token probabilities is a param, so a plain reply never answers it. A reply's probabilities
live in the `top_logprobs` column (JSON), added to older files when they are opened.
Several processes may write at once: WAL mode, a busy timeout, and INSERT OR
IGNORE so two writers of the same key both succeed. A cache is only ever a
saving: a damaged file (garbage, scribbled pages, another program's table) is
moved aside with a message and a fresh one is used, so no call fails for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from filelock import FileLock

from memrag import jsonsafe
from memrag.durable import StorageError, storage_guard
from memrag.llm.ledger import Ledger
from memrag.llm.base import (LLM, MAX_CHARS_PER_TOKEN, MAX_REPLY_CHARS, MAX_TOP_LOGPROBS, Completion, Message,
                             TokenLogprob, reply_problem, token_count)
from memrag.llm.logprobs import stored, stored_positions
from memrag.llm.wrapper import WrappedLLM

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
    created REAL NOT NULL DEFAULT (julianday('now')),
    top_logprobs TEXT
)
"""


log = logging.getLogger(__name__)
# A file written before probabilities were kept has the first ten: opening it adds the last.
_OLD_COLUMNS = ["key", "stage", "model", "backend", "text", "prompt_tokens", "prompt_tokens_cached",
                "completion_tokens", "seconds", "created"]
_COLUMNS = _OLD_COLUMNS + ["top_logprobs"]
_MAX_NAME_CHARS = 1000  # a model, backend or stage name
# Stored probabilities: at most MAX_TOP_LOGPROBS alternatives of a few dozen characters per position,
# and a probability read asks for one position (a little room for a few).
_MAX_LOGPROBS_CHARS = 4 * MAX_TOP_LOGPROBS * 1000
_R = TypeVar("_R")


class _Damaged(Exception):
    """The file is not a response cache this code wrote (raised by the open check)."""


def _is_damage(e: sqlite3.Error) -> bool:
    """Corruption, or a file that is not a database — not a busy or locked one (those are waited on)."""
    return isinstance(e, _Damaged) or getattr(e, "sqlite_errorname", "") in ("SQLITE_CORRUPT", "SQLITE_NOTADB") \
        or type(e) is sqlite3.DatabaseError


def cache_key(identity: dict[str, Any], messages: list[Message], schema: dict[str, Any] | None,
              params: dict[str, Any]) -> str:
    blob = json.dumps(
        {"id": identity, "messages": messages, "schema": schema, "params": params},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _columns(con: sqlite3.Connection) -> list[str]:
    return [r[1] for r in con.execute("PRAGMA table_info(responses)")]


def _migrated(con: sqlite3.Connection) -> list[str]:
    """The table's columns, after adding `top_logprobs` to a file from before it (its rows read
    with no probabilities). Two processes may both try: the loser's error is the winner's column."""
    columns = _columns(con)
    if columns == _OLD_COLUMNS:
        try:
            con.execute("ALTER TABLE responses ADD COLUMN top_logprobs TEXT")
        except sqlite3.OperationalError as e:
            if "duplicate column" not in str(e):
                raise
        columns = _columns(con)
    return columns


def _logprobs_of(cell: Any) -> tuple[list[list[TokenLogprob]] | None, str]:
    """(a row's probabilities, '') or (None, why this code did not write the cell)."""
    if not isinstance(cell, str) or len(cell) > _MAX_LOGPROBS_CHARS:
        return None, "its probabilities are not a list memrag wrote"
    try:
        return stored_positions(jsonsafe.loads(cell)), ""
    except ValueError as e:  # MalformedLogprobs included
        return None, f"its probabilities are unreadable ({str(e)[:200]})"


class ResponseCache:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self.notice = ""  # says so when a damaged cache was moved aside
        self._disabled = False
        self._guarded(lambda con: None)

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:  # which file this connection reads (stat first: a file replaced meanwhile is fresh)
                self._local.ino = os.stat(self.path).st_ino
            except FileNotFoundError:
                self._local.ino = None
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            try:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute("PRAGMA busy_timeout=30000")
                con.execute(_SCHEMA)
                columns = _migrated(con)
                if columns != _COLUMNS:
                    raise _Damaged(f"its responses table has the columns {columns}")
                con.execute("SELECT key FROM responses LIMIT 1").fetchall()
            except BaseException:
                con.close()
                raise
            self._local.con = con
        return con

    def _guarded(self, fn: Callable[[sqlite3.Connection], _R], default: Any = None) -> _R:
        """Run `fn` on this thread's connection; a damaged file is moved aside and `fn` runs on a
        fresh one. If even that fails, the cache is switched off (with the reason) for this process."""
        if self._disabled:
            return default
        try:
            with storage_guard(self.path, "use the response cache", "Going on without it (replies are not saved)."):
                return fn(self._conn())
        except StorageError as e:  # full, read-only, no access: a cache is only a saving, so off
            self._disabled = True
            self._warn(str(e))
            return default
        except (sqlite3.Error, _Damaged) as e:
            if not _is_damage(e):
                raise  # busy or locked past the timeout: a real problem, not a damaged file
            damage = e
        try:
            self._recover(damage)
            return fn(self._conn())
        except (sqlite3.Error, _Damaged, OSError) as e:  # OSError: cannot move it (filelock's Timeout is one)
            self._disabled = True
            self._warn(f"the response cache {self.path} cannot be used ({e}); going on without it")
            return default

    def _recover(self, error: BaseException) -> None:
        """Move the damaged file (and its WAL) aside — once, however many processes found it."""
        seen = getattr(self._local, "ino", None)
        self.close()
        with FileLock(str(self.path) + ".lock", timeout=60):
            try:
                if os.stat(self.path).st_ino != seen:
                    return  # another process or thread already replaced it: use the fresh one
            except FileNotFoundError:
                return
            aside = self.path.with_name(f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
            for suffix in ("", "-wal", "-shm"):
                src = Path(f"{self.path}{suffix}")
                if src.exists():
                    os.replace(src, Path(f"{aside}{suffix}"))
        self._warn(f"the response cache {self.path} was damaged ({error}); moved it aside to {aside.name} "
                   "and started a fresh one (replies are asked again, nothing else is lost)")

    def _warn(self, message: str) -> None:
        self.notice = message
        log.warning(message)

    def close(self) -> None:
        """Close this thread's connection (the next call opens a new one)."""
        con = getattr(self._local, "con", None)
        self._local.con = None
        if con is not None:
            con.close()

    def get(self, key: str, max_tokens: int | None = None) -> Completion | None:
        """The stored reply for `key` (a call of at most `max_tokens` tokens), or None. A row holding
        values no run writes (text counts, a week-long call, more text than the call could write,
        probabilities above 1) is a miss, said in `notice` with the row: the call is asked again."""
        bound = MAX_REPLY_CHARS if max_tokens is None else min(MAX_REPLY_CHARS, max_tokens * MAX_CHARS_PER_TOKEN)
        # Cells are read cut to their bounds (one character more, to tell), never whole.
        row = self._guarded(lambda con: con.execute(
            "SELECT rowid, substr(text, 1, ?), prompt_tokens, prompt_tokens_cached, completion_tokens, seconds,"
            " substr(model, 1, ?), substr(backend, 1, ?), substr(stage, 1, ?), substr(top_logprobs, 1, ?)"
            " FROM responses WHERE key=?",
            (bound + 1, _MAX_NAME_CHARS, _MAX_NAME_CHARS, _MAX_NAME_CHARS, _MAX_LOGPROBS_CHARS + 1, key)).fetchone())
        if row is None:
            return None
        rowid, text, pt, ptc, ct, secs, model, backend, stage, lp = row
        problem = reply_problem(text, secs, pt, ptc, ct, max_tokens=max_tokens)
        if not problem and not all(isinstance(v, str) for v in (model, backend, stage)):
            problem = "its model, backend or stage is not text"
        top = None
        if not problem and lp is not None:
            top, problem = _logprobs_of(lp)
        if problem:
            self._warn(f"the response cache {self.path}, row {rowid}: {problem}; not used (the call is asked again)")
            return None
        return Completion(text=text, prompt_tokens=pt, prompt_tokens_cached=ptc, completion_tokens=ct,
                          seconds=float(secs), cached=True, model=model, backend=backend, stage=stage, raw=None,
                          top_logprobs=top)

    def put(self, key: str, c: Completion) -> None:
        self._guarded(lambda con: con.execute(
            "INSERT OR IGNORE INTO responses (key, stage, model, backend, text, prompt_tokens,"
            " prompt_tokens_cached, completion_tokens, seconds, top_logprobs) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key, c.stage, c.model, c.backend, c.text, token_count(c.prompt_tokens),
             token_count(c.prompt_tokens_cached), token_count(c.completion_tokens), c.seconds,
             None if c.top_logprobs is None else json.dumps(stored(c.top_logprobs)))))

    def __len__(self) -> int:
        return self._guarded(lambda con: con.execute("SELECT COUNT(*) FROM responses").fetchone()[0], 0)


def call_params(max_tokens: int, stage: str, prompt_version: str | None = None,
                top_logprobs: int = 0) -> dict[str, Any]:
    """The non-message part of a cache key: token budget, the stage's prompt version and, only
    when asked for, the number of next-token probabilities (so every older key stays as it was)."""
    from memrag.prompts import version_for

    params: dict[str, Any] = {"max_tokens": max_tokens, "prompt_version": prompt_version or version_for(stage)}
    if top_logprobs:
        params["top_logprobs"] = top_logprobs
    return params


class CachedLLM(WrappedLLM):
    """Wraps a backend: answers repeated calls from the cache and records every call in a ledger.

    `recordings` (an optional dict key → Completion) are replies shipped with a
    memory; they are consulted before the SQLite cache and count as cached.
    """

    def __init__(self, inner: LLM, cache: ResponseCache | None, ledger: Ledger | None = None,
                 prompt_version: str | None = None) -> None:
        super().__init__(inner)
        self.cache = cache
        self.ledger = ledger or Ledger()
        self.prompt_version = prompt_version
        self.recordings: dict[str, Completion] = {}
        self.last_key: str | None = None

    def key_for(self, messages: list[Message], schema: dict[str, Any] | None, max_tokens: int,
                stage: str, top_logprobs: int = 0) -> str:
        return cache_key(self.inner.identity(), messages, schema,
                         call_params(max_tokens, stage, self.prompt_version, top_logprobs))

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        key = self.key_for(messages, schema, max_tokens, stage, top_logprobs)
        self.last_key = key
        hit = self.recordings.get(key)
        if hit is None and self.cache is not None:
            hit = self.cache.get(key, max_tokens)
        if hit is not None:
            hit = Completion(**{**hit.__dict__, "cached": True, "stage": stage})
            self.ledger.record(hit)
            return hit
        c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage,
                                **({"top_logprobs": top_logprobs} if top_logprobs else {}))
        c.stage = stage
        # Only a completed, well-formed reply reaches here: backends raise on broken replies.
        # A probability request answered without probabilities is not kept: a later server may give them.
        if self.cache is not None and (not top_logprobs or c.top_logprobs is not None):
            self.cache.put(key, c)
        self.ledger.record(c)
        return c
