"""What HippoRAG 2 found, step by step, for ask-again's before/after comparison: the facts linked
to the question, those recognition memory kept, the phrase seeds of PageRank and the nodes that
drew the most mass."""

from __future__ import annotations

from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.trace import Trace


def steps(trace: Trace) -> list[tuple[str, list[str]]]:
    d = trace.details.get(trace.method)
    if not isinstance(d, HippoRAG2Detail):
        return []
    fact = [f"{f.head} → {f.relation} → {f.tail}" for f in d.facts]
    return [("facts retrieved", fact),
            ("facts kept", [t for t, f in zip(fact, d.facts) if f.verdict == "kept"]),
            ("phrase seeds", [s.name for s in d.phrase_seeds]),
            ("nodes with the most PageRank mass", [n.label for n in d.top_nodes])]
