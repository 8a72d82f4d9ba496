"""The whole-memory explorer: the map's layout (fixed, cached per memory version), what a choice
lights, that every count agrees, and that hostile names stay text in the figure."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from memrag.config import IndexParams
from memrag.index.build import build_memory, run_build
from memrag.index.readers import benchmark_document
from memrag.viz import memory_explorer as mx
from memrag.viz import memory_map
from scripted import HashEmbedder, ScriptedLLM

HOSTILE = "<a href=\"javascript:alert(1)\">x</a> & <b>y</b>"


def ent(name: str, kind: str = "person") -> dict:
    return {"name": name, "type": kind, "description": "", "importance": 1}


@pytest.fixture(scope="module")
def memory():
    """Two islands (Alfa's and Nox's) and a lone entity."""
    docs = [benchmark_document("d1", "Alpha notes", "Alpha met Alfa.", "t"),
            benchmark_document("d2", "Alfa report", "Alfa mentored Alphonse and visited Zed Vell.", "t"),
            benchmark_document("d3", "Zed file", "Zed Vell wrote a script.", "t"),
            benchmark_document("d4", "Nox", "Nox saw Lux. Solo stood alone.", "t")]
    replies = [
        {"entities": [ent("Alpha"), ent("Alfa")], "triples": [["Alpha", "met", "Alfa"]]},
        {"entities": [ent("Alfa"), ent("Alphonse"), ent("Zed Vell", "place")],
         "triples": [["Alfa", "mentored", "Alphonse"], ["Alfa", "visited", "Zed Vell"]]},
        {"entities": [ent("Zed Vell", "place"), ent(HOSTILE, "work")], "triples": [["Zed Vell", "wrote", HOSTILE]]},
        {"entities": [ent("Nox"), ent("Lux"), ent("Solo", "concept")], "triples": [["Nox", "saw", "Lux"]]},
    ]
    return run_build(build_memory(None, docs, ScriptedLLM({"index.extract": replies}), HashEmbedder(),
                                  IndexParams()))


def test_the_map_places_every_entity_once_the_same_way_each_time_and_reads_it_back(memory, tmp_path):
    first = memory_map.memory_map(memory, cache_dir=tmp_path / "a")
    again = memory_map.memory_map(memory, cache_dir=tmp_path / "b")  # computed afresh elsewhere
    assert first.keys == [e.key for e in memory.entities] and len(first) == 8
    assert np.allclose(first.x, again.x) and np.allclose(first.y, again.y)  # seeded: one picture per memory
    assert np.abs(np.concatenate([first.x, first.y])).max() == pytest.approx(1.0)
    assert len({(round(a, 6), round(b, 6)) for a, b in zip(first.x, first.y)}) == len(first)  # nobody on top of another
    assert {tuple(sorted((first.keys[a], first.keys[b]))) for a, b in first.links} == {
        tuple(sorted((t.head_key, t.tail_key))) for t in memory.triples}
    assert first.degree[first.position["alfa"]] == 3 and first.degree[first.position["solo"]] == 0
    cached = list((tmp_path / "a" / "layouts").glob("*.npz"))
    assert len(cached) == 1 and memory.fingerprint() in cached[0].name
    # a second open reads the file: prove it by changing the file and seeing the change
    with np.load(cached[0]) as f:
        keys, xy, links = f["keys"], f["xy"].copy(), f["links"]
    xy[0] = [0.5, -0.5]
    np.savez(cached[0], keys=keys, xy=xy, links=links)
    assert tuple(memory_map.memory_map(memory, cache_dir=tmp_path / "a").x[:1]) == (0.5,)


def test_a_damaged_cached_layout_is_laid_out_again(memory, tmp_path):
    good = memory_map.memory_map(memory, cache_dir=tmp_path)
    (path,) = (tmp_path / "layouts").glob("*.npz")
    path.write_bytes(b"not a layout")
    again = memory_map.memory_map(memory, cache_dir=tmp_path)
    assert np.allclose(good.x, again.x)


def test_choosing_lights_the_neighbourhood_and_expanding_grows_it(memory, tmp_path):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    names = lambda idx: {ex.map.names[i] for i in idx}  # noqa: E731
    assert mx.Explorer.highlight(ex, None) == mx.Highlight() and ex.highlight("nobody").chosen is None
    hl = ex.highlight("alpha")
    assert names(hl.lit) == {"Alpha", "Alfa"} and len(hl.links) == 1 and hl.lit[0] == ex.map.position["alpha"]
    grown = ex.highlight("alpha", ("alfa",))
    assert names(grown.lit) == {"Alpha", "Alfa", "Alphonse", "Zed Vell"} and len(grown.links) == 3
    assert "Nox" not in names(grown.lit)


def legend(fig) -> dict[str, int]:
    """The counts the legend entries give ("person (12)"), by type."""
    return {tr.name.rsplit(" (", 1)[0]: int(tr.name.rsplit("(", 1)[1].rstrip(")").replace(",", ""))
            for tr in fig.data if tr.showlegend is not False and tr.name != "links"}


def test_the_map_counts_every_entity_and_names_the_most_linked(memory, tmp_path):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    fig = mx.map_figure(ex)
    assert sum(legend(fig).values()) == len(ex.map) == sum(len(tr.x) for tr in fig.data if tr.mode == "markers")
    named = [a.text for a in fig.layout.annotations]
    assert named[0] == "Alfa" and len(named) == len(ex.hubs()) and f"{len(named)} of the most linked" in mx.map_caption(ex)
    # the links are one image under the WebGL entities: a click's selection redraws the WebGL
    # scene, which software WebGL does in ~0.2 s for MuSiQue's markers but 1–2 s with its links in it
    assert {tr.type for tr in fig.data} == {"scattergl"} and all(tr.mode == "markers" for tr in fig.data)
    (image,) = fig.layout.images
    assert image.layer == "below" and image.source.startswith("data:image/png;base64,")
    mask = _png_alpha(image.source)
    (x0, x1), (y0, y1) = mx.MAP_VIEW
    at = lambda i: (int(round((y1 - ex.map.y[i]) / (y1 - y0) * (mx.LINKS_PX - 1))),  # noqa: E731
                    int(round((ex.map.x[i] - x0) / (x1 - x0) * (mx.LINKS_PX - 1))))
    for a, b in ex.map.links:  # every link is drawn: its ends and its middle are inked
        (ra, ca), (rb, cb) = at(a), at(b)
        assert mask[ra, ca] and mask[rb, cb] and mask[(ra + rb) // 2, (ca + cb) // 2]
    solo = at(ex.map.position["solo"])  # a lone entity: no link reaches it
    assert not mask[solo[0] - 4:solo[0] + 5, solo[1] - 4:solo[1] + 5].any()
    assert not mx.map_figure(mx.Explorer.of(ex.map, ("concept",))).layout.images  # a filter with no links


def test_counts_agree_between_caption_legend_and_the_neighbourhood_drawn(memory, tmp_path):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    hl = ex.highlight("alfa", ("zed vell",))
    fig = mx.neighbourhood_figure(memory, ex, hl)
    drawn = sum(len(tr.x) for tr in fig.data if tr.mode == "markers")
    assert sum(legend(fig).values()) == drawn == len(hl.lit) == 5
    words = mx.lit_caption(ex, hl)
    assert f"{len(hl.lit)} entities, {len(hl.links)} links" in words and "neighbours of 1 expanded" in words
    named = [a for a in fig.layout.annotations if a.name == "entity"]
    assert len(named) == len(hl.labelled) and hl.labelled[:2] == hl.lit[:2]  # the chosen and expanded first
    relations = {a.text for a in fig.layout.annotations if a.name == "relation"}
    assert relations and relations <= {"met", "mentored", "visited"}  # the chosen entity's own relations
    if len(hl.labelled) < len(hl.lit):
        assert f"{len(hl.labelled)} of them named" in words


def test_a_type_filter_draws_only_those_types_and_keeps_the_chosen_one(memory, tmp_path):
    mmap = memory_map.memory_map(memory, cache_dir=tmp_path)
    ex = mx.Explorer.of(mmap, ("place",))
    assert [mmap.names[i] for i in np.flatnonzero(ex.shown)] == ["Zed Vell"]
    assert legend(mx.map_figure(ex)) == {"location": 1} or legend(mx.map_figure(ex)) == {"place": 1}
    hl = ex.highlight("alfa")  # a person, chosen by a click or a search before the filter
    assert {mmap.names[i] for i in hl.lit} == {"Alfa", "Zed Vell"}
    assert dict(mx.lit_counts(ex, hl)) == {"place": 1, "person": 1}
    assert "1 of 8 entities (place)" in mx.map_caption(ex)


def test_hostile_names_stay_text_in_every_word_the_figures_write(memory, tmp_path):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    words = []
    for fig in (mx.map_figure(ex), mx.neighbourhood_figure(memory, ex, ex.highlight("zed vell"))):
        spec = json.loads(pio.to_json(fig))
        words += [a["text"] for a in spec["layout"].get("annotations", [])]
        words += [h for tr in spec["data"] for h in (tr.get("hovertext") or [])]
    assert any("javascript" in w for w in words)
    for w in words:  # plotly reads <b>, <a href>, <br> and &lt; &gt; &amp; in these: all escaped
        assert "<" not in w and ">" not in w and "& " not in w
    assert mx.plot_text(HOSTILE) == "&lt;a href=\"javascript:alert(1)\"&gt;x&lt;/a&gt; &amp; &lt;b&gt;y&lt;/b&gt;"


def test_a_click_returns_the_entity_s_place_on_the_map(memory, tmp_path):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    for fig in (mx.map_figure(ex), mx.neighbourhood_figure(memory, ex, ex.highlight("nox"))):
        for tr in fig.data:
            if tr.mode == "markers":  # every clickable trace: customdata is the map place of each point
                for i, x, y in zip(tr.customdata, tr.x, tr.y):
                    assert (ex.map.x[i], ex.map.y[i]) == pytest.approx((x, y), abs=1e-6)


def test_the_panel_facts_name_relations_passages_and_candidates(memory):
    facts = mx.entity_facts(memory, "alfa")
    assert facts.name == "Alfa" and facts.type == "person" and facts.mentions == 2
    assert {(r["head"], r["relation"], r["tail"]) for r in facts.relations} == {
        ("Alpha", "met", "Alfa"), ("Alfa", "mentored", "Alphonse"), ("Alfa", "visited", "Zed Vell")}
    assert [title for _, title, _ in facts.passages] == ["Alpha notes", "Alfa report"]
    with pytest.raises(KeyError):
        mx.entity_facts(memory, "nobody")


def test_a_neighbourhood_too_big_to_draw_keeps_the_chosen_the_expanded_and_the_most_linked(memory, tmp_path,
                                                                                           monkeypatch):
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    monkeypatch.setattr(mx, "LIT_MAX", 3)
    hl = ex.highlight("alfa", ("zed vell",))
    assert hl.reached == 5 and len(hl.lit) == 3 and hl.lit[:2] == (ex.map.position["alfa"], ex.map.position["zed vell"])
    lit = set(hl.lit)
    assert set(hl.links) == {(int(a), int(b)) for a, b in ex.map.links if a in lit and b in lit}
    assert hl.labelled and set(hl.labelled) <= lit  # no name written for an entity left undrawn
    assert "(the 3 most linked of the 5 reached)" in mx.lit_caption(ex, hl)
    assert sum(len(tr.x) for tr in mx.neighbourhood_figure(memory, ex, hl).data if tr.mode == "markers") == 3


def _png_alpha(uri: str) -> np.ndarray:
    """The alpha channel of the grey-and-alpha PNG line_raster writes (one IDAT, filter 0 rows)."""
    import base64
    import struct
    import zlib
    png = base64.b64decode(uri.split(",", 1)[1])
    w, h, depth, kind = struct.unpack(">IIBB", png[16:26])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (depth, kind) == (8, 4)
    size = struct.unpack(">I", png[33:37])[0]
    assert png[37:41] == b"IDAT"
    rows = np.frombuffer(zlib.decompress(png[41:41 + size]), dtype=np.uint8).reshape(h, 1 + 2 * w)
    assert not rows[:, 0].any()  # no row filter
    return rows[:, 1:].reshape(h, w, 2)[..., 1]


def _word_box(a, unit: float) -> tuple[float, float, float, float]:
    """A written word's box in map units, from where the figure anchors it (the size estimate the
    figures place words with; the browser test reads the real boxes)."""
    w, h = (0.6 * a.font.size * len(a.text) + 8) * unit, 1.5 * a.font.size * unit
    x0 = {"center": a.x - w / 2, "left": a.x, "right": a.x - w}[a.xanchor]
    y = a.y + (a.yshift or 0) * unit
    return x0, y - h / 2, x0 + w, y + h / 2


def test_every_word_is_written_inside_the_frame_even_at_the_edges(memory, tmp_path):
    """The neighbourhood is zoomed to its points, so names of points at its edges once ran past the
    frame (clipped on screen): they now start or end at their point, or are written under it."""
    ex = mx.Explorer.of(memory_map.memory_map(memory, cache_dir=tmp_path))
    hl = ex.highlight("zed vell")  # its neighbours Alfa and the long hostile name sit at the frame's edges
    fig = mx.neighbourhood_figure(memory, ex, hl)
    xs, ys = fig.layout.xaxis.range, fig.layout.yaxis.range
    h_px = mx.NEIGHBOURHOOD_HEIGHT - mx.LEGEND_PX
    unit = max((xs[1] - xs[0]) / mx.NEIGHBOURHOOD_PX, (ys[1] - ys[0]) / h_px)
    cx, cy = sum(xs) / 2, sum(ys) / 2
    frame = (cx - unit * mx.NEIGHBOURHOOD_PX / 2, cy - unit * h_px / 2, cx + unit * mx.NEIGHBOURHOOD_PX / 2,
             cy + unit * h_px / 2)
    words = [a for a in fig.layout.annotations if a.name == "entity"]
    assert "Zed Vell" in {a.text for a in words} and len(words) >= 2
    for a in fig.layout.annotations:
        x0, y0, x1, y1 = _word_box(a, unit)
        assert frame[0] <= x0 and x1 <= frame[2] and frame[1] <= y0 and y1 <= frame[3], a.text
    placed = mx._Places(([0.0, 1.0], [0.0, 1.0]), 100, 100)  # a 100 px frame, one unit across
    assert placed.take(0.05, 0.5, "left edge", 12) == mx.Spot("left", 0)  # starts at its point, inwards
    assert placed.take(0.95, 0.3, "right edge", 12) == mx.Spot("right", 0)
    assert placed.take(0.5, 0.5, "x" * 30, 12) is None  # wider than the frame: not written at all
    assert placed.take(0.5, 0.95, "top", 12, 12) == mx.Spot("center", -12)  # no room above: under it
