"""Which nodes carry a written label; every other node shows its name on hover only.

One rule for every graph (the renderer applies it): a small graph labels everything; a bigger one
labels the nodes that matter — the question and cues, seeds, nodes on valid paths, final engrams,
context passages, the focus entity, gold nodes, the highlighted ones — and its hubs (the most
connected nodes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from memrag.trace import GraphEdge, GraphNode

LABEL_ALL_UP_TO = 15  # nodes; up to this size every label fits
HUBS = 8
KEY_ROLES = frozenset({"seed", "final", "context", "query", "cue", "centroid", "focus"})
KEY_GROUPS = frozenset({"valid", "question"})
KEY_KINDS = frozenset({"query", "cue"})


def labelled(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge],
             highlight: Iterable[str] = ()) -> set[str]:
    """Ids of the nodes whose label is drawn."""
    ids = [n.id for n in nodes]
    if len(ids) <= LABEL_ALL_UP_TO:
        return set(ids)
    keep = {n.id for n in nodes if n.role in KEY_ROLES or n.group in KEY_GROUPS or n.kind in KEY_KINDS or n.gold}
    keep |= set(highlight) & set(ids)
    degree: Counter = Counter()
    for e in edges:
        if e.source != e.target and e.role != "ghost":
            degree[e.source] += 1
            degree[e.target] += 1
    position = {nid: i for i, nid in enumerate(ids)}
    hubs = sorted((nid for nid in ids if degree[nid]), key=lambda nid: (-degree[nid], position[nid]))[:HUBS]
    return keep | set(hubs)
