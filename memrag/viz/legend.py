"""A graph's legend, made from the marks the renderer actually drew — never written by hand.

A mark is one distinct visual thing in the picture: a fill colour, a node shape, a ring (a node
border in a colour other than its fill), or an edge look (colour, solid or dashed). The renderer
adds each mark with what it means as it styles each node and edge; the legend lists exactly those
marks, so it cannot leave out a mark that is drawn or name one that is not.

One entry per meaning: a fill and a shape that say the same thing about the same nodes (the
question is the one diamond and the one node in the question's colour) are one entry, the shape
drawn in that colour; its `keys` name both marks.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memrag.plain_text import clip

FILL, SHAPE, RING, EDGE = "fill", "shape", "ring", "edge"
_ORDER = {FILL: 0, SHAPE: 1, RING: 2, EDGE: 3}
_GLYPHS = {"dot": "●", "square": "■", "diamond": "◆", "triangle": "▲", "triangleDown": "▼", "star": "★",
           "hexagon": "⬢", "box": "▬", "ellipse": "⬬"}
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


def mark_key(kind: str, colour: str = "", shape: str = "", dashed: bool = False) -> str:
    """The identity of a mark: what a reader can tell apart by looking."""
    if kind == SHAPE:
        return f"shape:{shape}"
    if kind == EDGE:
        return f"edge:{colour.lower()}:{'dashed' if dashed else 'solid'}"
    return f"{kind}:{colour.lower()}"


def marks_of(nodes: Sequence[Mapping[str, Any]], edges: Sequence[Mapping[str, Any]]) -> set[str]:
    """The distinct marks in rendered vis-network node and edge records (what a picture shows)."""
    keys = set()
    for n in nodes:
        fill, border = n["color"]["background"], n["color"]["border"]
        keys |= {mark_key(FILL, fill), mark_key(SHAPE, shape=n["shape"])}
        if border.lower() != fill.lower():
            keys.add(mark_key(RING, border))
    for e in edges:
        keys.add(mark_key(EDGE, e["color"]["color"], dashed=bool(e.get("dashes"))))
    return keys


class Legend:
    """Collects (mark, meaning) pairs while a graph is styled; each mark is listed once with
    all its meanings and, for fills, how many nodes carry it."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}

    def add(self, kind: str, meaning: str, *, colour: str = "", shape: str = "", dashed: bool = False) -> None:
        key = mark_key(kind, colour, shape, dashed)
        item = self._items.setdefault(key, {"key": key, "mark": kind, "colour": colour, "shape": shape,
                                            "dashed": dashed, "meanings": [], "count": 0})
        item["count"] += 1
        if meaning and meaning not in item["meanings"]:
            item["meanings"].append(meaning)

    def items(self) -> list[dict[str, Any]]:
        """Fills first (most used first), then shapes, rings and edges; a fill and a shape with the
        same meanings on as many nodes are one entry (`_same_sign`)."""
        out, merged = [], set()
        for item in self._items.values():
            if item["key"] in merged:
                continue
            text = "; ".join(item["meanings"]) or "other"
            entry = {k: item[k] for k in ("key", "mark", "colour", "shape", "dashed", "count")} | {
                "text": text, "keys": [item["key"]]}
            twin = _same_sign(item, self._items.values()) if item["mark"] == FILL else None
            if twin is not None:
                merged.add(twin["key"])
                entry |= {"shape": twin["shape"], "keys": [item["key"], twin["key"]]}
            out.append(entry)
        out = [i for i in out if i["key"] not in merged]
        return sorted(out, key=lambda i: (_ORDER[i["mark"]], -i["count"] if i["mark"] == FILL else 0))


def _same_sign(fill: Mapping[str, Any], items: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The shape that means exactly what `fill` means, on as many nodes: then the same nodes carry
    both (each node adds its fill's meaning and its shape's), and one entry says it once."""
    for item in items:
        if item["mark"] == SHAPE and item["meanings"] == fill["meanings"] and item["count"] == fill["count"]:
            return item
    return None


def listed_keys(items: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every mark the legend items name (an entry for a fill and a shape names both)."""
    return {k for i in items for k in i.get("keys", [i["key"]])}


def _swatch(item: Mapping[str, Any]) -> str:
    colour = item["colour"] if _COLOUR.match(item["colour"] or "") else "#d9d9d9"
    if item["mark"] == FILL and item.get("shape"):  # the shape in the fill's colour: one sign
        glyph = _GLYPHS.get(item["shape"], "●")
        return f'<span style="color:{colour};margin-right:3px">{glyph}</span>'
    if item["mark"] == FILL:
        return (f'<span style="display:inline-block;width:11px;height:11px;border-radius:6px;'
                f'background:{colour};margin-right:4px;vertical-align:-1px"></span>')
    if item["mark"] == RING:
        return (f'<span style="display:inline-block;width:8px;height:8px;border-radius:6px;'
                f'border:3px solid {colour};margin-right:4px;vertical-align:-1px"></span>')
    if item["mark"] == EDGE:
        style = "dashed" if item["dashed"] else "solid"
        return (f'<span style="display:inline-block;width:22px;height:0;border-top:3px {style} {colour};'
                f'margin-right:4px;vertical-align:3px"></span>')
    glyph = _GLYPHS.get(item["shape"], "●")
    return f'<span style="color:#555;margin-right:3px">{glyph}</span>'


# One mark may carry two meanings ("relation (a triple), not reached yet at this step; coreference
# candidate link, not reached yet at this step" is 103 characters): room for two, a cap for type names.
LEGEND_TEXT_MAX = 120


ROW_PX = 19.2  # one line of the legend: 12 px type, line-height 1.6


def legend_html(items: Sequence[Mapping[str, Any]], *, folded: bool = False, rows: int = 0) -> str:
    """The legend line above a graph. Never taller than a third of its frame (it
    scrolls beyond); `folded` (a small multiple) shows it only when opened; `rows` > 0 makes it
    exactly that many lines tall (pictures of one sequence keep their graph's box: fixed_layout)."""
    parts = []
    # each item moves to a new line whole, and wraps inside only when wider than the frame
    for item in items:
        count = f" · {item['count']}" if item["mark"] == FILL else ""
        keys = " ".join(item.get("keys", [item["key"]]))
        parts.append(f'<span class="memrag-mark" data-mark="{html_lib.escape(keys)}" '
                     f'style="margin-right:12px;display:inline-block;max-width:100%">{_swatch(item)}'
                     f'{html_lib.escape(clip(item["text"], LEGEND_TEXT_MAX))}{count}</span>')
    body = "".join(parts)
    if folded:
        body = f"<details><summary>legend · {len(parts)} marks</summary>{body}</details>"
    pinned = f"height:{rows * ROW_PX + 6:.0f}px;box-sizing:border-box;" if rows > 0 and not folded else ""
    return (f'<div id="memrag-legend" data-rows="{rows if pinned else 0}" '
            f'style="font:12px/1.6 sans-serif;color:#333;padding:2px 2px 4px;{pinned}">'
            + body + "</div>")


def rows_of(items: Sequence[Mapping[str, Any]], chars_per_row: int = 110) -> int:
    """About how many lines these legend items take in a frame as wide as a Streamlit column."""
    chars = sum(len(i["text"]) + 8 for i in items)
    return max(1, -(-chars // chars_per_row)) if chars else 0
