"""NeuroPath's ablations for Compare mode (the paper's, and memrag's own switches)."""

from __future__ import annotations

from typing import Any

from memrag.methods.neuropath import SPEC
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.methods.paper_kit import Preset, paper_preset
from memrag.trace import Trace
from memrag import words

PRESETS: list[Preset] = [
    Preset("completion on / off",
           "NeuroPath's ablation of post-retrieval completion ('replay'): without it the ranked list is only "
           "the chunks of the paths the model judged valid.",
           {"completion": True}, {"completion": False}, "completion on", "completion off"),
    Preset("prune_top 30 / none",
           "Pruning keeps the 30 new paths most similar to the goal before the model sees them; without it "
           "every path is listed (still capped at max_listed).",
           {"prune_top": 30}, {"prune_top": None}, "prune_top 30", "no pruning"),
    Preset("max hops 2 / 1",
           "How far path tracking may go: one hop reaches direct neighbours of the seeds only.",
           {"max_hops": 2}, {"max_hops": 1}, "2 hops", "1 hop"),
    Preset("max hops 2 / 3",
           "A third hop lets paths grow one triple further when the model asks to continue.",
           {"max_hops": 2}, {"max_hops": 3}, "2 hops", "3 hops"),
    paper_preset(SPEC.params, SPEC.paper_settings),
    Preset("path passages first / interleaved",
           "Where the valid paths' chunks go: first (the paper and the official code) or alternating with "
           "the completion ranking, so the completion's head is not pushed out by a noisy tracker.",
           {"dp_position": "first"}, {"dp_position": "interleave"}, "path passages first", "interleaved"),
    Preset("path passages by evidence / first",
           "Where the valid paths' chunks go: by evidence (fused with the completion rank: a path chunk "
           "completion also ranks high leads) or first, as the paper and the official code place them.",
           {"dp_position": "fused"}, {"dp_position": "first"}, "path passages by evidence",
           "path passages first"),
    Preset("seed links 1 / 3 per query entity",
           "How many graph nodes each query entity seeds: its nearest (the paper) or its 3 nearest, each "
           "held to seed_floor; more links reach gold named under a neighbouring node, and list more paths.",
           {"seed_top": 1}, {"seed_top": 3}, "nearest node", "3 nearest nodes"),
    Preset("tracker by likelihood / generative",
           "Who keeps the listed paths: each new path judged on its own by the model's probability of 'yes' "
           "(memrag's option, pending measurement), or the paper's generated list of valid ids, which a 1.5B "
           "model writes in listing order. The chain, requirement and continue are generative in both.",
           {"tracker": "likelihood"}, {"tracker": "generative"}, "kept by likelihood", "kept by generated ids"),
]


def retrieval_facts(trace: Trace) -> dict[str, Any]:
    """What an ablation moves in NeuroPath's tracking (Compare mode)."""
    d = trace.detail(NeuroPathDetail)
    if d is None:
        return {}
    valid = d.hops[-1].valid_ids if d.hops else []
    return {"hops run": len(d.hops), "paths listed": sum(h.new_count for h in d.hops),
            "valid paths (last hop)": len(valid), words.KEPT_PATH_PASSAGES.label: len(d.dp_chunk_ids)}
