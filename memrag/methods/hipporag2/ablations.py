"""HippoRAG 2's ablations for Compare mode. memrag's defaults are the paper's settings
(nothing to turn off): side A of each preset is the paper's value; "from the paper's settings" resets the
rest."""

from __future__ import annotations

from typing import Any

from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.paper_kit import Preset
from memrag.trace import Trace

PRESETS: list[Preset] = [
    Preset("recognition memory on / off (retrieval only)",
           "HippoRAG 2's recognition-memory ablation: without the LLM filter every retrieved fact seeds "
           "the graph search, and no LLM call is made before the answer (the cheap variant memrag "
           "evaluates on every pooled sample).",
           {"recognition": True}, {"recognition": False}, "recognition on", "retrieval only"),
    Preset("synonymy threshold 0.8 / 0.9",
           "Synonymy edges join phrase nodes whose name vectors are at least this alike; a stricter "
           "threshold links fewer spellings and near-names, so PageRank mass crosses between them less.",
           {"synonymy_threshold": 0.8}, {"synonymy_threshold": 0.9}, "synonymy ≥ 0.8", "synonymy ≥ 0.9"),
    Preset("synonymy edges on / off",
           "No synonymy edges at all: a fact about one spelling of a name cannot reach passages that use "
           "another.", {"synonymy_neighbours": 100}, {"synonymy_neighbours": 0}, "synonymy on",
           "no synonymy edges"),
    Preset("passage seeds 0.05 / none",
           "HippoRAG 2's dense-passage ablation: with passage_node_weight 0 only the phrases of kept facts "
           "seed the walk, as in the first HippoRAG; the paper removes passage nodes the same way to "
           "measure what the dense seeds add.",
           {"passage_node_weight": 0.05}, {"passage_node_weight": 0.0}, "passage seeds 0.05",
           "no passage seeds"),
    Preset("damping 0.5 / 0.85",
           "How far the walk strays from its seeds: 0.5 is the paper's value, 0.85 the classic PageRank "
           "one (more mass spreads to nodes far from the seeds).",
           {"damping": 0.5}, {"damping": 0.85}, "damping 0.5", "damping 0.85"),
]


def retrieval_facts(trace: Trace) -> dict[str, Any]:
    """What an ablation moves in HippoRAG 2's seeds and PageRank (Compare mode)."""
    d = trace.detail(HippoRAG2Detail)
    if d is None:
        return {}
    return {"facts kept": sum(1 for f in d.facts if f.verdict == "kept"), "phrase seeds": len(d.phrase_seeds),
            "PageRank mass on phrases": d.phrase_mass, "dense fallback (1 = yes)": int(d.fallback_dense)}
