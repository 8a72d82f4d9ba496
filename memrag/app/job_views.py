"""A running background job on a page: progress, time left, the chunk being read, failures, and a
build's growing graph (polled fragments; the job itself lives in `memrag.app.jobs`)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from memrag.app import job_owner, jobs, room
from memrag.app.estimates import THROUGHPUT
from memrag.app.progress import model_loading, model_state_text, progress_figure, tokens_line
from memrag.app.session import AppState
from memrag.app.widgets import picture, seconds_text
from memrag.llm import preload
from memrag.viz import memory_graphs
from memrag.plain_text import clip, escape_markdown

GROWING_GRAPH_NODES = memory_graphs.DEFAULT_NODES


# ------------------------------------------------------------------ background jobs
def job_panel(job_id: str) -> None:
    """Progress of a running job, polled every second or so; ends with a full rerun."""
    _job_progress(job_id)
    job = jobs.get_job(job_id)
    if job is not None and job.kind == "build":
        _build_live_graph(job_id)


@st.fragment(run_every=1.0)
def _job_progress(job_id: str) -> None:
    job = jobs.get_job(job_id)
    if job is None:
        st.warning("That job is no longer known to this app (it was restarted).")
        return
    snap = job.snapshot()
    if job.finished:
        st.rerun()  # the page draws the result
    figure = progress_figure(snap)
    st.progress(figure.fraction, text=escape_markdown(f"{snap['label']}: {figure.line()}"))
    waiting = model_loading(snap)
    note = "" if waiting else snap["note"]  # the first step is not blamed for the model's loading time
    st.caption(escape_markdown(f"{seconds_text(snap['elapsed_s'])} so far" + (f" — {note}" if note else "")))
    if figure.model:
        st.markdown(escape_markdown(f"Model: {figure.model}"))
    if figure.note:
        st.caption(escape_markdown(f"Why the time left rose: {figure.note}."))
    if waiting:
        st.info(escape_markdown(model_state_text() or "Waiting for the model to load (its first call loads it)."))
    elif snap["meta"].get("backend") == "embedded":
        from memrag.llm.embedded import engine_status

        es = engine_status()
        if es["waiting"]:
            st.caption(f"{es['waiting']} call(s) waiting for the embedded model (one call at a time).")
    if job.kind == "build" and not waiting and snap["total"]:
        calls = snap["model_calls"]
        left = max(0, snap["total"] - job.state.get("chunks_done", 0) - len(calls))  # chunks not started yet
        st.caption(escape_markdown(tokens_line(job.state.get("tokens_written", 0), calls, left,
                                               THROUGHPUT.typical_tokens("index.extract")[1])))
    if job.kind == "build" and not waiting:
        current = job.state.get("current")
        if current:
            with st.container(border=True):
                st.caption(f"Reading chunk {current['i'] + 1}")
                st.text(clip(current["title"], 200))
                st.text(clip(current["text"], 300))
        files_view(job.state.get("files", {}))
        failures_view(job.state.get("failures", []))
    refusal = room.live_refusal("cancels", room.current())
    if snap["cancel_requested"]:
        st.info("Cancelling: stopping the running model call…")
    elif refusal:
        st.caption(escape_markdown(refusal))
    elif st.button("Cancel", key=f"cancel_{job_id}"):
        job.cancel()


@st.fragment(run_every=1.0)
def running_jobs_view() -> None:
    """The sidebar's line per running job: the same figure as its panel, polled as often."""
    for job in job_owner.visible_jobs(running_only=True):
        figure = progress_figure(job.snapshot())
        st.caption(escape_markdown(f"{job.label}: {figure.line()}" + (f" — {figure.model}" if figure.model else "")))


def job_error_view(job: jobs.Job, what: str, after: str = "") -> None:
    """A failed job: `what` failed, its message and traceback — in room mode only the kind (the
    message may quote a server's reply, the traceback the server's files)."""
    here = room.current()
    if here.on:
        st.error(escape_markdown(room.shown_error(job.error, here, what) + (f" {after}" if after else "")))
        return
    st.error(escape_markdown(f"{what} failed: {job.error}" + (f". {after}" if after else "")))
    with st.expander("details"):
        st.code(job.error_detail, language=None)


def files_view(files: dict[str, dict[str, Any]]) -> None:
    """A build's documents: queued / extracting / done / failed (with the raw reply) / cancelled."""
    if not files:
        return
    hidden = room.current().on  # a raw reply may be a server's error page
    st.dataframe([{"file": f["source"] or f["title"], "title": f["title"], "status": f["status"],
                   "chunks": f"{f['done']} of {f['chunks']}", "failed": f["failed"],
                   "raw reply": "" if hidden else clip(f.get("raw_reply", ""), 300)}
                  for f in files.values()], hide_index=True)


def failures_view(failures: list[dict[str, Any]]) -> None:
    if not failures:
        return
    named = ", ".join(failure_name(f) for f in failures[:10]) + (" …" if len(failures) > 10 else "")
    hidden = room.current().on  # a raw reply may be a server's error page
    st.warning(escape_markdown(f"{len(failures)} chunk(s) could not be extracted: {named}. The build goes on "
                               "without them" + ("." if hidden else "; their raw replies are below.")))
    if hidden:
        return
    for f in failures[-5:]:
        with st.expander(escape_markdown(f"{failure_name(f)}: the model's raw reply")):
            st.text(clip(f.get("error", ""), 500))
            st.code(f.get("raw_reply", "") or "(empty reply)", language=None, wrap_lines=True)


def failure_name(f: dict[str, Any]) -> str:
    """'chunk 3 (Port Alder)': a failed chunk by id and title."""
    title = clip(f.get("title") or "", 60)
    return f"chunk {int(f['chunk_id'])}" + (f" ({title})" if title else "")


def model_state_view() -> None:
    """The embedded model's loading state; polled each second while it loads, then one full rerun."""
    loading = preload.status()["state"] == preload.LOADING

    def body() -> None:
        status = preload.status()
        line = model_state_text(status)
        if status["state"] == preload.LOADING:
            st.info(escape_markdown(line))
        elif loading:  # it just finished: a full rerun draws the page without the poll
            st.rerun()
        elif status["state"] == preload.FAILED:
            st.error(escape_markdown(line))
        elif line:
            st.caption(escape_markdown(line))

    st.fragment(body, run_every=1.0 if loading else None)()


@st.fragment(run_every=2.0)
def _build_live_graph(job_id: str) -> None:
    job = jobs.get_job(job_id)
    if job is None or job.finished:  # the page's rerun shows the memory built
        return
    snapshot: dict[str, Any] = {}
    job.update_state(lambda s: snapshot.update(nodes=dict(s.get("nodes", {})), edges=list(s.get("edges", [])),
                                               coref_links=list(s.get("coref_links", []))))
    if not snapshot.get("nodes"):
        st.caption("The knowledge graph appears here as chunks are read.")
        return
    # a new picture only when the build added something (its layout is computed afresh)
    signature = (len(snapshot["nodes"]), len(snapshot["edges"]), len(snapshot["coref_links"]))
    memos = AppState().graph_memo
    if job_id not in memos or memos[job_id][0] != signature:
        memos.clear()  # one build at a time is watched per session
        memos[job_id] = (signature, memory_graphs.growing_picture(snapshot, GROWING_GRAPH_NODES))
    picture(memos[job_id][1], 420, key=f"growing_graph_{job_id}")

