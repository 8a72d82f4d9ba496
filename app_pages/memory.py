"""Memory page: open the sample, build from uploads, or open a saved memory; watch a build grow;
look inside the active memory."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from memrag.app import build_form, job_owner, job_views, jobs, memory_state, memory_views, session, widgets
from memrag.app.build_form import interrupted_actions, start_build
from memrag.app.edit_views import edit_panel
from memrag.app.removal_views import removal_panel
from memrag.index import store
from memrag.app.session import AppState
from memrag.plain_text import escape_markdown

state = AppState()
st.title("Memory")
build_form.build_note()


# ------------------------------------------------------------------ a build in progress or just ended
job = jobs.get_job(state.build_job)
others = [j for j in job_owner.visible_jobs("build", running_only=True) if j.id != state.build_job]
for other in others:  # e.g. started in a tab that was closed
    if st.button(escape_markdown(f"Follow the running build: {other.label}"), key=f"follow_{other.id}"):
        state.build_job = other.id
        st.rerun()
if job is not None and not job.finished:
    st.subheader("Building")
    job_views.job_panel(job.id)
    # nothing else while it runs: the memory below would be the previous one, and a second
    # upload form would invite a second build
    st.stop()
elif job is not None:
    build_path = Path(job.meta["path"]) if job.meta.get("path") else None
    left_over = memory_state.resumable(build_path) if build_path and job.status != jobs.DONE else None
    if job.status == jobs.DONE:
        state.built_inputs = job.meta.get("inputs")
        if state.active_memory != job.result["path"]:
            state.active_memory = job.result["path"]
            st.rerun()  # so the sidebar shows the new memory too
        st.success(escape_markdown(f"{job.label}: finished in {widgets.seconds_text(job.elapsed())}."))
    elif job.status == jobs.CANCELLED:
        kept = job.state.get("chunks_done", 0)
        listed = ("; it is listed under saved memories, and resuming it reads only the chunks not yet done"
                  if left_over is not None else "")
        st.info(escape_markdown(f"The build was cancelled after {widgets.seconds_text(job.elapsed())}. "
                                f"{kept} finished chunk(s) are kept in its journal{listed}."))
    else:
        job_views.job_error_view(job, "The build")
    job_views.files_view(job.state.get("files", {}))
    job_views.failures_view(job.state.get("failures", []))
    failed = [f for f in job.state.get("files", {}).values() if f["status"] == "failed"]
    if left_over is not None:
        interrupted_actions(build_path.name, build_path, resume_label="Resume the cancelled files", key="ended")
    if failed and build_path and job.status == jobs.DONE and st.button(f"Retry the failed files ({len(failed)})"):
        start_build([], build_path.name, sum(f["failed"] for f in failed), (None, build_path.name),
                    retry_failed=True)
    if st.button("Dismiss"):
        state.build_job = None
        st.rerun()

# ------------------------------------------------------------------ choose or build a memory
opened_saved = state.active_memory is not None and not memory_state.is_sample(state.active_memory)
SOURCES = ["Sample corpus", "Upload files", "Saved memory"]
if state.memory_source is None:  # the start page may have chosen one
    state.memory_source = SOURCES[2 if opened_saved else 0]
source = session.bound(st.radio, "Memory source", AppState.memory_source.key, widget_key="memory_source",
                       options=SOURCES, horizontal=True)
if source == "Sample corpus":
    sample = memory_state.sample_memory_dir()
    if not store.is_memory_dir(sample):
        st.warning("The sample memory is not built in this checkout. Build it with "
                   "`python -m memrag index sample_corpus/docs --memory sample_corpus/memory`.")
    elif memory_state.is_sample(state.active_memory):
        st.caption("The sample corpus is open: 40 invented encyclopedia articles about the Varrow Coast.")
    elif st.button("Open the sample memory"):
        state.active_memory = str(sample)
        st.rerun()
elif source == "Upload files":
    build_form.upload_form()
else:
    saved = memory_state.saved_memories()
    if not saved:
        st.caption("No saved memories yet: uploads you build are saved here.")
    else:
        st.dataframe([{"folder": m["folder"], "name": m["manifest"].get("name", ""),
                       **m["manifest"].get("counts", {}), "saved": m["manifest"].get("saved_at", ""),
                       "interrupted build": m["interrupted"], "problem": m["error"]} for m in saved],
                     hide_index=True)
        folder = st.selectbox("saved memory", [m["folder"] for m in saved])
        chosen = next(m for m in saved if m["folder"] == folder)
        if store.is_memory_dir(Path(chosen["path"])) and st.button("Open this memory"):
            state.active_memory = str(memory_state.memories_dir() / folder)
            st.rerun()
        if chosen["interrupted"]:
            st.caption(escape_markdown(f"{folder}: {chosen['interrupted']}."))
            interrupted_actions(folder, Path(chosen["path"]))

# ------------------------------------------------------------------ the active memory
path, memory, error = memory_state.active_memory()
if error:
    st.error(escape_markdown(error))
elif memory is not None:
    st.header(escape_markdown(memory_state.memory_label(path)))
    # a fragment: a tab, the graph's size or focus reruns the tabs, not the page and sidebar
    st.fragment(memory_views.memory_tabs)(memory, key="mem", path=path)
    removal_panel(path, memory)
    edit_panel(path, memory)
