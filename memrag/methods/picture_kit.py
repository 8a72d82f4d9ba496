"""What the wings' pictures share (memrag/methods/<name>/picture.py): how a node or an edge joins a
trace's graph at a replay step, the question's node and a passage's tooltip. A picture's data is
built during retrieval into `Trace.nodes` / `Trace.edges`; memrag.viz draws it."""

from __future__ import annotations

from memrag.trace import GraphEdge, GraphNode, Trace

PASSAGE_TIP = 300  # characters of a passage's text on its node's tooltip


def add_node(trace: Trace, node: GraphNode, *also_at: int) -> None:
    """Add `node` to the graph, appearing at its step (and listed at the steps `also_at`)."""
    trace.nodes.append(node)
    for step in (node.step or 0, *also_at):
        trace.steps[step].node_ids.append(node.id)


def add_edge(trace: Trace, edge: GraphEdge) -> None:
    """Add `edge` to the graph, appearing at its step."""
    trace.edges.append(edge)
    trace.steps[edge.step or 0].edge_ids.append(edge.id)


def question_node(trace: Trace, step: int | None = 0) -> GraphNode:
    """The question's node (id "q"): where a picture's edges start."""
    return GraphNode("q", "question", "query", step=step, role="query", tooltip=trace.question)


def passage_tip(text: str) -> str:
    return text[:PASSAGE_TIP]
