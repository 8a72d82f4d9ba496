"""The Memory page's build form: an upload batch and a name → a background build; an interrupted
build resumed or discarded.

What the user chose stays chosen while a build runs and after it ends or is cancelled. The page
draws no form during a build, so the browser draws the form afresh afterwards, from each widget's
start value: the source and the name are session values every run starts from (session.bound).
A browser's upload box always comes back empty, so the last batch read is kept
(memory_state.read_upload_batch) and offered while the box is empty; each build gives the box a
new key, so the server never holds files the browser's box no longer shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from memrag.app import backend_state, estimates, job_owner, jobs, memory_state, room, session
from memrag.app.session import AppState
from memrag.app.work import build_work
from memrag.config import IndexParams
from memrag.index import store
from memrag.plain_text import escape_markdown

CONFIRM_ABOVE = 20  # chunks: bigger builds ask for confirmation
UPLOAD_KEY = "build_files_{}"  # + AppState.upload_box: a new box after each build


def start_build(docs: list, name: str, chunks: int, inputs: tuple, *, retry_failed: bool = False) -> None:
    refusal = room.live_refusal("builds", room.current())
    if refusal:  # the button is off too; checked here as well, where the work starts
        st.error(escape_markdown(refusal))
        return
    llm, choice, error = backend_state.job_llm()
    if llm is None:
        st.error(escape_markdown(error))
        return
    path = memory_state.memory_path(name)
    if any(j.meta.get("path") == str(path) for j in jobs.list_jobs("build", running_only=True)):
        st.error("A build into that memory is already running.")
        return
    parallel = backend_state.extract_parallel(choice.backend)
    try:
        embedder = backend_state.build_embedder(path)  # a memory there keeps the embedder it was built with
    except ValueError as e:
        st.error(escape_markdown(str(e)))
        return
    work = build_work(path, docs, llm, embedder, IndexParams(), parallel=parallel, name=name,
                      retry_failed=retry_failed)
    job = job_owner.start_job("build", f"building {path.name}", work, total=chunks,
                              estimate_s=estimates.build_estimate(chunks, choice.backend, parallel).seconds,
                              meta={"backend": choice.backend, "path": str(path), "inputs": inputs})
    state = AppState()
    state.build_job, state.upload_box = job.id, state.upload_box + 1
    st.rerun()


def _upload_batch(params: IndexParams) -> tuple[Any, int] | None:
    """(ingest report, chunks) of the files in the upload box, or of the batch kept from before when
    the box came back empty (a build ran, the page was left); None when there is neither."""
    state = AppState()
    key = UPLOAD_KEY.format(state.upload_box)
    drawn_before = key in st.session_state  # absent: a new box, or one the last run did not draw
    files = st.file_uploader("Documents (.txt, .md, .pdf, .html)", type=["txt", "md", "markdown", "pdf", "html", "htm"],
                             accept_multiple_files=True, key=key)
    if files:
        return memory_state.read_upload_batch(files, params)
    memo = state.upload_memo
    if memo.get("report") is None:
        return None
    if drawn_before and not memo.get("kept"):  # the user emptied the box: forget the batch
        state.upload_memo = {}
        return None
    memo["kept"] = True
    names = ", ".join(d.source or d.title for d in memo["report"].documents[:5])
    more = f" and {len(memo['report'].documents) - 5} more" if len(memo["report"].documents) > 5 else ""
    st.caption(escape_markdown(f"Kept from your last upload: {names}{more}. Drop files above to build others."))
    if st.button("Forget these files"):
        state.upload_memo = {}
        st.rerun()
    return memo["report"], memo["chunks"]


def upload_form() -> None:
    """The upload box, the memory's name, what building it will take, and the Build button."""
    params = IndexParams()
    batch = _upload_batch(params)
    name = session.bound(st.text_input, "memory name", AppState.memory_name.key, widget_key="memory_name",
                         help="Letters, digits, '-' and '_'; an existing memory of that name gets the new "
                              "documents added.")
    if batch is None:
        return
    report, chunks = batch
    for p in report.problems:
        (st.error if p.fatal else st.warning)(escape_markdown(f"{p.name}: {p.reason}"))
    for d in report.duplicates:
        st.caption(escape_markdown(f"skipped duplicate: {d}"))
    if not report.documents:
        return
    _, choice, _ = backend_state.backend_choice()
    backend = choice.backend if choice else "embedded"
    eta = estimates.build_estimate(chunks, backend, backend_state.extract_parallel(backend))
    folder = memory_state.safe_memory_name(name)
    st.info(escape_markdown(f"{len(report.documents)} document(s), {chunks} chunk(s) → memory '{folder}'. "
                            f"{eta.text().capitalize()} on {backend}."))
    ok = chunks <= CONFIRM_ABOVE or st.checkbox(f"Yes, read all {chunks} chunks (more than {CONFIRM_ABOVE})")
    inputs = (AppState().upload_memo.get("key"), folder)
    built = AppState().built_inputs == inputs
    if built:
        st.caption("These files are built into this memory: change the files or the name to build again.")
    refusal = room.live_refusal("builds", room.current())
    if refusal:
        st.warning(escape_markdown(refusal))
    if st.button("Build memory", type="primary", disabled=not ok or built or bool(refusal)):
        start_build(list(report.documents), folder, chunks, inputs)


def interrupted_actions(folder: str, path: Path, *, resume_label: str = "Resume the interrupted build",
                        key: str = "saved") -> None:
    """Resume or discard the interrupted build in `path` (Discard asks to be confirmed)."""
    left_over = memory_state.resumable(path)
    row = st.container(horizontal=True)
    if left_over is not None and row.button(resume_label, key=f"{key}_resume", type="primary",
                                            disabled=bool(room.live_refusal("builds", room.current()))):
        start_build(left_over.documents, folder, left_over.chunks, (None, folder))
    with row.popover("Discard it", disabled=bool(room.live_refusal("removals", room.current()))):
        kept = "the memory saved there stays as it is" if store.is_memory_dir(path) else "its folder goes too"
        st.caption(escape_markdown(f"The chunks this build extracted are thrown away; {kept}."))
        if st.button("Yes, discard it", key=f"{key}_discard"):
            try:
                AppState().build_note = memory_state.discard_interrupted(path)
            except ValueError as e:
                st.error(escape_markdown(str(e)))
                return
            st.rerun()


def build_note() -> None:
    """The last discard's sentence, once."""
    state = AppState()
    if state.build_note:
        st.success(escape_markdown(state.build_note))
        state.build_note = ""
