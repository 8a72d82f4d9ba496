"""The Learn page's parts: which trace to learn from, the analogy, and the step-by-step replay.

The trace is the user's last ask (`AppState.ask_result`) or a recorded demo question replayed
from the memory's recordings (cheap: the replies are recorded, retrieval takes a moment, and the
result is cached per memory, recordings and question).
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from memrag.app import backend_state, graph_view, recording_state, url_state, widgets
from memrag.app.question_gold import gold_of
from memrag.explain import lessons as learn
from memrag.explain.learn_picture import learn_pictures
from memrag.picture import PictureEdge, PictureNode
from memrag.index.memory import Memory
from memrag.app.session import AppState
from memrag.app.view_cache import made
from memrag.llm.recordings import StaleRecording
from memrag.methods import registry
from memrag.trace import Trace
from memrag.viz import figure, look as looks
from memrag.plain_text import escape_markdown

LAST_ASK = "Your last question"
DEMO = "A recorded demo question"
GRAPH_HEIGHT = 520
GRAPH_WIDTH = 580  # the design box: the graph's column at 1,440 px (a wider column spreads the nodes)


@st.cache_resource(show_spinner="replaying a recorded demo question…", max_entries=8)
def _replayed(path: str, fingerprint: str, recorded_at: float, embedder_id: str, question: str,
              _memory: Memory, _rec: Any, _embedder: Any) -> tuple[list[Trace], str]:
    try:
        return learn.demo_traces(_memory, _rec, _embedder, question), ""
    except StaleRecording as e:
        return [], str(e)


def _recorded_at(rec: Any) -> float:
    try:
        return rec.path.stat().st_mtime
    except OSError:
        return 0.0


def pick_traces(path: str | None, memory: Memory | None) -> tuple[dict[str, Trace], dict[str, Any] | None]:
    """The source choice; returns (method → trace, the demo question's record or None)."""
    state = AppState()
    last = learn.teachable(state.ask_result.traces) if state.ask_result else {}
    rec, _ = recording_state.recordings(path)
    questions = [q for q in recording_state.demo_questions(path) if rec.has_question(q["question"])] \
        if rec is not None and memory is not None else []
    for note in url_state.restore_learn(questions, DEMO):
        st.info(escape_markdown(note))
    options = ([LAST_ASK] if last else []) + ([DEMO] if questions else [])
    if not options:
        st.info("Ask a question with NeuroPath, EcphoryRAG or HippoRAG 2 on the Ask page first, or open a memory "
                "that ships recorded demo questions (the sample memory does): its steps are replayed here.")
        st.page_link("app_pages/ask.py", label="Go to the Ask page", icon=":material/help:")
        return {}, None
    source = st.radio("learn from", options, horizontal=True, key="learn_source")
    if source == LAST_ASK:
        return last, state.ask_result.record
    i = st.selectbox("demo question", range(len(questions)), key="learn_demo",
                     format_func=lambda n: f"{questions[n].get('id', '')}: {questions[n]['question']}")
    traces, error = _replayed(str(path), memory.fingerprint(), _recorded_at(rec), backend_state.embedder_id(),
                              questions[i]["question"], memory, rec, backend_state.embedder())
    if error:
        st.warning(escape_markdown(f"This demo question cannot be replayed: {error}"))
        return {}, None
    return learn.teachable(traces), questions[i]


def analogy(method: str) -> None:
    """The paper's analogy as a table (our own text: safe as markdown)."""
    plan = learn.plans()[method]
    st.markdown(plan.intro)
    label = registry.get(method).label
    rows = [f"| in the brain | what it is | in {label} | what it is there |", "|---|---|---|---|"]
    rows += [f"| **{p.brain}** | {p.brain_means} | **{p.method}** | {p.method_means} |" for p in plan.analogies]
    st.markdown("\n".join(rows))


def _slider_key(trace: Trace) -> str:
    """A new trace starts its replay at step 1 (and never meets an old, out-of-range position)."""
    ident = f"{trace.method}|{trace.question}|{len(trace.steps)}"
    return "learn_step_" + hashlib.sha1(ident.encode("utf-8")).hexdigest()[:10]


@st.fragment
def replay(trace: Trace, gold_chunk_ids: list[int] | None, record: dict[str, Any] | None = None,
           gold_answers: tuple[str, ...] = ()) -> int:
    """The step slider, the graph at that step and what the step teaches; returns the step shown.
    A fragment: moving the slider reruns only this part of the page."""
    lessons = made("lessons", (trace,), None, lambda: learn.lessons(trace))
    if len(lessons) > 1:
        key = _slider_key(trace)
        note = url_state.learn_step(key, len(lessons))
        if note:
            st.info(escape_markdown(note))
        # no value: it starts at step 1, or where the URL put it (a value too would make Streamlit warn)
        step = st.select_slider("replay the trace step by step", options=list(range(len(lessons))),
                                format_func=lambda n: f"{n + 1}. {lessons[n].title}", key=key)
    else:
        step = 0
    url_state.write(url_state.learn_params(url_state.memory_name(AppState().active_memory), record, trace.method,
                                           step))
    lesson = lessons[step]
    # every step's picture, made once per trace: one set of nodes, so a node stays where the step before drew it
    pictures = made("learn pictures", (trace,), (tuple(gold_chunk_ids or ()), gold_answers),
                    lambda: learn_pictures(trace, gold_chunk_ids=gold_chunk_ids, gold_answers=gold_answers,
                                           names=[x.names for x in lessons]))
    left, right = st.columns([3, 2])
    with left:
        room = made("learn legend room", (trace,), (tuple(gold_chunk_ids or ()), gold_answers),
                    lambda: max(figure.legend_px(p, looks.current(), GRAPH_WIDTH) for p in pictures))
        # the wheel over the graph scrolls the page (no zoom); a click opens the panel Python writes
        chart = graph_view.Chart(looks.current(), GRAPH_HEIGHT, GRAPH_WIDTH, step=step, top=room)
        graph_view.picture_chart(trace, lambda opened: pictures[step], f"{_slider_key(trace)}_graph", chart,
                                 learn_part)
    with right:
        st.markdown(f"#### Step {step + 1} of {len(lessons)}: " + escape_markdown(lesson.title))
        if lesson.concept:
            st.markdown(f":blue-badge[{escape_markdown(lesson.concept)}]")
        if lesson.brain:
            st.markdown(lesson.brain)
        st.markdown("**In this trace**")
        widgets.text(lesson.here)
        summary = trace.steps[step].summary
        if summary:
            with st.expander("the method's own note on this step"):
                st.text(summary)
    return step


def learn_part(trace: Trace, target: PictureNode | PictureEdge, results_key: str) -> None:
    """What the step says of a clicked node or edge (its hover words: why a passage is there, its
    rank, its round), and a passage's text; the memory's facts follow in the panel."""
    if target.tooltip:
        st.text(target.tooltip)
    if isinstance(target, PictureNode) and target.kind == "passage" and target.ref.isdigit():
        c = trace.chunk(int(target.ref))
        if c is not None:
            with st.expander(escape_markdown(f"{c.title} · chunk {target.ref}"), expanded=True):
                st.text(c.text)


def _title(method: str) -> str:
    spec = registry.get(method)
    return spec.learn_title or spec.label


def learn_page(traces: dict[str, Trace], record: dict[str, Any] | None, memory: Memory | None) -> None:
    """Pick a taught method, see its analogy, replay its trace."""
    methods = list(traces)
    note = url_state.learn_method(methods)
    if note:
        st.info(escape_markdown(note))
    method = st.segmented_control("method", methods, key="learn_method", format_func=_title,
                                  default=None if "learn_method" in st.session_state else methods[0]) or methods[0]
    trace = traces[method]
    widgets.text(trace.question, prefix="**Question:** ")
    analogy(method)
    gold = gold_of(record, memory)
    same_memory = memory is not None and trace.memory_fingerprint == memory.fingerprint()
    replay(trace, gold.chunk_ids if gold is not None and same_memory else None, record,
           tuple(gold.answers) if gold is not None else ())
    st.caption(escape_markdown(learn.SOURCES))
