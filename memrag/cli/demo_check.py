"""`python -m memrag demo-check`: before a live demo, find what would go wrong and say how to fix it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from memrag.config import Settings


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    seconds: float = 0.0


@dataclass
class DemoReport:
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


class CheckFailed(Exception):
    """A check's failure with its own fix (when the usual fix for that check would not mend it)."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def _run(report: DemoReport, name: str, fn: Callable[[], str], fix: str) -> None:
    t0 = time.perf_counter()
    try:
        detail = fn()
        report.checks.append(Check(name, True, detail, "", time.perf_counter() - t0))
    except CheckFailed as e:
        report.checks.append(Check(name, False, str(e), e.fix, time.perf_counter() - t0))
    except Exception as e:  # each check reports; none stops the others
        report.checks.append(Check(name, False, f"{type(e).__name__}: {e}", fix, time.perf_counter() - t0))


def _restore(path: Path) -> str:
    """The git command that puts back the shipped copy of `path` (a file or folder of the checkout)."""
    from memrag.demo import ROOT

    try:
        shown = Path(path).resolve().relative_to(ROOT)
    except ValueError:
        shown = Path(path)
    return f"`git checkout -- {shown}`"


# The `index` command refuses to change the shipped sample (memrag.cli.index.SAMPLE_REMEDY): these work.
SAMPLE_FIX = ("restore the shipped copy: {restore}; or rebuild it from its recorded extraction replies (no model, "
              "a few seconds): `python -m memrag demo extract --recorded`")


def check_backend(settings: Settings) -> str:
    from memrag.llm.embedded import EmbeddedLLM
    from memrag.llm.factory import choose_backend
    from memrag.llm.model_file import default_spec, is_valid

    llm, choice = choose_backend(settings)
    if isinstance(llm, EmbeddedLLM):
        spec = default_spec()  # raises naming a missing part package
        state = "assembled" if is_valid(llm.path, spec) else "not assembled yet (the first call takes ~10 s more)"
        return f"{choice.backend} / {choice.model}: {choice.reason}; model file {state}"
    return f"{choice.backend} / {choice.model}: {choice.reason}"


def check_sample_memory() -> str:
    from memrag.index import store
    from memrag.demo import gold_chunk_ids, sample_memory_dir, sample_questions
    from memrag.embed import get_embedder

    m = store.load(sample_memory_dir(), get_embedder().model_id)
    missing = [q["id"] for q in sample_questions() if len(gold_chunk_ids(m, q["gold_docs"])) < len(q["gold_docs"])]
    if missing:
        raise ValueError(f"gold documents missing from the sample memory for {', '.join(missing)}")
    s = m.stats()
    return f"{s['documents']} documents, {s['entities']} entities, {s['triples']} triples, {s['failures']} failed chunks"


def check_recordings() -> str:
    from memrag.index import store
    from memrag.ask import METHODS, ask
    from memrag.demo import sample_memory_dir, sample_questions
    from memrag.embed import get_embedder
    from memrag.llm.recordings import RERECORD_COMMAND, BrokenRecording, Recordings

    rec = Recordings.open(sample_memory_dir())
    if rec is None:
        raise FileNotFoundError(f"no recordings in {sample_memory_dir()}")
    broken = rec.problems()
    if broken:  # a damaged or hand-edited file: re-recording would pay for what git still holds
        raise CheckFailed(f"{len(broken)} recorded repl{'y' if len(broken) == 1 else 'ies'} cannot be used: "
                          + "; ".join(broken[:3]) + ("; …" if len(broken) > 3 else ""),
                          f"restore the shipped recordings: {_restore(rec.path)}; or re-record: {RERECORD_COMMAND}")
    emb = get_embedder()
    m = store.load(sample_memory_dir(), emb.model_id)
    qs = sample_questions()
    for q in qs:
        if not rec.has_question(q["question"]):
            raise ValueError(f"{q['id']} is not recorded")
        try:  # a miss (StaleRecording) fails the check with its own words and the re-record fix
            ask(m, q["question"], llm=rec.replay_llm(), embedder=emb, methods=METHODS)
        except BrokenRecording as e:
            raise CheckFailed(str(e), f"restore the shipped recordings: {_restore(rec.path)}; "
                                      f"or re-record: {RERECORD_COMMAND}") from None
    return f"{len(qs)} questions × {len(METHODS)} methods replay from recordings made with {rec.model}"


def _no_bare_mode_notice(record: logging.LogRecord) -> bool:
    return "missing ScriptRunContext" not in record.getMessage()


def run_demo_check(settings: Settings, root: Path, pages: bool = True) -> DemoReport:
    from memrag.app.page_check import render_pages
    from memrag.demo import sample_memory_dir
    from memrag.llm.recordings import RERECORD_COMMAND

    # Rendering pages and caches outside `streamlit run` makes Streamlit warn "missing
    # ScriptRunContext" on every call; expected here, and it buried the report.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(_no_bare_mode_notice)
    report = DemoReport()
    _run(report, "LLM backend", lambda: check_backend(settings),
         "start Ollama (`ollama serve`, `ollama pull phi4`) or reinstall requirements.txt for the embedded model")
    _run(report, "sample memory", check_sample_memory, SAMPLE_FIX.format(restore=_restore(sample_memory_dir())))
    _run(report, "recordings", check_recordings, f"re-record: {RERECORD_COMMAND}")
    if pages:
        _run(report, "pages", lambda: render_pages(root), "run `streamlit run app.py` and read the error on that page")
    return report


def format_demo_report(report: DemoReport) -> str:
    lines = []
    for c in report.checks:
        lines.append(f"[{'ok  ' if c.ok else 'FAIL'}] {c.name} ({c.seconds:.1f} s): {c.detail}")
        if not c.ok:
            lines.append(f"       fix: {c.fix}")
    lines.append("Ready for the demo." if report.ok else "Not ready: fix the items marked FAIL.")
    return "\n".join(lines)
