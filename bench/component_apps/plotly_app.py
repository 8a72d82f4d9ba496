"""Candidate 1: Streamlit's own plotly chart with point selection (plotly.js ships in Streamlit)."""

import html

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from _graph import graph, echo

st.set_page_config(layout="wide")


@st.cache_resource
def figure() -> go.Figure:
    """Numbers go in as numpy arrays, which plotly sends as binary (base64), not as JSON lists."""
    g = graph()
    nodes = g["nodes"]
    x = np.array([n["x"] for n in nodes], dtype=np.float32)
    y = np.array([n["y"] for n in nodes], dtype=np.float32)
    at = {n["id"]: i for i, n in enumerate(nodes)}
    pairs = np.array([[at[s], at[t]] for s, t, _ in g["edges"]], dtype=np.int64).reshape(-1, 2)
    ex = np.column_stack([x[pairs[:, 0]], x[pairs[:, 1]], np.full(len(pairs), np.nan, np.float32)]).ravel()
    ey = np.column_stack([y[pairs[:, 0]], y[pairs[:, 1]], np.full(len(pairs), np.nan, np.float32)]).ravel()
    big = len(nodes) > 2000
    Trace = go.Scattergl if big else go.Scatter
    # SVG text reads a few tags (<b>, <a href>) and entities; WebGL text is drawn as it is
    text = (lambda s: s) if big else (lambda s: html.escape(s, quote=False))
    fig = go.Figure()
    fig.add_trace(Trace(x=ex, y=ey, mode="lines", line=dict(width=0.5, color="#bbb"), hoverinfo="skip"))
    deg = np.array([n["deg"] for n in nodes], dtype=np.float32)
    fig.add_trace(Trace(
        x=x, y=y, customdata=np.arange(len(nodes)), mode="markers",
        marker=dict(size=5 + np.minimum(deg, 30) / 2, color=[n["colour"] for n in nodes]),
        hovertext=[text(n["label"]) for n in nodes], hoverinfo="text"))
    lab = np.array([i for i, n in enumerate(nodes) if n["id"] in g["labelled"]], dtype=np.int64)
    fig.add_trace(Trace(x=x[lab], y=y[lab], mode="text", text=[text(nodes[i]["label"]) for i in lab],
                        textfont=dict(size=12), textposition="top center", hoverinfo="skip"))
    fig.update_layout(showlegend=False, height=700, margin=dict(l=0, r=0, t=0, b=0), dragmode="pan",
                      xaxis=dict(visible=False), yaxis=dict(visible=False, scaleanchor="x"),
                      clickmode="event+select")
    return fig


ev = st.plotly_chart(figure(), on_select="rerun", selection_mode="points", key="g",
                     config={"scrollZoom": True, "displaylogo": False})
points = ev.selection.points if ev else []
echo(graph()["nodes"][int(points[0]["customdata"])]["id"] if points and "customdata" in points[0] else None)
