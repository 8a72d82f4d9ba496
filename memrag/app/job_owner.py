"""Background jobs owned by a browser session: a session sees its own jobs and those whose tab
was closed, never another open session's."""

from __future__ import annotations

from typing import Any, Callable

from memrag.app import jobs


def session_id() -> str:
    """This browser session's id ('' outside a Streamlit run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def _session_alive(sid: str) -> bool:
    try:
        from streamlit.runtime import Runtime

        return Runtime.instance().is_active_session(sid)
    except Exception:  # no runtime (e.g. AppTest): treat every owner as present
        return True


def start_job(kind: str, label: str, work: Callable[[jobs.Job], Any], **kw: Any) -> jobs.Job:
    """jobs.start_job, owned by this browser session (see `visible_jobs`)."""
    kw["meta"] = {**(kw.get("meta") or {}), "session": session_id()}
    return jobs.start_job(kind, label, work, **kw)


def visible_jobs(kind: str | None = None, *, running_only: bool = False) -> list[jobs.Job]:
    """The jobs this session may see: its own, and those whose tab was closed (so a build can be
    followed again from a new tab). Another open session's jobs stay private to it."""
    me = session_id()
    return [j for j in jobs.list_jobs(kind, running_only=running_only)
            if j.meta.get("session", "") in ("", me) or not _session_alive(j.meta["session"])]
