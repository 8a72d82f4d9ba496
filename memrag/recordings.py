"""Recordings: the raw LLM responses a memory ships for its demo questions.

`responses.jsonl` sits beside the memory (in its folder). Line 1 is a header
naming the engine that answered; every other line is one response keyed by the
response-cache key of its call. Recordings are *inputs*: retrieval and answers
are recomputed from them every time, so a changed prompt misses and says how
to re-record, and a changed reply changes the result.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memrag.durable import write_atomic
from memrag.llm.base import LLM, Completion, LLMError, Message
from memrag.llm.cache import cache_key, call_params

FILE_NAME = "responses.jsonl"
FORMAT = 1
RERECORD_COMMAND = "python -m memrag demo record"


class StaleRecording(LLMError):
    """A call the recordings do not hold: a prompt or parameter changed since recording."""


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

    def completion(self, model: str, backend: str, stage: str) -> Completion:
        return Completion(self.text, self.prompt_tokens, self.prompt_tokens_cached, self.completion_tokens,
                          self.seconds, True, model, backend, stage)


class Recordings:
    def __init__(self, path: Path, identity: dict[str, Any], questions: list[str],
                 responses: dict[str, RecordedResponse]) -> None:
        self.path = Path(path)
        self.identity = identity
        self.questions = questions
        self.responses = responses

    @property
    def model(self) -> str:
        return str(self.identity.get("model", ""))

    @property
    def backend(self) -> str:
        return str(self.identity.get("backend", ""))

    @classmethod
    def open(cls, memory_dir: Path) -> "Recordings | None":
        path = Path(memory_dir) / FILE_NAME
        if not path.is_file():
            return None
        return cls.load(path)

    @classmethod
    def load(cls, path: Path) -> "Recordings":
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        if not lines:
            raise ValueError(f"{path} is empty")
        try:
            header = json.loads(lines[0])
        except ValueError as e:
            raise ValueError(f"{path}: the first line is not a JSON header: {e}") from e
        if header.get("format") != FORMAT:
            raise ValueError(f"{path}: recordings format {header.get('format')!r} is not {FORMAT}")
        responses = {}
        for n, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                r = RecordedResponse(**json.loads(line))
            except (ValueError, TypeError) as e:
                raise ValueError(f"{path}, line {n}: not a recorded response: {e}") from e
            responses[r.key] = r
        return cls(path, header["identity"], list(header.get("questions", [])), responses)

    def has_question(self, question: str) -> bool:
        return " ".join(question.split()) in {" ".join(q.split()) for q in self.questions}

    def replay_llm(self) -> "ReplayLLM":
        return ReplayLLM(self)


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

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str) -> Completion:
        key = cache_key(self.rec.identity, messages, schema, call_params(max_tokens, stage))
        self.last_key = key
        hit = self.rec.responses.get(key)
        if hit is None:
            raise StaleRecording(
                f"no recorded response for this {stage} call: the prompts or parameters changed since "
                f"{self.rec.path} was recorded. Re-record with `{RERECORD_COMMAND}`, or run the question live.")
        return hit.completion(self.model, self.backend, stage)


class RecordingLLM:
    """Wraps a live LLM and keeps every response it returns, for writing as recordings."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.model = inner.model
        self.question = ""
        self.responses: dict[str, RecordedResponse] = {}
        self.last_key: str | None = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None,
                 max_tokens: int, stage: str) -> Completion:
        key = cache_key(self.inner.identity(), messages, schema, call_params(max_tokens, stage))
        self.last_key = key
        c = self.inner.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage)
        with self._lock:
            self.responses.setdefault(key, RecordedResponse(
                key, stage, c.text, c.prompt_tokens, c.prompt_tokens_cached, c.completion_tokens, c.seconds,
                self.question))
        return c

    def write(self, memory_dir: Path, questions: list[str]) -> Path:
        path = Path(memory_dir) / FILE_NAME
        header = {"format": FORMAT, "identity": self.inner.identity(), "questions": questions}
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(r.__dict__, ensure_ascii=False)
                  for r in sorted(self.responses.values(), key=lambda r: (r.question, r.stage, r.key))]
        write_atomic(path, "\n".join(lines) + "\n")
        return path
