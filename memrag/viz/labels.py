"""In which order node labels claim a place in the picture; the page's label layer
(assets/graph_overlay.js) writes them in this order wherever one fits without overlapping
another or leaving the frame, and a label left without a place shows its name on hover and in
the details panel.

One rule for every graph: the nodes that matter come first — the question and cues, seeds, nodes
on valid paths, final engrams, context passages, the focus entity, gold nodes, the highlighted
ones — then the rest, most connected first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from memrag.trace import GraphEdge, GraphNode

KEY_ROLES = frozenset({"seed", "final", "context", "query", "cue", "centroid", "focus"})
KEY_GROUPS = frozenset({"valid", "question"})
KEY_KINDS = frozenset({"query", "cue"})


def label_order(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge], highlight: Iterable[str] = ()) -> list[str]:
    """Every node id once, the nodes whose label matters most first (ties: most connected, then listed order)."""
    marked = set(highlight)
    degree: Counter = Counter()
    for e in edges:
        if e.source != e.target and e.role != "ghost":
            degree[e.source] += 1
            degree[e.target] += 1
    ids = list(dict.fromkeys(n.id for n in nodes))
    key = {n.id for n in nodes if n.role in KEY_ROLES or n.group in KEY_GROUPS or n.kind in KEY_KINDS or n.gold
           or n.id in marked}
    position = {nid: i for i, nid in enumerate(ids)}
    return sorted(ids, key=lambda nid: (nid not in key, -degree[nid], position[nid]))
