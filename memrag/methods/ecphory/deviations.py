"""Where memrag's EcphoryRAG departs from its paper (or released code), as data."""

from __future__ import annotations

from memrag.methods.paper_kit import Deviation

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("ecphory", "Seed policy",
              "Algorithm 1 seeds every round with the most question-similar engrams of E_all, "
              "which always lie in E_init, so rounds repeat the first",
              "seed_policy='moving' (default) seeds each round from what the previous round newly "
              "activated; 'paper' is Algorithm 1 as written",
              "makes the associative rounds reach new engrams; the paper's own depth ablation is flat"),
    Deviation("ecphory", "Cue hits",
              "the released code never extracts cues",
              "each cue adds its cue_k nearest engrams to the initial activation (marked 'cue')",
              "lets the named entities of the question activate their own traces"),
    Deviation("ecphory", "Graph expansion",
              "the paper's associative step; the released code builds no entity graph",
              "co-occurrence neighbours of the seeds, at most graph_neighbours per seed",
              "hub entities co-occur with thousands of others; an uncapped step floods the context"),
    Deviation("ecphory", "Context ranking (context_source)",
              "Algorithm 1 gives C_init: source chunks of the initial activation in activation order, then "
              "the chunks nearest the question",
              "context_source='fused' (default): reciprocal-rank fusion (fusion_k 5) of each chunk's best "
              "activated engram (rounds >= 1 included) and its own similarity to the question; 'c_init' is "
              "Algorithm 1, "
              "'activated' puts E_final's chunks first",
              "under C_init the associative rounds never reach the context and the first directly retrieved "
              "chunk sat at position 7-17 on every sample question"),
    Deviation("ecphory", "Fact lines in the answer prompt (answer_facts)",
              "the answer step reads all of E_final's entity lines with the chunks",
              "the first answer_facts (10) E_final lines, numbered, after the passages; no '(other)' type",
              "20 unnumbered lines before the passages drew sentence answers and distractor names "
              "(8 of 15 wrong sample answers were strings from them)"),
    Deviation("ecphory", "One engram per entity after re-ranking",
              "E_final is the top k_final engrams, several of which may name one entity",
              "E_final keeps the best engram of each entity node",
              "the context should not repeat one name eight times"),
    Deviation("ecphory", "Centroid weights and k parameters",
              "the released code weights every seed equally and ignores some of its own k parameters",
              "weights are similarities to the question; every parameter is used and recorded",
              "follows the paper's text; no silently ignored settings"),
    Deviation("ecphory", "Associative depth (rounds)",
              "the released code's default depth is 1 associative round (the paper's ablation varies it)",
              "rounds=2 by default",
              "with seed_policy='moving' a second round reaches engrams the first did not; rounds=1 is the "
              "released code's setting"),
)
