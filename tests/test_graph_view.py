"""The panel a click opens (memrag.app.graph_view): how it names a node's part in the picture."""

from __future__ import annotations

from memrag.app import graph_view
from memrag.viz import palette


def test_a_nodes_part_names_its_role_then_its_fate_unless_the_role_says_it():
    assert graph_view._what("final", "final") == "final engram (E_final)"  # not "… · final"
    assert graph_view._what("valid", "path") == f"reached by a path · {palette.group_word('valid')}"
    assert graph_view._what("", "seed") == "seed: where the search starts"  # every method's seeds
    assert graph_view._what("context", "context") == "passage in the answer's context"
