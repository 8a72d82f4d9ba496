"""No graph: the same page with one line of text, for the time Streamlit itself takes to show a page."""

import streamlit as st

from _graph import graph

st.set_page_config(layout="wide")
st.text(f"ready: {len(graph()['nodes'])} nodes")
