"""The run folder and its files: which files, how a line is appended, read back and repaired.

    OUT/run.json         the run's identity and stamp (memrag.eval.runner.open_run)
    OUT/results.jsonl    one finished question a line, forced to disk before the next starts
    OUT/summary.json     recomputed from those lines (memrag.eval.report), with summary.md and report.html
    OUT/memory/          a pooled scope's memory; OUT/memories/<qid>/ the per-question ones
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from memrag import jsonsafe
from memrag.durable import storage_guard, write_atomic, writer_lock
from memrag.filesafe import read_bytes
from memrag.eval.config import EvalConfig
from memrag.index import store
from memrag.textsafe import slug, with_hash

RESULTS = "results.jsonl"
RUN = "run.json"
SUMMARY = "summary.json"
SUMMARY_MD = "summary.md"
REPORT_HTML = "report.html"
MEMORY = "memory"  # a pooled scope's memory, unless --memory names one
MEMORIES = "memories"  # per-question memories, one folder each
RECORDS_KEPT = "Questions already finished are kept in the run folder: the same command resumes after them."
RUN_LOCK_WAIT_S = 5.0  # a second writer of one run folder waits this long, then is refused


class RunBusyError(ValueError):
    """Another evaluation writes this run folder; nothing was changed."""


@contextmanager
def writing_run(out: Path, wait_s: float = RUN_LOCK_WAIT_S) -> Iterator[None]:
    """Hold the run folder's writer lock for a whole run: a second run into the same folder (another
    `eval --out`, the Evaluate page) would pay for every question again."""
    busy = lambda: RunBusyError(  # noqa: E731
        f"the run folder {out} is being written by another evaluation (another `python -m memrag eval "
        f"--out`, or the Evaluate page); waited {wait_s:g} s. Nothing was changed: wait for it to finish "
        "(then the same command resumes), or choose another --out.")
    with writer_lock(Path(out), wait_s, busy, RECORDS_KEPT):
        yield


# A results line holds one question's traces (a few hundred KB); a thousand questions stay far below this.
RESULTS_MAX_BYTES = 1_000_000_000


def read_results(path: Path, *, repair: bool = True) -> list[dict[str, Any]]:
    """The finished questions. A last line without its newline is a write cut short by a crash:
    it is removed from the file (that question will be done again); with `repair=False` (a viewer,
    perhaps while a run still writes) it is only skipped. Any other unreadable line means the file
    was damaged, and the run stops rather than guess."""
    path = Path(path)
    if not path.exists():
        return []
    data = read_bytes(path, RESULTS_MAX_BYTES, what="results file")
    complete = data.rfind(b"\n") + 1
    if complete < len(data) and repair:
        with storage_guard(path, "repair the run's results", RECORDS_KEPT), path.open("r+b") as fh:
            fh.truncate(complete)
            fh.flush()
            os.fsync(fh.fileno())
    records = []
    for lineno, line in enumerate(data[:complete].decode("utf-8").split("\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            rec = jsonsafe.loads(line)  # nesting measured first: a damaged file is a ValueError
        except ValueError as e:
            raise ValueError(f"{path}:{lineno}: unreadable result line ({e}); move the file aside or "
                             "remove that line to resume") from e
        if not isinstance(rec, dict) or "qid" not in rec:
            raise ValueError(f"{path}:{lineno}: not a result record")
        check_record_numbers(rec, f"{path}:{lineno}")
        records.append(rec)
    return records


def check_record_numbers(record: dict[str, Any], where: str) -> None:
    """The numbers a result line shows in tables (metrics, tokens, seconds) within range, as
    `tracefile.check_numbers` says; its traces are checked whole when opened (`record_traces`)."""
    from memrag.tracefile import check_numbers

    methods = record.get("methods")
    shown = {k: v for k, v in record.items() if k != "methods"}
    if isinstance(methods, dict):
        shown["methods"] = {m: {k: v for k, v in e.items() if k != "trace"} if isinstance(e, dict) else e
                            for m, e in methods.items()}
    check_numbers(shown, where)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """One line, written and forced to disk before the run moves on."""
    line = json.dumps(record, ensure_ascii=False) + "\n"
    with storage_guard(path, "record a finished question", RECORDS_KEPT), \
            Path(path).open("a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


RUN_MAX_BYTES = 5_000_000  # run.json: settings and how the memory was made, a few KB


def read_run_file(path: Path) -> Any:
    """run.json through the bounded reader (a pipe, a device or a file past the bound is an
    UnreadableFile, bad or too deeply nested JSON a ValueError)."""
    return jsonsafe.loads(read_bytes(path, RUN_MAX_BYTES, what="run description"))


def write_json_atomic(path: Path, obj: Any) -> None:
    with storage_guard(path, "write the run's files", RECORDS_KEPT):
        write_atomic(path, json.dumps(obj, ensure_ascii=False, indent=1))


def question_memory_dir(out: Path, qid: str) -> Path:
    """A per-question memory's folder; ids that need changing get a hash so two never collide."""
    safe = slug(qid, keep="A-Za-z0-9_.-", sep="_", trim="._", ascii_fold=False, lower=False)[:80]
    if safe != qid or not safe:
        safe = with_hash(safe, qid, "q")
    return Path(out) / MEMORIES / safe


def pooled_memory_path(config: EvalConfig) -> Path:
    """The one memory of a pooled scope: --memory, else the shipped sample memory, else OUT/memory."""
    if config.memory is not None:
        return Path(config.memory)
    if config.dataset == "sample" and config.scope == "pooled":
        data = Path(config.data)
        shipped = (data if data.is_dir() else data.parent) / "memory"
        if store.is_memory_dir(shipped):
            return shipped
    return Path(config.out) / MEMORY
