"""HippoRAG 2's parameters; each field carries its own help text."""

from __future__ import annotations

from dataclasses import dataclass

from memrag.fields import helped as _f


@dataclass
class HippoRAG2Params:
    linking_top_k: int = _f(5, "Facts retrieved by cosine between the question and the triple vectors, and phrase "
                               "nodes kept as seeds at most (official linking_top_k).", low=1, high=1000)
    recognition: bool = _f(True, "Recognition memory: one LLM call keeps the retrieved facts relevant to the "
                                 "question. Off = the retrieval-only variant (every retrieved fact seeds, no LLM "
                                 "call at query time).")
    passage_node_weight: float = _f(0.05, "Each passage node's seed = its min-max-normalised dense score times "
                                          "this (official passage_node_weight).", low=0.0, high=10.0)
    damping: float = _f(0.5, "Personalised PageRank damping: the chance of following an edge rather than jumping "
                             "back to a seed (official damping).", low=0.0, high=0.99)
    synonymy_threshold: float = _f(0.8, "Minimum cosine of two phrase nodes' stored name vectors for a synonymy "
                                        "edge (official synonymy_edge_sim_threshold).", low=-1.0, high=1.0)
    synonymy_neighbours: int = _f(100, "Synonymy edges per phrase node at most, nearest first (the official "
                                       "code stops after about 100).", low=0, high=10000)
    answer_passages: int = _f(5, "Chunks from the head of the ranked list given to the answer step.", low=1, high=50)
