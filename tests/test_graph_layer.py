"""Graphs readable in a room and explorable (issue 29): what a page ships to its label layer and
details panel, the neighbours "expand" may add, the looks a page chooses, one mark per meaning,
exports that keep arrows and relation labels. The layer itself runs in Chromium in
tests/browser/test_graph_html.py and test_browser_focus.py."""

from __future__ import annotations

import json
import re

import pytest

from memrag.app import focus_layout, widgets
from memrag.assets import asset_text
from memrag.trace import GraphEdge, GraphNode, Trace
from memrag.viz import export, graph_html, legend, look, memory_graphs, palette, trace_graphs
from memrag.viz.graph_html import UnsafeGraphHTML, render
from graph_page import graph_data, layer_data, legend_items, legend_rows
from test_viz import neuropath_trace
from test_viz_graphs import people  # noqa: F401 (the module's memory fixture)


def _graph():
    nodes = [GraphNode("a", "Ada", "entity", group="person", chunk_ids=[1, 2, 3], tooltip="Ada\nborn 1820"),
             GraphNode("b", "Port Alder", "entity", group="place", chunk_ids=[1]),
             GraphNode("c", "Ada", "chunk", group="chunk", chunk_ids=[2], gold=True),
             GraphNode("d", "Ada B.", "entity", group="person")]
    edges = [GraphEdge("e1", "a", "b", "triple", "born in"), GraphEdge("e2", "a", "d", "coref", "0.91"),
             GraphEdge("e3", "c", "a", "provenance")]
    passages = {i: (f"Doc {i}", f"text of passage {i}") for i in range(1, 5)}
    return nodes, edges, passages


def test_a_click_finds_name_kind_relations_coreference_and_source_passages():
    nodes, edges, passages = _graph()
    layer = layer_data(render(nodes, edges, passages=passages, group_heading="type"))
    ada = layer["details"]["a"]
    assert ada["name"] == "Ada" and ada["kind"] == "entity" and ada["group"] == "person" and ada["heading"] == "type"
    assert ada["about"] == ["born 1820"]  # the hover text, less the name it starts with
    assert ada["coref"] == ["Ada B. (0.91)"] and layer["coref"] == ["e2"]  # relations: the page reads its edges
    assert ada["passages"] == ["1", "2"]  # at most PANEL_PASSAGES per node
    assert layer["passages"] == {"1": ["Doc 1", "text of passage 1"], "2": ["Doc 2", "text of passage 2"]}
    assert layer["details"]["c"]["kind"].startswith("passage (chunk")


def test_passages_and_entities_are_told_apart_by_label_and_shape_and_gold_has_its_own_mark():
    nodes, edges, passages = _graph()
    page = render(nodes, edges, passages=passages)
    drawn = {n["id"]: n for n in graph_data(page)[0]}
    assert drawn["c"]["label"] == f"{palette.GOLD_MARK} {palette.PASSAGE_MARK} Ada" and drawn["c"]["shape"] == "square"
    assert drawn["a"]["label"] == "Ada" and drawn["a"]["shape"] == "dot"
    assert layer_data(page)["texts"]["c"] == drawn["c"]["label"]


def test_one_shape_one_meaning_one_ring_colour_one_meaning():
    shapes: dict[str, set[str]] = {}
    for look_ in [*graph_html.NODE_KINDS.values(), *graph_html.NODE_ROLES.values()]:
        if "shape" in look_:
            shapes.setdefault(look_["shape"], set()).add(look_["means"])
    assert all(len(m) == 1 for m in shapes.values()), shapes  # before: square = passage and two entity roles
    assert [k for k, v in graph_html.NODE_KINDS.items() if v["shape"] == "square"] == ["chunk"]
    rings: dict[str, set[str]] = {}
    for look_ in graph_html.NODE_ROLES.values():
        if "ring" in look_:
            rings.setdefault(look_["border"].lower(), set()).add(look_["ring"])
    assert all(len(m) == 1 for m in rings.values()) and palette.GOLD.lower() not in rings, rings
    glyphs = set(legend._GLYPHS.values())
    assert palette.GOLD_MARK not in glyphs and palette.PASSAGE_MARK not in glyphs  # ★ was both


def test_the_coreference_picture_names_each_entity_and_its_own_candidate_set(people):  # noqa: F811
    pic = memory_graphs.coref_picture(people, top=3, threshold=0.0)
    assert pic.nodes and all(people.entity(n.ref).name == n.label for n in pic.nodes)
    for n in pic.nodes:
        own = [m.name for m in people.coref_sets(3, 0.0)[n.ref]]
        assert "own candidate set: " + own[0] in n.tooltip


def test_trace_graphs_say_a_nodes_fate_and_carry_its_passages():
    page, _ = trace_graphs.neuropath_hop_graph(neuropath_trace(), 1)
    layer = layer_data(page)
    port = layer["details"]["e:port alder"]
    assert port["heading"] == "fate (hop 1)" and port["group"] == palette.FATE_WORDS["valid"]
    assert port["passages"] and all(p in layer["passages"] for p in port["passages"])


def test_looks_set_label_size_node_size_and_fold_the_legend():
    nodes, edges, _ = _graph()
    plain = render(nodes, edges)
    with look.drawing(look.Look(scale=look.PRESENTER_SCALE, label_all=True)):
        big = render(nodes, edges)
    with look.drawing(look.Look(compact=True)):
        small = render(nodes, edges)
    assert look.current() == look.Look()  # the block's look ends with it
    assert layer_data(plain)["px"] == 13 and layer_data(big)["px"] == 18 >= 12 and layer_data(big)["labelAll"]
    sizes = lambda page: {n["id"]: n["size"] for n in graph_data(page)[0]}  # noqa: E731
    assert sizes(big)["a"] == pytest.approx(sizes(plain)["a"] * look.PRESENTER_SCALE, abs=0.1)
    assert layer_data(small)["texts"] == {} and "<details><summary>legend" in small
    assert "<details>" not in plain


def test_legends_never_take_more_than_a_third_of_the_frame():
    nodes = [GraphNode(f"n{i}", f"N{i}", "entity", group=f"a rather long type name, number {i}") for i in range(20)]
    page = render(nodes, [])
    assert legend_rows(page) > 420 // 3 // widgets.LEGEND_ROW_PX
    assert widgets.legend_height_rows(page.drawing, 420) == 420 // 3 // widgets.LEGEND_ROW_PX
    assert "max-height: 33vh" in graph_html._PAGE_CSS  # and the page scrolls the rest
    with look.drawing(look.Look(compact=True)):
        assert widgets.legend_height_rows(page.drawing, 170) == 1


def test_the_layer_data_is_checked_like_the_graph_data():
    nodes, edges, passages = _graph()
    page = render(nodes, edges, passages=passages)
    forged = re.sub(r'(id="memrag-graph-extra">\{)', r'\1"x": "<img src=x>", ', page, count=1)
    with pytest.raises(UnsafeGraphHTML, match="label layer"):
        graph_html.check_safe(forged)


def test_the_layer_script_only_ever_sets_text():
    script = asset_text("graph_overlay.js")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function("):
        assert sink not in script, sink
    assert "textContent" in script


def test_png_export_keeps_arrows_and_relation_labels():
    pytest.importorskip("matplotlib")
    from matplotlib.patches import FancyArrowPatch

    nodes = [GraphNode(k, k.title(), "entity") for k in ("osric", "corwin", "varrow", "fern", "tin")]
    edges = [GraphEdge(f"t{i}", a, b, "triple", r) for i, (a, b, r) in enumerate(
        [("osric", "corwin", "wrote to"), ("corwin", "varrow", "sailed"), ("varrow", "fern", "grows"),
         ("varrow", "tin", "yields")])]
    page = render(nodes, edges)
    fig = export.figure(page.drawing)
    ax = fig.axes[0]
    arrows = [t.arrow_patch for t in ax.texts if isinstance(getattr(t, "arrow_patch", None), FancyArrowPatch)]
    heads = [a for a in arrows if a.get_arrowstyle().__class__.__name__ != "Curve"]
    assert len(arrows) == len(graph_data(page)[1]) and heads  # one arrow per edge, with heads
    written = {t.get_text() for t in ax.texts}
    assert {"wrote to", "sailed", "grows", "yields"} <= written  # relation labels, before: none


def test_the_focus_starts_on_a_method_with_a_graph():
    flat, graph = Trace(question="q", method="flat"), Trace(question="q", method="paths")
    graph.edges = [GraphEdge("e", "a", "b", "triple")]
    assert focus_layout.default_focus([flat, graph]) == "paths"
    assert focus_layout.default_focus([flat]) == "flat"
    assert json.loads(json.dumps(focus_layout.FOCUS_HEIGHT)) >= 500
