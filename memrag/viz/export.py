"""A drawn graph as files to keep: GraphML (networkx) and PNG (matplotlib, drawn on the server).

Both read the node and edge records embedded in the page `graph_html.render` made, so an export
is exactly the picture on screen: the same nodes, positions, colours, shapes, labels and legend.
"""

from __future__ import annotations

import io
import re
from typing import Any

import networkx as nx

from memrag.viz.graph_html import graph_data
from memrag.viz.legend import EDGE, FILL, RING, legend_items

# vis-network shapes → matplotlib markers
_MARKERS = {"dot": "o", "square": "s", "diamond": "D", "triangle": "^", "triangleDown": "v", "star": "*",
            "hexagon": "h", "box": "s", "ellipse": "o"}
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


def to_networkx(page: str) -> nx.MultiDiGraph:
    """The drawn graph with each node's label, hover text, group colour, shape and position."""
    nodes, edges = graph_data(page)
    g = nx.MultiDiGraph()
    for n in nodes:
        g.add_node(str(n["id"]), label=str(n.get("label", "")).strip(), title=str(n.get("title", "")),
                   shape=str(n.get("shape", "")), colour=str(n["color"]["background"]),
                   border=str(n["color"]["border"]), x=float(n.get("x", 0.0)), y=float(n.get("y", 0.0)))
    for e in edges:
        g.add_edge(str(e["from"]), str(e["to"]), key=str(e.get("id", "")), label=str(e.get("label", "")),
                   title=str(e.get("title", "")), colour=str(e["color"]["color"]), dashed=bool(e.get("dashes")),
                   width=float(e.get("width", 1.0)))
    return g


def graphml_bytes(page: str) -> bytes:
    """The drawn graph as a GraphML file (UTF-8)."""
    buffer = io.BytesIO()
    nx.write_graphml(to_networkx(page), buffer, encoding="utf-8")
    return buffer.getvalue()


def _colour(value: str) -> str:
    return value if _HEX.match(value or "") else "#999999"


def png_bytes(page: str, *, width_in: float = 11.0, dpi: int = 110) -> bytes:
    """The drawn graph as a PNG (see `figure`)."""
    buffer = io.BytesIO()
    figure(page, width_in=width_in, dpi=dpi).savefig(buffer, format="png")
    return buffer.getvalue()


def figure(page: str, *, width_in: float = 11.0, dpi: int = 110) -> Any:
    """The drawn graph as a matplotlib Figure: same positions (y down, as on screen), colours,
    shapes, written node labels, arrows and relation labels, and the legend below it."""
    import matplotlib

    matplotlib.use("Agg")  # no display on a server
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    nodes, edges = graph_data(page)
    pos = {n["id"]: (float(n.get("x", 0.0)), -float(n.get("y", 0.0))) for n in nodes}
    fig = Figure(figsize=(width_in, width_in * 0.72), dpi=dpi)
    ax = fig.add_axes((0.01, 0.16, 0.98, 0.83))
    ax.set_axis_off()
    for e in edges:
        (x0, y0), (x1, y1) = pos[e["from"]], pos[e["to"]]
        colour = _colour(e["color"]["color"])
        arrow = (e.get("arrows") or {}).get("to", {}).get("enabled", True)
        # an arrow as on screen (its head stops short of the target's marker), then the relation at the middle
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), zorder=1,
                    arrowprops={"arrowstyle": "-|>" if arrow else "-", "color": colour, "shrinkA": 6, "shrinkB": 7,
                                "linewidth": float(e.get("width", 1)) * 0.7, "mutation_scale": 9,
                                "linestyle": "--" if e.get("dashes") else "-"})
        label = str(e.get("label", "")).strip()
        if label:
            ax.annotate(_literal(label), ((x0 + x1) / 2, (y0 + y1) / 2), ha="center", va="center", fontsize=5.5,
                        color="#555555", zorder=4,
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    for n in nodes:
        x, y = pos[n["id"]]
        ax.scatter([x], [y], s=float(n.get("size", 16)) * 9, marker=_MARKERS.get(n.get("shape"), "o"),
                   c=_colour(n["color"]["background"]), edgecolors=_colour(n["color"]["border"]),
                   linewidths=float(n.get("borderWidth", 1)) * 0.6, zorder=2)
        label = str(n.get("label", "")).strip()
        if label:
            ax.annotate(_literal(label), (x, y), xytext=(0, -11), textcoords="offset points", ha="center", va="top",
                        fontsize=7, color="#222222", zorder=3)
    if pos:
        ax.set_aspect("equal", adjustable="datalim")
        ax.margins(0.06)
    handles = [_legend_handle(item, Line2D) for item in legend_items(page)]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    return fig


def _literal(text: str) -> str:
    """Text matplotlib draws as written ("$" would start mathtext)."""
    return text.replace("$", r"\$")


def _legend_handle(item: dict[str, Any], line: Any) -> Any:
    colour = _colour(item["colour"])
    item = {**item, "text": _literal(item["text"])}
    if item["mark"] == EDGE:
        return line([0], [0], color=colour, linestyle="--" if item["dashed"] else "-", label=item["text"])
    if item["mark"] == FILL:  # a fill listed with its shape (one sign) keeps that shape
        return line([0], [0], marker=_MARKERS.get(item.get("shape") or "dot", "o"), color="none", markerfacecolor=colour, markeredgecolor=colour,
                    label=item["text"])
    if item["mark"] == RING:
        return line([0], [0], marker="o", color="none", markerfacecolor="white", markeredgecolor=colour,
                    markeredgewidth=2, label=item["text"])
    return line([0], [0], marker=_MARKERS.get(item["shape"], "o"), color="none", markerfacecolor="#777777",
                markeredgecolor="#777777", label=item["text"])
