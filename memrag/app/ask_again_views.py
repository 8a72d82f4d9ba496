"""The Ask page's "ask again on this version": under answers made on an earlier version of the open
memory (before an edit), the estimate of what asking again costs, the button, and — once the new
answers are shown — what changed per method. The work is `memrag.explain.ask_again` (unchanged
calls answered from the shown traces' replies) and `memrag.explain.trace_diff`; this module asks
and reports.

Recorded mode answers the changed calls from the memory's recordings and the recorded showcase's
(`memrag.explain.showcase`; offline: a call they lack fails and says so); live mode asks the current
backend, in a background job like any live ask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from memrag.app import backend_state, job_owner
from memrag.app.ask_result import AskResult
from memrag.app.jobs import Job, JobLLM
from memrag.demo import gold_chunk_ids
from memrag.eval.gold import doc_unit
from memrag.explain import ask_again
from memrag.explain.trace_diff import MethodDiff, diff_traces
from memrag.index import versions
from memrag.index.memory import Memory
from memrag.index.stale import stale_message
from memrag.methods import registry
from memrag.plain_text import clip, escape_markdown
from memrag.trace import Trace

STATE = "ask_again"  # session key: {"job": the ask-again job's id, "before": the traces it re-ran}
ESTIMATES = "ask_again_estimates"  # session key: estimates already made, by what they were made of
K = 5
STEP_ITEMS = 4  # paths, engrams or facts shown per step and sign


def _engine(rec: Any, live: bool) -> tuple[Any, str]:
    """(the engine that answers changed calls, why there is none)."""
    if live:
        llm, _, error = backend_state.job_llm()
        return llm, error
    if rec is None:
        return None, "this memory has no recordings: ask live"
    return _with_showcase(rec).replay_llm(), ""


def _with_showcase(rec: Any) -> Any:
    """The memory's recordings with the recorded showcase's replies added (they answer only the calls
    the showcase's edit changes: any other edit's changed calls still miss and say so)."""
    from memrag.explain import showcase

    if not showcase.available():
        return rec
    try:
        return showcase.with_showcase(rec)
    except (ValueError, OSError):  # another engine's recordings, or a damaged file
        return rec


def _estimate(memory: Memory, traces: list[Trace], engine: Any) -> ask_again.Estimate:
    made = st.session_state.setdefault(ESTIMATES, {})
    key = (memory.fingerprint(), traces[0].question, tuple((t.method, t.memory_fingerprint, len(t.llm_calls))
                                                          for t in traces), engine.backend, engine.model)
    if key not in made:
        made.clear()  # one at a time: an estimate holds nothing worth keeping longer
        made[key] = ask_again.estimate(memory, traces, llm=engine, embedder=backend_state.embedder())
    return made[key]


def _other_version(shown: AskResult, memory: Memory, path: str | Path) -> bool:
    """Whether `shown` was made on another version of the memory folder at `path`: an earlier one, or
    one kept in its log that is no longer live (an edit since undone, another version made live)."""
    if stale_message(shown.traces, path):
        return True
    made = {t.memory_fingerprint for t in shown.traces}
    if memory.fingerprint() in made:
        return False
    return bool(made & {v.fingerprint for v in versions.list_versions(Path(path), open_each=False) if not v.live})


def offer(shown: AskResult, memory: Memory, path: str | Path, rec: Any, live: bool) -> None:
    """Below answers made on another version of this memory (before an edit, or on an edit since
    undone): ask them again on this one."""
    if shown.mode == "file" or not _other_version(shown, memory, path):
        return
    engine, why = _engine(rec, live)
    st.markdown("**This memory changed since these answers.**")
    if engine is None:
        st.caption(escape_markdown(f"Asking again is not possible now: {why}."))
        return
    est = _estimate(memory, shown.traces, engine)
    st.caption(escape_markdown(est.text() + ("" if live else " Recorded mode answers them from this memory's "
                                                             "recordings; a call they lack fails and says so.")))
    if st.button("Ask again on this version", key="ask_again_go"):
        _start(shown, memory, engine, est, live)


def _start(shown: AskResult, memory: Memory, engine: Any, est: ask_again.Estimate, live: bool) -> None:
    from memrag.app.session import AppState

    before = list(shown.traces)
    embedder = backend_state.embedder()

    def work(job: Job) -> list[Trace]:
        inner = JobLLM(engine, job, expected_calls=max(1, est.calls[1]))
        return ask_again.ask_again(memory, before, llm=inner, embedder=embedder).traces

    job = job_owner.start_job("ask", "asking again on this version", work, estimate_s=est.seconds or 5.0,
                              meta={"question": shown.question, "record": shown.record,
                                    "mode": "live" if live else "recorded", "model": engine.model})
    st.session_state[STATE] = {"job": job.id, "before": before}
    state = AppState()
    state.ask_job, state.loaded_traces = job.id, None
    st.rerun()


def changes(shown: AskResult, memory: Memory) -> None:
    """What changed per method, when `shown` is the result of an ask-again."""
    from memrag.app.session import AppState

    again = st.session_state.get(STATE)
    if not again or again["job"] != AppState().ask_job or shown.mode == "file":
        return
    gold = gold_chunk_ids(memory, (shown.record or {}).get("gold_docs", [])) if shown.record else []
    unit = doc_unit(shown.traces[0], memory) if shown.traces else None
    try:
        diffs = diff_traces(again["before"], shown.traces, gold, K, unit)
    except ValueError as e:
        st.caption(escape_markdown(str(e)))
        return
    st.markdown("**What changed, method by method** (before this version → now)")
    cols = st.columns(2)
    for i, d in enumerate(diffs):
        with cols[i % 2].container(border=True):
            _method(d)
    _route_since(again["before"], shown.traces, gold)


def _route_since(before: list[Trace], now: list[Trace], gold: list[int]) -> None:
    """Each method's picture now, with what is new since the edit marked, where its views draw one
    (`MethodViews.since`); the others' changes stay the lines above."""
    was = {t.method: t for t in before}
    for t in now:
        since = registry.get(t.method).views.since if t.method in was else None
        if since is not None:
            since(was[t.method], t, gold)


def under_answers(shown: AskResult, memory: Memory, path: str | Path, rec: Any, live: bool) -> None:
    """The Ask page's lines under its answers: what an ask-again changed, or the offer to ask again
    when the answers were made on an earlier version of this memory."""
    changes(shown, memory)
    offer(shown, memory, path, rec, live)


def _method(d: MethodDiff) -> None:
    lines = d.lines()
    st.markdown(f"**{escape_markdown(lines[0])}**")
    steps = {f"{s.label}: " for s in d.steps if s.changed}
    for line in lines[1:]:  # the gold passages first (rank and fate before → now), as text a reader can copy
        if not any(line.startswith(p) for p in steps):
            st.markdown(escape_markdown(line))
    for s in d.steps:  # what each step found that appeared or disappeared, a few of each (hop 2 lists dozens)
        if s.changed:  # one item a line: a path's chain ("a → r → b ⇒ b → s → c") must not run into the next
            st.markdown("\n".join([escape_markdown(f"{s.label}:"), *_few("+", s.appeared), *_few("−", s.disappeared)]))


def _few(sign: str, items: list[str]) -> list[str]:
    shown = [f"- {escape_markdown(f'{sign} {clip(x, 160)}')}" for x in items[:STEP_ITEMS]]
    more = [f"- {escape_markdown(f'{sign} … and {len(items) - STEP_ITEMS} more')}"] if len(items) > STEP_ITEMS else []
    return shown + more
