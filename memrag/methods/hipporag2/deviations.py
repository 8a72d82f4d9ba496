"""Where memrag's HippoRAG 2 departs from its paper (or released code), as data."""

from __future__ import annotations

from memrag.methods.paper_kit import Deviation

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("hipporag2", "Embeddings",
              "NV-Embed-v2 for passages, facts and phrases, with query instructions per task",
              "the stored all-MiniLM-L6-v2 vectors (chunks as 'title\\ntext', triples, entity names); one "
              "question vector for facts and passages",
              "reuses the one memory every method reads; no second encoder at query time"),
    Deviation("hipporag2", "Graph source",
              "its own OpenIE pass (NER, then triples) builds the phrase graph",
              "memrag's one extraction pass (or the imported OpenIE file): phrase nodes are entity keys, facts "
              "the memory's distinct (head, relation, tail) triples; a triple endpoint that is a value, not a "
              "name, has no phrase node (no seed, no triple edge)",
              "no indexing tokens beyond what the memory already cost"),
    Deviation("hipporag2", "Passage–phrase context edges",
              "a passage links to the phrases of its own triples",
              "a passage links to every entity mentioned in it (its engrams), so a phrase's passage count "
              "also counts mentions outside triples",
              "memrag's memory records mentions per chunk; triples alone would leave named entities unlinked"),
    Deviation("hipporag2", "Synonymy edges",
              "kNN over freshly encoded phrase embeddings (top 2047, cosine >= 0.8, stops after about 100)",
              "the stored entity-name vectors, nearest first, cosine >= synonymy_threshold (0.8), at most "
              "synonymy_neighbours (100) per phrase; built once per memory and cached (its time is recorded "
              "apart from the query's)",
              "the same vectors the coreference candidates read; building per query would dominate its time"),
    Deviation("hipporag2", "Edge weights where kinds meet",
              "a phrase pair that is both a triple and a synonymy pair keeps the synonymy score in one "
              "direction (it overwrites the triple count)",
              "the weights add: 2 per triple instance plus the cosine per direction found",
              "one weight per pair with no order-dependent overwrite"),
    Deviation("hipporag2", "Recognition memory prompt",
              "a DSPy-optimised filter prompt; the model rewrites the kept triples, matched back by string "
              "similarity",
              "one prompt in our own words with one invented example; the model returns the numbers of the "
              "facts it keeps (validated, one retry)",
              "numbers cannot be misquoted by a small model; the same single call per question"),
    Deviation("hipporag2", "Dense fallback",
              "when no fact survives recognition (or it fails), dense passage retrieval",
              "the same rule, also when the memory has no facts; the trace and gold fates say it fell back",
              "as in the official code, made visible"),
    Deviation("hipporag2", "Retrieval-only variant (recognition = false)",
              "the paper's ablation without the filter",
              "every retrieved fact seeds; no LLM call at query time",
              "cheap enough to evaluate on every pooled sample"),
)
