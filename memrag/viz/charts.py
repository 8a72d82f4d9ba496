"""Plotly figures (Streamlit serves plotly itself, so they work offline; no geo charts)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from memrag.methods.registry import label_of
from memrag.trace import Trace
from memrag.viz.tables import ORIGINAL_S, tokens_by_stage


def _plain(text: str) -> str:
    # plotly interprets a few HTML-like tags in labels; our labels are our own stage
    # and method names, but keep angle brackets from ever reading as tags
    return str(text).replace("<", "‹").replace(">", "›")


def tokens_chart(traces: Sequence[Trace], title: str = "Tokens by stage") -> go.Figure:
    """Stacked bars: one bar per method, one segment per stage; recorded (response-cache)
    segments are hatched, fresh ones solid. Traces of the same method are summed.
    Stages whose token counts are unknown are left out and named in a note."""
    methods: list[str] = []
    stages: list[str] = []
    values: dict[tuple[str, str, str], list[float]] = {}  # (stage, origin, method) -> [tokens, calls, seconds]
    unknown: set[str] = set()
    for t in traces:
        if t.method not in methods:
            methods.append(t.method)
        for row in tokens_by_stage(t).to_dict("records"):
            stage, origin = row["stage"], row["origin"]
            if stage not in stages:
                stages.append(stage)
            total = row["total tokens"]
            if pd.isna(total):
                unknown.add(stage)
                continue
            v = values.setdefault((stage, origin, t.method), [0.0, 0.0, 0.0])
            v[0] += int(total)
            v[1] += row["calls"]
            v[2] += row[ORIGINAL_S]
    palette = qualitative.Safe + qualitative.Pastel
    fig = go.Figure()
    for i, stage in enumerate(stages):
        colour = palette[i % len(palette)]
        for origin in ("fresh", "recorded"):
            cells = [values.get((stage, origin, m)) for m in methods]
            if not any(cells):
                continue
            fig.add_trace(go.Bar(
                name=_plain(f"{stage} ({origin})"), x=[_plain(label_of(m)) for m in methods],
                y=[c[0] if c else None for c in cells],
                customdata=[[c[1], round(c[2], 2)] if c else [0, 0] for c in cells],
                marker={"color": colour, "pattern": {"shape": "/" if origin == "recorded" else ""}},
                legendgroup=_plain(stage),
                hovertemplate=(_plain(stage) + f" ({origin})<br>%{{y}} tokens in %{{customdata[0]}} call(s), "
                               "%{customdata[1]} s" + (" in the original run" if origin == "recorded" else "")
                               + "<extra></extra>"),
            ))
    layout: dict = {"barmode": "stack", "title": {"text": _plain(title)}, "yaxis": {"title": {"text": "tokens"}},
                    "xaxis": {"title": {"text": "method"}}, "legend": {"title": {"text": "stage (hatched = recorded)"}}}
    if unknown:
        layout["annotations"] = [{"text": _plain("token counts unknown for: " + ", ".join(sorted(unknown))),
                                  "xref": "paper", "yref": "paper", "x": 0, "y": 1.08, "showarrow": False}]
    fig.update_layout(**layout)
    return fig
