"""Candidate 2: streamlit-sigmajs (Sigma.js, WebGL; a Streamlit v2 component)."""

import streamlit as st
from st_sigma import DisplayConfig, GraphConfig, LayoutConfig, sigma_graph

from _graph import graph, echo

st.set_page_config(layout="wide")


@st.cache_resource
def data() -> dict:
    g = graph()
    return {"nodes": [{"id": n["id"], "labels": [n["type"]],
                       "properties": {"name": n["label"], "x": n["x"], "y": n["y"],
                                      "size": 3 + min(n["deg"], 30) / 3}} for n in g["nodes"]],
            "edges": [{"id": f"e{i}", "source": s, "target": t, "type": r, "properties": {}, "directed": True}
                      for i, (s, t, r) in enumerate(g["edges"])]}


config = GraphConfig(display=DisplayConfig(node_size_field="size", node_labels="auto", node_label_size=12),
                     layout=LayoutConfig(name="none", node_x_field="x", node_y_field="y",
                                         dynamic_after_drag=False))
result = sigma_graph(data(), height=700, config=config, key="g")
clicked = getattr(result, "clicked", None)
echo(clicked["id"] if clicked and clicked.get("type") == "node" else None)
