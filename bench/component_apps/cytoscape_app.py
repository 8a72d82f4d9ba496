"""Candidate 3: streamlit-cytoscape (Cytoscape.js, canvas; a Streamlit v1 component in an iframe)."""

import streamlit as st
from streamlit_cytoscape import Event, NodeStyle, streamlit_cytoscape

from _graph import graph, echo

st.set_page_config(layout="wide")


@st.cache_resource
def data() -> tuple[dict, list]:
    g = graph()
    elements = {"nodes": [{"data": {"id": n["id"], "label": n["type"],
                                    "name": n["label"] if n["id"] in g["labelled"] else ""},
                           "position": {"x": n["x"] * 1000, "y": -n["y"] * 1000}} for n in g["nodes"]],
                "edges": [{"data": {"id": f"e{i}", "source": s, "target": t, "label": r}}
                          for i, (s, t, r) in enumerate(g["edges"])]}
    styles = [NodeStyle(t, c, caption="name", custom_styles={"font-size": 12})
              for t, c in sorted({(n["type"], n["colour"]) for n in g["nodes"]})]
    return elements, styles


elements, styles = data()
layout = {"name": "preset", "fit": True, "animate": False, "padding": 20}
got = streamlit_cytoscape(elements, layout=layout, node_styles=styles, height=700, key="g",
                          events=[Event("clicked", "tap", "node")])
echo((got or {}).get("data", {}).get("target_id") if isinstance(got, dict) else None)
