"""A picture as it was drawn, kept as data: every node and edge with its place and look, and the
legend of the marks they carry. The PNG and GraphML downloads and the legend's height read this,
never the page or figure a renderer made from it, so a file is exactly the picture on screen.

Node attributes: label (the words written), title (hover text), shape (a legend shape name: dot,
square, diamond, triangle, triangleDown, star, hexagon), colour, border (#rrggbb), border_width,
size (px), x, y (screen units, y down). Edge attributes: label, title, colour, dashed, width, arrow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from memrag.viz.legend import rows_of

NODE_FIELDS = ("label", "title", "shape", "colour", "border", "border_width", "size", "x", "y")
EDGE_FIELDS = ("label", "title", "colour", "dashed", "width", "arrow")


@dataclass(frozen=True)
class Drawing:
    """The drawn graph (a MultiDiGraph keyed by edge id) and its legend items (`memrag.viz.legend`)."""

    graph: nx.MultiDiGraph
    legend: tuple[Mapping[str, Any], ...] = ()
    legend_rows: int = 0  # lines the legend was pinned to (0: as many as its items take)

    def rows(self, chars_per_row: int = 110) -> int:
        """Lines the legend takes: those it was pinned to, or about as many as its items take in a
        frame as wide as a Streamlit column."""
        return self.legend_rows if self.legend_rows > 0 else rows_of(self.legend, chars_per_row)


def drawing(nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]],
            legend: Sequence[Mapping[str, Any]] = (), legend_rows: int = 0) -> Drawing:
    """A Drawing from node records (`id` plus NODE_FIELDS) and edge records (`id`, `source`,
    `target` plus EDGE_FIELDS); a field left out gets a plain default."""
    g = nx.MultiDiGraph()
    for n in nodes:
        g.add_node(str(n["id"]), label=str(n.get("label", "")), title=str(n.get("title", "")),
                   shape=str(n.get("shape", "dot")), colour=str(n.get("colour", "#999999")),
                   border=str(n.get("border", n.get("colour", "#999999"))),
                   border_width=float(n.get("border_width", 1.0)), size=float(n.get("size", 16.0)),
                   x=float(n.get("x", 0.0)), y=float(n.get("y", 0.0)))
    for e in edges:
        g.add_edge(str(e["source"]), str(e["target"]), key=str(e["id"]), label=str(e.get("label", "")),
                   title=str(e.get("title", "")), colour=str(e.get("colour", "#999999")),
                   dashed=bool(e.get("dashed", False)), width=float(e.get("width", 1.0)),
                   arrow=bool(e.get("arrow", True)))
    return Drawing(g, tuple(dict(i) for i in legend), legend_rows)
