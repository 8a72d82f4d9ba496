"""A drawn graph as files to keep: GraphML (networkx) and PNG (matplotlib, drawn on the server).

Both read the `Drawing` a renderer kept of what it drew (data, never its page or figure), so an
export is the picture on screen: the same nodes, positions, colours, shapes, labels and legend.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any

import networkx as nx

from memrag.plain_text import clip
from memrag.viz.drawing import Drawing
from memrag.viz.legend import EDGE, FILL, RING

# the drawing's shape names (memrag.viz.drawing) → matplotlib markers
_MARKERS = {"dot": "o", "square": "s", "diamond": "D", "triangle": "^", "triangleDown": "v", "star": "*",
            "hexagon": "h", "box": "s", "ellipse": "o"}
LABEL_CHARS = 40  # of a name written on the PNG (GraphML keeps all of it)
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


def graphml_bytes(drawn: Drawing) -> bytes:
    """The drawn graph as a GraphML file (UTF-8): each node's label, hover text, colour, shape and
    position, each edge's relation, hover text and look."""
    buffer = io.BytesIO()
    nx.write_graphml(_xml_safe(drawn.graph), buffer, encoding="utf-8")
    return buffer.getvalue()


# Characters XML 1.0 cannot hold at all (a hostile name may carry them): written as U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_safe(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    def clean(attrs: dict[str, Any]) -> dict[str, Any]:
        return {k: _NOT_XML.sub("\ufffd", v) if isinstance(v, str) else v for k, v in attrs.items()}

    out = nx.MultiDiGraph()
    out.add_nodes_from((_NOT_XML.sub("\ufffd", n), clean(a)) for n, a in g.nodes(data=True))
    out.add_edges_from((_NOT_XML.sub("\ufffd", u), _NOT_XML.sub("\ufffd", v), _NOT_XML.sub("\ufffd", k), clean(a))
                       for u, v, k, a in g.edges(keys=True, data=True))
    return out


def _colour(value: str) -> str:
    return value if _HEX.match(value or "") else "#999999"


def png_bytes(drawn: Drawing, *, width_in: float = 11.0, dpi: int = 110) -> bytes:
    """The drawn graph as a PNG (see `figure`)."""
    buffer = io.BytesIO()
    figure(drawn, width_in=width_in, dpi=dpi).savefig(buffer, format="png")
    return buffer.getvalue()


def figure(drawn: Drawing, *, width_in: float = 11.0, dpi: int = 110) -> Any:
    """The drawn graph as a matplotlib Figure: same positions (y down, as on screen), colours,
    shapes, written node labels, arrows and relation labels, and the legend below it."""
    import matplotlib

    matplotlib.use("Agg")  # no display on a server
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    g = drawn.graph
    pos = {nid: (a["x"], -a["y"]) for nid, a in g.nodes(data=True)}
    fig = Figure(figsize=(width_in, width_in * 0.72), dpi=dpi)
    ax = fig.add_axes((0.01, 0.16, 0.98, 0.83))
    ax.set_axis_off()
    for source, target, e in g.edges(data=True):
        (x0, y0), (x1, y1) = pos[source], pos[target]
        colour = _colour(e["colour"])
        # an arrow as on screen (its head stops short of the target's marker), then the relation at the middle
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), zorder=1,
                    arrowprops={"arrowstyle": "-|>" if e["arrow"] else "-", "color": colour, "shrinkA": 6,
                                "shrinkB": 7, "linewidth": e["width"] * 0.7, "mutation_scale": 9,
                                "linestyle": "--" if e["dashed"] else "-"})
        label = e["label"].strip()
        if label:
            ax.annotate(_literal(label), ((x0 + x1) / 2, (y0 + y1) / 2), ha="center", va="center", fontsize=5.5,
                        color="#555555", zorder=4,
                        bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})
    for nid, n in g.nodes(data=True):
        x, y = pos[nid]
        ax.scatter([x], [y], s=n["size"] * 9, marker=_MARKERS.get(n["shape"], "o"), c=_colour(n["colour"]),
                   edgecolors=_colour(n["border"]), linewidths=n["border_width"] * 0.6, zorder=2)
        label = clip(n["label"].strip(), LABEL_CHARS)
        if label and n["written"]:
            ax.annotate(_literal(label), (x, y), xytext=(0, -11), textcoords="offset points", ha="center", va="top",
                        fontsize=7, color="#222222", zorder=3)
    if pos:
        ax.set_aspect("equal", adjustable="datalim")
        ax.margins(0.06)
    handles = [_legend_handle(item, Line2D) for item in drawn.legend]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    return fig


def _literal(text: str) -> str:
    """Text matplotlib draws as written ("$" would start mathtext)."""
    return text.replace("$", r"\$")


def _legend_handle(item: Mapping[str, Any], line: Any) -> Any:
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
