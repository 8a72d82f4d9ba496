"""NeuroPath's parameters; each field carries its own help text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memrag.fields import helped as _f


# Where NeuroPath puts the valid paths' chunks; the method reads its choices from here.
DpPosition = Literal["first", "after_head", "interleave", "fused"]
# Who decides which listed paths are kept at each hop.
Tracker = Literal["generative", "likelihood"]
# What a tracking prompt after hop 1 carries besides the question and the paths.
HopPrompt = Literal["carry", "paths"]


@dataclass
class NeuroPathParams:
    max_hops: int = _f(2, "Tracking hops at most.", low=1, high=10)
    prune_top: int | None = _f(30, "New paths kept per hop by similarity to the goal; None = no pruning.",
                               low=1, high=1000)
    max_listed: int = _f(200, "Hard cap on paths listed in one prompt (applies when prune_top is None).",
                         low=1, high=1000)
    coref_top: int = _f(5, "Coreference candidates per entity at query time.", low=0, high=50)
    coref_threshold: float = _f(0.8, "Coreference cosine threshold at query time.", low=0.0, high=1.0)
    completion: bool = _f(True, "Post-retrieval completion ('replay'): fill with dense retrieval.")
    dp_position: DpPosition = _f(
        "fused", "Where the valid paths' chunks (D_p) go in the ranked list: first = the paper's and the "
        "official code's order (D_p, then completion); after_head = after the first dp_head completion chunks; "
        "interleave = completion and D_p alternate, completion first; fused = by evidence: reciprocal-rank "
        "fusion of the path order and the completion rank, so a path chunk that completion also ranks high "
        "leads and a lone tracker pick competes with completion's head (a deviation: a small tracker marks "
        "most listed paths valid).")
    dp_head: int = _f(2, "With dp_position=after_head: completion chunks placed before D_p. With fused: the "
                      "floor — the i-th chunk of D_p ranks no lower than after dp_head completion chunks and "
                      "D_p's first i - 1 (fusion may lift it, never bury it).", low=0, high=50)
    dp_floor: bool = _f(True, "With dp_position=fused: hold the floor dp_head sets (fusion may lift a kept path's "
                        "chunk, never bury it). False = fusion alone, memrag's fused merge before 2026-12-02 (kept "
                        "for replaying runs made then: a short D_p let a kept passage fall below completion's head).")
    dp_fusion_k: int = _f(5, "With dp_position=fused: the constant k in Σ 1/(k + rank); on the order of the "
                          "answer's passage count, so the heads of both lists decide the top ranks.", low=1, high=1000)
    answer_passages: int = _f(5, "Chunks from the head of the ranked list given to the answer step.", low=1, high=50)
    seed_floor: float = _f(
        0.7, "Deviation: the least cosine similarity between a query entity and its nearest graph node for "
        "that node to seed paths (0 = the paper: every query entity seeds its nearest node). Below 0.7 the "
        "nearest node was another thing in 5 of 7 links on the selection sets ('Newspaper Editor' → "
        "'mayor' 0.37, 'Commodore' → 'bays' 0.51); from 0.7 up it was the same thing under a longer name "
        "('LaHave' → 'LaHave River' 0.72, 'Nets' → 'New York Nets' 0.79).", low=0.0, high=1.0)
    seed_top: int = _f(
        1, "Seed links per query entity: its seed_top nearest graph nodes, each a seed if at or above "
        "seed_floor (the floor holds per link) and, beyond the nearest, only if the names nest (one's words "
        "all in the other's: 'Nets' → 'New York Nets', not '26th Chess Olympiad' → '36th Chess Olympiad'). "
        "1 = the paper (the nearest node only); more reaches gold named under a longer name, at the price "
        "of more listed paths and longer prompts.", low=1, high=20)
    skip_class_words: bool = _f(
        True, "Deviation: a query entity written all in lower case ('country', 'city of birth', 'director') "
        "names a kind of thing, not an entity, and seeds nothing; its nearest graph node (often the same "
        "word, at similarity 1.0) would start paths from every country or city the memory mentions.")
    verbatim_seeds: bool = _f(False, "Deviation: also seed graph phrases named verbatim (capitalised) in the question.")
    force_hops: bool = _f(False, "Deviation: run every hop even after the model says stop.")
    expand_kept: bool = _f(
        False, "Deviation: grow every path the model kept (valid ∪ expand_ids) into the next hop, not only "
        "those it names in expand_ids (the paper). The 1.5B model's expand_ids list no more gold after hop 2 "
        "than as many paths from the top of the listing (bench/expansion_probe.py); growing every kept path "
        "lists more gold (MuSiQue 31-60: 38 → 40 of 71, 46 with force_hops), but recall did not follow "
        "(R@2 −3.3, −5.0 with force_hops), so it stays off.")
    tracker: Tracker = _f(
        "generative", "Who decides which listed paths are kept: generative = the paper's tracker (the model "
        "writes valid_ids in one call per hop); likelihood = a deviation: each new listed path is judged on "
        "its own by the model's probability of 'yes' to 'does this path help answer the question?' (one "
        "one-token call per new path; carried paths keep their earlier probability), and the kept paths are "
        "those at or above keep_threshold, most probable first, at most keep_top. The chain, requirement, "
        "expansion count and continue still come from the generative call. A backend that gives no "
        "probabilities falls back to generative for that hop, said in the trace.")
    keep_threshold: float = _f(0.5, "With tracker=likelihood: the least P(yes) (normalised over yes + no) for "
                               "a path to be kept; 0.5 = the model leans to yes.", low=0.0, high=1.0)
    hop_prompt: HopPrompt = _f(
        "paths", "What a tracking prompt after hop 1 holds: paths = the official code's shape (the question and "
        "the listed paths only); carry = memrag's earlier deviation: also the previous hop's reasoning chain "
        "('So far') and expansion requirement ('Still missing'), which a 1.5B model copies word for word. A hop "
        "that repeats the previous chain and requirement is flagged in the trace either way.")
    keep_top: int | None = _f(10, "With tracker=likelihood: at most this many kept paths per hop, most probable "
                              "first (10, the generative reply's cap on valid_ids); None = no cap.", low=1, high=100)
