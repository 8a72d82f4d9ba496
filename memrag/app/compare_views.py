"""The Ask page's compare mode: pick a method and an ablation (or edit both parameter sets),
run both as one background job, then the two runs side by side and a what-changed table.

The two sets live in the session like the sidebar's parameters, under the scopes in `SCOPES`.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pandas as pd
import streamlit as st

from memrag.app import backend_state, job_owner, param_widgets, ask_views, estimates, job_views, widgets, jobs
from memrag.app.question_gold import gold_of, gold_scores
from memrag.app.work import compare_work
from memrag.explain import ablations as compare
from memrag.app.param_widgets import METHOD_LABELS
from memrag.app.session import AppState
from memrag.explain.ablations import CUSTOM, Variant
from memrag.index.memory import Memory
from memrag.plain_text import escape_markdown

SIDES = ("A", "B")
SCOPES = {"A": "cmp_a", "B": "cmp_b"}
METHOD_KEY = "cmp_method"
ROW_PX = 35  # a dataframe row's height


def preset_key(method: str) -> str:
    return f"cmp_preset_{method}"


def _bases(method: str) -> tuple[Any, Any]:
    """What a preset starts from: the sidebar's parameters, or the paper's settings."""
    return param_widgets.method_params(method), compare.paper_params(method)


def _apply_preset(method: str, from_paper: bool = False) -> None:
    """Set both sets from the chosen preset and the sidebar's parameters, or the paper's settings
    (a widget callback)."""
    name = st.session_state.get(preset_key(method), CUSTOM)
    if name == CUSTOM:
        return
    a, b = compare.preset_params(method, _bases(method)[from_paper], compare.preset(method, name))
    param_widgets.set_method_params(method, a, SCOPES["A"])
    param_widgets.set_method_params(method, b, SCOPES["B"])


def _labels(method: str, a: Any, b: Any) -> tuple[str, str]:
    """'A · completion on' when the sets are exactly the preset's, else plain 'A' / 'B'."""
    name = st.session_state.get(preset_key(method), CUSTOM)
    if name != CUSTOM:
        p = compare.preset(method, name)
        if any((a, b) == compare.preset_params(method, base, p) for base in _bases(method)):
            return f"A · {p.a_label}", f"B · {p.b_label}"
    return "A", "B"


def compare_mode(memory: Memory, question: str, record: dict[str, Any] | None, rec: Any) -> None:
    """Everything below the question in compare mode: choices, the run, the result."""
    state = AppState()
    c1, c2 = st.columns([1, 2])
    with c1:
        method = st.segmented_control("method", compare.METHODS, default=compare.METHODS[0], key=METHOD_KEY,
                                      format_func=lambda m: METHOD_LABELS[m]) or compare.METHODS[0]
    names = [p.name for p in compare.PRESETS[method]] + [CUSTOM]
    first_field = fields(param_widgets.PARAM_CLASSES[method])[0].name
    if param_widgets.value_key(method, first_field, SCOPES["A"]) not in st.session_state:
        st.session_state[preset_key(method)] = names[0]  # first visit: both sets from the first ablation
        _apply_preset(method)
    with c2:
        name = st.selectbox("ablation", names, key=preset_key(method), on_change=_apply_preset, args=(method,),
                            help="The two parameter sets start from your sidebar parameters; the preset "
                                 "changes what the papers' ablations change. 'custom' keeps your edits.")
    if name != CUSTOM:
        st.caption(escape_markdown(compare.preset(method, name).about))
    st.button("Start both from the paper's settings", on_click=_apply_preset, args=(method, True),
              disabled=name == CUSTOM, key="cmp_from_paper",
              help="The ablation on top of the paper's settings (each method's paper settings) instead of your "
                   "sidebar parameters.")
    with st.expander("Edit the two parameter sets"):
        st.button("Reset both to the ablation", on_click=_apply_preset, args=(method,), disabled=name == CUSTOM)
        for col, side in zip(st.columns(2), SIDES):
            col.markdown(f"**{side}**")
            param_widgets.param_widgets(method, col, scope=SCOPES[side])
    a, b = (param_widgets.method_params(method, SCOPES[s]) for s in SIDES)
    diff = compare.differing(a, b)
    if diff:
        st.caption(escape_markdown("A → B: " + "; ".join(f"{k}: {x} → {y}" for k, (x, y) in diff.items())))
    else:
        st.warning("The two parameter sets are the same: change one (or pick an ablation) to compare.")

    recorded = rec is not None and bool(question.strip()) and rec.has_question(question)
    live, live_refusal = widgets.live_switch(recorded)  # room mode may refuse a live run
    _, choice, _ = backend_state.backend_choice()
    backend = choice.backend if choice else "?"
    if not live:
        st.caption(escape_markdown(
            f"Offline: retrieval is recomputed from the memory and every model call that matches one recorded "
            f"with {rec.model} (for default parameters) replays. A set whose answer prompt is new still shows its "
            "retrieval, ranked passages and recall; each side says which calls replayed and which would need "
            "the model."))
    else:
        eta = estimates.compare_estimate(method, backend, (a, b))
        st.caption(escape_markdown(f"Both sets live: {eta.text()} on {backend}."))

    job = jobs.get_job(state.compare_job)
    running = job is not None and not job.finished
    if st.button("Compare", type="primary", disabled=running or not diff or not question.strip()
                 or bool(live_refusal)):
        llm, _, llm_error = (rec.replay_llm(), None, "") if not live else backend_state.job_llm()
        if llm is None:
            st.error(escape_markdown(llm_error))
        else:
            la, lb = _labels(method, a, b)
            work = compare_work(memory, question, llm, backend_state.embedder(), method,
                                        [Variant(la, a), Variant(lb, b)])
            mode, model = ("live", llm.model) if live else ("recorded", rec.model)
            job = job_owner.start_job("compare", f"comparing two {METHOD_LABELS[method]} parameter sets", work,
                                 estimate_s=estimates.compare_estimate(method, backend, (a, b)).seconds
                                 if live else 5.0,
                                 meta={"backend": llm.backend, "question": question, "record": record,
                                       "mode": mode, "model": model, "method": method})
            state.compare_job = job.id
            st.rerun()

    if running:
        job_views.job_panel(job.id)
    elif job is not None:
        if job.status == jobs.DONE:
            state.compare_result = {"variants": job.result, **{k: job.meta[k] for k in
                                                              ("question", "record", "mode", "model", "method")}}
        elif job.status == jobs.FAILED:
            job_views.job_error_view(job, "The comparison")
        elif job.status == jobs.CANCELLED:
            st.info("The comparison was cancelled.")
    if state.compare_result is not None:
        st.divider()
        compare_results(state.compare_result, memory)


def _calls_line(v: Variant) -> None:
    """Which of the side's model calls replayed from recordings and which would need the model."""
    line = "Replayed from recordings: " + (", ".join(v.replayed) or "no call")
    if v.needs_model:
        line += " · would need the model: " + ", ".join(v.needs_model)
    st.caption(escape_markdown(line + "."))


def compare_results(result: dict[str, Any], memory: Memory | None, key: str = "cmp") -> None:
    """Both runs side by side, what changed, and either run in detail."""
    variants: list[Variant] = result["variants"]
    gold = gold_of(result.get("record"), memory)
    traces = [v.trace for v in variants if v.trace is not None]
    if gold is not None and memory is not None and any(t.memory_fingerprint != memory.fingerprint() for t in traces):
        gold.chunk_ids = []  # chunk ids of another memory: score by document only
    widgets.text(result["question"], prefix=f"**{METHOD_LABELS[result['method']]}, two parameter sets:** ")
    if gold is not None:
        widgets.text(" / ".join(gold.answers), prefix="**Gold answer:** ")
    if result.get("mode") == "recorded" and traces:
        ask_views.recorded_badge(result.get("model", "?"), traces)
    for col, v in zip(st.columns(len(variants)), variants):
        with col:
            recorded = result.get("mode") == "recorded"
            if v.trace is None:
                st.subheader(escape_markdown(v.label))
                st.warning(escape_markdown(v.error))
                if recorded:
                    _calls_line(v)
                continue
            ask_views.answer_card(v.trace, gold, memory, title=v.label)
            if v.answer_missing:
                st.info(escape_markdown(v.answer_missing))
            if recorded:
                _calls_line(v)
            ask_views.overview_graph(v.trace, gold, height=380)
    st.subheader("What changed")
    a, b = variants
    scores = None
    if gold is not None and a.trace is not None and b.trace is not None:
        scores = (gold_scores(a.trace, gold, memory), gold_scores(b.trace, gold, memory))
    rows = compare.what_changed(a, b, scores=scores)
    st.dataframe(pd.DataFrame(rows, columns=["what", "A", "B", "change"]), hide_index=True, key=f"{key}_changed",
                 height=ROW_PX * (len(rows) + 1) + 3)  # every row, no inner scrolling
    ran = [v for v in variants if v.trace is not None]
    if not ran:
        return
    pick = st.segmented_control("details of", [v.label for v in ran], default=ran[0].label, key=f"{key}_pick") \
        or ran[0].label
    v = next(x for x in ran if x.label == pick)
    ask_views.trace_details(v.trace, gold, memory, key=f"{key}_{SIDES[variants.index(v)]}")
