"""What a page made by `memrag.viz.graph_html.render` holds, read back for tests: the node and edge
records vis-network draws and the label layer's data (from the HTML, as the browser gets them), and
the legend the page carries as data (its `drawing`). memrag itself never reads a page back."""

from __future__ import annotations

import json
import re
from typing import Any

_DATASET = re.compile(r"(nodes|edges) = new vis\.DataSet\((.*?)\);\n")
_EXTRA = re.compile(r'<script type="application/json" id="memrag-graph-extra">(.*?)</script>', re.DOTALL)


def graph_data(page: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The node and edge records embedded in the page."""
    found = dict(_DATASET.findall(page))
    if "nodes" not in found or "edges" not in found:
        raise ValueError("not a graph page made by memrag.viz.graph_html.render")
    return json.loads(found["nodes"]), json.loads(found["edges"])


def layer_data(page: str) -> dict[str, Any]:
    """The label layer's and details panel's data embedded in the page."""
    found = _EXTRA.search(page)
    if not found:
        raise ValueError("not a graph page made by memrag.viz.graph_html.render")
    return json.loads(found.group(1))


def legend_items(page: str) -> list[dict[str, Any]]:
    """The legend items the page lists (the Drawing it was made from)."""
    return [dict(i) for i in page.drawing.legend]  # type: ignore[attr-defined]


def legend_rows(page: str) -> int:
    return page.drawing.rows()  # type: ignore[attr-defined]
