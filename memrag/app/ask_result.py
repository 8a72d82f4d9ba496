"""What the Ask page shows after an ask: the traces and where they came from. A live or recorded
ask, traces opened from a file and one question of an evaluation run are each an `AskResult`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from memrag.app.jobs import Job
from memrag.trace import Trace

Source = Literal["live", "recorded", "file", "eval"]
JOB_FIELDS = ("question", "record", "mode", "model")  # what an ask job's meta must carry


@dataclass
class AskResult:
    traces: list[Trace]  # one per method, in run order
    question: str
    record: dict[str, Any] | None  # the question's dataset record (its gold answer and documents), if known
    mode: Source
    model: str = ""  # the LLM that answered (for recorded traces: the one that made the recording)

    @classmethod
    def of_job(cls, job: Job) -> AskResult:
        """A finished ask job's result; the page put JOB_FIELDS into the job's meta when it started it."""
        return cls(job.result, **{k: job.meta[k] for k in JOB_FIELDS})

    def file_meta(self) -> dict[str, Any]:
        """What a downloaded traces file records about them (memrag.tracefile's meta)."""
        return {"question": self.question, "mode": self.mode, "model": self.model,
                "qid": (self.record or {}).get("id")}
