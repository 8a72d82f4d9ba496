"""Where a typed picture's nodes go, in pixels of a design box (the narrowest the page draws the
picture at: a wider drawing only spreads them). Deterministic: the same picture always gets the
same places, whatever the look, so the presenter's larger type never moves a node.

A picture whose nodes carry layers is drawn in columns, left to right (NeuroPath's route: seeds,
hop 1, hop 2), each column's nodes ordered next to what they hang from; any other picture gets a
seeded force layout."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import igraph as ig

from memrag.picture import Picture, PictureNode

Places = dict[str, tuple[float, float]]
MARGIN_X, MARGIN_TOP, MARGIN_BOTTOM = 24.0, 34.0, 16.0  # px kept free (the top for column heads)
LABEL_ROOM = 0.22  # of a column's width kept right of the last column, for its nodes' names
SEED = 7
ROW_PX = 64.0  # the most room a node of a short column gets


def places(picture: Picture, width: float, height: float) -> Places:
    """Each node's (x, y) in px of a `width` × `height` box, y growing downwards."""
    if picture.nodes and all(n.layer is not None for n in picture.nodes):
        return _layered(picture, width, height)
    return _free(picture, width, height)


def _layered(picture: Picture, width: float, height: float) -> Places:
    columns: dict[int, list[PictureNode]] = defaultdict(list)
    for n in picture.nodes:
        columns[n.layer or 0].append(n)
    last = max(columns)
    span = (width - 2 * MARGIN_X) / (last + 1 + LABEL_ROOM) if last else (width - 2 * MARGIN_X) / 2
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

        ranked = sorted(members, key=anchor)
        top, bottom = MARGIN_TOP, height - MARGIN_BOTTOM
        step = min((bottom - top) / len(ranked), ROW_PX)
        first = top + ((bottom - top) - step * len(ranked)) / 2  # a short column sits in the middle
        for i, n in enumerate(ranked):
            y = first + step * (i + 0.5)
            row[n.id] = i / max(1, len(ranked) - 1) if len(ranked) > 1 else 0.5
            out[n.id] = (MARGIN_X + span * (layer + 0.15) if last else width / 2, y)
    return out


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
