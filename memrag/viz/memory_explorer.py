"""The whole memory explorer: every entity on one map (plotly, WebGL), one entity's neighbourhood
drawn beside it, zoomed and named, and the facts its panel shows.

The map is the memory's fixed layout (memory_map) and stays as it is when an entity is chosen (a
redraw of 18,000 points would cost seconds); what a click, a search or "expand neighbours" changes
is which entities are lit: the chosen one, its neighbours, and the neighbours of each expanded
one. Every count about them (caption, legend, names) comes from one `Highlight`.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from memrag.index.memory import Memory
from memrag.viz import line_raster, palette
from memrag.viz.memory_map import MemoryMap

HUB_LABELS = 25  # entities named on the whole map (the most linked ones shown)
LIT_LABELS = 30  # lit entities named at most (the chosen, the expanded, then the most linked)
LIT_MAX = 250  # lit entities drawn at most (the chosen, the expanded, then the most linked): a panel-sized chart
RELATION_LABELS = 16  # relation names written on lit links at most
HEIGHT = 640
LABEL_PX = 12
MIN_SPAN = 0.08  # the narrowest view a neighbourhood zooms to (the map spans 2)
PLOT_PX = 540  # the map's width at 1,440 px (three fifths of the page): words are placed for it
NEIGHBOURHOOD_PX, NEIGHBOURHOOD_HEIGHT = 360, 420  # the lit neighbourhood's drawing, beside the map
LEGEND_PX = 60  # the legend's rows above a chart take this much of its height at most
HUB_SCAN = 400  # most linked entities tried for a place on the whole map
LINKS_PX = 2048  # the links image's side: sharp up to ~4× zoom on a 540 px map
MAP_VIEW = ([-1.05, 1.05], [-1.05, 1.05])  # the whole map's view (its layout spans [-1, 1]), where names are placed


@dataclass(frozen=True)
class Spot:
    """Where a word is written beside its point: plotly's xanchor and the lift in pixels (up > 0)."""

    anchor: str = "center"
    lift_px: float = 0.0


class _Places:
    """Where words are written, so that none lands on another nor past the frame's edge: each
    word's box is estimated in map units from its length and size (the chart drawn about
    width_px × height_px pixels, which shows the view's centre with one scale on both axes). A word
    is centred over its point, or starts or ends at it near the left or right edge, and is written
    under the point near the top."""

    def __init__(self, view: tuple[list[float], list[float]] | None, width_px: int = PLOT_PX,
                 height_px: int = HEIGHT - LEGEND_PX) -> None:
        xs, ys = view or MAP_VIEW
        self.unit = max((xs[1] - xs[0]) / width_px, (ys[1] - ys[0]) / height_px)  # map units per pixel
        cx, cy = (xs[0] + xs[1]) / 2, (ys[0] + ys[1]) / 2
        half_w, half_h = self.unit * width_px / 2, self.unit * height_px / 2  # what the chart shows
        self.frame = (cx - half_w, cy - half_h, cx + half_w, cy + half_h)
        self.boxes: list[tuple[float, float, float, float]] = []

    def take(self, x: float, y: float, text: str, size: int, lift_px: float = 0.0) -> Spot | None:
        """The word's place if it finds a free one inside the frame (None: not written)."""
        w, h = (0.6 * size * len(text) + 8) * self.unit, 1.5 * size * self.unit
        left, bottom, right, top = self.frame
        if x - w / 2 >= left and x + w / 2 <= right:
            anchor, x0 = "center", x - w / 2
        elif x - w / 2 < left and x + w <= right:
            anchor, x0 = "left", x
        elif x + w / 2 > right and x - w >= left:
            anchor, x0 = "right", x - w
        else:
            return None  # wider than the room on either side
        for lift in (lift_px, -lift_px) if lift_px else (0.0,):
            cy = y + lift * self.unit
            box = (x0, cy - h / 2, x0 + w, cy + h / 2)
            if box[1] < bottom or box[3] > top:
                continue
            if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in self.boxes):
                continue
            self.boxes.append(box)
            return Spot(anchor, lift)
        return None


def plot_text(text: str) -> str:
    """Text for plotly's SVG text and hover labels, which read a few tags (<b>, <a href>, <br>)
    and the entities &amp; &lt; &gt;: escaping those three shows any text as the text it is."""
    return html.escape(text, quote=False)


@dataclass(frozen=True)
class Highlight:
    """What is lit on the map: positions in the map's entity order."""

    chosen: int | None = None
    expanded: tuple[int, ...] = ()
    lit: tuple[int, ...] = ()  # chosen + expanded + their neighbours, chosen first
    links: tuple[tuple[int, int], ...] = ()  # map links between lit entities
    labelled: tuple[int, ...] = ()
    reached: int = 0  # entities the expansion reaches; `lit` keeps at most LIT_MAX of them


@dataclass
class Explorer:
    """The map with a type filter applied: which entities are drawn, and their neighbours lists."""

    map: MemoryMap
    shown: np.ndarray  # bool per entity
    types: tuple[str, ...] | None
    adjacency: list[list[int]] = field(repr=False, default_factory=list)

    @classmethod
    def of(cls, mmap: MemoryMap, types: tuple[str, ...] | None = None) -> "Explorer":
        shown = np.ones(len(mmap), dtype=bool) if not types else np.isin(np.array(mmap.types), list(types))
        adjacency: list[list[int]] = [[] for _ in range(len(mmap))]
        for a, b in mmap.links:
            adjacency[a].append(int(b))
            adjacency[b].append(int(a))
        return cls(mmap, shown, tuple(types) if types else None, adjacency)

    def shown_links(self) -> np.ndarray:
        links = self.map.links
        if not len(links):
            return links
        return links[self.shown[links[:, 0]] & self.shown[links[:, 1]]]

    def highlight(self, chosen: str | None, expanded: tuple[str, ...] = ()) -> Highlight:
        """Light the chosen entity (always drawn, whatever its type), its shown neighbours, and the
        shown neighbours of each expanded entity."""
        pos = self.map.position
        if chosen not in pos:
            return Highlight()
        c = pos[chosen]
        ex = tuple(pos[k] for k in expanded if k in pos)
        lit: dict[int, None] = {c: None}
        for e in (c, *ex):
            lit.setdefault(e, None)
            for nb in sorted(self.adjacency[e], key=lambda i: (-self.map.degree[i], i)):
                if self.shown[nb]:
                    lit.setdefault(nb, None)
        first = [c, *[e for e in ex if e != c]][:LIT_MAX]
        firsts = set(first)
        rest = sorted((i for i in lit if i not in firsts), key=lambda i: (-self.map.degree[i], i))
        reached, drawn = len(lit), [i for i in lit if i in firsts] + rest[:LIT_MAX - len(first)]
        members = np.zeros(len(self.map), dtype=bool)
        members[drawn] = True
        ends = self.map.links
        links = tuple(map(tuple, ends[members[ends[:, 0]] & members[ends[:, 1]]].tolist())) if len(ends) else ()
        places = _Places(view_range(self.map, tuple(drawn)), NEIGHBOURHOOD_PX, NEIGHBOURHOOD_HEIGHT - LEGEND_PX)
        order = first + rest[:LIT_MAX - len(first)]  # the chosen and expanded named first, then the most linked
        named = [i for i in order if places.take(self.map.x[i], self.map.y[i], self.map.names[i], LABEL_PX,
                                                 LABEL_PX)][:LIT_LABELS]
        return Highlight(c, ex, tuple(drawn), links, tuple(named), reached)

    def hubs(self) -> list[int]:
        """The most linked drawn entities whose names find a free place on the whole map."""
        return [i for i, _ in self.hub_spots()]

    def hub_spots(self) -> list[tuple[int, Spot]]:
        """The hubs with where each name is written."""
        places = _Places(None)
        ranked = [int(i) for i in np.argsort(-self.map.degree, kind="stable") if self.shown[i]][:HUB_SCAN]
        spots = ((i, places.take(self.map.x[i], self.map.y[i], self.map.names[i], LABEL_PX, LABEL_PX))
                 for i in ranked)
        return [(i, spot) for i, spot in spots if spot][:HUB_LABELS]


# ------------------------------------------------------------------ counts and words
def type_counts(ex: Explorer) -> list[tuple[str, int]]:
    """(type, entities drawn) per type on the map, most drawn first: the map legend's numbers."""
    return Counter(ex.map.types[i] for i in np.flatnonzero(ex.shown)).most_common()


def lit_counts(ex: Explorer, hl: Highlight) -> list[tuple[str, int]]:
    """(type, entities lit) per type, most first: the neighbourhood legend's numbers."""
    return Counter(ex.map.types[i] for i in hl.lit).most_common()


def map_caption(ex: Explorer) -> str:
    m = ex.map
    words = (f"All {len(m):,} entities and {len(m.links):,} links of this memory" if ex.types is None else
             f"{int(ex.shown.sum()):,} of {len(m):,} entities ({', '.join(ex.types)}) and "
             f"{len(ex.shown_links()):,} of {len(m.links):,} links")
    return (f"{words}. {len(ex.hubs())} of the most linked are named; click an entity, or find one by name, "
            "to see its neighbourhood and what the memory holds about it.")


def lit_caption(ex: Explorer, hl: Highlight) -> str:
    m = ex.map
    more = f" and the neighbours of {len(hl.expanded)} expanded" if hl.expanded else ""
    named = f"; {len(hl.labelled)} of them named" if len(hl.labelled) < len(hl.lit) else ""
    capped = f" (the {len(hl.lit)} most linked of the {hl.reached:,} reached)" if hl.reached > len(hl.lit) else ""
    return (f"Lit: {m.names[hl.chosen]}, its neighbours{more}: {len(hl.lit)} entities, "
            f"{len(hl.links)} links{named}{capped}.")


# ------------------------------------------------------------------ the figures
def _segments(x: np.ndarray, y: np.ndarray, links: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Link end points with a gap (NaN) after each, as one line trace draws many links."""
    if not len(links):
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    gap = np.full(len(links), np.nan, np.float32)
    return (np.column_stack([x[links[:, 0]], x[links[:, 1]], gap]).ravel(),
            np.column_stack([y[links[:, 0]], y[links[:, 1]], gap]).ravel())


def view_range(m: MemoryMap, lit: tuple[int, ...]) -> tuple[list[float], list[float]] | None:
    """The square around the lit entities (None: the whole map)."""
    if not lit:
        return None
    idx = np.array(lit)
    xs, ys = m.x[idx], m.y[idx]
    cx, cy = (xs.max() + xs.min()) / 2, (ys.max() + ys.min()) / 2
    half = max(xs.max() - xs.min(), ys.max() - ys.min(), MIN_SPAN) / 2 * 1.25
    return [float(cx - half), float(cx + half)], [float(cy - half), float(cy + half)]


def _relation_names(memory: Memory, m: MemoryMap, links: tuple[tuple[int, int], ...]) -> list[str]:
    wanted = set(links)
    names: dict[tuple[int, int], list[str]] = {}
    for key in {m.keys[i] for pair in links for i in pair}:
        for tid in memory.triples_of.get(key, []):
            t = memory.triples[tid]
            a, b = m.position.get(t.head_key), m.position.get(t.tail_key)
            if a is None or b is None:
                continue
            pair = (min(a, b), max(a, b))
            if pair in wanted and t.relation not in names.setdefault(pair, []):
                names[pair].append(t.relation)
    return [" / ".join(names.get(p, [])[:2]) for p in links]


def _name(m: MemoryMap, i: int, colour: str, spot: Spot) -> dict:
    return dict(x=float(m.x[i]), y=float(m.y[i]), text=plot_text(m.names[i]), showarrow=False,
                xanchor=spot.anchor, yshift=spot.lift_px, font=dict(size=LABEL_PX, color=colour),
                bgcolor="rgba(255,255,255,0.7)", name="entity")


def _type_colours(m: MemoryMap) -> dict[str, str]:
    """The colours every graph gives a type, the same on the map and on the neighbourhood."""
    return palette.group_colours(sorted(set(m.types)))


def _sizes(m: MemoryMap) -> np.ndarray:
    return (4 + 8 * np.sqrt(np.minimum(m.degree, 50) / 50)).astype(np.float32)


def _layout(fig: go.Figure, height: int, title: str, words: list[dict],
            view: tuple[list[float], list[float]] | None, revision: str) -> None:
    fig.update_layout(
        height=height, margin=dict(l=0, r=0, t=0, b=0), dragmode="pan", clickmode="event+select",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, title=dict(text=title)),
        xaxis=dict(visible=False, range=view[0] if view else None),
        yaxis=dict(visible=False, scaleanchor="x", range=view[1] if view else None),
        plot_bgcolor="white", uirevision=revision, annotations=words)


def map_figure(ex: Explorer) -> go.Figure:
    """The whole memory: the links as one image under one WebGL marker trace per entity type (its
    legend entry counts it); the most linked names as annotations (SVG text above the canvas, whose
    place and size a test reads in the page). It does not change with a click: plotly's own
    selection marks the clicked entity, and Python redraws only the panel. Every point's customdata
    is its place on the map.

    The links are a picture, not a trace: a click's selection redraws the WebGL scene, and
    software WebGL (headless Chromium, machines without a GPU) redraws MuSiQue's 15,651 links in
    1–2 s but its markers alone in ~0.2 s; as an SVG path they still cost ~1.5 s of the first draw
    (plotly.js newPlot at load 10–13: links in WebGL 2.5–4.7 s, SVG 2–3.2 s, an image or none
    1.0–1.5 s). The neighbourhood beside the map draws the chosen entity's links crisply."""
    m = ex.map
    counts = type_counts(ex)
    colour = _type_colours(m)
    x, y = m.x.astype(np.float32), m.y.astype(np.float32)
    fig = go.Figure()
    types, size = np.array(m.types), _sizes(m)
    for t, n in counts:
        idx = np.flatnonzero(ex.shown & (types == t))
        fig.add_trace(go.Scattergl(
            x=x[idx], y=y[idx], customdata=idx, mode="markers", name=plot_text(f"{t} ({n:,})"),
            marker=dict(size=size[idx], color=colour[t], opacity=0.8, line=dict(width=0)),
            # a click selects the entity: plotly marks it in the browser, no redraw from Python
            selected=dict(marker=dict(size=16, opacity=1.0)), unselected=dict(marker=dict(opacity=0.35)),
            hovertext=[plot_text(m.names[i]) for i in idx], hoverinfo="text"))
    _layout(fig, HEIGHT, "type (entities)", [_name(m, i, "#222", spot) for i, spot in ex.hub_spots()], MAP_VIEW,
            f"map-{m.fingerprint}-{ex.types}")
    fig.update_layout(images=[links_image(ex)] if len(ex.shown_links()) else [])
    return fig


def links_image(ex: Explorer) -> dict:
    """The shown links drawn into one image spanning the map's view (LINKS_PX square), placed in
    map units under the points."""
    (x0, x1), (y0, y1) = MAP_VIEW
    links = ex.shown_links()
    scale_x, scale_y = (LINKS_PX - 1) / (x1 - x0), (LINKS_PX - 1) / (y1 - y0)
    px, py = (ex.map.x - x0) * scale_x, (y1 - ex.map.y) * scale_y  # image rows go down
    mask = line_raster.rasterize(px[links[:, 0]], py[links[:, 0]], px[links[:, 1]], py[links[:, 1]], LINKS_PX)
    return dict(source=line_raster.png_data_uri(mask), xref="x", yref="y", x=x0, y=y1, sizex=x1 - x0,
                sizey=y1 - y0, sizing="stretch", layer="below", name="links")


def neighbourhood_figure(memory: Memory, ex: Explorer, hl: Highlight) -> go.Figure:
    """The lit entities where the map has them, zoomed: their links, one marker trace per type
    (its legend entry counts the lit entities of that type), the chosen entity ringed black and
    expanded ones red, names and the chosen entity's relations where they find room. SVG (a few
    hundred points at most); customdata is each entity's place on the map, as there."""
    m = ex.map
    counts = lit_counts(ex, hl)
    colour = _type_colours(m)
    x, y = m.x.astype(np.float32), m.y.astype(np.float32)
    fig = go.Figure()
    hx, hy = _segments(x, y, np.array(hl.links, dtype=np.int64).reshape(-1, 2))
    fig.add_trace(go.Scatter(x=hx, y=hy, mode="lines", line=dict(width=1.2, color="#888"), hoverinfo="skip",
                             showlegend=False, name="links"))
    lit = np.array(hl.lit, dtype=np.int64)
    types, size = np.array(m.types)[lit], _sizes(m)[lit] + 4
    for t, n in counts:
        idx = lit[types == t]
        ring = ["#111" if i == hl.chosen else ("#d62728" if i in hl.expanded else "#fff") for i in idx]
        fig.add_trace(go.Scatter(
            x=x[idx], y=y[idx], customdata=idx, mode="markers", name=plot_text(f"{t} ({n})"),
            marker=dict(size=size[types == t], color=colour[t], line=dict(width=2, color=ring)),
            hovertext=[plot_text(m.names[i]) for i in idx], hoverinfo="text"))
    view = view_range(m, hl.lit)
    places = _Places(view, NEIGHBOURHOOD_PX, NEIGHBOURHOOD_HEIGHT - LEGEND_PX)
    # taken again in the order `highlight` took them, so each name lands where it found room there
    words = [_name(m, i, "#111", places.take(m.x[i], m.y[i], m.names[i], LABEL_PX, LABEL_PX) or Spot())
             for i in hl.labelled]
    own = tuple(p for p in hl.links if hl.chosen in p)[:RELATION_LABELS]
    for (a, b), r in zip(own, _relation_names(memory, m, own)):
        mid_x, mid_y = float(x[a] + x[b]) / 2, float(y[a] + y[b]) / 2
        if r and (spot := places.take(mid_x, mid_y, r, LABEL_PX - 1)):
            words.append(dict(x=mid_x, y=mid_y, text=plot_text(r), showarrow=False, xanchor=spot.anchor,
                              font=dict(size=LABEL_PX - 1, color="#555"), name="relation"))
    _layout(fig, NEIGHBOURHOOD_HEIGHT, "lit (entities)", words, view, f"lit-{m.fingerprint}-{hl.chosen}")
    return fig


# ------------------------------------------------------------------ the panel's facts
@dataclass(frozen=True)
class EntityFacts:
    key: str
    name: str
    type: str
    mentions: int
    relations: list[dict[str, object]]
    passages: list[tuple[int, str, str]]  # (chunk id, title, text)
    candidates: list[str]


def entity_facts(memory: Memory, key: str, passages: int = 5) -> EntityFacts:
    """What the panel says about one entity: its triples (with their passage), the passages it is
    mentioned in, and its coreference candidates."""
    node = memory.entity(key)
    if node is None:
        raise KeyError(key)
    titles = {d.doc_id: d.title for d in memory.documents}
    rows = []
    for tid in memory.triples_of.get(key, []):
        t = memory.triples[tid]
        c = memory.chunks[t.chunk_id]
        rows.append({"head": t.head, "relation": t.relation, "tail": t.tail,
                     "passage": f"{titles.get(c.doc_id, c.doc_id)} · chunk {t.chunk_id}"})
    texts = []
    for cid in node.chunk_ids[:passages]:
        c = memory.chunks[cid]
        texts.append((cid, titles.get(c.doc_id, c.doc_id), c.text))
    cands = [f"{m.name} ({m.similarity:.2f})" for m in memory.coref_of(key)]
    return EntityFacts(key, node.name, node.type or "other", len(node.engram_ids), rows, texts, cands)
