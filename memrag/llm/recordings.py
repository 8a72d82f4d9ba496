"""Recordings: the raw LLM responses a memory ships for its demo questions.

`responses.jsonl` sits beside the memory (in its folder). Line 1 is a header
naming the engine that answered (and, since removals, the memory content the replies were recorded
on: a replay that misses on a later version of the memory then says the memory changed, not a
prompt); every other line is one response keyed by the
response-cache key of its call. Recordings are *inputs*: retrieval and answers
are recomputed from them every time, so a changed prompt misses and says how
to re-record, and a changed reply changes the result. A response read with next-token
probabilities carries them (`top_logprobs`, written only where there are some: files from before
read and replay exactly as they did).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memrag import jsonsafe
from memrag.durable import write_atomic
from memrag.filesafe import UnreadableFile, read_bytes
from memrag.llm.base import LLM, Completion, LLMError, LLMReplyError, Message, TokenLogprob, reply_problem
from memrag.llm.cache import cache_key, call_params
from memrag.llm.logprobs import MalformedLogprobs, stored, stored_positions
from memrag.llm.wrapper import WrappedLLM

FILE_NAME = "responses.jsonl"  # the demo questions' replies
EXTRACTION_FILE = "extraction.jsonl"  # the extraction replies the memory was built from
FORMAT = 1
RERECORD_COMMAND = "python -m memrag demo record"
# A recordings file holds a few hundred replies of a few KB each; a run of a thousand questions a
# few tens of MB. A bigger file was not written by memrag and is not read.
MAX_FILE_BYTES = 256_000_000
_MAX_LABEL_CHARS = 10_000  # a key, a stage, a question or an error message


class RecordingsFormatError(ValueError):
    """A recordings file memrag cannot use at all (unreadable, or its header is not memrag's);
    the message names the file and the line. A bad response line only makes its call a miss."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"the recordings of this memory cannot be read: {path}: {reason}")


class StaleRecording(LLMError):
    """A call the recordings do not hold: a prompt or parameter changed since recording. Carries
    the recordings and the stage, so a layer that knows the memory can say more (`memrag.index.stale`)."""

    def __init__(self, message: str, recordings: "Recordings | None" = None, stage: str = "") -> None:
        super().__init__(message)
        self.recordings = recordings
        self.stage = stage


class BrokenRecording(StaleRecording):
    """The recordings hold this call, but its line cannot be used (a damaged or hand-edited file):
    a miss whose message names the file and the line, never a reply served with impossible numbers."""


@dataclass
class RecordedResponse:
    key: str
    stage: str
    text: str
    prompt_tokens: int | None
    prompt_tokens_cached: int | None
    completion_tokens: int | None
    seconds: float
    question: str = ""
    # a reply that came back broken (cut at the token limit, not JSON): the live call raised
    # LLMReplyError with this message, and a replay raises it again, so the run fails the same way
    error: str = ""
    top_logprobs: list[list[TokenLogprob]] | None = None  # the call asked for probabilities
    line: int = 0  # where it was read (messages name it); not written

    def completion(self, model: str, backend: str, stage: str) -> Completion:
        return Completion(text=self.text, model=model, backend=backend, stage=stage,
                          prompt_tokens=self.prompt_tokens, prompt_tokens_cached=self.prompt_tokens_cached,
                          completion_tokens=self.completion_tokens, seconds=self.seconds, cached=True,
                          top_logprobs=self.top_logprobs)

    def to_json(self) -> dict[str, Any]:
        """The line's object: optional fields only where they say something."""
        out = {k: v for k, v in self.__dict__.items() if k not in ("error", "top_logprobs", "line")}
        if self.error:
            out["error"] = self.error
        if self.top_logprobs is not None:
            out["top_logprobs"] = stored(self.top_logprobs)
        return out


_OPT_INT = (int, type(None))
_FIELDS: dict[str, tuple[type, ...]] = {
    "key": (str,), "stage": (str,), "text": (str,), "prompt_tokens": _OPT_INT, "prompt_tokens_cached": _OPT_INT,
    "completion_tokens": _OPT_INT, "seconds": (int, float), "question": (str,), "error": (str,),
    "top_logprobs": (list,)}
_OPTIONAL = {"question", "error", "top_logprobs"}


def _json_kind(value: Any) -> str:
    kinds = {bool: "true or false", int: "a number", float: "a number", str: "text", list: "a list",
             dict: "an object", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _json_object(line: str, path: Path, n: int) -> dict[str, Any]:
    try:
        obj = jsonsafe.loads(line)  # nesting measured first: a line nested thousands deep is a ValueError
    except ValueError as e:
        raise RecordingsFormatError(path, f"line {n} is not JSON ({str(e)[:120]})") from None
    if not isinstance(obj, dict):
        raise RecordingsFormatError(path, f"line {n} is {_json_kind(obj)}, not an object")
    return obj


def _line_problem(obj: dict[str, Any]) -> str:
    """Why a response line cannot be used ('' when it can): every field present (but the optional
    ones), of its kind, and every number one a run could have written (`reply_problem`)."""
    unknown = sorted(set(obj) - set(_FIELDS))
    missing = sorted(set(_FIELDS) - _OPTIONAL - set(obj))
    if unknown or missing:
        return f"not a recorded response (missing {missing or 'nothing'}, unknown {unknown or 'nothing'})"
    for name, value in obj.items():
        if not isinstance(value, _FIELDS[name]) or isinstance(value, bool):
            return f"{name!r} is {_json_kind(value)}"
        if name in ("key", "stage", "question", "error") and len(value) > _MAX_LABEL_CHARS:
            return f"{name!r} is {len(value):,} characters long"
    problem = reply_problem(obj["text"], obj["seconds"], obj["prompt_tokens"], obj["prompt_tokens_cached"],
                            obj["completion_tokens"])
    if problem:
        return problem
    if "top_logprobs" in obj:
        try:
            stored_positions(obj["top_logprobs"])
        except MalformedLogprobs as e:
            return f"'top_logprobs': {e}"
    return ""


def _response(obj: dict[str, Any], n: int) -> RecordedResponse:
    """Line `n`, which `_line_problem` passed, as a response."""
    if "top_logprobs" in obj:
        obj = {**obj, "top_logprobs": stored_positions(obj["top_logprobs"])}
    return RecordedResponse(**{**obj, "seconds": float(obj["seconds"]), "line": n})


class Recordings:
    def __init__(self, path: Path, identity: dict[str, Any], questions: list[str],
                 responses: dict[str, RecordedResponse], memory_fingerprint: str = "",
                 broken: dict[str, str] | None = None, unreadable: list[str] | None = None) -> None:
        self.path = Path(path)
        self.identity = identity
        self.questions = questions
        self.responses = responses
        # the memory content the replies were recorded on ('' in files from before it was written)
        self.memory_fingerprint = memory_fingerprint
        # response lines that cannot be used: their call's key → "line N: why" (a replay misses on
        # them, saying so), and the lines without a readable key ("line N: why")
        self.broken = dict(broken or {})
        self.unreadable = list(unreadable or [])

    @property
    def model(self) -> str:
        return str(self.identity.get("model", ""))

    @property
    def backend(self) -> str:
        return str(self.identity.get("backend", ""))

    @classmethod
    def open(cls, memory_dir: Path, file_name: str = FILE_NAME) -> "Recordings | None":
        path = Path(memory_dir) / file_name
        if not (path.exists() or path.is_symlink()):
            return None  # anything else by that name (a pipe, a device) is refused by `load`, not ignored
        return cls.load(path)

    @classmethod
    def load(cls, path: Path) -> "Recordings":
        """Read and check a recordings file: a header object, then one response object per line.
        A bad header refuses the file; a bad response line is kept as broken (its call misses)."""
        path = Path(path)
        try:
            lines = read_bytes(path, MAX_FILE_BYTES, what="recordings file").decode("utf-8").splitlines()
        except (UnreadableFile, UnicodeDecodeError) as e:
            raise RecordingsFormatError(path, f"unreadable ({e})") from None
        if not lines:
            raise RecordingsFormatError(path, "the file is empty")
        header = _json_object(lines[0], path, 1)
        if header.get("format") != FORMAT:
            raise RecordingsFormatError(path, f"line 1: recordings format {header.get('format')!r} is not {FORMAT}")
        identity, questions = header.get("identity"), header.get("questions", [])
        if not isinstance(identity, dict):
            raise RecordingsFormatError(path, "line 1: the header has no 'identity' object (the engine that answered)")
        if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
            raise RecordingsFormatError(path, "line 1: 'questions' must be a list of strings")
        memory = header.get("memory", "")
        if not isinstance(memory, str):
            raise RecordingsFormatError(path, "line 1: 'memory' must be a memory fingerprint (a string)")
        responses: dict[str, RecordedResponse] = {}
        broken: dict[str, str] = {}
        unreadable: list[str] = []
        for n, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                obj = _json_object(line, path, n)
            except RecordingsFormatError as e:
                unreadable.append(f"line {n}: it {str(e).rpartition(f'line {n} ')[2]}")
                continue
            key = obj.get("key")
            if not isinstance(key, str) or not key or len(key) > _MAX_LABEL_CHARS:
                unreadable.append(f"line {n}: it names no call (no 'key')")
                continue
            problem = _line_problem(obj)
            if problem:
                broken[key] = f"line {n}: {problem}"
                responses.pop(key, None)
            else:
                responses[key] = _response(obj, n)
                broken.pop(key, None)
        return cls(path, identity, list(questions), responses, memory, broken, unreadable)

    def has_question(self, question: str) -> bool:
        return " ".join(question.split()) in {" ".join(q.split()) for q in self.questions}

    def problems(self) -> list[str]:
        """Every response line that cannot be used, as 'FILE, line N: why'."""
        return [f"{self.path}, {where}" for where in [*self.broken.values(), *self.unreadable]]

    def replay_llm(self) -> "ReplayLLM":
        return ReplayLLM(self)

    def miss(self, stage: str, key: str = "") -> StaleRecording:
        """The error for a call these recordings cannot answer: its line is broken (file and line
        named), or they lack it (a prompt or parameter changed; `memrag.index.stale` says so instead
        when the memory changed since recording)."""
        if key in self.broken:
            return self.broken_reply(stage, self.broken[key])
        unread = (f" ({len(self.unreadable)} line(s) of it could not be read — {self.unreadable[0]} — and "
                  "may have held it)") if self.unreadable else ""
        return StaleRecording(
            f"no recorded response for this {stage} call: the prompts or parameters changed since "
            f"{self.path} was recorded{unread}. Re-record with `{RERECORD_COMMAND}`, or run the question live.",
            self, stage)

    def broken_reply(self, stage: str, where: str) -> BrokenRecording:
        return BrokenRecording(
            f"the recorded reply for this {stage} call cannot be used: {self.path}, {where}. The file was "
            f"damaged or edited by hand: restore it (git checkout), re-record with `{RERECORD_COMMAND}`, "
            "or run the question live.", self, stage)


class ReplayLLM:
    """An LLM that answers only from recordings, with the recorded engine's identity,
    so the cache keys match those of the recording run on any machine."""

    def __init__(self, recordings: Recordings) -> None:
        self.rec = recordings
        self.backend = recordings.backend
        self.model = recordings.model
        self.last_key: str | None = None
        self.replays = True  # reports say their seconds are a replay's, not the model's

    def identity(self) -> dict[str, Any]:
        return dict(self.rec.identity)

    def logprobs_missing(self) -> str:
        """Probabilities replay where the recording run read them; a run that could not read
        them fell back to generated replies, and so does its replay."""
        if any(r.top_logprobs is not None for r in self.rec.responses.values()):
            return ""
        return f"the recordings {self.rec.path.name} hold no next-token probabilities"

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        key = cache_key(self.rec.identity, messages, schema, call_params(max_tokens, stage, None, top_logprobs))
        self.last_key = key
        hit = self.rec.responses.get(key)
        if hit is None:
            raise self.rec.miss(stage, key)
        too_long = reply_problem(hit.text, hit.seconds, max_tokens=max_tokens)
        if too_long:
            raise self.rec.broken_reply(stage, f"line {hit.line}: {too_long}")
        c = hit.completion(self.model, self.backend, stage)
        if hit.error:
            raise LLMReplyError(hit.error, completion=c)
        return c


class ReuseRecordedLLM(WrappedLLM):
    """A live LLM that answers from earlier recordings first, so a re-recording after a change
    asks the model only the calls that changed and every unchanged reply stays byte-identical
    (greedy decoding on another machine or thread count may word a reply differently). Reused
    only when the recordings were made by the same engine (the identity in their header)."""

    def __init__(self, recordings: Recordings, inner: LLM) -> None:
        if recordings.identity != inner.identity():
            raise ValueError(f"{recordings.path} was recorded by {recordings.backend} / {recordings.model}, "
                             f"not {inner.backend} / {inner.model}: nothing in it can be reused")
        super().__init__(inner)
        self.rec = recordings
        self.reused = 0
        self.asked = 0

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        key = cache_key(self.rec.identity, messages, schema, call_params(max_tokens, stage, None, top_logprobs))
        hit = self.rec.responses.get(key)
        if hit is None or reply_problem(hit.text, hit.seconds, max_tokens=max_tokens):  # broken lines are asked again
            self.asked += 1
            return self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage,
                                       **({"top_logprobs": top_logprobs} if top_logprobs else {}))
        self.reused += 1
        c = hit.completion(self.model, self.backend, stage)
        if hit.error:
            raise LLMReplyError(hit.error, completion=c)
        return c


class RecordingLLM(WrappedLLM):
    """Wraps a live LLM and keeps every response it returns, for writing as recordings."""

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner)
        self.question = ""
        self.responses: dict[str, RecordedResponse] = {}
        self.last_key: str | None = None
        self._lock = threading.Lock()

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str, top_logprobs: int = 0) -> Completion:
        key = cache_key(self.inner.identity(), messages, schema, call_params(max_tokens, stage, None, top_logprobs))
        self.last_key = key
        try:
            c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage,
                                    **({"top_logprobs": top_logprobs} if top_logprobs else {}))
        except LLMReplyError as e:
            if e.completion is not None:  # a broken reply is part of the run: kept, so a replay fails alike
                self._keep(key, stage, e.completion, str(e))
            raise
        self._keep(key, stage, c)
        return c

    def _keep(self, key: str, stage: str, c: Completion, error: str = "") -> None:
        with self._lock:
            self.responses.setdefault(key, RecordedResponse(
                key, stage, c.text, c.prompt_tokens, c.prompt_tokens_cached, c.completion_tokens, c.seconds,
                self.question, error, c.top_logprobs))

    def write(self, memory_dir: Path, questions: list[str], file_name: str = FILE_NAME,
              memory_fingerprint: str = "") -> Path:
        """Write the kept responses; `memory_fingerprint` names the memory content they were recorded
        on (a later version of the memory then says why a replay misses)."""
        path = Path(memory_dir) / file_name
        header: dict[str, Any] = {"format": FORMAT, "identity": self.inner.identity(), "questions": questions}
        if memory_fingerprint:
            header["memory"] = memory_fingerprint
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(r.to_json(), ensure_ascii=False)
                  for r in sorted(self.responses.values(), key=lambda r: (r.question, r.stage, r.key))]
        write_atomic(path, "\n".join(lines) + "\n")
        return path
