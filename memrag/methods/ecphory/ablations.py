"""EcphoryRAG's ablations for Compare mode (the paper's, and memrag's own switches)."""

from __future__ import annotations

from typing import Any

from memrag.methods.ecphory import SPEC
from memrag.methods.ecphory.detail import EcphoryDetail
from memrag.methods.paper_kit import Preset, paper_preset
from memrag.trace import Trace

PRESETS: list[Preset] = [
    Preset("rounds 2 / 0",
           "EcphoryRAG's depth ablation: 0 rounds stops after the initial activation (no associative rounds).",
           {"rounds": 2}, {"rounds": 0}, "2 rounds", "0 rounds"),
    Preset("rounds 2 / 1",
           "One associative round instead of two.",
           {"rounds": 2}, {"rounds": 1}, "2 rounds", "1 round"),
    Preset("seed_policy moving / paper",
           "Algorithm 1 as written picks each round's seeds from everything activated, so every round "
           "repeats the first; 'moving' seeds each round from what the previous round newly activated.",
           {"seed_policy": "moving"}, {"seed_policy": "paper"}, "moving seeds", "paper seeds"),
    Preset("graph expansion on / off",
           "Whether a round also activates the seeds' co-occurrence neighbours, besides the engrams "
           "nearest the round's centroid.",
           {"graph_expansion": True}, {"graph_expansion": False}, "graph expansion on",
           "graph expansion off"),
    paper_preset(SPEC.params, SPEC.paper_settings),
    Preset("context fused / c_init",
           "The context list: Algorithm 1's C_init (source chunks of the initial activation, then the "
           "chunks nearest the question) against a fusion of activation (all rounds) and similarity.",
           {"context_source": "fused"}, {"context_source": "c_init"}, "fused", "c_init"),
]


def retrieval_facts(trace: Trace) -> dict[str, Any]:
    """What an ablation moves in EcphoryRAG's activation (Compare mode)."""
    d = trace.detail(EcphoryDetail)
    if d is None:
        return {}
    activated = {a.key for a in d.initial} | {a.key for r in d.rounds for a in r.new}
    return {"rounds run": sum(1 for r in d.rounds if r.seed_ids), "entities activated": len(activated),
            "final engrams": len(d.final)}
