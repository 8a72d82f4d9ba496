"""The Ask page's views of finished traces: answer cards, the side-by-side comparison, each
method's overview graph and detail tabs, the LLM call inspector, the traces download."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

import pandas as pd
import streamlit as st

from memrag.app.ask_result import AskResult
from memrag.app import focus
from memrag.app.table_fit import empty, fitted_table, ranked_passages
from memrag.app.focus_layout import first_plan, focus_graphs
from memrag.app.method_views.common import gold_answers
from memrag.app.view_cache import in_background, made
from memrag.app.work import recorded_replay
from memrag.app.question_gold import FateLine, Gold, Where, gold_fate_line, gold_fates, gold_of, gold_scores
from memrag.app.param_widgets import METHOD_LABELS
from memrag.app.widgets import frame, text, wrapped_table
from memrag.methods.deviations import deviations_for
from memrag.index.memory import Memory
from memrag.methods import registry
from memrag.tracefile import traces_file_name, traces_json
from memrag.trace import Trace, call_identity, token_sum
from memrag.viz import charts, look as looks, palette, tables
from memrag import words
from memrag.plain_text import clip, escape_markdown


# ------------------------------------------------------------------ one answer
def recorded_totals(traces: Sequence[Trace]) -> tuple[float, int | None]:
    """Original seconds and tokens of the recorded calls (a call shared by methods counts once)."""
    seen: set[str] = set()
    seconds, tokens = 0.0, 0
    for t in traces:
        for c in t.llm_calls:
            ident = call_identity(c)
            if not c.cached or ident in seen:
                continue
            seen.add(ident)
            seconds += c.seconds
            tokens = token_sum((tokens, c.prompt_tokens, c.completion_tokens))
    return seconds, tokens


def recorded_badge(model: str, traces: Sequence[Trace]) -> None:
    seconds, tokens = recorded_totals(traces)
    st.badge(escape_markdown(f"recorded with {model}"), icon=":material/history:", color="violet")
    st.caption(escape_markdown(f"original run: {seconds:.1f} s and {tokens if tokens is not None else 'unknown'} "
                               "tokens on the recording model, all methods (a call they share counted once); "
                               "replayed from the memory's recordings, retrieval recomputed now"))


def time_line(trace: Trace) -> str:
    """One figure for the original run and one for this run, each named: a replay's seconds are
    retrieval plus reading recordings, never the method's speed."""
    recorded = [c for c in trace.llm_calls if c.cached]
    made_now = [c for c in trace.llm_calls if not c.cached]
    model = next((c.model for c in trace.llm_calls if c.model), "")
    on = f" on {model}" if model else ""
    if not recorded:
        return f"this run: {trace.seconds:.1f} s{on}"
    line = f"original run: {sum(c.seconds for c in trace.llm_calls):.1f} s{on} · this replay: {trace.seconds:.1f} s"
    if made_now:
        line += f" (of which {sum(c.seconds for c in made_now):.1f} s new model calls)"
    return line


def _open_step(key: str, method: str, line: FateLine | Where) -> None:
    """Select the method's detail, the tab and the step that show where a gold passage was lost, and
    the row there to highlight and bring into view."""
    st.session_state[f"{key}_pick"] = method
    st.session_state[f"{key}_{method}_tabs"] = line.tab
    step_key = registry.get(method).views.step_key
    if line.step is not None and step_key:
        st.session_state[f"{key}_{method}_{step_key}_step"] = line.step
    focus.set_focus(f"{key}_{method}", getattr(line, "row", None))


def gold_key(gold: Gold | None) -> tuple | None:
    """A gold as a cache option (its answers, documents and chunks)."""
    return None if gold is None else (tuple(gold.answers), tuple(gold.gold_docs), tuple(gold.chunk_ids))


PASSAGE_IN_BUTTON = 16  # characters of a passage title a "show where" button writes


def fate_line(trace: Trace, gold: Gold, memory: Memory | None, key: str | None) -> None:
    """The gold passages' fate in one line, with a button that opens the step that lost one."""
    line = made("gold_fate_line", (trace, memory), gold_key(gold), lambda: gold_fate_line(trace, gold, memory))
    text(line.text, prefix="**Gold:** ")
    if line.tab is None or key is None:
        return
    # where the fate shows, then the first miss and the final loss, each one click from its row; the
    # button names the view, the caption under it the step or moment (a quarter-width column at
    # 1,440 px cut the two together)
    shown = [] if any((m.tab, m.step) == (line.tab, line.step) for m in line.moments) else [
        (f"show where: {line.tab}", line, "", f"at {_step_name(trace, line.step)}" if line.step is not None else "")]
    # one pair per named passage, each button naming its passage (titles come from documents: escaped)
    # (a long title is clipped to fit a quarter-width column side by side; the tooltip names it whole)
    shown += [(f"{escape_markdown(clip(m.passage, PASSAGE_IN_BUTTON))}: {m.label}" if m.passage
               else f"show where: {m.label}", m, f"_{i}", m.text) for i, m in enumerate(line.moments)]
    for label, target, tail, under in shown:
        st.button(label, key=f"{key}_{trace.method}_fate_go{tail}", on_click=_open_step,
                  args=(key, trace.method, target), icon=":material/search:",
                  help=escape_markdown(f"opens {METHOD_LABELS.get(trace.method, trace.method)}'s details at the "
                                       f"view that shows what happened to "
                                       f"'{getattr(target, 'passage', '') or line.passage}'"))
        if under:
            st.caption(escape_markdown(under))


def _step_name(trace: Trace, step: str | int) -> str:
    return registry.get(trace.method).views.step_name(trace, step)


def answer_card(trace: Trace, gold: Gold | None, memory: Memory | None, title: str | None = None,
                key: str | None = None) -> None:
    """The method's answer, its cost, its gold scores and fates and its cited passages; `title`
    replaces the method's name as the heading (compare mode names its two parameter sets); with
    `key` (the results' widget key) the gold line can open the detail step that lost a passage."""
    st.subheader(escape_markdown(title or METHOD_LABELS.get(trace.method, trace.method)))
    a = trace.answer
    if a is None:
        st.caption("No answer step was run.")
    elif a.error:
        st.error(escape_markdown(a.error))
        st.code(a.raw_answer or "(empty reply)", language=None, wrap_lines=True)
    else:
        text(a.answer or "(empty answer)", prefix="**Answer:** ")
    tok = made("totals", (trace,), None, lambda: tables.totals_across([trace])).iloc[0]
    total = tok["total tokens"]
    st.caption(escape_markdown(f"{'unknown' if pd.isna(total) else int(total)} tokens · {len(trace.llm_calls)} "
                               f"LLM call(s), {int(tok['recorded calls'])} replayed · {time_line(trace)}"))
    if gold is not None:
        if gold.chunk_ids:
            fate_line(trace, gold, memory, key)
        s = _scores(trace, gold, memory)
        # a wrapping row of metrics sized to their figures: four fixed columns in a quarter-width
        # card cut "0.50" to "0…" on screens narrower than about 1,800 px
        row = st.container(horizontal=True, gap="medium")
        for label, v in s.items():
            row.metric(label, f"{v:.2f}" if v is not None else "–", width="content")
    if a is not None:
        with st.expander(f"Passages given to the answer ({len(a.context_chunk_ids)}, "
                         f"{len(a.cited_chunk_ids)} cited)"):
            gold_ids = set(gold.chunk_ids) if gold else set()
            for pos, cid in enumerate(a.context_chunk_ids, start=1):
                c = trace.chunk(cid)
                # by the passage's own document too: a trace of an earlier memory version keeps its marks
                is_gold = cid in gold_ids or (gold is not None and c is not None and c.doc_id in gold.gold_docs)
                marks = (" · cited" if cid in a.cited_chunk_ids else "") + (f" · {palette.GOLD_MARK} gold" if is_gold else "")
                st.markdown(f"**[{pos}]** chunk {cid}{marks} — " + escape_markdown(c.title if c else ""))
                if c:
                    st.text(clip(c.text, 600))


def _scores(trace: Trace, gold: Gold, memory: Memory | None) -> dict[str, float | None]:
    return made("gold_scores", (trace, memory), gold_key(gold), lambda: gold_scores(trace, gold, memory))


def prefetch_replay(memory: Memory, rec: Any, embedder: Any, question: str, record: dict[str, Any] | None,
                    methods: list[str], params: dict[str, Any]) -> None:
    """Replay the recorded question the page shows and make its graphs in the background while it is
    read; the Ask click then takes those traces with their graphs made (work.recorded_replay), or
    waits for the rest. A replay that fails here fails again in the click's job, which says why."""
    def work() -> None:
        traces = recorded_replay(memory, rec, embedder, question, methods, params)
        make_pictures(AskResult(traces, question, record, "recorded", rec.model), memory)

    in_background(work)


# ------------------------------------------------------------------ several answers
SECONDS_HELP = {w.label: f"{w.label}: {w.help}" for w in (words.ORIGINAL_RUN_S, words.MADE_NOW_S, words.THIS_RUN_S)}

def comparison(traces: Sequence[Trace], gold: Gold | None, memory: Memory | None, key: str) -> None:
    """Answers, scores and costs side by side, then tokens per stage as a table and a chart."""
    rows = []
    for t in traces:
        row = {"method": METHOD_LABELS.get(t.method, t.method), "answer": t.answer.answer if t.answer else "",
               "LLM calls": len(t.llm_calls), tables.ORIGINAL_S: round(sum(c.seconds for c in t.llm_calls), 2),
               words.THIS_RUN_S.label: round(t.seconds, 2)}
        if gold is not None:
            row.update(_scores(t, gold, memory))
        rows.append(row)
    fitted_table(frame(rows), wrap=["answer"], help=SECONDS_HELP)
    cost_tabs(traces, key)


@st.fragment
def cost_tabs(traces: Sequence[Trace], key: str) -> None:
    """Tokens by method as a table or a chart; switching reruns only these tabs."""
    # The chart sits in a tab drawn only when opened: plotly's first draw holds the browser's main
    # thread ~1.5 s, which delayed the method graphs next to the answers (bench/app_bench.py).
    labels = ["Tokens by method", "As a chart"]
    for label, tab in zip(labels, st.tabs(labels, key=f"{key}_cost_tabs", on_change="rerun")):
        with tab:
            if not tab.open:
                continue
            if label == labels[0]:
                # one trace per method here: the "traces" column says nothing on this page
                fitted_table(made("totals", tuple(traces), None, lambda: tables.totals_across(traces)),
                             hide=["traces"], help=SECONDS_HELP, key=f"{key}_totals")
            else:
                st.plotly_chart(charts.tokens_chart(traces), key=f"{key}_chart")


OVERVIEW_HEIGHT = 420


def overview_graph(trace: Trace, gold: Gold | None, height: int = OVERVIEW_HEIGHT) -> None:
    """One picture per method for the side-by-side view (its views module): NeuroPath's paths,
    EcphoryRAG's activation, HippoRAG 2's PageRank; dense gets its ranked head as a table (its graph,
    a star of question → passages, says no more, and every graph frame costs the browser ~0.3 s
    while the others draw)."""
    try:
        with gold_answers(gold.answers if gold else ()):  # a picture may name the answer's entity
            registry.get(trace.method).views.overview(trace, gold.chunk_ids if gold else None, height)
    except (ValueError, TypeError, KeyError, OverflowError) as e:  # a trace from a file the checks let by
        st.warning(escape_markdown(f"This trace's picture cannot be drawn: {clip(str(e), 300)}"))


# ------------------------------------------------------------------ one trace in detail
DetailTab = Callable[[Trace, Gold | None, Memory | None, Iterable[int] | None, str], None]


def _tokens_tab(trace: Trace, gold: Gold | None, memory: Memory | None, ids: Iterable[int] | None, key: str) -> None:
    fitted_table(made("tokens_by_stage", (trace,), None, lambda: tables.tokens_by_stage(trace)), help=SECONDS_HELP)
    st.plotly_chart(charts.tokens_chart([trace], title=f"Tokens by stage: {trace.method}"), key=f"{key}_tokchart")


def _gold_tab(trace: Trace, gold: Gold | None, memory: Memory | None, ids: Iterable[int] | None, key: str) -> None:
    st.caption("Where each gold passage was found or lost (k = 5).")
    wrapped_table(made("gold_fates", (trace, memory), gold_key(gold), lambda: gold_fates(trace, gold, memory)),
                  ["detail"])


def _deviations_tab(trace: Trace, gold: Gold | None, memory: Memory | None, ids: Iterable[int] | None,
                    key: str) -> None:
    devs = frame(deviations_for(trace.method))
    wrapped_table(devs, [c for c in devs.columns if devs[c].map(lambda v: len(str(v))).max() > 40])


# The tabs of one trace, in order, each with its view: a label without a view is an error, never
# another tab's view.
DETAIL_TABS: dict[str, DetailTab] = {
    "Retrieval": lambda trace, gold, memory, ids, key: registry.get(trace.method).views.detail(trace, ids, key),
    "Ranked passages": lambda trace, gold, memory, ids, key: ranked_view(trace, ids, key),
    "Tokens": _tokens_tab,
    "LLM calls": lambda trace, gold, memory, ids, key: llm_inspector(trace, key),
    "Gold": _gold_tab,
    "Deviations from the paper": _deviations_tab,
}
NEEDS_GOLD = {"Gold"}


def detail_tab(label: str) -> DetailTab:
    """The view of the tab called `label`; LookupError for a label no view is registered for."""
    try:
        return DETAIL_TABS[label]
    except KeyError:
        raise LookupError(f"no view for the tab {label!r}; known: {', '.join(DETAIL_TABS)}") from None


def detail_labels(gold: Gold | None) -> list[str]:
    return [label for label in DETAIL_TABS if gold is not None or label not in NEEDS_GOLD]


def trace_details(trace: Trace, gold: Gold | None, memory: Memory | None, key: str) -> None:
    """Everything about one method's run, in lazily computed tabs (only the open one is drawn)."""
    labels = detail_labels(gold)
    tabs = dict(zip(labels, st.tabs(labels, key=f"{key}_tabs", on_change="rerun")))
    ids = gold.chunk_ids if gold else None
    for label, tab in tabs.items():
        with tab, gold_answers(gold.answers if gold else ()):
            if tab.open:
                detail_tab(label)(trace, gold, memory, ids, key)
    if trace.flags:
        with st.expander(f"{len(trace.flags)} note(s) from the method"):
            for f in trace.flags:
                text(f)


def ranked_view(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    ids = tuple(gold_ids) if gold_ids is not None else None
    ranked, row = made("ranked_table", (trace,), ids, lambda: tables.ranked_table(trace, ids)), focus.focused(key)
    if row in set(ranked["chunk"]):  # "show where" chose a passage of the list: its row, in view
        with st.container(key=focus.anchor_key(key), border=True):
            st.caption("The passage 'show where' points at, highlighted in the list below:")
            ranked_passages(focus.highlighted(ranked[ranked["chunk"] == row], "chunk", row))
        focus.scroll_once(key)
    ranked_passages(focus.highlighted(ranked, "chunk", row) if row in set(ranked["chunk"]) else ranked)
    cited = [c.chunk_id for c in trace.chunks]
    if cited:
        cid = st.selectbox("read a passage", cited, key=f"{key}_read")
        c = trace.chunk(cid)
        st.text(c.title)
        st.text(c.text)


def llm_inspector(trace: Trace, key: str) -> None:
    """Every LLM call of the trace: a table, then one call in full (its model and backend are named
    there, and in the table only when the calls differ)."""
    calls = made("llm_calls_table", (trace,), None, lambda: tables.llm_calls_table(trace))
    same = [c for c in ("model", "backend") if calls[c].nunique() <= 1]
    fitted_table(calls, wrap=["stage", "reply"], hide=same + empty(calls, ["parse errors"]))
    if not trace.llm_calls:
        return
    i = st.selectbox("inspect call", list(range(len(trace.llm_calls))),
                     format_func=lambda n: f"#{n} {words.stage_name(trace.llm_calls[n].stage)}", key=f"{key}_call")
    c = trace.llm_calls[i]
    st.caption(escape_markdown(
        f"{words.stage_name(c.stage)} ({c.stage}) · {tables.origin(c)} · ok={c.ok} · retries {c.retries} · prompt {c.prompt_tokens} "
        f"(cached prefix {c.prompt_tokens_cached}) + completion {c.completion_tokens} tokens · {c.seconds:.2f} s · "
        f"{c.backend}/{c.model}" + (" · shared by methods" if c.shared else "")))
    for m in c.messages:
        st.caption(escape_markdown(m.get("role", "?")))
        st.code(m.get("content", ""), language=None, wrap_lines=True)
    st.caption("raw reply")
    st.code(c.raw_reply or "(empty)", language=None, wrap_lines=True)
    for err in c.parse_errors:
        st.error(escape_markdown(err))


@st.fragment
def details(traces: Sequence[Trace], gold: Gold | None, memory: Memory | None, key: str, cards: bool) -> None:
    """The method picker and that method's detail tabs (with `cards`, its answer card above them)."""
    methods = [t.method for t in traces]
    pick = st.segmented_control("details of", methods, key=f"{key}_pick",
                                default=None if f"{key}_pick" in st.session_state else methods[0],
                                format_func=lambda m: METHOD_LABELS.get(m, m)) or methods[0]
    trace = next(t for t in traces if t.method == pick)
    if cards:
        answer_card(trace, gold, memory, key=key)
    trace_details(trace, gold, memory, key=f"{key}_{pick}")


# ------------------------------------------------------------------ an ask's results
def result_gold(result: AskResult, memory: Memory | None) -> tuple[Gold | None, bool]:
    """(the result's gold, whether its traces come from another memory: then its chunk ids are
    another memory's, and gold is matched by document only)."""
    gold = gold_of(result.record, memory)
    if gold is not None and memory is not None and any(t.memory_fingerprint != memory.fingerprint()
                                                       for t in result.traces):
        gold.chunk_ids = []
        return gold, True
    return gold, False


def make_pictures(result: AskResult, memory: Memory | None) -> None:
    """Make the graphs `ask_results` draws first — the focus layout's pictures (its default view),
    and the first method's Retrieval tab — without showing them (a prefetch: no Streamlit call): each
    typed picture's layout into memrag.viz.layout's keeping; the page's own draw then finds it made."""
    gold, _ = result_gold(result, memory)
    ids = gold.chunk_ids if gold else None
    with gold_answers(gold.answers if gold else ()):  # as the page draws them: part of what a picture is
        for trace, look, height in first_plan(result.traces):
            with looks.drawing(look):  # the look is part of a picture's cache key
                picture = registry.get(trace.method).views.overview_picture(trace, ids, height)
                if picture is not None:
                    picture.make(trace)
        if result.traces:
            first = result.traces[0]
            picture = registry.get(first.method).views.first_detail_picture(first, ids)
            if picture is not None:
                picture.make(first)


ANSWERS_IN_VIEW = "ask_answers_in_view"


def bring_answers_into_view() -> None:
    """Called when a new ask's answers arrive: the next draw of the results scrolls their cards into
    view (at 1,440 × 900 they start below the fold, under the question form)."""
    st.session_state[ANSWERS_IN_VIEW] = True


@st.fragment
def ask_results(result: AskResult, memory: Memory | None, key: str = "res") -> None:
    """A finished ask (or traces opened from a file): answers side by side or one at a time,
    costs, and one method in detail; a download of the traces as JSON.

    A fragment: its own widgets ("view", "show where") rerun these results, not the page above
    them; the details are a fragment inside it, so a tab or step reruns only the details."""
    traces = result.traces
    gold, other_memory = result_gold(result, memory)
    if other_memory:
        st.caption("These traces come from another memory: gold passages are matched by document only.")
    answers = st.container(key=f"{key}_answers")  # what a new ask scrolls into view
    with answers:
        text(result.question, prefix="**Question:** ")
        if gold is not None:
            text(" / ".join(gold.answers), prefix="**Gold answer:** ")
        if result.mode == "recorded":
            recorded_badge(result.model, traces)
        # the focus layout first: a presenter gets one large labelled graph and the others small, unasked
        view = st.segmented_control("view", ["Focus", "Side by side", "One at a time"], default="Focus",
                                    key=f"{key}_view") if len(traces) > 1 else "One at a time"
    side = view != "One at a time"
    if st.session_state.pop(ANSWERS_IN_VIEW, False):
        focus.scroll_to(f"{key}_answers")
    if side:
        with answers:
            columns = st.columns(len(traces))
        # every answer card first, then the graphs under them: the browser shows each element as the
        # run makes it, and a picture made now (a layout, ~0.1-0.7 s) held back the next column's answer
        for col, t in zip(columns, traces):
            with col:
                answer_card(t, gold, memory, key=key)
        for col, t in zip(columns, traces if view != "Focus" else []):
            with col:
                overview_graph(t, gold)
        if view == "Focus":
            focus_graphs(traces, gold, key, overview_graph)
        comparison(traces, gold, memory, key)
    details(traces, gold, memory, key, cards=not side)
    meta = result.file_meta()
    # a callable: the ~200 KB of JSON is made when clicked, not sent with every rerun of the page
    st.download_button("Download these traces (JSON)", lambda: traces_json(traces, meta), file_name=traces_file_name(traces, meta),
                       mime="application/json", key=f"{key}_download")
