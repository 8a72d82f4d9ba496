"""A picture as it was drawn, kept as data: every node and edge with its place and look, and the
legend of the marks they carry. The PNG and GraphML downloads and the legend's height read this,
never the page or figure a renderer made from it, so a file is exactly the picture on screen.

Node attributes: label (the words written), title (hover text), shape (a legend shape name: dot,
square, diamond, triangle, triangleDown, star, hexagon), colour, border (#rrggbb), border_width,
size (px), x, y (screen units, y down), written (whether the label is written on the picture, not
only on hover). Edge attributes: label, title, colour, dashed, width, arrow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from memrag.picture import Picture
from memrag.viz import style
from memrag.viz.figure import Drawn
from memrag.viz.legend import EDGE, FILL, rows_of
from memrag.viz.look import Look

NODE_FIELDS = ("label", "title", "shape", "colour", "border", "border_width", "size", "x", "y", "written")
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
                   x=float(n.get("x", 0.0)), y=float(n.get("y", 0.0)), written=bool(n.get("written", True)))
    for e in edges:
        g.add_edge(str(e["source"]), str(e["target"]), key=str(e["id"]), label=str(e.get("label", "")),
                   title=str(e.get("title", "")), colour=str(e.get("colour", "#999999")),
                   dashed=bool(e.get("dashed", False)), width=float(e.get("width", 1.0)),
                   arrow=bool(e.get("arrow", True)))
    return Drawing(g, tuple(dict(i) for i in legend), legend_rows)


# plotly's marker symbols → the legend's shape names
_SHAPES = {"circle": "dot", "square": "square", "diamond": "diamond", "star": "star", "triangle-up": "triangle",
           "triangle-down": "triangleDown", "hexagon": "hexagon"}


def of_picture(picture: Picture, drawn: Drawn, look: Look) -> Drawing:
    """A typed picture as `memrag.viz.figure.draw` drew it: its nodes at their places with their marks,
    its edges, and its legend entries with the marks they name."""
    written = {w.id for w in drawn.words}
    nodes = []
    for n in picture.nodes:
        if n.id in drawn.places:
            m = style.node_mark(n, look)
            x, y = drawn.places[n.id]
            nodes.append({"id": n.id, "label": n.label, "title": n.tooltip or n.label, "shape": _SHAPES.get(m.symbol, "dot"),
                          "colour": m.fill, "border": m.ring, "border_width": m.ring_width, "size": m.size, "x": x, "y": y,
                          "written": n.id in written})
    edges = []
    for e in picture.edges:
        if e.source in drawn.places and e.target in drawn.places:
            m = style.edge_mark(e, look)
            edges.append({"id": e.id, "source": e.source, "target": e.target, "label": e.relation,
                          "title": e.tooltip or e.relation, "colour": m.colour, "dashed": m.dash != "solid",
                          "width": m.width, "arrow": False})
    legend = []
    for entry in picture.legend:
        m = style.legend_mark(entry.mark, look)
        if isinstance(m, style.EdgeMark):
            legend.append({"key": entry.mark, "mark": EDGE, "colour": m.colour, "shape": "", "dashed": m.dash != "solid",
                           "count": entry.count or 0, "text": entry.text})
        else:
            legend.append({"key": entry.mark, "mark": FILL, "colour": m.fill, "shape": _SHAPES.get(m.symbol, "dot"),
                           "dashed": False, "count": entry.count or 0, "text": entry.text})
    return drawing(nodes, edges, legend)
