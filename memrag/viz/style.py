"""How a typed picture's marks look: a node's fill, shape and size, an edge's colour, width and
dash, from its fate, role, kind and the page's look (memrag.viz.look). Colours come from
memrag.viz.palette, the one place every graph takes them from."""

from __future__ import annotations

from dataclasses import dataclass

from memrag.picture import PictureEdge, PictureNode
from memrag.viz import palette
from memrag.viz.look import Look

NODE_PX = 14  # an ordinary node's marker at scale 1
RELATION_PX = 12  # a relation's words on a bold edge (at scale 1; never under 11)
COUNT_COLOUR = "#f2f2f2"
COREF_COLOUR = "#00695c"  # far from every fate colour (dropped is purple)
EDGE_COLOURS = {"coreference": COREF_COLOUR, "activation": "#9a9a9a", "passage": "#b8c9d9"}
CHANGE_COLOUR = "#e6007e"  # new since an edit (ask again): far from every fate colour and the gold ring
SHAPES = {"seed": "star", "coref": "diamond", "count": "square", "question": "circle", "passage": "square"}


@dataclass(frozen=True)
class NodeMark:
    fill: str
    symbol: str
    size: float
    ring: str
    ring_width: float


@dataclass(frozen=True)
class EdgeMark:
    colour: str
    width: float
    dash: str  # plotly's: solid, dash, dot


def node_fill(node: PictureNode) -> str:
    if node.kind == "count":
        return COUNT_COLOUR
    if node.kind == "question":
        return palette.QUESTION
    if node.kind == "passage" and not node.fate:
        return palette.CHUNK
    return palette.group_colour(node.fate or node.role or "untouched")


def node_mark(node: PictureNode, look: Look) -> NodeMark:
    symbol = SHAPES.get(node.kind if node.kind in ("count", "question", "passage") else node.role, "circle")
    size = NODE_PX * look.scale * max(0.6, min(2.0, node.weight)) * (1.5 if symbol == "star" else 1.0)
    ring, width = ("#111", 2.0) if node.gold else ("#555", 1.0) if node.kind == "count" else ("#fff", 1.0)
    ring = palette.GOLD if node.gold else ring
    if node.change == "appeared":  # the ring says "new since the edit"; the fill keeps the fate
        ring, width = CHANGE_COLOUR, 3.0
    return NodeMark(node_fill(node), symbol, size, ring, width * look.scale)


def edge_mark(edge: PictureEdge, look: Look) -> EdgeMark:
    colour = EDGE_COLOURS.get(edge.kind) or palette.group_colour(edge.fate or "untouched")
    if edge.change == "appeared":  # new since the edit; its fate is in its tooltip and the panel
        colour = CHANGE_COLOUR
    width = (3.5 if edge.bold else 1.2) * look.scale
    dash = "dash" if edge.kind == "coreference" else "dot" if edge.kind in ("activation", "passage") else "solid"
    return EdgeMark(colour, width, dash)


def label_px(look: Look) -> int:
    return max(11, look.label_px)


def relation_px(look: Look) -> int:
    return max(11, round(RELATION_PX * look.scale))


def legend_mark(mark: str, look: Look) -> NodeMark | EdgeMark:
    """The mark a legend entry shows (memrag.picture.LegendEntry.mark): "edge:<kind>[:<fate>[:bold]]",
    "node:<role or kind>[:<fate>]", or "node:gold" (the ring a node from a gold passage wears); a last
    part ":appeared" gives the look of what is new since an edit."""
    what, _, rest = mark.partition(":")
    change = "appeared" if rest.endswith(":appeared") else ""
    rest = rest.removesuffix(":appeared")
    if what == "edge":
        kind, fate, *bold = rest.split(":") + [""]
        return edge_mark(PictureEdge("", "", "", kind=kind, fate=fate, bold="bold" in bold, change=change), look)
    kind, _, fate = rest.partition(":")
    if kind == "gold":
        return NodeMark("#ffffff", "circle", NODE_PX * look.scale, palette.GOLD, 2.5)
    node = PictureNode("", "", kind=kind if kind in ("count", "question", "passage") else "entity", role=kind,
                       fate=fate, change=change)
    return node_mark(node, look)
