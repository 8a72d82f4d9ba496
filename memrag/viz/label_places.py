"""Where a picture's words go, so that none lands on another, on a node, or outside the frame.

Deterministic: words claim places in a fixed order (names that must be written, then bold
relations, then the other names by weight), each trying a few slots around its node (right,
left, above, below) or its edge's midpoint; a word with no free slot is not written (its node
still names itself on hover and in the panel). Boxes are estimated from the text's length and
type size, in the design box's pixels (memrag.viz.layout): a wider drawing only spreads them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

CHAR_EM = 0.62  # an average character's width in ems (plotly's Open Sans / Arial; DejaVu is wider)
LINE_EM = 1.35  # a written line's height in ems, padding included
GAP = 3.0  # px between a node's marker and its word

Box = tuple[float, float, float, float]  # left, top, right, bottom (px, y down)


@dataclass(frozen=True)
class Word:
    id: str
    text: str
    x: float  # the anchor: a node's centre or an edge's midpoint
    y: float
    px: float  # type size
    clear: float = 0.0  # px from the anchor the word keeps clear of (a node's radius)
    on_edge: bool = False


@dataclass(frozen=True)
class Placed:
    id: str
    text: str
    x: float  # the word's centre
    y: float
    px: float
    box: Box


def size_of(text: str, px: float) -> tuple[float, float]:
    return len(text) * CHAR_EM * px + 6.0, LINE_EM * px


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _slots(w: Word) -> Iterable[tuple[float, float]]:
    """Candidate centres for the word, best first."""
    tw, th = size_of(w.text, w.px)
    if w.on_edge:
        return [(w.x, w.y - th / 2 - GAP), (w.x, w.y + th / 2 + GAP), (w.x, w.y - th * 1.5 - GAP),
                (w.x, w.y + th * 1.5 + GAP)]
    r = w.clear + GAP
    return [(w.x + r + tw / 2, w.y), (w.x - r - tw / 2, w.y), (w.x, w.y - r - th / 2), (w.x, w.y + r + th / 2),
            (w.x + r + tw / 2, w.y - th * 0.8), (w.x + r + tw / 2, w.y + th * 0.8)]


def place(words: Sequence[Word], width: float, height: float, blocked: Iterable[Box] = ()) -> list[Placed]:
    """The words that find a free slot inside the `width` × `height` frame, in the order given
    (callers put first what matters most); `blocked`: boxes no word may cover (the markers)."""
    taken: list[Box] = list(blocked)
    out: list[Placed] = []
    for w in words:
        tw, th = size_of(w.text, w.px)
        for cx, cy in _slots(w):
            box = (cx - tw / 2, cy - th / 2, cx + tw / 2, cy + th / 2)
            if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                continue
            if any(_overlaps(box, b) for b in taken):
                continue
            taken.append(box)
            out.append(Placed(w.id, w.text, cx, cy, w.px, box))
            break
    return out


def marker_box(x: float, y: float, size: float) -> Box:
    half = size / 2
    return (x - half, y - half, x + half, y + half)
