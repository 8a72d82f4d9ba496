"""Ask page: a demo or free question, every registered method side by side, every step shown;
or, in compare mode, one method under two parameter sets."""

from __future__ import annotations

import streamlit as st

from memrag.methods import registry
from memrag.app import (ask_views, backend_state, compare_views, estimates, graph_view, guide_views, job_owner,
                        job_views, jobs, memory_state, param_widgets, recording_state, session, url_state, widgets)
from memrag.app.ask_result import AskResult
from memrag.app.work import ask_work
from memrag.app.param_widgets import METHOD_LABELS
from memrag.app.session import AppState
from memrag.index.stale import stale_message
from memrag.tracefile import read_traces
from memrag.plain_text import escape_markdown

ORDER = registry.DISPLAY_ORDER
MODES = ("Methods side by side", "Compare parameter sets")
KINDS = ("Demo question", "Your own question")
REPLAY_WAIT_S = 5.0
state = AppState()
st.title("Ask")

path, memory, error = memory_state.active_memory()
if memory is None:
    st.info(escape_markdown(error) if error else "Open or build a memory on the Memory page first.")
    st.page_link("app_pages/memory.py", label="Go to the Memory page", icon=":material/hub:")
    st.stop()
rec, rec_error = recording_state.recordings(path)
if rec_error:
    st.warning(escape_markdown(rec_error))

# ------------------------------------------------------------------ the question
questions = recording_state.demo_questions(path)
replay_from_url, url_notes = url_state.restore_ask(questions, ORDER, KINDS)
for note in url_notes:
    st.info(escape_markdown(note))
# each widget starts from its session value every run (session.bound): a first visit looks like every other
kind = session.bound(st.radio, "Question", AppState.ask_kind.key, widget_key="ask_kind",
                     options=([KINDS[0]] if questions else []) + [KINDS[1]], horizontal=True)
record = None
if kind == KINDS[0]:
    known = guide_views.known_guide(path, memory)  # tags only once the Start page worked the guide out
    if state.ask_demo is None:  # the guide's pick until the user or a link picks one
        state.ask_demo = guide_views.default_index(questions, known)
    i = session.bound(st.selectbox, "demo question", AppState.ask_demo.key, widget_key="ask_demo",
                      options=range(len(questions)),
                      format_func=lambda n: guide_views.question_label(questions[n], known))
    record, question = questions[i], questions[i]["question"]
else:
    question = session.bound(st.text_area, "your question", AppState.ask_free.key, widget_key="ask_free",
                             max_chars=1000)
memory_name = url_state.memory_name(path)
if st.segmented_control("mode", MODES, default=MODES[0], key="ask_mode") == MODES[1]:
    url_state.write(url_state.ask_params(memory_name, record, question, ORDER, ORDER, asked=False))
    compare_views.compare_mode(memory, question, record, rec)
    st.stop()
chosen = session.bound(st.pills, "methods", AppState.ask_methods.key, widget_key="ask_methods", options=ORDER,
                       selection_mode="multi", format_func=lambda m: METHOD_LABELS[m]) or []
methods = [m for m in ORDER if m in chosen]

recorded = rec is not None and bool(question.strip()) and rec.has_question(question)
live, live_refusal = widgets.live_switch(recorded)
_, choice, llm_error = backend_state.backend_choice()
backend = choice.backend if choice else "?"
changed = {METHOD_LABELS[m]: param_widgets.changed_params(m) for m in methods if param_widgets.changed_params(m)}
if not live:
    st.caption(escape_markdown(f"Replays the replies recorded with {rec.model}; retrieval is recomputed now."))
    if changed:
        st.warning(escape_markdown(f"The recordings were made with default parameters and you changed {changed}: "
                                   "calls the recordings lack will fail. Switch on 'run live' to ask the model."))
elif methods:
    chosen = {m: param_widgets.method_params(m) for m in methods}
    eta = estimates.ask_estimate(methods, backend, chosen)
    st.caption(escape_markdown(f"A live ask makes about {estimates.expected_ask_calls(methods, chosen)} LLM calls: "
                               f"{eta.text()} on {backend}."))

job = jobs.get_job(state.ask_job)
running = job is not None and not job.finished


def start_ask() -> None:
    """Ask every chosen method in a background job. A replay is waited for here and shown by the
    rest of this run (one page run per click, not two); a live ask reruns the page, whose Ask
    button is then off while the job runs."""
    llm, choice, llm_error = (rec.replay_llm(), None, "") if not live else backend_state.job_llm()
    if llm is None:
        st.error(escape_markdown(llm_error))
    else:
        params = {m: param_widgets.method_params(m) for m in methods}
        mode, model = ("live", llm.model) if live else ("recorded", rec.model)
        work = ask_work(memory, question, llm, backend_state.embedder(), methods, params,
                        replay_of=None if live else rec)
        job = job_owner.start_job("ask", f"asking {len(methods)} method(s)", work,
                             estimate_s=estimates.ask_estimate(methods, backend, params).seconds
                             if live else 5.0,
                             meta={"backend": llm.backend, "question": question, "record": record,
                                   "mode": mode, "model": model})
        state.ask_job, state.loaded_traces = job.id, None
        # a replay takes about a second: wait for it here rather than draw a progress bar and pick
        # the result up on the next poll; anything still running reruns the page (Ask button off)
        if live or not job.wait(timeout=REPLAY_WAIT_S):
            st.rerun()


ready_embedder = backend_state.loaded_embedder()
shown_now = state.ask_result is not None and state.ask_result.question == question and \
    [t.method for t in state.ask_result.traces] == methods
if recorded and not live and methods and not changed and not running and not shown_now and ready_embedder is not None:
    # replayed and drawn while the question is read: the click shows it (the same inputs, the same traces);
    # not with changed parameters, whose replay may lack recorded calls (the page warns above), nor for
    # the answers on show (their graphs are made)
    ask_views.prefetch_replay(memory, rec, ready_embedder, question, record, methods,
                              {m: param_widgets.method_params(m) for m in methods})
asking = st.button("Ask", type="primary", disabled=running or not methods or not question.strip()
                   or bool(live_refusal))
if not methods:
    st.caption("No method is chosen: pick one or more above to ask.")
if not asking and replay_from_url and methods and not running and (not recorded or live):
    st.info("The link showed answers this memory has no recording of: press Ask to ask again.")
# a link or reload that showed answers replays them (this run shows them, with any note on the
# link's values above); a URL never asks the model live
elif asking or (replay_from_url and methods and not running):
    start_ask()
    job = jobs.get_job(state.ask_job)
    running = job is not None and not job.finished

# ------------------------------------------------------------------ progress, then results
if running:
    job_views.job_panel(job.id)
elif job is not None:
    if job.status == jobs.DONE and (state.ask_result is None or state.ask_result.traces is not job.result):
        state.ask_result = AskResult.of_job(job)  # once: the same traces keep their drawn pictures
        ask_views.bring_answers_into_view()
    elif job.status == jobs.FAILED:
        job_views.job_error_view(job, "The ask")
    elif job.status == jobs.CANCELLED:
        st.info("The ask was cancelled.")
answered = state.ask_result
url_state.write(url_state.ask_params(memory_name, record, question, methods, ORDER, asked=(
    answered is not None and answered.question == question and [t.method for t in answered.traces] == methods)))

with st.expander("Open traces from a file"):
    upload = st.file_uploader("a memrag traces file (.json)", type=["json"], key="ask_trace_file")
    if upload is not None and st.button("Open these traces"):
        try:
            traces, meta = read_traces(upload.getvalue())
        except ValueError as e:
            st.error(escape_markdown(str(e)))
        else:
            record = next((q for q in questions if q.get("id") == meta.get("qid")), None)
            state.loaded_traces = AskResult(traces, traces[0].question, record, "file", meta.get("model", ""))

shown = state.loaded_traces or state.ask_result
if shown is None:  # the pictures an ask brings are plotly charts: the browser loads plotly now
    graph_view.warm_renderer()
else:
    st.divider()
    if shown is state.loaded_traces:
        st.caption("Showing traces opened from a file.")
    if stale := stale_message(shown.traces, path):  # made before a document was added or removed
        st.warning(escape_markdown(stale))
    ask_views.ask_results(shown, memory)
    from memrag.app import ask_again_views  # under the answers: what an edit changed, or ask again

    ask_again_views.under_answers(shown, memory, path, rec, live)
