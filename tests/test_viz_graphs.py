"""Readable graphs (issue 16): default size, the labels rule, legends made from the marks drawn,
colours far apart, neighbourhood depth, type filters, entity search with suggestions, exports.

Memories come from the real build pipeline driven by a scripted LLM; traces from test_viz's
hand-built ones (every expected node is worked out there).
"""

from __future__ import annotations

import io

import networkx as nx
import pytest

from memrag.config import IndexParams
from memrag.index.build import build_memory, run_build
from memrag.index.readers import benchmark_document
from memrag.trace import GraphEdge, GraphNode
from memrag.viz import export, labels, legend, memory_graphs, palette, trace_graphs
from memrag.viz.entity_search import UnknownEntity, match_score, resolve_entity, suggest_entities
from memrag.viz import graph_html
from memrag.viz.graph_html import render
from graph_page import graph_data, layer_data, legend_items, legend_rows
from scripted import HashEmbedder, ScriptedLLM
from test_viz import neuropath_trace, step_trace



def ent(name, typ="person"):
    return {"name": name, "type": typ, "description": f"{name} in the notes", "importance": 3}


@pytest.fixture(scope="module")
def people():
    """Two Penhallows, a coast, and a plant and a material (types outside the fixed list)."""
    docs = [benchmark_document("d1", "Letters", "Osric Penhallow wrote to Corwin Penhallow.", "t"),
            benchmark_document("d2", "Coast", "Corwin Penhallow sailed the Varrow Coast past bitterleaf and tin.",
                               "t")]
    replies = [
        {"entities": [ent("Osric Penhallow"), ent("Corwin Penhallow")],
         "triples": [["Osric Penhallow", "wrote to", "Corwin Penhallow"]]},
        {"entities": [ent("Corwin Penhallow"), ent("the Varrow Coast", "location"), ent("bitterleaf", "plant"),
                      ent("tin", "material")],
         "triples": [["Corwin Penhallow", "sailed", "the Varrow Coast"], ["the Varrow Coast", "grows", "bitterleaf"],
                     ["the Varrow Coast", "yields", "tin"]]},
    ]
    return run_build(build_memory(None, docs, ScriptedLLM({"index.extract": replies}), HashEmbedder(),
                                  IndexParams()))


def drawn(page):
    return {n["id"]: n for n in graph_data(page)[0]}


# ================================================================== palette
def test_no_two_colours_of_a_scheme_look_alike():
    for name, colours in palette.schemes().items():
        for i, a in enumerate(colours):
            for b in colours[i + 1:]:
                assert palette.delta_e(a, b) >= palette.MIN_DELTA_E, (name, a, b)


def test_delta_e_tells_near_identical_colours_from_distinct_ones():
    assert palette.delta_e("#777777", "#787878") < 1 and palette.delta_e("#1a7f37", "#d9730d") > 50


def test_types_outside_the_fixed_list_never_share_a_colour_in_one_graph():
    colours = palette.group_colours(["plant", "material", "person", "place", "organisation"])
    assert colours["plant"] != colours["material"]
    assert palette.delta_e(colours["plant"], colours["material"]) >= palette.MIN_DELTA_E
    assert colours["place"] == palette.TYPE_COLOURS["location"]  # spellings of one type share its colour
    assert colours["organisation"] == palette.TYPE_COLOURS["organization"]
    assert palette.group_colours(["plant"]) == {"plant": palette.group_colour("plant")}  # stable alone
    assert palette.group_colours(["x"], {"x": "red;url(//y)"})["x"].startswith("#")  # not #rrggbb: refused


def test_ask_and_learn_colour_a_retrieval_by_fate():
    t = neuropath_trace()
    ask = drawn(trace_graphs.neuropath_overview(t)[0])
    assert ask["e:port alder"]["color"]["background"] == palette.FATE_COLOURS["valid"]
    st = step_trace()  # A→B valid at hop 2
    st.nodes[1].group = "person"
    learn = drawn(trace_graphs.step_graph(st, 2)[0])
    assert learn["e:b"]["color"]["background"] == palette.FATE_COLOURS["valid"]
    # the type is still there, on hover
    assert learn["e:b"]["title"] == "B\ntype: person"


# ================================================================== legend from the marks drawn
def _legend_keys(page):
    return legend.listed_keys(legend_items(page))


def _marks_in(page):
    """Every distinct mark in the drawn records, computed here from the raw data."""
    nodes, edges = graph_data(page)
    keys = set()
    for n in nodes:
        fill, border = n["color"]["background"].lower(), n["color"]["border"].lower()
        keys |= {f"fill:{fill}", f"shape:{n['shape']}"} | ({f"ring:{border}"} if border != fill else set())
    for e in edges:
        keys.add(f"edge:{e['color']['color'].lower()}:{'dashed' if e.get('dashes') else 'solid'}")
    return keys


def pages(people):
    np_t = neuropath_trace()
    out = [trace_graphs.neuropath_hop_graph(np_t, 1, gold_chunk_ids=[0])[0],
           trace_graphs.neuropath_overview(np_t, include_pruned=True)[0]]
    out += [trace_graphs.step_graph(step_trace(), i, gold_chunk_ids=[7])[0] for i in range(3)]
    return out


def test_the_legend_lists_exactly_the_marks_drawn(people):
    for page in pages(people):
        assert _legend_keys(page) == _marks_in(page)
        assert all(item["text"] for item in legend_items(page))


def test_legend_names_square_nodes_coreference_edges_rings_and_gold():
    page = trace_graphs.neuropath_hop_graph(neuropath_trace(), 1, gold_chunk_ids=[0])[0]
    texts = {item["key"]: item["text"] for item in legend_items(page)}
    # a coreference candidate is an entity with a ring; a square would say "passage"
    assert "coreference candidate" in texts[f"ring:{graph_html.NODE_ROLES['coref']['border']}"]
    assert "shape:square" not in texts
    assert "coreference" in texts["edge:#8e44ad:dashed"]
    assert "gold" in texts[f"ring:{palette.GOLD}"]
    assert "seed" in texts["shape:star"]


def test_the_legend_says_each_meaning_once():
    """The question is the one diamond and the one node in the question's colour: one entry, not
    '● the question · 1' beside '◆ the question' (issue 29's focus layout listed both)."""
    for page in [trace_graphs.neuropath_overview(neuropath_trace())[0],
                 *(trace_graphs.step_graph(step_trace(), i)[0] for i in range(3))]:
        items = legend_items(page)
        texts = [i["text"] for i in items]
        assert len(texts) == len(set(texts)), texts
        if "shape:diamond" not in _marks_in(page):
            continue  # a step before the question is drawn
        [question] = [i for i in items if i["text"].startswith("the question")]
        assert question["text"] == "the question" and question["shape"] == "diamond" and question["count"] == 1
        assert set(question["keys"]) == {question["key"], "shape:diamond"}
        assert 'data-mark="' + " ".join(question["keys"]) + '"' in page
    # a fill and a shape that mean different things stay two entries
    nodes = [GraphNode("a", "A", "entity", group="person"), GraphNode("b", "B", "entity", group="person")]
    assert len(legend_items(render(nodes, []))) == 2


def test_a_mark_not_drawn_is_not_listed():
    nodes = [GraphNode("a", "A", "entity", group="person"), GraphNode("b", "B", "entity", group="person")]
    page = render(nodes, [GraphEdge("e", "a", "b", "triple", "knows")])
    assert _legend_keys(page) == {f"fill:{palette.TYPE_COLOURS['person']}", "shape:dot", "edge:#7a7a7a:solid"}
    assert legend_items(render(nodes, [], legend=False)) == []


# ================================================================== labels
def test_every_label_is_offered_and_what_matters_claims_its_place_first():
    nodes = [GraphNode(f"n{i}", f"Name {i}", "entity", tooltip=f"tip {i}") for i in range(40)]
    nodes[30].role = "seed"
    nodes[31].gold = True
    nodes[32].group = "valid"
    edges = [GraphEdge(f"h{i}", "n0", f"n{i}", "triple") for i in range(1, 40)]
    edges += [GraphEdge(f"k{i}", "n1", f"n{i}", "triple") for i in range(2, 12)]
    page = render(nodes, edges, highlight={"n33"})
    layer = layer_data(page)
    # the label layer places labels in this order wherever one fits: the key nodes by degree, then hubs
    assert layer["order"][:6] == ["n30", "n31", "n32", "n33", "n0", "n1"]
    assert set(layer["order"]) == set(layer["texts"]) == {n.id for n in nodes}
    assert layer["texts"]["n39"] == "Name 39" and drawn(page)["n39"]["title"].startswith("Name 39")
    assert labels.label_order(nodes[:3], []) == ["n0", "n1", "n2"]  # ties keep the listed order


# ================================================================== entity search
def test_partial_names_suggest_the_entities_they_belong_to(people):
    names = [name for _, name in suggest_entities(people, "Penhallow")]
    assert set(names[:2]) == {"Osric Penhallow", "Corwin Penhallow"}
    assert {n for _, n in suggest_entities(people, "penhalow")[:2]} == set(names[:2])  # a typo
    assert suggest_entities(people, "PENH")[0][1] in {"Osric Penhallow", "Corwin Penhallow"}
    assert suggest_entities(people, "osric")[0] == ("osric penhallow", "Osric Penhallow")
    assert suggest_entities(people, "The Varrow")[0][0] == "varrow coast"  # article and case ignored
    assert suggest_entities(people, "zzzz") == [] and suggest_entities(people, "") == []
    assert len(suggest_entities(people, "Penhallow", n=1)) == 1


def test_match_score_orders_exact_prefix_and_fuzzy():
    assert match_score("osric penhallow", "osric penhallow") == 1.0
    assert 0.85 < match_score("penh", "osric penhallow") < 1.0
    assert match_score("penhalow", "osric penhallow") > 0.6 > match_score("quill", "osric penhallow")


def test_an_unknown_focus_says_what_it_could_mean(people):
    with pytest.raises(UnknownEntity, match="no entity called 'Penhallow'.*did you mean") as caught:
        resolve_entity(people, "Penhallow")
    assert {n for _, n in caught.value.suggestions} >= {"Osric Penhallow", "Corwin Penhallow"}
    assert isinstance(caught.value, ValueError)
    assert resolve_entity(people, "osric  PENHALLOW") == "osric penhallow"  # by key: case and spaces


# ================================================================== export
def _page():
    nodes = [GraphNode(f"e:{k}", k, "entity", group=t) for k, t in
             (("osric", "person"), ("corwin", "person"), ("varrow", "place"), ("fern", "plant"), ("tin", "material"))]
    edges = [GraphEdge(f"t{i}", f"e:{a}", f"e:{b}", "triple", r) for i, (a, b, r) in enumerate(
        [("osric", "corwin", "wrote to"), ("corwin", "varrow", "sailed"), ("varrow", "fern", "grows"),
         ("varrow", "tin", "yields")])]
    return render(nodes, edges)


def test_graphml_holds_the_drawn_nodes_and_edges():
    page = _page()
    g = nx.read_graphml(io.BytesIO(export.graphml_bytes(page.drawing)))
    nodes, edges = graph_data(page)
    assert set(g.nodes) == {n["id"] for n in nodes} and g.number_of_edges() == len(edges)
    assert g.nodes["e:tin"]["label"] == "tin" and g.nodes["e:tin"]["colour"] == drawn(page)["e:tin"]["color"]["background"]
    assert {d["label"] for *_, d in g.edges(data=True)} == {"wrote to", "sailed", "grows", "yields"}


def test_png_is_drawn_on_the_server():
    pytest.importorskip("matplotlib")
    page = _page()
    png = export.png_bytes(page.drawing)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    hostile = render([GraphNode("a", "$x^2$ <b>", "entity")], [])
    assert export.png_bytes(hostile.drawing)[:4] == b"\x89PNG"  # "$" is not mathtext


def test_graph_download_names_are_safe():
    # graphs are named by the one download namer the traces use
    from memrag.textsafe import download_name

    name = download_name("Knowledge graph: Osric/../x", ext="png", day="2026-12-01")
    assert name == "memrag-knowledge-graph-osric-x-2026-12-01.png"
    assert download_name("  ", ext="graphml", day="2026-12-01") == "memrag-2026-12-01.graphml"
