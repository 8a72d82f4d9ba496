"""Positions that stay put: one layout shared by a sequence of pictures (the Learn replay's steps),
computed once for every node any of them draws, so a node keeps its place from one picture to the
next and a new node appears where it will stay.

A fixed layout also names the box its positions fill (the page fits that box, not the nodes drawn
now, so the view does not zoom as nodes come and go) and the legend lines its frame reserves (the
most any picture of the sequence needs, so the graph's box keeps its height). Label room is made
here, before the page is drawn: nodes are pushed apart until each node with its label box under it
clears the others, with label widths estimated from their text; the page then only places labels
(assets/graph_overlay.js), it does not move nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

CHAR_EM = 0.6  # a label character's average width in ems (the frame's sans-serif; DejaVu Sans is wide)
LINE_EM = 1.2  # a label's height in ems (the layer's line-height)
PAD = 3.0  # px kept free around each node and label box (the page's own margin)
ROUNDS = 400
WIDTH, HEIGHT = 560.0, 540.0  # the box positions fill: a Learn graph's at 1,440 × 900 (564 × 547); the page scales it


@dataclass(eq=False)  # hashed by identity: a cache key that names this layout, not its contents
class FixedLayout:
    positions: dict[str, tuple[float, float]]  # node id → (x, y) inside the box, in px at scale 1
    width: float = WIDTH
    height: float = HEIGHT
    legend_rows: int = 0  # lines the frame reserves for the legend (0: as the legend needs)

    def box(self) -> dict[str, float]:
        return {"w": self.width, "h": self.height}


def label_box(text: str, px: float) -> tuple[float, float]:
    """About how wide and tall a label of `text` is written at `px` (its padding included)."""
    return len(text) * CHAR_EM * px + 4.0, LINE_EM * px


def fit_labels(base: Mapping[str, tuple[float, float]], room: Mapping[str, tuple[str, float]], *, px: float,
               width: float = WIDTH, height: float = HEIGHT, rounds: int = ROUNDS) -> dict[str, tuple[float, float]]:
    """`base` positions (any scale) stretched to fill a `width` × `height` box, then pushed apart until
    every node, with its label box under it, clears the others and stays inside the box (or `rounds`
    pass); then, where the labels could not all find room, until no two nodes overlap (a label the
    page cannot place shows on hover; a node hidden under another shows nowhere). room: node id → (its
    written label, its drawn radius in px). Deterministic."""
    ids = sorted(base)
    if not ids:
        return {}
    xy = np.array([base[i] for i in ids], dtype=float)
    texts = [room.get(i, ("", 0.0))[0] for i in ids]
    labels = np.array([label_box(t, px) if t.strip() else (0.0, 0.0) for t in texts]).reshape(len(ids), 2)
    r = np.array([max(4.0, room.get(i, ("", 12.0))[1]) for i in ids])
    with_labels = (np.maximum(labels[:, 0], 2 * r) + PAD, r + PAD, r + 2 + labels[:, 1] + PAD)
    # stretch each axis to the box (a layout is about round, the box is wide or tall)
    for axis, extent, (low, high) in ((0, width, (with_labels[0] / 2, with_labels[0] / 2)),
                                      (1, height, (with_labels[1], with_labels[2]))):
        span = np.ptp(xy[:, axis])
        left, right = PAD + float(np.median(low)), extent - PAD - float(np.median(high))
        xy[:, axis] = (left + right) / 2 if span == 0 else left + (xy[:, axis] - xy[:, axis].min()) / span * (right - left)
    if not _push(xy, *with_labels, width, height, rounds):
        _push(xy, 2 * r + PAD, r + PAD, r + PAD, width, height, rounds)  # the nodes themselves, at least
    return {i: (round(float(x), 1), round(float(y), 1)) for i, (x, y) in zip(ids, xy)}


def _push(xy: np.ndarray, w: np.ndarray, up: np.ndarray, down: np.ndarray, width: float, height: float,
          rounds: int) -> bool:
    """Move `xy` in place until no two boxes (each `w` wide, reaching `up` above and `down` below its
    point) overlap, each inside the box; True when they no longer do."""
    lo_x, hi_x = w / 2 + PAD, np.maximum(width - w / 2 - PAD, w / 2 + PAD)
    lo_y, hi_y = up + PAD, np.maximum(height - down - PAD, up + PAD)
    order = np.arange(len(xy))
    before = order[:, None] < order[None, :]
    for _ in range(rounds):
        dx = xy[:, 0][:, None] - xy[:, 0][None, :]  # i − j
        dy = xy[:, 1][:, None] - xy[:, 1][None, :]
        ox = (w[:, None] + w[None, :]) / 2 - np.abs(dx)
        above = dy <= 0  # i above j: i's box bottom meets j's top
        oy = np.where(above, down[:, None] + up[None, :] + dy, down[None, :] + up[:, None] - dy)
        hit = (ox > 0) & (oy > 0)
        np.fill_diagonal(hit, False)
        if not hit.any():
            return True
        sideways = hit & (ox < oy)
        upright = hit & ~(ox < oy)
        # each node of an overlapping pair moves half the overlap away from the other (ties: by order)
        sx = np.where(dx < 0, -1.0, np.where(dx > 0, 1.0, np.where(before, -1.0, 1.0)))
        sy = np.where(dy < 0, -1.0, np.where(dy > 0, 1.0, np.where(before, -1.0, 1.0)))
        # pushes from several neighbours add up: half of their sum keeps a crowd from overshooting
        xy[:, 0] += 0.5 * (sideways * sx * (ox / 2 + 0.5)).sum(axis=1)
        xy[:, 1] += 0.5 * (upright * sy * (oy / 2 + 0.5)).sum(axis=1)
        xy[:, 0] = np.clip(xy[:, 0], lo_x, hi_x)
        xy[:, 1] = np.clip(xy[:, 1], lo_y, hi_y)
    return False


__all__ = ["FixedLayout", "fit_labels", "label_box", "WIDTH", "HEIGHT"]
