"""memrag's Streamlit app: `streamlit run app.py`.

The sidebar holds what every page shares — the LLM backend and why it was chosen,
the active memory, the methods' parameters and the running background jobs — and
`st.navigation` runs the page the user picked.
"""

from __future__ import annotations

import faulthandler

import streamlit as st

from memrag.assets import asset_path
from memrag.app import backend_state, heap, job_owner, memory_state, param_widgets, room, session, url_state
from memrag.app.param_widgets import METHOD_LABELS
from memrag.app.session import AppState
from memrag.app.job_views import model_state_view, running_jobs_view
from memrag.plain_text import escape_markdown

faulthandler.enable()  # a crash in the native model engine then leaves a traceback in the server log
st.set_page_config(page_title="memrag", page_icon=asset_path("icon.png"), layout="wide")
state = session.init_state()
param_widgets.init_params()
here = room.current()
exposed = room.apply(here)  # before anything can fail: error details limited in room mode
if here.problem:
    st.error(escape_markdown(f"{here.problem}. Room mode is on with no live work until that is fixed."))
if exposed:
    st.warning(escape_markdown(exposed))
page = st.navigation([
    st.Page("app_pages/start.py", title="Start", default=True),
    st.Page("app_pages/memory.py", title="Memory"),
    st.Page("app_pages/ask.py", title="Ask"),
    st.Page("app_pages/evaluate.py", title="Evaluate"),
    st.Page("app_pages/learn.py", title="Learn"),
])
url_note = url_state.restore_memory()  # a link's memory, before the sidebar shows the active one
if url_note:
    st.info(escape_markdown(url_note))

with st.sidebar:
    st.subheader("LLM")
    session.bound(st.radio, "backend", AppState.backend.key, options=["auto", "ollama", "embedded", "openai"],
                    horizontal=True, help="auto = Ollama when it answers and has the model, else the embedded "
                                          "model; openai = an OpenAI-compatible server (vLLM, llama.cpp, LM "
                                          "Studio, OpenAI), never chosen by auto.")
    if state.backend == "openai":
        session.bound(st.text_input, "Base URL", AppState.openai_base_url.key,
                        help="e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080/v1 (llama.cpp), "
                             "https://api.openai.com/v1")
        session.bound(st.text_input, "Model", AppState.openai_model.key,
                        help="The server's model id; empty = the one model a single-model server lists.")
        key_note = backend_state.server_key_note()
        session.bound(st.text_input, "API key", AppState.openai_api_key.key, type="password",
                        placeholder="set on the server" if key_note else "",
                        help="Sent to that server only; never saved in traces, recordings or caches.")
        for note in (key_note, backend_state.withheld_key_note()):
            if note:
                st.caption(escape_markdown(note))
    elif state.backend != "embedded":
        session.bound(st.text_input, "Ollama model", AppState.ollama_model.key,
                        help="Any model pulled into your Ollama.")
    if state.backend in ("auto", "ollama", "openai"):
        session.bound(st.number_input, "Extraction requests in flight", AppState.extract_parallel.key,
                        min_value=1, max_value=64, step=1,
                        help="Chunks extracted at once when building a memory (Ollama or a server; "
                             "the embedded model runs one at a time).")
    _, choice, error = backend_state.backend_choice()
    if choice is not None:
        st.caption(escape_markdown(f"using {choice.backend} / {choice.model}"))
        st.caption(escape_markdown(choice.reason))
        if choice.warning:  # before any call: the first one is the user's next click
            st.warning(escape_markdown(choice.warning.capitalize()))
    else:
        st.error(escape_markdown(error))
    backend_state.preload_model()
    model_state_view()
    if st.button("check again", help="Probe the backend again (e.g. after starting Ollama)."):
        state.llm_check += 1
        backend_state.forget_failed_preload()
        st.rerun()

    st.subheader("Memory")
    path, memory, error = memory_state.active_memory()
    if memory is not None:
        st.caption(escape_markdown(memory_state.memory_label(path)))
        st.caption(escape_markdown(backend_state.embedder_note(memory.embedder_id)))
        # A table rather than a caption line: it also loads the browser's table component with the
        # first page, so the first Ask does not wait ~1.5 s for it (bench/app_bench.py).
        st.dataframe({"": ["documents", "chunks", "entities", "triples"],
                      "count": [len(memory.documents), len(memory.chunks), len(memory.entities),
                                len(memory.triples)]}, hide_index=True, key="sidebar_memory_counts")
    elif error:
        st.error(escape_markdown(error))
    else:
        st.caption("No memory yet: pick or build one on the Memory page.")

    st.subheader("Method parameters")
    for method in METHOD_LABELS:  # display order
        with st.expander(METHOD_LABELS[method]):
            param_widgets.param_widgets(method)

    if job_owner.visible_jobs(running_only=True):
        st.subheader("Background jobs")
        running_jobs_view()

page.run()
# the modules this page imported (once per page and process), out of every later garbage collection
heap.freeze_long_lived(f"page {page.url_path}")
