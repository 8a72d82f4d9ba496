"""Evaluate page: a benchmark, a corpus scope, N questions and methods → a background evaluation with
progress; scores and charts with 95% intervals, gold fates, per-question traces, exports. A finished
run (this page's, or any `python -m memrag eval --out` folder) opens again without rerunning."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import streamlit as st

from memrag.methods import registry
from memrag.app import (backend_state, eval_views as ev, job_views, jobs, memory_state, param_widgets, recording_state,
                        room, widgets)
from memrag.app.param_widgets import METHOD_LABELS
from memrag.eval.datasets import SCOPES
from memrag.eval.config import EvalConfig, dense_only
from memrag.eval.rundir import SUMMARY
from memrag.index.stale import stale_message
from memrag.plain_text import escape_markdown

ORDER = registry.DISPLAY_ORDER
state = ev.EvalState()
st.title("Evaluate")

# ------------------------------------------------------------------ the benchmark
source = st.radio("Benchmark", ["Sample corpus", "Benchmark file", "Upload"], horizontal=True, key="eval_source")
bench = None
if source == "Sample corpus":
    bench = ev.sample_benchmark()
elif source == "Benchmark file":
    files = ev.bench_files()
    if files:
        i = st.selectbox("file", range(len(files)), format_func=lambda n: files[n].label, key="eval_file")
        bench = files[i]
    else:
        st.info(escape_markdown(f"No benchmark files in {ev.bench_dir()}; set {ev.BENCH_ENV} to their folder."))
else:
    fmt = st.selectbox("format", list(ev.UPLOAD_FORMATS), format_func=ev.UPLOAD_FORMATS.get, key="eval_format")
    upload = st.file_uploader("benchmark file", type=["json", "jsonl"], key="eval_upload")
    if upload is not None:
        bench = ev.Benchmark(fmt, upload.name, ev.save_upload(upload.name, upload.getvalue(), ev.runs_dir() / "uploads"))

ds = None
if bench is not None:
    try:
        ds = ev.load_benchmark(bench)
    except (OSError, ValueError) as e:
        st.error(escape_markdown(f"{bench.label}: {e}"))

# ------------------------------------------------------------------ scope, N, methods, estimate
job = jobs.get_job(state.eval_job)
running = job is not None and not job.finished
if ds is not None:
    rec = None
    if bench.dataset == "sample":
        rec, rec_error = recording_state.recordings(str(memory_state.sample_memory_dir()))
        if rec_error:
            st.warning(escape_markdown(rec_error))
    n_recorded = ev.recorded_prefix(rec, ds)
    recorded = n_recorded > 0 and st.toggle(
        "use the recorded replies", value=True, key="eval_recorded",
        help=f"The first {n_recorded} sample question(s) have recorded replies: answered instantly over the "
             "prebuilt memory. Off: ask the current backend live.")
    c1, c2 = st.columns([2, 1])
    if recorded:
        scope = "pooled"
        c1.caption("Corpus scope: pooled — the prebuilt sample memory the replies were recorded on.")
    else:
        scope = c1.radio("corpus scope", SCOPES, horizontal=True, key="eval_scope",
                         help=" · ".join(f"{k}: {v}" for k, v in ev.SCOPE_HELP.items()))
    most = n_recorded if recorded else len(ds.questions)
    limit = c2.number_input("questions (the first N)", 1, most, min(3, most), key=f"eval_n_{bench.dataset}_{recorded}")
    chosen = st.pills("methods", ORDER, selection_mode="multi", default=list(ORDER), key="eval_methods",
                      format_func=lambda m: METHOD_LABELS[m]) or []
    methods = tuple(m for m in ORDER if m in chosen)
    answer = st.toggle("answer step (EM / F1)", value=True, key="eval_answer",
                       help="Off: retrieval only (recall@k and gold fates, no answers).")
    openie = bench.openie if bench.openie and not recorded and st.checkbox(
        "build the graph from the OpenIE file (GPT-3.5 extraction, no local LLM extraction)", value=True,
        key="eval_openie") else None
    changed = {m: param_widgets.changed_params(m) for m in methods if param_widgets.changed_params(m)}
    if recorded and changed:
        st.caption("The replies were recorded with default parameters: this run uses the defaults, not the "
                   "sidebar's changes.")
    if not methods:
        st.stop()
    config = EvalConfig(dataset=bench.dataset, data=bench.data, out=Path(), scope=scope, limit=int(limit),
                        methods=methods, corpus=bench.corpus, import_openie=openie, answer=answer,
                        params={} if recorded else changed, command="memrag app: Evaluate page")
    engine, choice, llm_error = backend_state.backend_choice()
    if recorded:
        engine, backend = rec.replay_llm(), "recorded"
    elif dense_only(config):
        engine, backend = None, "none"
    else:
        backend = choice.backend if choice else "?"
    config = replace(config, out=ev.run_folder(config, engine, backend_state.embedder(), recorded, ev.runs_dir()))
    plan = ev.plan_run(config, ds, backend, parallel=backend_state.extract_parallel(backend))
    st.info(escape_markdown(plan.text()))
    ok = plan.seconds <= ev.CONFIRM_ABOVE_S or st.checkbox(
        f"Yes, start a run of about {widgets.seconds_text(plan.seconds)}", key="eval_confirm")
    refusal = None if recorded or dense_only(config) else room.live_refusal("evals", room.current())
    if refusal:
        st.warning(escape_markdown(refusal))
    if st.button("Run evaluation", type="primary", disabled=running or not ok or bool(refusal)):
        if recorded:
            llm, llm_error = rec.replay_llm(), ""
        elif dense_only(config):
            llm, llm_error = None, ""  # dense retrieval only: the passages are embedded, nothing is asked
        else:
            llm, _, llm_error = backend_state.job_llm()
        if llm_error:
            st.error(escape_markdown(llm_error))
        else:
            label = f"evaluating {bench.dataset} ({scope}, {int(limit)} questions)"
            job = ev.start_eval(config, llm, backend_state.embedder(), plan, label)
            state.eval_job, state.eval_shown = job.id, None
            st.rerun()

# ------------------------------------------------------------------ progress, then the run's outcome
if running:
    job_views.job_panel(job.id)
elif job is not None:
    out = job.meta["out"]
    if job.status == jobs.DONE:
        st.success(escape_markdown(f"{job.label}: finished in {widgets.seconds_text(job.elapsed())}."))
    elif job.status == jobs.CANCELLED:
        st.info("The evaluation was cancelled. Finished questions are kept: run the same settings again to resume.")
    else:
        job_views.job_error_view(job, "The evaluation", "Finished questions are kept: run the same settings "
                                                        "again to resume.")
    if state.eval_seen_job != job.id:  # show its results once; opening another run later wins
        state.eval_seen_job = job.id
        if (Path(out) / SUMMARY).is_file():
            state.eval_shown, state.eval_summary_only = out, False

with st.expander("Open a finished run"):
    saved = ev.saved_runs()
    if saved:
        i = st.selectbox("runs made here", range(len(saved)), format_func=lambda n: saved[n][1], key="eval_saved")
        if st.button("Open this run"):
            state.eval_shown, state.eval_summary_only = str(saved[i][0]), False
    committed = ev.committed_runs()
    if committed:
        j = st.selectbox("committed runs (docs/runs: summaries, read only)", range(len(committed)),
                         format_func=lambda n: committed[n][1], key="eval_committed")
        if st.button("Open committed run"):
            state.eval_shown, state.eval_summary_only = str(committed[j][0]), True
    folder = st.text_input("or the --out folder of `python -m memrag eval` (a path on this machine)",
                           key="eval_folder", help=ev.RUN_PATHS_HELP)
    if st.button("Open folder", disabled=not folder.strip()):
        try:
            state.eval_shown, state.eval_summary_only = str(ev.typed_run_folder(folder)), False
        except ValueError as e:
            st.error(escape_markdown(str(e)))


def _again(config: EvalConfig, llm: Any, seconds: float, label: str) -> None:
    """Ask the shown run again on an edited memory: a new evaluation job, followed like any other."""
    job = ev.start_again(config, llm, seconds, label)
    state.eval_job, state.eval_shown = job.id, None
    st.rerun()


if state.eval_shown:
    st.divider()
    st.subheader("Results")
    try:
        shown = ev.load_run(state.eval_shown, summary_only=state.eval_summary_only)
    except (OSError, ValueError) as e:
        st.error(escape_markdown(f"Cannot open {state.eval_shown}: {e}"))
    else:
        if stale := stale_message(shown.typed_summary, ev.memory_path_of(shown, {})):
            st.warning(escape_markdown(stale))
        ev.run_view(shown, start=None if running else _again)
