"""The one renderer of typed pictures (memrag.picture): a plotly figure that Streamlit draws with
`st.plotly_chart(..., on_select="rerun", selection_mode="points")`, so a click reaches Python.

Links are SVG line traces under the points; nodes and edge handles are points whose customdata
says what they are ("node|<id>", "edge|<id>"), SVG up to SVG_POINTS of them and WebGL beyond (each
WebGL chart costs the browser ~0.1-0.5 s for its context, more than SVG takes for a few hundred
points); names and relations are annotations placed by memrag.viz.label_places (SVG text a test
reads back). The axes are the design box's pixels (memrag.viz.layout), so a word's place is decided
here, not by the browser; every text is escaped, since plotly reads a few tags and entities in it."""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import plotly.graph_objects as go

from memrag.picture import Picture, PictureEdge, PictureNode
from memrag.viz import label_places, layout, style
from memrag.viz.kept import Kept
from memrag.viz.look import Look

DESIGN_WIDTH = 840.0  # px: the focus graph's width at 1,280 × 720, sidebar open (the narrowest it is drawn)
LEGEND_ROW_PX = 24
MAX_WORD = 30  # characters of a name written on the picture (all of it on hover and in the panel)
NODE, EDGE = "node|", "edge|"
SVG_POINTS = 1000  # nodes and edge handles drawn as SVG; a larger picture's points are WebGL


def plot_text(text: str) -> str:
    """Text as plotly writes it literally: its tags and entities need only &, < and > escaped."""
    return html.escape(text, quote=False)


def short(text: str, limit: int = MAX_WORD) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def target_of(customdata: str) -> tuple[str, str] | None:
    """("node" | "edge", id) from a clicked point's customdata; None for anything else."""
    for kind, prefix in (("node", NODE), ("edge", EDGE)):
        if isinstance(customdata, str) and customdata.startswith(prefix):
            return kind, customdata[len(prefix):]
    return None


@dataclass(frozen=True)
class Drawn:
    """What a drawing of a picture placed: the figure, and for tests and the PNG the words written."""
    figure: go.Figure
    places: dict[str, tuple[float, float]]
    words: list[label_places.Placed]


def legend_px(picture: Picture, look: Look, width: float = DESIGN_WIDTH) -> int:
    """The room (px) the picture's legend takes above its graph in a `width` design box."""
    return _legend_rows(picture, width, look) * LEGEND_ROW_PX


def _legend_rows(picture: Picture, width: float, look: Look) -> int:
    if look.compact or not picture.legend:
        return 0
    rows, used = 1, 0.0
    for entry in picture.legend:
        w = label_places.size_of(entry.text, 12)[0] + 46  # the mark and the gap after it
        if used and used + w > width:
            rows, used = rows + 1, 0.0
        used += w
    return rows


def _visible(picture: Picture, step: int | None) -> tuple[set[str], set[str], set[str]]:
    """(drawn ids, faded ids, lit ids) at `step` (everything drawn when it has no look)."""
    ids = {n.id for n in picture.nodes} | {e.id for e in picture.edges}
    sl = picture.step_look(step)
    if sl is None:
        return ids, set(), set()
    return (set(sl.shown) & ids if sl.shown else ids), set(sl.faded), set(sl.lit)


def _words(picture: Picture, at: dict[str, tuple[float, float]], drawn: set[str], look: Look,
           width: float, height: float, marks: dict[str, float]) -> list[label_places.Placed]:
    """Column heads, then the names that must be written, bold relations, then other names by weight;
    of what `drawn` holds (a step's faded nodes and edges are left unwritten: the page's names are
    the step's own)."""
    heads = []
    if picture.layer_titles:
        xs = defaultdict(list)
        for n in picture.nodes:
            if n.id in at and n.layer is not None:
                xs[n.layer].append(at[n.id][0])
        for layer, title in enumerate(picture.layer_titles):
            if xs.get(layer):
                heads.append(label_places.Word(f"head:{layer}", title, min(xs[layer]), 12, style.label_px(look),
                                               on_edge=True))
    heads = [label_places.Placed(w.id, w.text, w.x, 14, w.px, (w.x - 8, 14 - w.px * 0.7, w.x - 8 +
                                 label_places.size_of(w.text, w.px)[0], 14 + w.px * 0.7), "left", -8.0)
             for w in heads]
    blocked = [h.box for h in heads] + [label_places.marker_box(*at[i], s) for i, s in marks.items()]
    px = style.label_px(look)
    names = [n for n in picture.nodes if n.id in drawn and n.id in at]
    names.sort(key=lambda n: (not n.labelled, n.kind == "count", -n.weight))
    words = [label_places.Word(n.id, short(n.label), *at[n.id], px, marks.get(n.id, 0) / 2,
                               leftward=n.layer == 0)
             for n in names if n.labelled]
    for e in picture.edges:
        if e.bold and e.relation and e.id in drawn and e.source in at and e.target in at:
            (x0, y0), (x1, y1) = at[e.source], at[e.target]
            arrow = f"{e.relation} →" if x1 >= x0 else f"← {e.relation}"
            words.append(label_places.Word(e.id, short(arrow), (x0 + x1) / 2, (y0 + y1) / 2, style.relation_px(look),
                                           on_edge=True, along=(x0, y0, x1, y1)))
    words += [label_places.Word(n.id, short(n.label), *at[n.id], px, marks.get(n.id, 0) / 2)
              for n in names if not n.labelled]
    return heads + label_places.place(words, width, height, blocked)


DRAWN_KEPT = 128  # recent drawings kept: a rerun (a click, a slider step back) draws nothing again
_drawn: Kept[Drawn] = Kept(DRAWN_KEPT)


def draw(picture: Picture, look: Look, *, width: float = DESIGN_WIDTH, height: float = 600.0,
         step: int | None = None, top: int = 0) -> Drawn:
    """Draw `picture` (at `step`'s look, when it has one) in a `width` × `height` design box (less
    height when the picture needs less: memrag.viz.layout.fitted_height), with at least `top` px
    above it for the legend (a replay's steps keep their graph in place). The same arguments give
    the same drawing, made once; it is shared: read it, never change it."""
    return _drawn.get((picture, look, float(width), float(height), step, top),
                      lambda: _draw(picture, look, width, height, step, top))


def _draw(picture: Picture, look: Look, width: float, height: float, step: int | None, top: int) -> Drawn:
    height = layout.fitted_height(picture, height)
    at = layout.places(picture, width, height)
    drawn, faded, lit = _visible(picture, step)
    nodes = [n for n in picture.nodes if n.id in drawn and n.id in at]
    edges = [e for e in picture.edges if e.id in drawn and e.source in at and e.target in at]
    node_marks = {n.id: style.node_mark(n, look) for n in nodes}
    fig = go.Figure()
    points = go.Scatter if len(nodes) + len(edges) <= SVG_POINTS else go.Scattergl
    _edge_traces(fig, edges, at, look, faded)
    _edge_handles(fig, edges, at, look, faded, points)
    _node_trace(fig, nodes, at, node_marks, faded, lit, points)
    words = [] if look.compact else _words(picture, at, drawn - faded, look, width, height,
                                           {i: m.size for i, m in node_marks.items()})
    annotations = [dict(x=w.x, y=w.y, text=plot_text(w.text), showarrow=False, xanchor=w.xanchor, yanchor="middle",
                        xshift=w.dx, yshift=-w.dy,
                        font=dict(size=w.px, color="#666" if w.id.startswith("head:") else "#111"),
                        bgcolor="rgba(255,255,255,0.8)", borderpad=1, name=w.id) for w in words]
    _legend(fig, picture, look)
    rows = _legend_rows(picture, width, look)
    room = max(rows * LEGEND_ROW_PX, top)
    fig.update_layout(
        height=height + room, margin=dict(l=0, r=0, b=0, t=room),
        showlegend=bool(rows), dragmode=False, clickmode="event+select", hovermode="closest",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, itemclick=False, itemdoubleclick=False,
                    font=dict(size=12)),
        xaxis=dict(visible=False, range=[0, width], fixedrange=True),
        yaxis=dict(visible=False, range=[height, 0], fixedrange=True),
        plot_bgcolor="white", paper_bgcolor="white", annotations=annotations,
        uirevision=picture.name, meta=dict(design=[width, height]))
    return Drawn(fig, at, words)


def picture_figure(picture: Picture, look: Look, *, width: float = DESIGN_WIDTH, height: float = 600.0,
                   step: int | None = None, top: int = 0) -> go.Figure:
    """The figure alone (what a page passes to `st.plotly_chart`)."""
    return draw(picture, look, width=width, height=height, step=step, top=top).figure


def _edge_traces(fig: go.Figure, edges: Iterable[PictureEdge], at: dict[str, tuple[float, float]], look: Look,
                 faded: set[str]) -> None:
    """One line trace per look of edge (an SVG path each, under the points)."""
    groups: dict[tuple, list[PictureEdge]] = defaultdict(list)
    for e in edges:
        m = style.edge_mark(e, look)
        groups[(m.colour, m.width, m.dash, e.id in faded)].append(e)
    for (colour, width, dash, dim), members in sorted(groups.items(), key=lambda kv: kv[0][1]):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for e in members:
            (x0, y0), (x1, y1) = at[e.source], at[e.target]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line=dict(color=colour, width=width, dash=dash), opacity=0.25 if dim else 0.9))


def _edge_handles(fig: go.Figure, edges: list[PictureEdge], at: dict[str, tuple[float, float]], look: Look,
                  faded: set[str], points: type) -> None:
    """A small point at each edge's middle: what a click on an edge lands on."""
    if not edges:
        return
    mid = [((at[e.source][0] + at[e.target][0]) / 2, (at[e.source][1] + at[e.target][1]) / 2) for e in edges]
    fig.add_trace(points(
        x=[m[0] for m in mid], y=[m[1] for m in mid], mode="markers", showlegend=False, name="edges",
        customdata=[EDGE + e.id for e in edges], hoverinfo="text",
        hovertext=[plot_text(e.tooltip or e.relation or e.kind) for e in edges],
        marker=dict(size=[(9 if e.bold else 6) * look.scale for e in edges], symbol="diamond",
                    color=[style.edge_mark(e, look).colour for e in edges],
                    opacity=[0.25 if e.id in faded else 0.9 for e in edges])))


def _node_trace(fig: go.Figure, nodes: list[PictureNode], at: dict[str, tuple[float, float]],
                marks: dict[str, style.NodeMark], faded: set[str], lit: set[str], points: type) -> None:
    if not nodes:
        return
    m = [marks[n.id] for n in nodes]
    fig.add_trace(points(
        x=[at[n.id][0] for n in nodes], y=[at[n.id][1] for n in nodes], mode="markers", showlegend=False,
        name="nodes", customdata=[NODE + n.id for n in nodes], hoverinfo="text",
        hovertext=[plot_text(n.tooltip or n.label) for n in nodes],
        marker=dict(size=[k.size for k in m], color=[k.fill for k in m], symbol=[k.symbol for k in m],
                    opacity=[0.3 if n.id in faded else 1.0 for n in nodes],
                    line=dict(color=["#000" if n.id in lit else k.ring for n, k in zip(nodes, m)],
                              width=[3.0 if n.id in lit else k.ring_width for n, k in zip(nodes, m)]))))


def _legend(fig: go.Figure, picture: Picture, look: Look) -> None:
    """Legend entries as empty traces, each with its mark (a node's fill and shape, an edge's line)."""
    for entry in picture.legend:
        m = style.legend_mark(entry.mark, look)
        if isinstance(m, style.EdgeMark):
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=plot_text(entry.text),
                                     line=dict(color=m.colour, width=m.width, dash=m.dash), hoverinfo="skip"))
        else:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=plot_text(entry.text), hoverinfo="skip",
                                     marker=dict(color=m.fill, symbol=m.symbol, size=12,
                                                 line=dict(color=m.ring, width=m.ring_width))))
