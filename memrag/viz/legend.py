"""A drawn graph's legend items (memrag.viz.drawing): each names one mark — a fill colour, a node
shape, a ring (a node border in a colour other than its fill) or an edge look — and what it means,
taken from the picture's own legend entries; the PNG writes them above the graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FILL, SHAPE, RING, EDGE = "fill", "shape", "ring", "edge"


def rows_of(items: Sequence[Mapping[str, Any]], chars_per_row: int = 110) -> int:
    """About how many lines these legend items take in a frame as wide as a Streamlit column."""
    chars = sum(len(i["text"]) + 8 for i in items)
    return max(1, -(-chars // chars_per_row)) if chars else 0
