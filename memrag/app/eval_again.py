"""The Evaluate page's "ask this run again on an edited memory" (memrag.explain.rerun) and, under a run
that repeats another, the two compared question by question (memrag.eval.run_diff).

A recorded run asks its changed calls of the chosen memory's recordings (a copy of the sample
carries the sample's); a live run asks the current backend, in a background job, as any live
evaluation does (refused in room mode unless live evaluations are allowed). Text from a run
(questions, answers, titles) is shown in dataframes or escaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from memrag.app import backend_state, memory_state, recording_state, room
from memrag.app import eval_questions as eq
from memrag.app.view_cache import made
from memrag.explain import rerun
from memrag.eval import run_diff
from memrag.eval.records import LABELS
from memrag.index import store
from memrag.methods import registry
from memrag.plain_text import escape_markdown


def memory_choices(run: Any) -> list[str]:
    """Memories the run could be asked again on: the one it used, then the app's saved memories."""
    used = (run.run.get("indexing") or {}).get("path")
    paths = ([used] if used and store.is_memory_dir(Path(used)) else []) + [m["path"] for m in
                                                                         memory_state.saved_memories()]
    return list(dict.fromkeys(str(Path(p).resolve()) for p in paths))


def _engine(recorded: bool, memory_dir: str) -> tuple[Any, str]:
    """(the engine for changed calls, why there is none): the memory's recordings, or live."""
    if recorded:
        rec, error = recording_state.recordings(memory_dir)
        if rec is None:
            return None, error or "this memory has no recordings to answer changed calls from"
        return rec.replay_llm(), ""
    refusal = room.live_refusal("evals", room.current())
    if refusal:
        return None, refusal
    llm, _, error = backend_state.job_llm()
    return llm, error


def offer(run: Any, start: Any, key: str = "eval") -> None:
    """Under a pooled run with its questions: pick a memory, see what asking again costs, ask.
    `start(config, llm, seconds, label)` starts the evaluation job and shows it (the page's)."""
    if not run.records or run.typed_summary.scope == "per-question":
        return
    with st.expander("Ask this run again on an edited memory"):
        choices = memory_choices(run)
        if not choices:
            st.caption("No memory to ask on: make a copy of this run's memory on the Memory page and edit it.")
            return
        pick = st.selectbox("memory (its live version)", choices, format_func=memory_state.memory_label,
                            key=f"{key}_again_memory")
        try:
            memory = memory_state.open_memory(pick)
            plan = rerun.plan_rerun(run.folder, run.run, run.records, Path(pick), memory, run.folder.parent)
        except (ValueError, OSError, store.MemoryStoreError) as e:
            st.caption(escape_markdown(f"Not possible with this memory: {e}"))
            return
        recorded = run.typed_summary.stamp.get("replies") == "recorded" and st.toggle(
            "answer changed calls from the memory's recordings", value=True, key=f"{key}_again_recorded",
            help="On: offline, from the recordings beside the memory (a copy of the sample carries the sample's); "
                 "a changed call they do not hold stops the run and says which. Off: ask the current backend.")
        engine, why = _engine(recorded, pick)
        if engine is None:
            st.caption(escape_markdown(f"Asking again is not possible now: {why}."))
            return
        llm_s = sum(c.get("seconds") or 0 for r in run.records for e in r["methods"].values()
                    for c in (e.get("trace") or {}).get("llm_calls") or [])
        seconds = 2.0 * len(run.records) if recorded else float(llm_s)
        st.caption(escape_markdown(
            f"{len(run.records)} question(s) on {memory_state.memory_label(pick)} at version {plan.version}: every "
            "call whose prompt did not change is answered from this run's traces; changed calls go to "
            + ("the memory's recordings" if recorded else
               f"{engine.backend}/{engine.model} (at most the {llm_s:.0f} s this run's calls took)") + "."))
        if st.button("Ask this run again", key=f"{key}_again_go"):
            rerun.write_again(plan)
            start(plan.config, rerun.reusing_llm(run.records, engine), seconds,
                  f"asking {run.folder.name} again on {Path(pick).name} {plan.version}")


def _pct(v: float) -> str:
    return f"{100 * v:.1f}"


def paired_table(diff: run_diff.RunDiff) -> pd.DataFrame:
    rows = [{"method": registry.label_of(r["method"]), "score": LABELS.get(r["metric"], r["metric"]), "n": r["n"],
             "before": _pct(r["before"]), "after": _pct(r["after"]),
             "after − before [95% CI]": f"{100 * r['diff']:+.1f} [{100 * r['diff_ci95'][0]:+.1f}, "
                                        f"{100 * r['diff_ci95'][1]:+.1f}]",
             "wins / losses / ties": f"{r['wins']} / {r['losses']} / {r['ties']}"} for r in diff.paired]
    return pd.DataFrame(rows, columns=["method", "score", "n", "before", "after", "after − before [95% CI]",
                                       "wins / losses / ties"])


def changes_table(diff: run_diff.RunDiff) -> pd.DataFrame:
    rows = [{"id": c.qid, "method": registry.label_of(c.method), "scores": c.scores_text(),
             "gold found now": "; ".join(c.found), "gold lost now": "; ".join(c.lost),
             "answer before": c.answer_before, "answer now": c.answer_after} for c in diff.changes]
    return pd.DataFrame(rows, columns=["id", "method", "scores", "gold found now", "gold lost now", "answer before",
                                       "answer now"])


def comparison(run: Any, load_run: Any, typed_run_folder: Any) -> None:
    """Under a rerun: the run it repeats, compared question by question. The earlier folder named in
    again.json opens only where a typed folder would (the app's run folders, unless allowed)."""
    try:
        again = rerun.read_again(run.folder)
        if again is None:
            return
        before = load_run(typed_run_folder(again["before"]))
    except (ValueError, OSError) as e:
        st.caption(escape_markdown(f"This run repeats another, which cannot be opened: {e}"))
        return
    k = eq.fate_k(run.typed_summary.stamp)
    diff = made("run_diff", (before, run), k, lambda: run_diff.diff_runs(before.records, run.records, run.methods, k))
    st.markdown("**Compared with the run it repeats** (the same questions, paired)")
    st.caption(escape_markdown(
        f"before: {before.folder.name} · now: memory {Path(again['memory']).name} at version {again['version']} · "
        f"{diff.shared} "
        f"question(s) in both" + (f", {diff.only_before} only before" if diff.only_before else "")
        + (f", {diff.only_after} only now" if diff.only_after else "")
        + ". Percent; the interval is a paired bootstrap over questions; wins = questions scored higher now."))
    st.dataframe(paired_table(diff), hide_index=True)
    if diff.changes:
        st.markdown(f"**What changed, question by question** ({len(diff.changes)} question × method pair(s))")
        st.dataframe(changes_table(diff), hide_index=True)
    else:
        st.caption("No question's scores, gold passages or answers changed.")
