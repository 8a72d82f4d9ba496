"""Learn page: the papers' brain analogies, taught by replaying a trace step by step."""

from __future__ import annotations

import streamlit as st

from memrag.app import learn_views, memory_state
from memrag.index.stale import stale_message
from memrag.plain_text import escape_markdown

st.title("Learn")
st.caption("NeuroPath is modelled on how the hippocampus maps places and plans routes; EcphoryRAG on how a cue "
           "brings a stored memory back; HippoRAG 2 on the hippocampus as an index into the neocortex. Move the "
           "slider to replay a retrieval and see which part of the analogy each step shows.")
path, memory, _ = memory_state.active_memory()
traces, record = learn_views.pick_traces(path, memory)
if traces:
    if stale := stale_message(list(traces.values()), path):  # your last question, asked before a removal
        st.warning(escape_markdown(stale))
    learn_views.learn_page(traces, record, memory)
