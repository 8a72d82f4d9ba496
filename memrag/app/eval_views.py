"""The Evaluate page's work: benchmark choices, cost estimates, an evaluation as a background job,
and the views of a finished (or opened) run.

The run is memrag.eval.runner's, driven the way `python -m memrag eval` drives it (same config,
same events, same out folder); numbers, tables and figures are memrag.eval.report's; a question's
stored traces open in the Ask page's views (memrag.app.ask_views). Text from a run or a benchmark is
shown through dataframes, `st.text` or escaped markdown only.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from memrag.app import backend_state, job_owner, memory_state, ask_views, estimates, room, widgets, jobs
from memrag.app import eval_again, eval_questions as eq, table_fit
from memrag.index import store
from memrag.index.memory import Memory
from memrag.app.ask_result import AskResult
from memrag.app.param_widgets import METHOD_LABELS
from memrag.app.session import AppState, _Key
from memrag.app.view_cache import in_background, made
from memrag.ask import resolve_params
from memrag.config import SettingsError, env_setting
from memrag.eval import report
from memrag.eval.datasets import Dataset, load_dataset, scoped_corpus
from memrag.eval import rundir
from memrag.eval.config import EvalConfig, dense_only
from memrag.eval.records import QuestionRecord, RunSummary, check_indexing
from memrag.eval.rundir import RESULTS, RUN, SUMMARY, read_results
from memrag.eval.runner import run_eval, run_identity
from memrag.llm.base import LLM
from memrag.tracefile import record_traces
from memrag.plain_text import escape_markdown
from memrag.textsafe import slug

BENCH_ENV = "MEMRAG_BENCH"  # where the shared benchmark files are (default: ../shared/bench)
ROOT = Path(__file__).resolve().parents[2]
RECORDED_SECONDS_PER_QUESTION = 2.0  # replayed replies: retrieval and scoring only
EMBED_SECONDS_PER_PASSAGE = 0.1  # embedding without an LLM (an OpenIE import embeds its entities too), 2 cores
CONFIRM_ABOVE_S = 600.0  # runs estimated longer than this ask for a confirmation
UPLOAD_FORMATS = {"musique": "MuSiQue / HippoRAG questions (.json)", "2wiki": "2WikiMultihopQA subset (.jsonl)",
                  "hotpotqa": "HotpotQA subset (.jsonl)"}
SCOPE_HELP = {"pooled": "one memory of every passage of the file (the papers' open-corpus setting)",
              "limit-pooled": "one memory of the first N questions' passages",
              "per-question": "one small memory per question, of its own passages"}


class EvalState(AppState):
    """The Evaluate page's session entries (the shared ones live in AppState)."""

    eval_job: _Key[str | None] = _Key(lambda: None)  # the evaluation job this session follows
    eval_shown: _Key[str | None] = _Key(lambda: None)  # folder of the run shown under the form
    eval_seen_job: _Key[str | None] = _Key(lambda: None)  # the finished job whose run was put on show
    eval_summary_only: _Key[bool] = _Key(lambda: False)  # the shown run is a committed one (no results lines)


# ------------------------------------------------------------------ benchmarks
@dataclass(frozen=True)
class Benchmark:
    """A questions file the runner can load, with what goes with it."""
    dataset: str
    label: str
    data: Path
    corpus: Path | None = None
    openie: Path | None = None  # MuSiQue: a strong model's OpenIE of the corpus (a graph without extraction)


# The shared files (../shared/bench/README.md): dataset, label, questions, corpus, OpenIE.
KNOWN_BENCH = (
    ("musique", "MuSiQue — 100 train questions (HippoRAG)", "musique/musique_train.json",
     "musique/musique_train_corpus.json", "musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"),
    ("2wiki", "2WikiMultihopQA — 500 dev questions (EcphoryRAG subset)", "2wikimultihopqa/2wiki_subset.jsonl",
     None, None),
    ("hotpotqa", "HotpotQA — 500 train questions (EcphoryRAG subset)", "hotpotqa/hotpotqa_subset.jsonl", None, None),
)


def bench_dir() -> Path:
    return Path(os.environ.get(BENCH_ENV) or ROOT.parent / "shared" / "bench")


def bench_files(root: Path | None = None) -> list[Benchmark]:
    """The known benchmark files present under `root` (default: bench_dir())."""
    root = bench_dir() if root is None else Path(root)
    out = []
    for dataset, label, data, corpus, openie in KNOWN_BENCH:
        if not (root / data).is_file():
            continue
        c = root / corpus if corpus and (root / corpus).is_file() else None
        o = root / openie if openie and c is not None and (root / openie).is_file() else None
        out.append(Benchmark(dataset, label, root / data, c, o))
    return out


def sample_benchmark() -> Benchmark:
    from memrag import demo

    return Benchmark("sample", "Sample corpus — the Varrow Coast", demo.SAMPLE_DIR)


def save_upload(name: str, data: bytes, root: Path) -> Path:
    """Keep an uploaded benchmark file under the app's data folder, named by its content (the same
    file uploaded again is the same path, so its runs resume)."""
    ext = ".jsonl" if name.lower().endswith(".jsonl") else ".json"
    stem = slug(Path(name).stem, keep="A-Za-z0-9_-", ascii_fold=False, lower=False)[:40] or "upload"
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{ext}"
    if not path.exists():
        path.write_bytes(data)
    return path


def _mtime(p: Path | None) -> float:
    return p.stat().st_mtime if p is not None and p.exists() else 0.0


@st.cache_resource(show_spinner="reading the benchmark…", max_entries=4)
def _load(dataset: str, data: str, corpus: str | None, stamp: tuple[float, float]) -> Dataset:
    return load_dataset(dataset, data, corpus)


def load_benchmark(bench: Benchmark) -> Dataset:
    """The benchmark's questions and passages, read once per file version (FileNotFoundError or
    ValueError say what is wrong with it)."""
    return _load(bench.dataset, str(bench.data), str(bench.corpus) if bench.corpus else None,
                 (_mtime(bench.data), _mtime(bench.corpus)))


def recorded_prefix(rec: Any, ds: Dataset) -> int:
    """How many of the first questions the recordings answer (the runner always takes the first N)."""
    n = 0
    for q in ds.questions:
        if rec is None or not rec.has_question(q.question):
            break
        n += 1
    return n


# ------------------------------------------------------------------ what a run will do
def runs_dir() -> Path:
    return backend_state.settings().data_dir / "evals"


def run_folder(config: EvalConfig, llm: LLM | None, embedder: Any, recorded: bool, root: Path) -> Path:
    """The out folder of these settings: the runner's own identity, hashed, so the same settings
    resume their run and other settings never meet it."""
    params = {m: resolve_params(m, config.params.get(m)) for m in config.methods}
    ident = run_identity(config, params, llm, embedder)
    digest = hashlib.sha1(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return root / f"{config.dataset}-{config.scope}{'-recorded' if recorded else ''}-{digest}"


@dataclass
class Plan:
    """The work a run will do and roughly how long it takes on this backend."""
    questions: int  # in the scope
    done: int  # already in the out folder (a rerun skips them)
    build_passages: int  # passages an LLM must read before asking
    embed_passages: int  # passages only embedded (an OpenIE import or a dense retrieval-only run)
    llm_calls: int  # for the questions still to do
    seconds: float
    backend: str

    @property
    def todo(self) -> int:
        return self.questions - self.done

    def text(self) -> str:
        parts = [f"{self.questions} question(s)" + (f", {self.done} already done in this run's folder"
                                                     if self.done else "")]
        if self.backend == "recorded":
            parts.append("answered from the recorded replies over the prebuilt memory: no LLM time, retrieval "
                         "recomputed — a few seconds")
            return "; ".join(parts) + "."
        if self.build_passages:
            parts.append(f"first a memory is built: {self.build_passages} passage(s) read by the LLM "
                         f"(~{estimates.seconds_text(estimates.build_estimate(1, self.backend).seconds)} each "
                         f"on {self.backend})")
        if self.embed_passages:
            parts.append(f"{self.embed_passages} passage(s) embedded without an LLM")
        parts.append(f"about {self.llm_calls} LLM call(s) to ask them" if self.llm_calls else "no LLM calls")
        where = "" if self.backend == "none" else (f" on {self.backend} "
                                                    f"({estimates.THROUGHPUT.rates(self.backend).basis()})")
        return "; ".join(parts) + f". Roughly {widgets.seconds_text(self.seconds)}{where}."


def _passages_to_index(config: EvalConfig, ds: Dataset, todo_qids: set[str]) -> int:
    questions, passages = scoped_corpus(ds, config.scope, config.limit)
    if config.scope == "per-question":
        return sum(len(q.passage_ids) for q in questions if q.qid in todo_qids
                   and not store.is_memory_dir(rundir.question_memory_dir(config.out, q.qid)))
    if not todo_qids or store.is_memory_dir(rundir.pooled_memory_path(config)):
        return 0  # an existing memory is opened (or only extended)
    return sum(1 for p in passages if p.text.strip())


def plan_run(config: EvalConfig, ds: Dataset, backend: str, *, parallel: int = 1) -> Plan:
    """What running `config` (its `out` set) will cost; `backend` "recorded" for replayed replies."""
    questions, _ = scoped_corpus(ds, config.scope, config.limit)
    finished = {r["qid"] for r in read_results(Path(config.out) / RESULTS, repair=False)}
    todo = {q.qid for q in questions} - finished
    passages = _passages_to_index(config, ds, todo)
    embed_only = dense_only(config) or config.import_openie is not None
    build, embed = (0, passages) if embed_only else (passages, 0)
    calls = 0
    if not dense_only(config):
        calls = estimates.expected_ask_calls(config.methods, config.params) - (0 if config.answer else len(config.methods))
    if backend == "recorded":
        seconds = RECORDED_SECONDS_PER_QUESTION * len(todo)
    else:
        per_question = (estimates.ask_estimate(config.methods, backend, config.params, answer=config.answer).seconds
                        if calls else 0.0)
        seconds = (estimates.build_estimate(build, backend, parallel).seconds + embed * EMBED_SECONDS_PER_PASSAGE
                   + len(todo) * per_question)
    return Plan(len(questions), len(questions) - len(todo), build, embed, calls * len(todo), seconds, backend)


# ------------------------------------------------------------------ the background job
def eval_work(config: EvalConfig, llm: LLM | None, embedder: Any) -> Callable[[jobs.Job], dict[str, Any]]:
    """A job body that drives `run_eval` as the CLI does: questions are the job's steps (their
    seconds make the ETA); memory building shows in the note; a cancel stops before the next LLM
    call or event, and finished questions stay in the out folder (a rerun resumes)."""

    def work(job: jobs.Job) -> dict[str, Any]:
        wrapped = jobs.JobLLM(llm, job, progress=False) if llm is not None else None
        summary: dict[str, Any] | None = None
        done_now = 0
        last = time.perf_counter()
        for ev in run_eval(config, llm=wrapped, embedder=embedder):
            job.check_cancel()
            d = ev.data
            if ev.kind == "start":
                job.report("start", d, total=d["todo"], done=0,
                           note=f"{d['todo']} question(s) to do, {d['done']} already done; corpus "
                                f"{d['corpus_size']} passage(s)")
                last = time.perf_counter()
            elif ev.kind == "index":
                where = f" {d['i'] + 1} of {d['total']}" if "i" in d and "total" in d else ""
                job.report("index", d, note=f"indexing {d['memory']}: {d['event']}{where}")
            elif ev.kind == "memory":
                job.report("memory", d, note=f"memory ready: {d.get('chunks')} chunk(s) ({d.get('source')})")
                if config.scope != "per-question":  # a per-question build is part of its question's step
                    last = time.perf_counter()
            elif ev.kind == "question":
                done_now += 1
                now = time.perf_counter()
                r5 = ", ".join(f"{m} {100 * v['recall@5']:.0f}" for m, v in d["metrics"].items())
                job.report("question", {"qid": d["qid"], "metrics": d["metrics"]}, done=done_now,
                           note=f"{d['qid']}: R@5 {r5}", step_seconds=now - last)
                last = now
            elif ev.kind == "done":
                summary = d["summary"]
        return {"out": str(config.out), "summary": summary}

    return work


def start_again(config: EvalConfig, llm: LLM, seconds: float, label: str) -> jobs.Job:
    """A run asked again on an edited memory (memrag.app.eval_again), as an evaluation job."""
    n = int(config.limit or 0)
    return start_eval(config, llm, backend_state.embedder(), Plan(n, 0, 0, 0, 0, seconds, llm.backend), label)


def start_eval(config: EvalConfig, llm: LLM | None, embedder: Any, plan: Plan, label: str) -> jobs.Job:
    return job_owner.start_job("eval", label, eval_work(config, llm, embedder), total=plan.todo,
                          estimate_s=plan.seconds, meta={"backend": plan.backend, "out": str(config.out)})


# ------------------------------------------------------------------ a finished run
@dataclass
class EvalRun:
    folder: Path
    summary: dict[str, Any]  # summary.json as written (the export carries it unchanged)
    typed_summary: RunSummary  # the same, checked and typed: what the views read
    records: list[dict[str, Any]]  # finished questions, in question order
    run: dict[str, Any] = field(default_factory=dict)  # run.json ({} when the folder has none)

    @property
    def methods(self) -> list[str]:
        return list(self.typed_summary.methods)


# ------------------------------------------------------------------ reading a run's files defensively
# A run folder may come from anywhere (another machine, another version, a damaged disk): every
# file is checked against the schema (memrag.eval.records) once, so a bad file is a sentence on
# the page, never a TypeError deep inside a chart. report.load_summary checks summary.json.


def _parse(path: Path, read: Callable[[], Any]) -> Any:
    """`read()`, with JSON nested beyond Python's recursion limit turned into a clear ValueError."""
    try:
        return read()
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be an evaluation file") from None


RUN_PATHS_ENV = "MEMRAG_ALLOW_RUN_PATHS"
RUN_PATHS_HELP = (f"A run folder inside this app's run folder (its data folder's evals/), by name or full path. "
                  f"To open any other folder on the server, start the app with {RUN_PATHS_ENV}=1.")


def any_run_path_allowed() -> bool:
    """RUN_PATHS_ENV=1 opens any folder of the server, except in room mode: there strangers type
    into the box (memrag.app.room)."""
    try:
        allowed = bool(env_setting(RUN_PATHS_ENV, False))
    except SettingsError:  # shown by the settings check; a bad value lifts nothing
        return False
    return allowed and not room.current().on


def typed_run_folder(text: str) -> Path:
    """The run folder a person typed on the Evaluate page, resolved.

    By default only folders inside `runs_dir()` open: a relative name is read there, links are
    resolved before the check and `~` is not expanded, so the box cannot read or probe any other
    path of the server (ValueError, saying nothing about that path). RUN_PATHS_ENV=1 lifts this."""
    text = text.strip()
    if any_run_path_allowed():
        return Path(text).expanduser().resolve()
    root = runs_dir().resolve()
    try:
        folder = None if text.startswith("~") else (root / text).resolve()
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a link loop
        folder = None
    if folder is None or (folder != root and root not in folder.parents):
        raise ValueError(f"{text!r} is outside this app's run folders ({root}); pick a run above, or start "
                         f"the app with {RUN_PATHS_ENV}=1 to open other folders")
    return folder


def load_run(folder: str | Path, *, summary_only: bool = False) -> EvalRun:
    """An `eval --out` folder, read without changing it (a run may still be writing there); read
    again only when its files change (a results file holds every trace: megabytes). Every file is
    checked against the schema (memrag.eval.records) and read through the bounded reader: a damaged
    one raises ValueError saying what is wrong. `summary_only`: a folder without results.jsonl (a
    committed run keeps its summary only) opens with no questions."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder")
    files = (folder / SUMMARY, folder / RESULTS, folder / RUN)
    return _load_run(str(folder.resolve()), tuple(_mtime(f) for f in files), summary_only)


@st.cache_resource(show_spinner=False, max_entries=4)
def _load_run(folder_name: str, stamp: tuple[float, ...], summary_only: bool = False) -> EvalRun:
    folder = Path(folder_name)
    summary = report.load_summary(folder)
    typed = RunSummary.from_json(summary, str(folder / SUMMARY))
    lines = _parse(folder / RESULTS, lambda: read_results(folder / RESULTS, repair=False))
    seen: set[str] = set()
    records = [r for r in lines if not (r["qid"] in seen or seen.add(r["qid"]))]  # the first line of a qid wins
    if not records and not (summary_only and not (folder / RESULTS).exists()):
        raise ValueError(f"{folder / RESULTS} holds no finished question")
    # A rerun with a smaller N keeps the earlier lines; the summary counts the first N, as the runner does.
    n = int(typed.stamp.get("questions") or len(records))
    records = records[:n]
    for i, r in enumerate(records, start=1):
        QuestionRecord.from_json(r, f"results line {i}", list(typed.methods))
    run_file = folder / RUN
    run = _parse(run_file, lambda: rundir.read_run_file(run_file)) if run_file.exists() else {}
    if not isinstance(run, dict):
        run = {}
    check_indexing(run.get("indexing"), f"{run_file}: not a run description")
    return EvalRun(folder, summary, typed, records, run)


COMMITTED_RUNS = ROOT / "docs" / "runs"  # the runs docs/results.md reads: summaries only, opened read-only


def committed_runs(root: Path | None = None) -> list[tuple[Path, str]]:
    """(folder, label) of the committed runs, by name: offered on every server, room mode too (a
    fixed list, nothing typed; read only)."""
    return [(p, f"{p.name} · {label}") for p, label in
            sorted(saved_runs(COMMITTED_RUNS if root is None else root), key=lambda x: x[0].name)]


def saved_runs(root: Path | None = None) -> list[tuple[Path, str]]:
    """(folder, label) of the runs under the app's evals folder, newest first."""
    root = runs_dir() if root is None else Path(root)
    out = []
    for p in sorted(root.glob("*/summary.json"), key=lambda f: f.stat().st_mtime, reverse=True):
        try:
            s = report.read_summary(p.parent)
        except (OSError, ValueError):
            continue  # a damaged run is not offered; typed in, it says what is wrong
        n = max((e.n for e in s.methods.values()), default=0)
        out.append((p.parent, f"{s.stamp.get('dataset')} · {s.scope} · {n} question(s) · "
                              f"{', '.join(s.methods)} · {s.stamp.get('started', '')}"))
    return out


def stamp_line(summary: RunSummary) -> str:
    s = summary.stamp
    model = f"{s.get('llm_backend')}/{s.get('llm_model')}" if s.get("llm_model") else "none (retrieval only)"
    return (f"{s.get('dataset')} · scope {summary.scope} · corpus {s.get('corpus_size')} passage(s) · "
            f"LLM {model} · embedder {s.get('embedder')} · answers {'on' if s.get('answers') else 'off'} · "
            f"memrag {s.get('memrag_revision')} · prompts {s.get('prompt_version')} · started {s.get('started')}")


def _pct(v: float | None) -> float | None:
    return None if v is None else round(100 * v, 1)


def question_table(run: EvalRun) -> pd.DataFrame:
    """One row per question: per method R@2 / R@5 / EM / F1 (percent), tokens, seconds, answer and
    where its gold passages ended up."""
    rows = []
    seconds_col = "replay s" if run.typed_summary.replayed else "s"  # a replay's time is not the method's
    for r in run.records:
        row: dict[str, Any] = {"id": r["qid"], "question": r["question"], "gold answer": " / ".join(r["answers"]),
                               "hops": r.get("hops")}
        for m in run.methods:
            e, name = r["methods"][m], METHOD_LABELS.get(m, m)
            mt, tok = e["metrics"], e["tokens"]
            row.update({f"{name} R@2": _pct(mt.get("recall@2")), f"{name} R@5": _pct(mt.get("recall@5")),
                        f"{name} EM": _pct(mt.get("em")), f"{name} F1": _pct(mt.get("f1")),
                        f"{name} tokens": None if tok.get("prompt_tokens") is None or tok.get("completion_tokens")
                        is None else tok["prompt_tokens"] + tok["completion_tokens"],
                        f"{name} {seconds_col}": e.get("seconds"), f"{name} answer": e.get("answer"),
                        f"{name} gold fates": "; ".join(str(f.get("fate")) for f in e["gold_fate"])})
        rows.append(row)
    return pd.DataFrame(rows)


def export_json(run: EvalRun) -> str:
    """The summary and every question's scores, answers and gold fates (the traces stay in the
    folder's results.jsonl; one question's traces download from its drill-down)."""
    questions = [{**r, "methods": {m: {k: v for k, v in e.items() if k != "trace"} for m, e in r["methods"].items()}}
                 for r in run.records]
    return json.dumps({"memrag": "evaluation", "summary": run.summary, "questions": questions},
                      ensure_ascii=False, indent=1)


def memory_path_of(run: EvalRun, record: dict[str, Any]) -> Path | None:
    """The memory a question was asked over: its own (per-question scope) or the run's."""
    info = record.get("indexing") or run.run.get("indexing") or run.typed_summary.indexing or {}
    return Path(info["path"]) if info.get("path") else None


def drill_result(record: dict[str, Any], run: EvalRun, memory: Memory | None) -> AskResult:
    """A question's stored traces as an Ask-page result (ask_views.ask_results), with its gold:
    the sample's gold units are document ids; elsewhere the gold chunks the fates name are mapped
    to their documents through the memory (or the traces' own passages)."""
    traces = record_traces(record)
    if run.typed_summary.stamp.get("dataset") == "sample":
        gold_docs = [str(u) for u in record.get("gold_units", [])]
    else:
        ids = {f["chunk_id"] for e in record["methods"].values() for f in e["gold_fate"] if f.get("chunk_id") is not None}
        gold_docs = []
        for cid in sorted(ids):
            ref = next((t.chunk(cid) for t in traces if t.chunk(cid) is not None), None)
            if memory is not None and memory.fingerprint() == record.get("memory") and 0 <= cid < len(memory.chunks):
                gold_docs.append(memory.chunks[cid].doc_id)
            elif ref is not None:
                gold_docs.append(ref.doc_id)
    answers = [str(a) for a in record["answers"]] or [""]
    gold = {"id": record["qid"], "question": record["question"], "answer": answers[0],
            "answer_aliases": answers[1:], "gold_docs": list(dict.fromkeys(gold_docs))}
    return AskResult(traces, record["question"], gold, "eval", run.typed_summary.stamp.get("llm_model", ""))


def _open_memory(path: Path | None) -> tuple[Any, str]:
    if path is None or not store.is_memory_dir(path):
        return None, f"its memory ({path}) is not on this machine: passages are shown from the traces only"
    try:
        return memory_state.open_memory(path), ""
    except (store.MemoryFormatError, OSError, ValueError) as e:
        return None, f"its memory cannot be opened here ({e}): passages are shown from the traces only"


# ------------------------------------------------------------------ the views
def _table(t: report.Table) -> pd.DataFrame:
    """A report table on the page (the report names methods by their display names)."""
    header, rows, _ = t
    return pd.DataFrame(rows, columns=header)


def run_view(run: EvalRun, key: str = "eval", start: Callable[..., None] | None = None) -> None:
    """Scores with 95% intervals, the report's charts, gold fates, paired comparison, per-question
    table with exports, and one question's traces in the Ask page's views; under a rerun, the run
    it repeats compared; with `start` (the page's job starter), asking the run again is offered."""
    s = run.typed_summary
    n = f"{len(run.records)} question(s)" if run.records else f"summary of {s.stamp.get('questions')} question(s)"
    st.caption(escape_markdown(f"{n} · {stamp_line(s)}"))
    st.caption(escape_markdown(f"folder: {run.folder}"))
    scores = _table(report.score_rows(s))
    cut = list(scores.columns).index("capped answers")  # two tables, each inside the page at 1,440 px
    st.dataframe(scores.iloc[:, :cut], hide_index=True)
    st.caption("Percent; [95% bootstrap interval over questions].")
    st.dataframe(scores.iloc[:, [0, *range(cut, len(scores.columns))]], hide_index=True)
    st.caption("Per query; tokens and calls bill the shared query-entity call to each method.")
    eval_again.comparison(run, load_run, typed_run_folder)
    figs = made("figures", (run,), None, lambda: report.figures(s, run.records))
    for row in range(0, len(figs), 2):
        for col, (name, fig) in zip(st.columns(2), figs[row:row + 2]):
            with col:
                st.plotly_chart(fig, key=f"{key}_{name}")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Gold passage fates** (k = {int(s.stamp.get('fate_k') or 5)})")
        st.dataframe(_table(report.fate_rows(s)), hide_index=True)
    paired = report.paired_rows(s)
    if paired[1]:
        with right:
            st.markdown("**Paired comparison** (same questions)")
            st.dataframe(_table(paired), hide_index=True)
    tracker = report.tracker_rows(s)
    if tracker[1]:
        st.markdown("**Tracker precision** (new paths, per hop)")
        table_fit.fitted_table(_table(tracker), wrap=["flag"])
        st.caption(report.TRACKER_NOTE)

    if start is not None:
        eval_again.offer(run, start, key)
    if run.records:
        questions_view(run, key)
    else:
        st.caption("This folder keeps the run's summary only (a committed run: summary.json without the "
                   "per-question results and their traces), so there is no per-question table.")


PREFETCH_QUESTIONS = 2  # made ahead: the first questions, then the ones either side of the open one


def _drill(run: EvalRun, record: dict[str, Any], memory: Memory | None) -> AskResult:
    """A question's stored traces as one result object for every rerun, so its pictures and tables
    are made once."""
    return made("drill_result", (run, record, memory), None, lambda: drill_result(record, run, memory))


def prefetch_questions(run: EvalRun, qid: str | None) -> None:
    """Read the traces of the questions likely opened next (the first ones, or the open one's
    neighbours) and make their side-by-side graphs in the background while the page is read:
    a graph's layout is most of opening a question (~0.1-0.7 s each, four per question). Only
    questions asked over one memory (the first of them), opened here as the click would open it."""
    qids = [r["qid"] for r in run.records]
    i = qids.index(qid) if qid in qids else None
    around = range(PREFETCH_QUESTIONS) if i is None else (i + 1, i - 1)
    records = [run.records[n] for n in around if 0 <= n < len(run.records)]
    if not records:
        return
    path = memory_path_of(run, records[0])
    records = [r for r in records if memory_path_of(run, r) == path]
    memory, _ = _open_memory(path)

    def work() -> None:
        for record in records:
            ask_views.make_pictures(_drill(run, record, memory), memory)

    in_background(work)


@st.fragment
def questions_view(run: EvalRun, key: str = "eval") -> None:
    """The per-question table with its exports, and one question's traces in the Ask page's views.
    A fragment: picking a question reruns this part, not the scores and charts above it."""
    st.markdown("**Per question** — select a row (or pick below) to open its traces")
    k = eq.fate_k(run.typed_summary.stamp)
    outcomes = made("question_outcomes", (run,), k, lambda: eq.outcomes_of(run.records, run.methods, k))
    qids = eq.filter_controls(run.records, run.methods, outcomes, key)
    full = st.toggle("every column (scores, tokens, seconds, answers)", key=f"{key}_full",
                     help="Off: one compact column per method, which fits the page.")
    if full:
        whole = made("question_table", (run,), None, lambda: question_table(run))
        df, config, row_px = whole[whole["id"].isin(qids)].reset_index(drop=True), None, None
    else:
        df = eq.compact_table(run.records, run.methods, outcomes, qids)
        config, row_px = eq.compact_config(df, run.methods, k)
    pick_key = f"{key}_q"

    def picked() -> None:  # a row selected in the table opens that question
        rows = st.session_state[f"{key}_table"]["selection"]["rows"]
        if rows:
            st.session_state[pick_key] = qids[rows[0]]

    st.dataframe(df, hide_index=True, on_select=picked, selection_mode="single-row", key=f"{key}_table",
                 column_config=config, row_height=row_px)
    c1, c2, _ = st.columns([1, 1, 5])
    # callables: the files are made when clicked, not on every rerun (the export holds every column)
    c1.download_button("Export CSV", lambda: question_table(run).to_csv(index=False),
                       file_name=f"{run.folder.name}.csv", mime="text/csv", key=f"{key}_csv")
    c2.download_button("Export JSON", lambda: export_json(run), file_name=f"{run.folder.name}.json",
                       mime="application/json", key=f"{key}_json")
    every = [r["qid"] for r in run.records]
    if st.session_state.get(pick_key) not in every:
        st.session_state.pop(pick_key, None)  # a question of another run
    labels = {r["qid"]: eq.pick_label(r, outcomes) for r in run.records}
    qid = st.selectbox("open the traces of", every, index=None, key=pick_key, placeholder="pick a question…",
                       format_func=labels.__getitem__)
    if qid is not None:
        question_traces(run, qid, key)
    prefetch_questions(run, qid)  # after this question's own draw, which it would slow down


def question_traces(run: EvalRun, qid: str, key: str) -> None:
    """One question's stored traces in the Ask page's views."""
    record = next(r for r in run.records if r["qid"] == qid)
    memory, note = _open_memory(memory_path_of(run, record))
    if note:
        st.caption(escape_markdown(f"This question's traces are stored in the run; {note}."))
    try:
        result = _drill(run, record, memory)
    except (ValueError, TypeError) as e:
        st.error(escape_markdown(f"The stored traces of {qid} cannot be read: {e}"))
        return
    ask_views.ask_results(result, memory, key=f"{key}_trace")


__all__ = ["Benchmark", "EvalRun", "EvalState", "Plan", "bench_dir", "bench_files", "drill_result", "eval_work",
           "export_json", "load_benchmark", "load_run", "memory_path_of", "plan_run", "question_table",
           "recorded_prefix", "run_folder", "run_view", "runs_dir", "sample_benchmark", "save_upload",
           "saved_runs", "stamp_line", "start_eval", "UPLOAD_FORMATS", "SCOPE_HELP", "RUN_PATHS_ENV",
           "RUN_PATHS_HELP", "typed_run_folder", "committed_runs", "COMMITTED_RUNS", "start_again"]
