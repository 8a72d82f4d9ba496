"""The graph every throwaway component app draws: nodes with precomputed positions, read from the
JSON file bench/graph_components.py writes (GC_GRAPH); clicks are echoed as "clicked: <id>"."""

from __future__ import annotations

import json
import os
from functools import lru_cache

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]
LABELLED = int(os.environ.get("GC_LABELLED", "300"))  # labels written on the most connected nodes


@lru_cache(maxsize=1)
def graph() -> dict:
    with open(os.environ["GC_GRAPH"]) as f:
        g = json.load(f)
    types = sorted({n["type"] for n in g["nodes"]})
    colour = {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(types)}
    for n in g["nodes"]:
        n["colour"] = colour[n["type"]]
    ranked = sorted(g["nodes"], key=lambda n: -n["deg"])
    g["labelled"] = {n["id"] for n in ranked[:LABELLED]}
    return g


def echo(clicked_id: str | None) -> None:
    import streamlit as st
    if clicked_id is not None:
        st.text(f"clicked: {clicked_id}")  # plain text: what Python got back
