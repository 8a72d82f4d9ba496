"""Typed pictures (memrag.picture), their one renderer (memrag.viz.figure) and NeuroPath's route,
on the sample's recorded questions: what the route draws follows from the trace, the words the
renderer writes stay apart and legible, hostile names stay text, and the look changes sizes only."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from memrag.demo import gold_chunk_ids
from memrag.methods.neuropath import picture as np_picture
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.methods.neuropath.route import COUNT_PREFIX, KEPT, route_paths
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.viz import figure, label_places
from memrag.viz.look import PRESENTER_SCALE, Look

from sample_replay import replay_sample

FOCUS = Look(label_all=True)
PRESENTER = Look(scale=PRESENTER_SCALE, label_all=True)


@pytest.fixture(scope="module")
def routes():
    memory, asked = replay_sample(["neuropath"])
    return {q["id"]: (t, gold_chunk_ids(memory, q["gold_docs"])) for q, (t,) in asked}


def _apart(words: list[label_places.Placed], width: float, height: float) -> None:
    for w in words:
        assert w.px >= 11, w
        assert w.box[0] >= 0 and w.box[1] >= 0 and w.box[2] <= width and w.box[3] <= height, w
    for i, a in enumerate(words):
        for b in words[i + 1:]:
            assert not label_places._overlaps(a.box, b.box), (a.text, b.text)


def test_the_route_draws_every_kept_path_bold_and_folds_the_rest_into_counts(routes):
    for qid, (trace, gold) in routes.items():
        detail = trace.detail(NeuroPathDetail)
        if not detail.hops:
            continue
        pic = np_picture.picture(trace, gold_chunk_ids=gold)
        paths = route_paths(detail)
        fates = Counter(p.fate for p in paths)
        kept = [p for p in paths if p.fate in KEPT]
        bold = {e for e in pic.edges if e.bold}
        # every kept path's triples are on bold edges
        drawn = {int(x) for e in bold for x in e.ref.split(",") if x}
        for p in kept:
            assert {t.triple_id for t in p.cand.triples} <= drawn, (qid, p.pid)
        # the count nodes hold every listed path not kept, once
        counts = [n for n in pic.nodes if n.kind == "count"]
        folded = [pid for n in counts for pid in n.ref.split(",")]
        assert len(folded) == len(set(folded)) == fates["dropped"] + fates["shown"], qid
        # columns: seeds first; a node's column is the hop its path reached it at
        assert all(n.layer == 0 for n in pic.nodes if n.role == "seed"), qid
        assert pic.layer_titles == ("seeds", *[f"hop {h.hop}" for h in detail.hops])
        # the legend's counts are the note's
        for entry in pic.legend:
            if entry.unit in ("path", "paths"):
                assert f"{entry.count} {entry.label}" in pic.note, (entry, pic.note)


def test_q11s_route_jumps_from_1889_to_1890_as_a_coreference_edge(routes):
    trace, gold = routes["q11"]
    pic = np_picture.picture(trace, gold_chunk_ids=gold)
    jump = [e for e in pic.edges if e.kind == "coreference" and e.source == "1889@1" and e.target == "1890@1"]
    assert len(jump) == 1
    count = pic.node(f"{COUNT_PREFIX}1890@1")
    assert count is not None and count.label == "+2 listed, not kept"
    # opening the count draws its two paths from 1890 into hop 2
    opened = np_picture.picture(trace, gold_chunk_ids=gold, expanded=[count.id])
    from_1890 = [e for e in opened.edges if e.id.startswith("t:") and "1890@1" in (e.source, e.target)]
    assert len(from_1890) == 2 and opened.node(count.id).label.startswith("− fold")


@pytest.mark.parametrize("qid", ["q11", "q14"])
def test_the_renderer_writes_every_named_node_apart_and_the_presenter_moves_nothing(routes, qid):
    trace, gold = routes[qid]
    pic = np_picture.picture(trace, gold_chunk_ids=gold)
    plain = figure.draw(pic, FOCUS, height=620)
    height = plain.figure.layout.yaxis.range[0]
    _apart(plain.words, figure.DESIGN_WIDTH, height)
    written = {w.id for w in plain.words}
    assert {n.id for n in pic.nodes if n.labelled} <= written
    assert {e.id for e in pic.edges if e.bold and e.relation} <= written
    big = figure.draw(pic, PRESENTER, height=620)
    assert big.places == plain.places
    assert min(w.px for w in big.words if not w.id.startswith("head:")) > max(w.px for w in plain.words)
    _apart(big.words, figure.DESIGN_WIDTH, height)
    # the caption's numbers and the legend's
    legend = [t.name for t in plain.figure.data if t.showlegend is not False and t.name]
    assert any(re.match(r"^valid · \d+ paths?$", x) for x in legend), legend


def test_hostile_names_are_written_as_text():
    evil = "<b>x</b> & <img src=x onerror=alert(1)>"
    pic = Picture("t", (PictureNode("a", evil, labelled=True, tooltip=evil, layer=0),
                        PictureNode("b", "b", labelled=True, layer=1)),
                  (PictureEdge("e", "a", "b", relation=evil, bold=True, tooltip=evil),),
                  (LegendEntry("node:seed", evil, 1),))
    fig = figure.picture_figure(pic, FOCUS, height=300)
    texts = [a.text for a in fig.layout.annotations] + [t.name for t in fig.data if t.name] + \
        [h for t in fig.data if t.hovertext is not None for h in t.hovertext]
    assert not any("<b>" in x or "<img" in x for x in texts), texts
    assert any("&lt;b&gt;x&lt;/b&gt; &amp; &lt;img" in x for x in texts)


def test_a_click_names_what_it_landed_on():
    assert figure.target_of(figure.NODE + "e:a|b") == ("node", "e:a|b")
    assert figure.target_of(figure.EDGE + "t:1@1") == ("edge", "t:1@1")
    assert figure.target_of("other") is None and figure.target_of(None) is None


def test_an_unlayered_picture_is_laid_out_the_same_every_time():
    nodes = tuple(PictureNode(str(i), f"node {i}", labelled=True) for i in range(12))
    edges = tuple(PictureEdge(f"e{i}", str(i), str((i * 5) % 12)) for i in range(12))
    pic = Picture("free", nodes, edges)
    a, b = figure.draw(pic, FOCUS, height=500), figure.draw(pic, FOCUS, height=500)
    assert a.places == b.places and len(a.places) == 12
    _apart(a.words, figure.DESIGN_WIDTH, 500)


def test_step_looks_fade_and_hide():
    from memrag.picture import StepLook
    pic = Picture("s", (PictureNode("a", "a"), PictureNode("b", "b"), PictureNode("c", "c")),
                  (PictureEdge("ab", "a", "b"),),
                  steps=(StepLook(1, shown=frozenset({"a", "b", "ab"}), faded=frozenset({"a"})),))
    fig = figure.picture_figure(pic, FOCUS, height=300, step=1)
    nodes = next(t for t in fig.data if t.name == "nodes")
    assert list(nodes.customdata) == [figure.NODE + "a", figure.NODE + "b"]
    assert list(nodes.marker.opacity) == [0.3, 1.0]
    # a faded node is drawn, not written: the step's words are its own
    assert [a.text for a in fig.layout.annotations] == ["b"]
    assert sorted(a.text for a in figure.picture_figure(pic, FOCUS, height=300).layout.annotations) == ["a", "b", "c"]


def test_a_drawing_is_made_once_and_keeps_the_room_asked_above_it(monkeypatch):
    pic = Picture("r", (PictureNode("a", "a"), PictureNode("b", "b")), (PictureEdge("ab", "a", "b"),),
                  (LegendEntry("node:seed", "seed", 1),))
    made: list[int] = []
    real = figure._draw
    monkeypatch.setattr(figure, "_draw", lambda *a: made.append(1) or real(*a))
    figure._drawn.clear()
    once = figure.draw(pic, FOCUS, height=300)
    assert figure.draw(pic, FOCUS, height=300) is once and len(made) == 1
    legend = figure.legend_px(pic, FOCUS)
    assert once.figure.layout.margin.t == legend > 0
    roomy = figure.draw(pic, FOCUS, height=300, top=legend + 48)
    assert roomy.figure.layout.margin.t == legend + 48 and len(made) == 2
    assert roomy.figure.layout.height == once.figure.layout.height + 48 and roomy.places == once.places


def test_a_small_picture_draws_svg_points_and_a_large_one_webgl(monkeypatch):
    """Each WebGL chart costs the browser a context (~0.1-0.5 s); a picture of a few hundred points
    is drawn as SVG, one past SVG_POINTS as WebGL, with the same clickable customdata either way."""
    nodes = tuple(PictureNode(str(i), f"n{i}") for i in range(6))
    pic = Picture("p", nodes, tuple(PictureEdge(f"e{i}", str(i), str(i + 1)) for i in range(5)))
    monkeypatch.setattr(figure, "SVG_POINTS", 11)
    small = figure.picture_figure(pic, FOCUS, height=300)
    monkeypatch.setattr(figure, "SVG_POINTS", 10)
    figure._drawn.clear()  # the same picture and box: drawn again, not handed back
    large = figure.picture_figure(pic, FOCUS, height=300)
    for fig, kind in ((small, "scatter"), (large, "scattergl")):
        points = {t.name: t for t in fig.data if t.name in ("nodes", "edges")}
        assert {t.type for t in points.values()} == {kind}
        assert len(points["nodes"].customdata) == 6 and len(points["edges"].customdata) == 5


def test_a_listed_column_keeps_its_order_and_others_sit_by_what_they_hang_from():
    """HippoRAG 2's passages by mass read top down as ranked; a route's hop sits by its seeds."""
    from dataclasses import replace

    nodes = (PictureNode("a", "a", layer=0), PictureNode("b", "b", layer=0),
             PictureNode("x", "x", layer=1), PictureNode("y", "y", layer=1))
    pic = Picture("l", nodes, (PictureEdge("bx", "b", "x"), PictureEdge("ay", "a", "y")))
    by_links = figure.draw(pic, FOCUS, height=400).places
    listed = figure.draw(replace(pic, listed_layers=(1,)), FOCUS, height=400).places
    assert by_links["y"][1] < by_links["x"][1]  # y hangs from a, the upper seed
    assert listed["x"][1] < listed["y"][1]  # listed first, drawn first
    assert listed["a"] == by_links["a"] and listed["b"] == by_links["b"]
