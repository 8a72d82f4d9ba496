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
    along: tuple[float, float, float, float] | None = None  # an edge's ends: the word may slide along it
    leftward: bool = False  # try left of the node first (the first column's names, with room kept there)


@dataclass(frozen=True)
class Placed:
    """A written word: its box in design px, and how it hangs from its anchor (a node's centre or a
    point on its edge), so a wider drawing moves it with the anchor: `xanchor` is the side of the
    word at the anchor, shifted `dx` px right and `dy` px down."""
    id: str
    text: str
    x: float  # the anchor
    y: float
    px: float
    box: Box
    xanchor: str = "center"
    dx: float = 0.0
    dy: float = 0.0


def size_of(text: str, px: float) -> tuple[float, float]:
    return len(text) * CHAR_EM * px + 6.0, LINE_EM * px


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


Slot = tuple[float, float, str, float, float]  # anchor x, y, xanchor, dx, dy


def _slots(w: Word) -> list[Slot]:
    """Candidate places for the word, best first."""
    tw, th = size_of(w.text, w.px)
    if w.on_edge:
        x0, y0, x1, y1 = w.along or (w.x, w.y, w.x, w.y)
        on_line: list[Slot] = [(x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, "center", 0.0, 0.0)
                               for t in (0.6, 0.7, 0.5, 0.8, 0.4, 0.3)]
        return on_line + [(w.x, w.y, "center", 0.0, -th), (w.x, w.y, "center", 0.0, th)]
    r = w.clear + GAP
    right: list[Slot] = [(w.x, w.y, "left", r, 0.0), (w.x, w.y, "left", r, -th * 0.8), (w.x, w.y, "left", r, th * 0.8)]
    left: list[Slot] = [(w.x, w.y, "right", -r, 0.0)]
    around: list[Slot] = [(w.x, w.y, "center", 0.0, -r - th / 2), (w.x, w.y, "center", 0.0, r + th / 2)]
    return (left + around + right) if w.leftward else (right + left + around)


def _box(slot: Slot, tw: float, th: float) -> Box:
    x, y, anchor, dx, dy = slot
    left = x + dx - (0 if anchor == "left" else tw if anchor == "right" else tw / 2)
    return (left, y + dy - th / 2, left + tw, y + dy + th / 2)


def place(words: Sequence[Word], width: float, height: float, blocked: Iterable[Box] = ()) -> list[Placed]:
    """The words that find a free slot inside the `width` × `height` frame, in the order given
    (callers put first what matters most); `blocked`: boxes no word may cover (the markers)."""
    taken: list[Box] = list(blocked)
    out: list[Placed] = []
    for w in words:
        tw, th = size_of(w.text, w.px)
        for slot in _slots(w):
            box = _box(slot, tw, th)
            if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                continue
            if any(_overlaps(box, b) for b in taken):
                continue
            taken.append(box)
            out.append(Placed(w.id, w.text, slot[0], slot[1], w.px, box, slot[2], slot[3], slot[4]))
            break
    return out


def marker_box(x: float, y: float, size: float) -> Box:
    half = size / 2
    return (x - half, y - half, x + half, y + half)
