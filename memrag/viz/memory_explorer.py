"""The whole memory explorer: every entity on one map (plotly, WebGL), one entity's neighbourhood
lit up and labelled on it, and the facts its panel shows.

The map is the memory's fixed layout (memory_map); what changes with a click, a search or
"expand neighbours" is which entities are lit: the chosen one, its neighbours, and the neighbours
of each expanded one. Every count the page shows (caption, legend, labels) comes from one
`Highlight`, so they cannot disagree.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go

from memrag.index.memory import Memory
from memrag.viz import palette
from memrag.viz.memory_map import MemoryMap

HUB_LABELS = 25  # entities named on the whole map (the most linked ones shown)
LIT_LABELS = 40  # lit entities named at most (the chosen, the expanded, then the most linked)
RELATION_LABELS = 40  # relation names written on lit links at most
HEIGHT = 640
LABEL_PX = 12
MIN_SPAN = 0.08  # the narrowest view a neighbourhood zooms to (the map spans 2)
PLOT_PX = 540  # the map's width at 1,440 px (three fifths of the page): words are placed for it
HUB_SCAN = 400  # most linked entities tried for a place on the whole map


class _Places:
    """Where words are written, so that none lands on another: each word's box is estimated in
    map units from its length and size (the map is drawn about PLOT_PX × HEIGHT pixels)."""

    def __init__(self, view: tuple[list[float], list[float]] | None) -> None:
        xs, ys = view if view else ([-1.05, 1.05], [-1.05, 1.05])
        self.unit = max((xs[1] - xs[0]) / PLOT_PX, (ys[1] - ys[0]) / HEIGHT)  # map units per pixel
        self.boxes: list[tuple[float, float, float, float]] = []

    def take(self, x: float, y: float, text: str, size: int, lift_px: float = 0.0) -> bool:
        w, h = (0.6 * size * len(text) + 8) * self.unit, 1.5 * size * self.unit
        cy = y + lift_px * self.unit
        box = (x - w / 2, cy - h / 2, x + w / 2, cy + h / 2)
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in self.boxes):
            return False
        self.boxes.append(box)
        return True


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

    @property
    def neighbours(self) -> int:
        return len(self.lit) - (self.chosen is not None) - len([e for e in self.expanded if e != self.chosen])


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
        members = set(lit)
        links = tuple((int(a), int(b)) for a, b in self.map.links if a in members and b in members)
        first = [c, *[e for e in ex if e != c]]
        rest = sorted((i for i in lit if i not in first), key=lambda i: (-self.map.degree[i], i))
        places = _Places(view_range(self.map, tuple(lit)))
        named = [i for i in first + rest if places.take(self.map.x[i], self.map.y[i], self.map.names[i], LABEL_PX,
                                                         LABEL_PX)][:LIT_LABELS]
        return Highlight(c, ex, tuple(lit), links, tuple(named))

    def hubs(self) -> list[int]:
        """The most linked drawn entities whose names find a free place on the whole map."""
        places = _Places(None)
        ranked = [int(i) for i in np.argsort(-self.map.degree, kind="stable") if self.shown[i]][:HUB_SCAN]
        return [i for i in ranked if places.take(self.map.x[i], self.map.y[i], self.map.names[i], LABEL_PX,
                                                 LABEL_PX)][:HUB_LABELS]


# ------------------------------------------------------------------ counts and words
def type_counts(ex: Explorer, hl: Highlight) -> list[tuple[str, int, int]]:
    """(type, drawn, lit) per type, most drawn first: the legend's numbers."""
    types = ex.map.types
    drawn = Counter(types[i] for i in np.flatnonzero(ex.shown))
    if hl.chosen is not None and not ex.shown[hl.chosen]:
        drawn[types[hl.chosen]] += 1
    lit = Counter(types[i] for i in hl.lit)
    return [(t, n, lit.get(t, 0)) for t, n in drawn.most_common()]


def caption(ex: Explorer, hl: Highlight) -> str:
    m = ex.map
    drawn = int(ex.shown.sum()) + (hl.chosen is not None and not ex.shown[hl.chosen])
    links = len(ex.shown_links())
    words = (f"All {len(m):,} entities and {len(m.links):,} links of this memory" if ex.types is None else
             f"{drawn:,} of {len(m):,} entities ({', '.join(ex.types)}) and {links:,} of {len(m.links):,} links")
    if hl.chosen is None:
        return (f"{words}. {len(ex.hubs())} of the most linked are named; click an entity, or find one "
                "by name, to light its neighbourhood.")
    more = f" and the neighbours of {len(hl.expanded)} expanded" if hl.expanded else ""
    named = f"; {len(hl.labelled)} of them named" if len(hl.labelled) < len(hl.lit) else ""
    return (f"{words}. Lit: {m.names[hl.chosen]}, its neighbours{more}: {len(hl.lit)} entities, "
            f"{len(hl.links)} links{named}.")


# ------------------------------------------------------------------ the figure
def _colours(types: list[tuple[str, int, int]]) -> dict[str, str]:
    return palette.group_colours([t for t, _, _ in types])  # the colours every graph gives a type


def _segments(x: np.ndarray, y: np.ndarray, links: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Link end points with a gap (NaN) after each, as one line trace draws many links."""
    if not len(links):
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    gap = np.full(len(links), np.nan, np.float32)
    return (np.column_stack([x[links[:, 0]], x[links[:, 1]], gap]).ravel(),
            np.column_stack([y[links[:, 0]], y[links[:, 1]], gap]).ravel())


def view_range(m: MemoryMap, lit: tuple[int, ...]) -> tuple[list[float], list[float]] | None:
    """The square around the lit entities the map zooms to (None: the whole map)."""
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
    for t in memory.triples:
        a, b = m.position.get(t.head_key), m.position.get(t.tail_key)
        if a is None or b is None:
            continue
        pair = (min(a, b), max(a, b))
        if pair in wanted and t.relation not in names.setdefault(pair, []):
            names[pair].append(t.relation)
    return [" / ".join(names.get(p, [])[:2]) for p in links]


def _name(m: MemoryMap, i: int, colour: str) -> dict:
    return dict(x=float(m.x[i]), y=float(m.y[i]), text=plot_text(m.names[i]), showarrow=False, yshift=LABEL_PX,
                font=dict(size=LABEL_PX, color=colour), bgcolor="rgba(255,255,255,0.7)", name="entity")


def figure(memory: Memory, ex: Explorer, hl: Highlight) -> go.Figure:
    """The map, all WebGL: links, one marker trace per entity type (its legend entry counts it),
    then the lit links and entities on top. Words (names, relations) are annotations: drawn above
    the WebGL canvas, as SVG text whose place and size a test reads in the page. Every node trace
    carries the entity's map position as customdata, which is what a click returns."""
    m = ex.map
    counts = type_counts(ex, hl)
    colour = _colours(counts)
    x, y = m.x.astype(np.float32), m.y.astype(np.float32)
    fig = go.Figure()
    lx, ly = _segments(x, y, ex.shown_links())
    fig.add_trace(go.Scattergl(x=lx, y=ly, mode="lines", line=dict(width=0.6, color="#c8c8c8"),
                               hoverinfo="skip", showlegend=False, name="links"))
    shown = ex.shown.copy()
    if hl.chosen is not None:
        shown[hl.chosen] = True
    types = np.array(m.types)
    size = (4 + 8 * np.sqrt(np.minimum(m.degree, 50) / 50)).astype(np.float32)
    for t, n, lit in counts:
        idx = np.flatnonzero(shown & (types == t))
        name = f"{t} ({n:,}" + (f"; {lit} lit)" if hl.chosen is not None else ")")
        fig.add_trace(go.Scattergl(
            x=x[idx], y=y[idx], customdata=idx, mode="markers", name=plot_text(name),
            marker=dict(size=size[idx], color=colour[t], opacity=0.35 if hl.chosen is not None else 0.8,
                        line=dict(width=0)),
            hovertext=[plot_text(m.names[i]) for i in idx], hoverinfo="text"))
    words: list[dict] = []
    if hl.chosen is None:
        words += [_name(m, i, "#222") for i in ex.hubs()]
    else:
        links = np.array(hl.links, dtype=np.int64).reshape(-1, 2)
        hx, hy = _segments(x, y, links)
        fig.add_trace(go.Scattergl(x=hx, y=hy, mode="lines", line=dict(width=1.6, color="#555"),
                                   hoverinfo="skip", showlegend=False, name="lit links"))
        lit = np.array(hl.lit, dtype=np.int64)
        ring = ["#111" if i == hl.chosen else ("#d62728" if i in hl.expanded else "#fff") for i in hl.lit]
        fig.add_trace(go.Scattergl(
            x=x[lit], y=y[lit], customdata=lit, mode="markers", showlegend=False, name="lit",
            marker=dict(size=size[lit] + 6, color=[colour[m.types[i]] for i in hl.lit],
                        line=dict(width=2, color=ring)),
            hovertext=[plot_text(m.names[i]) for i in hl.lit], hoverinfo="text"))
        words += [_name(m, i, "#111") for i in hl.labelled]
        # the chosen entity's own relations, where they find room beside the names
        places = _Places(view_range(m, hl.lit))
        for i in hl.labelled:
            places.take(m.x[i], m.y[i], m.names[i], LABEL_PX, LABEL_PX)
        own = tuple(p for p in hl.links if hl.chosen in p)[:RELATION_LABELS]
        for (a, b), r in zip(own, _relation_names(memory, m, own)):
            mx_, my_ = float(x[a] + x[b]) / 2, float(y[a] + y[b]) / 2
            if r and places.take(mx_, my_, r, LABEL_PX - 1):
                words.append(dict(x=mx_, y=my_, text=plot_text(r), showarrow=False,
                                  font=dict(size=LABEL_PX - 1, color="#555"), name="relation"))
    view = view_range(m, hl.lit)
    fig.update_layout(
        height=HEIGHT, margin=dict(l=0, r=0, t=0, b=0), dragmode="pan", clickmode="event+select",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0, title=dict(text="type (entities)")),
        xaxis=dict(visible=False, range=view[0] if view else None),
        yaxis=dict(visible=False, scaleanchor="x", range=view[1] if view else None),
        plot_bgcolor="white", uirevision=f"{m.fingerprint}-{hl.chosen}", annotations=words)
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
