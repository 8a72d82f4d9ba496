"""EcphoryRAG's parameters; each field carries its own help text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memrag.fields import helped as _f


@dataclass
class EcphoryParams:
    k_initial: int = _f(20, "Engrams in the initial activation (by cosine to the question).", low=1, high=1000)
    rounds: int = _f(2, "Associative rounds after the initial activation (the paper's depth; 0 = none).",
                     low=0, high=10)
    seeds: int = _f(10, "Seed engrams per round.", low=1, high=1000)
    seed_policy: Literal["moving", "paper"] = _f(
        "moving", "paper = Algorithm 1 as written (rounds repeat); moving = seeds from the newly activated."
    )
    k_final: int = _f(20, "Engrams kept after re-ranking (one per entity).", low=1, high=1000)
    direct_chunks: int = _f(10, "Chunks retrieved directly by cosine to the question (C_direct).", low=0, high=1000)
    context_chunks: int = _f(5, "Chunks given to the answer step.", low=1, high=50)
    context_source: Literal["c_init", "activated", "fused"] = _f(
        "fused", "c_init = C_assoc then C_direct (Algorithm 1 as written); activated = chunks of E_final first; "
        "fused = reciprocal-rank fusion of the activation ranking (each chunk at its best activated engram, "
        "rounds ≥ 1 included) and the chunk's own similarity to the question (a deviation)."
    )
    fusion_k: int = _f(5, "With context_source=fused: the reciprocal-rank constant k in 1/(k + rank); on the "
                          "order of context_chunks, so the heads of both lists decide the 5-chunk context "
                          "(chosen on the sample corpus and MuSiQue questions 31–60).", low=1, high=1000)
    answer_facts: int = _f(10, "E_final fact lines given to the answer step, after the passages (0 = none).",
                           low=0, high=100)
    cue_k: int = _f(5, "Nearest engrams added per cue entity (memrag addition).", low=0, high=100)
    graph_expansion: bool = _f(True, "Also activate co-occurrence neighbours of the seeds.")
    graph_neighbours: int = _f(10, "Co-occurrence neighbours per seed at most.", low=0, high=1000)
