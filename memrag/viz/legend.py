"""A graph's legend, made from the marks the renderer actually drew — never written by hand.

A mark is one distinct visual thing in the picture: a fill colour, a node shape, a ring (a node
border in a colour other than its fill), or an edge look (colour, solid or dashed). The renderer
adds each mark with what it means as it styles each node and edge; the legend lists exactly those
marks, so it cannot leave out a mark that is drawn or name one that is not.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memrag.viz.safe_text import clip

FILL, SHAPE, RING, EDGE = "fill", "shape", "ring", "edge"
_ORDER = {FILL: 0, SHAPE: 1, RING: 2, EDGE: 3}
_GLYPHS = {"dot": "●", "square": "■", "diamond": "◆", "triangle": "▲", "triangleDown": "▼", "star": "★",
           "hexagon": "⬢", "box": "▬", "ellipse": "⬬"}
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_DATA = re.compile(r'<script type="application/json" id="memrag-legend-data">(.*?)</script>', re.DOTALL)


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
        """Fills first (most used first), then shapes, rings and edges."""
        out = []
        for item in self._items.values():
            text = "; ".join(item["meanings"]) or "other"
            out.append({k: item[k] for k in ("key", "mark", "colour", "shape", "dashed", "count")} | {"text": text})
        return sorted(out, key=lambda i: (_ORDER[i["mark"]], -i["count"] if i["mark"] == FILL else 0))


def _swatch(item: Mapping[str, Any]) -> str:
    colour = item["colour"] if _COLOUR.match(item["colour"] or "") else "#d9d9d9"
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


def legend_html(items: Sequence[Mapping[str, Any]], data_json: str, *, folded: bool = False) -> str:
    """The legend line above a graph, and its items as JSON for exports (`data_json` is the items
    already encoded by the page's one script encoder). Never taller than a third of its frame (it
    scrolls beyond); `folded` (a small multiple) shows it only when opened."""
    parts = []
    # each item moves to a new line whole, and wraps inside only when wider than the frame
    for item in items:
        count = f" · {item['count']}" if item["mark"] == FILL else ""
        parts.append(f'<span class="memrag-mark" data-mark="{html_lib.escape(item["key"])}" '
                     f'style="margin-right:12px;display:inline-block;max-width:100%">{_swatch(item)}'
                     f'{html_lib.escape(clip(item["text"], LEGEND_TEXT_MAX))}{count}</span>')
    body = "".join(parts)
    if folded:
        body = f"<details><summary>legend · {len(parts)} marks</summary>{body}</details>"
    return ('<div id="memrag-legend" style="font:12px/1.6 sans-serif;color:#333;padding:2px 2px 4px">'
            + body + "</div>"
            + f'<script type="application/json" id="memrag-legend-data">{data_json}</script>')


def legend_items(page: str) -> list[dict[str, Any]]:
    """The legend items embedded in a page made by graph_html.render ([] when it has none)."""
    found = _DATA.search(page)
    return json.loads(found.group(1)) if found else []


def legend_rows(page: str, chars_per_row: int = 110) -> int:
    """About how many lines the legend takes in a page as wide as a Streamlit column."""
    chars = sum(len(i["text"]) + 8 for i in legend_items(page))
    return max(1, -(-chars // chars_per_row)) if chars else 0
