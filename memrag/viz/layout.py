"""Where a typed picture's nodes go, in pixels of a design box (the narrowest the page draws the
picture at: a wider drawing only spreads them). Deterministic: the same picture always gets the
same places, whatever the look, so the presenter's larger type never moves a node.

A picture whose nodes carry layers is drawn in columns, left to right (NeuroPath's route: seeds,
hop 1, hop 2), each column's nodes ordered next to what they hang from (or as listed, for the
picture's `listed_layers`); any other picture gets a
seeded force layout."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import igraph as ig

from memrag.picture import Picture, PictureNode
from memrag.viz.kept import Kept

Places = dict[str, tuple[float, float]]
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 24.0, 34.0, 16.0  # px kept free (the top for column heads)
LABEL_ROOM = 0.22  # of the width kept right of a free layout, for names
NAME_PX, NAME_EM, NAME_CHARS = 13, 0.62, 30  # a written name: type size, character width (em), length
NAME_ROOM = 0.26  # of the width, at most, kept beside the first and the last column for names
SEED = 7
ROW_PX = 64.0  # the most room a node of a short column gets


LAID_OUT_KEPT = 256  # recent layouts kept: a rerun (a click, a tab) redraws its pictures without laying them out
_laid_out: Kept[Places] = Kept(LAID_OUT_KEPT)  # by (picture, width, height): sessions and the prefetch share them


def places(picture: Picture, width: float, height: float) -> Places:
    """Each node's (x, y) in px of a `width` × `height` box, y growing downwards; the same picture in
    the same box is laid out once (a picture is frozen data, so it is its own key). Read-only."""
    return _laid_out.get((picture, float(width), float(height)), lambda: lay_out(picture, width, height))


def lay_out(picture: Picture, width: float, height: float) -> Places:
    """Each node's (x, y) in px of a `width` × `height` box, computed."""
    if picture.nodes and all(n.layer is not None for n in picture.nodes):
        return _layered(picture, width, height)
    return _free(picture, width, height)


def fitted_height(picture: Picture, height: float) -> float:
    """The height a picture needs, at most `height`: a layered one's tallest column at ROW_PX a node
    (a short route does not float in a tall empty box); any other, all of it."""
    if not picture.nodes or any(n.layer is None for n in picture.nodes):
        return height
    tallest = max(sum(1 for n in picture.nodes if n.layer == layer) for layer in {n.layer for n in picture.nodes})
    return min(height, MARGIN_TOP + MARGIN_BOTTOM + tallest * ROW_PX)


def _layered(picture: Picture, width: float, height: float) -> Places:
    columns: dict[int, list[PictureNode]] = defaultdict(list)
    for n in picture.nodes:
        columns[n.layer or 0].append(n)
    last = max(columns)
    # room for the first column's names on its left and the last column's on its right (their size
    # at the normal look: a presenter's larger names find another slot or show on hover)
    left = MARGIN_X + _names_width(columns[min(columns)], width)
    right = MARGIN_X + _names_width(columns[last], width)
    span = (width - left - right) / last if last else 0.0
    links: dict[str, list[str]] = defaultdict(list)
    for e in picture.edges:
        links[e.source].append(e.target)
        links[e.target].append(e.source)
    row: dict[str, float] = {}
    out: Places = {}
    for layer in sorted(columns):
        members = columns[layer]
        order = {n.id: i for i, n in enumerate(members)}

        def anchor(n: PictureNode) -> tuple[float, int]:
            # next to the nodes of earlier columns it hangs from (their mean row); else in listed order
            ys = [row[m] for m in links[n.id] if m in row]
            return (sum(ys) / len(ys) if ys else float(order[n.id]) / max(1, len(members)), order[n.id])

        # a listed column keeps its order (a ranking reads top down); others sit by what they hang from
        ranked = members if layer in picture.listed_layers else _attached(sorted(members, key=anchor), picture)
        top, bottom = MARGIN_TOP, height - MARGIN_BOTTOM
        step = min((bottom - top) / len(ranked), ROW_PX)
        first = top + ((bottom - top) - step * len(ranked)) / 2  # a short column sits in the middle
        for i, n in enumerate(ranked):
            y = first + step * (i + 0.5)
            row[n.id] = i / max(1, len(ranked) - 1) if len(ranked) > 1 else 0.5
            out[n.id] = (left + span * layer if last else width / 2, y)
    return out


def _names_width(nodes: list[PictureNode], width: float) -> float:
    """About how wide the widest written name of a column is, at most NAME_ROOM of the width."""
    widest = max((len(n.label[:NAME_CHARS]) for n in nodes if n.labelled), default=0)
    return min(widest * NAME_EM * NAME_PX + 16, NAME_ROOM * width)


def _free(picture: Picture, width: float, height: float) -> Places:
    ids = [n.id for n in picture.nodes]
    if not ids:
        return {}
    index = {nid: i for i, nid in enumerate(ids)}
    pairs = sorted({tuple(sorted((index[e.source], index[e.target]))) for e in picture.edges
                    if e.source in index and e.target in index and e.source != e.target})
    g = ig.Graph(n=len(ids), edges=pairs)
    rng = random.Random(SEED)
    start = [[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in ids]
    ig.set_random_number_generator(random.Random(SEED))
    try:
        coords = g.layout_fruchterman_reingold(seed=start, niter=500).coords
    finally:
        ig.set_random_number_generator(random)
    return _fitted(ids, coords, width, height)


def _fitted(ids: Sequence[str], coords: Sequence[Sequence[float]], width: float, height: float) -> Places:
    xs, ys = [c[0] for c in coords], [c[1] for c in coords]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    w, h = width - 2 * MARGIN_X - width * LABEL_ROOM / 3, height - MARGIN_TOP - MARGIN_BOTTOM
    return {nid: (MARGIN_X + (x - x0) / ((x1 - x0) or 1) * w if x1 > x0 else width / 2,
                  MARGIN_TOP + (y - y0) / ((y1 - y0) or 1) * h if y1 > y0 else height / 2)
            for nid, x, y in zip(ids, xs, ys)}


def _attached(ranked: list[PictureNode], picture: Picture) -> list[PictureNode]:
    """A node joined only to a node of its own column (a coreference jump's far end) right under
    that node, so the jump is a short step down, not a line across the column."""
    layer_of = {n.id: n.layer for n in picture.nodes}
    here = {n.id for n in ranked}
    parent: dict[str, str] = {}
    for e in picture.edges:
        if e.kind == "coreference" and e.source in here and e.target in here and e.target not in parent:
            parent[e.target] = e.source
    earlier = {n.id for n in ranked if any(layer_of.get(o) is not None and layer_of[o] < layer_of[n.id]
                                           for e in picture.edges for o in (e.source, e.target)
                                           if n.id in (e.source, e.target) and o != n.id)}
    loose = [n for n in ranked if n.id in parent and n.id not in earlier]
    out = [n for n in ranked if n not in loose]
    for n in loose:  # in rank order, each after its parent and the ones already hung there
        if parent[n.id] not in {m.id for m in out}:
            out.append(n)
            continue
        at = [m.id for m in out].index(parent[n.id]) + 1
        while at < len(out) and parent.get(out[at].id) == parent[n.id] and out[at] in loose:
            at += 1
        out.insert(at, n)
    return out
