"""Downloads read the Drawing a renderer kept (data), never a page: GraphML keeps every name as
text, the PNG draws the drawn graph and its legend."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from memrag.viz import export
from memrag.viz.drawing import drawing
from memrag.viz.legend import FILL

HOSTILE = '</data></node><node id="smuggled"/><script>alert(1)</script> & "q" \'$x^2$\' \x01\x1f end'


def _hostile_drawing():
    nodes = [{"id": "a", "label": HOSTILE, "title": HOSTILE + "\nmore", "colour": "#1f77b4", "x": 0, "y": 0},
             {"id": "b", "label": "Port Alder", "colour": "#ff7f0e", "x": 120, "y": 40, "shape": "square"}]
    edges = [{"id": "t:1", "source": "a", "target": "b", "label": HOSTILE, "title": "a → b"}]
    legend = [{"key": "fill:#1f77b4", "mark": FILL, "colour": "#1f77b4", "shape": "", "dashed": False,
               "count": 1, "text": HOSTILE}]
    return drawing(nodes, edges, legend)


def test_a_hostile_name_survives_into_graphml_as_text():
    raw = export.graphml_bytes(_hostile_drawing())
    ET.fromstring(raw)  # well-formed XML whatever the names hold
    assert b"<script>" not in raw and b'<node id="smuggled"' not in raw
    g = nx.read_graphml(io.BytesIO(raw))
    assert set(g.nodes) == {"a", "b"}  # no node smuggled in by a name
    # the name comes back as the text it was; only characters XML cannot hold become U+FFFD
    expected = HOSTILE.replace("\x01", "\ufffd").replace("\x1f", "\ufffd")
    assert g.nodes["a"]["label"] == expected and g.nodes["a"]["title"] == expected + "\nmore"
    (edge,) = g.edges(data=True)
    assert edge[2]["label"] == expected and g.nodes["b"]["shape"] == "square"


def test_graphml_holds_every_drawn_node_edge_and_look():
    d = drawing([{"id": str(i), "label": f"n{i}", "colour": "#123456", "x": i, "y": -i} for i in range(5)],
                [{"id": f"e{i}", "source": str(i), "target": str(i + 1), "label": "next", "dashed": i % 2 == 0}
                 for i in range(4)] + [{"id": "again", "source": "0", "target": "1", "label": "twice"}])
    g = nx.read_graphml(io.BytesIO(export.graphml_bytes(d)))
    assert sorted(g.nodes) == ["0", "1", "2", "3", "4"] and g.number_of_edges() == 5  # parallel edges kept
    assert g.nodes["3"]["colour"] == "#123456" and g.nodes["3"]["x"] == 3.0 and g.nodes["3"]["y"] == -3.0
    assert sorted(d["dashed"] for *_, d in g.edges(data=True)) == [False, False, False, True, True]


def test_png_draws_the_drawing_and_its_legend_with_hostile_text():
    pytest.importorskip("matplotlib")
    d = _hostile_drawing()
    png = export.png_bytes(d)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    fig = export.figure(d)
    written = [t.get_text() for ax in fig.axes for t in ax.texts]
    # the relation whole, the name clipped: as the words, "$" not mathtext
    assert any("<script>alert(1)</script>" in t and r"\$x^2\$" in t for t in written)
    assert any(t.startswith('</data></node><node id="smuggled"/>') for t in written)
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert len(legend) == 1 and "alert(1)" in legend[0]


def test_a_typed_picture_downloads_as_drawn():
    from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
    from memrag.viz import figure, look, style
    from memrag.viz.drawing import of_picture

    pic = Picture("p", (PictureNode("a", HOSTILE, fate="person", tooltip="a tip"), PictureNode("b", "Port Alder", role="seed"),
                        PictureNode("c", "hidden", step=1)),
                  (PictureEdge("ab", "a", "b", kind="coreference", relation="0.91"),),
                  (LegendEntry("node:entity:person", "person", 1, "entities"), LegendEntry("edge:coreference", "coref")))
    now = look.current()
    drawn = figure.draw(pic, now)
    d = of_picture(pic, drawn, now)
    assert set(d.graph.nodes) == {"a", "b", "c"} and d.graph.nodes["a"]["x"] == drawn.places["a"][0]
    assert d.graph.nodes["b"]["shape"] == "star" and d.graph.nodes["a"]["colour"] == style.node_mark(pic.nodes[0], now).fill
    assert {n for n, a in d.graph.nodes(data=True) if a["written"]} == {w.id for w in drawn.words} & set(d.graph.nodes)
    (edge,) = d.graph.edges(data=True)
    assert edge[2]["dashed"] and edge[2]["colour"] == style.COREF_COLOUR and edge[2]["label"] == "0.91"
    assert [(i["mark"], i["text"]) for i in d.legend] == [("fill", "person · 1 entities"), ("edge", "coref")]
    g = nx.read_graphml(io.BytesIO(export.graphml_bytes(d)))
    assert g.nodes["a"]["title"] == "a tip"
    assert export.png_bytes(d)[:4] == b"\x89PNG"
