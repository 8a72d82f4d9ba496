"""Start page (the default): what memrag is, the two analogies, and three ways in."""

from __future__ import annotations

import streamlit as st

from memrag.app import guide_views, job_views, start_views as start
from memrag.plain_text import escape_markdown

st.title("memrag: retrieval modelled on memory")
st.markdown(start.INTRO)
for line in start.analogies():
    st.markdown(line)
st.caption(escape_markdown(start.methods_line()))

demo, build, learn = st.columns(3)
with demo:
    st.subheader("Try a demo question")
    st.caption("The sample memory (40 invented articles about the Varrow Coast) and a question with a known "
               "answer; recorded replies make it quick.")
    if st.button("Try a demo question", type="primary", disabled=not start.sample_ready(),
                 help=None if start.sample_ready() else "The sample memory is not built in this checkout."):
        start.open_demo_question()
        st.switch_page(start.ASK_PAGE)
with build:
    st.subheader("Build from your documents")
    st.caption("Upload .txt, .md, .pdf or .html files: the LLM reads them chunk by chunk and the graph grows "
               "while you watch.")
    if st.button("Build from your own documents"):
        start.open_upload()
        st.switch_page(start.MEMORY_PAGE)
with learn:
    st.subheader("Learn the analogy")
    st.caption("Replay a retrieval step by step and see which part of the brain analogy each step shows.")
    st.page_link(start.LEARN_PAGE, label="Learn the analogy", icon=":material/school:")

if start.sample_ready():
    guide_views.guide_section()

st.divider()
st.caption(escape_markdown(start.backend_line()))
job_views.model_state_view()
st.caption(escape_markdown(start.memory_line()))
