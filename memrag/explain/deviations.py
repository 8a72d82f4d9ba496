"""Where memrag departs from the NeuroPath, EcphoryRAG and HippoRAG 2 papers (DESIGN §6), as data.

One source for every place that lists them: each method's view in the app, the
README table and the evaluation summaries. An entry says what differs, what the
paper (or its released code) does, what memrag does, and why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from memrag.methods import registry


@dataclass(frozen=True)
class Deviation:
    method: str  # "all" | "neuropath" | "ecphory" | "hipporag2" | "dense"
    what: str
    paper: str
    memrag: str
    why: str


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("all", "Models",
              "GPT-4o-mini (or GPT-3.5) for extraction and answers; Contriever or bge-m3 embeddings",
              "Qwen2.5-Coder-1.5B embedded, or phi4 through Ollama; all-MiniLM-L6-v2 embeddings",
              "runs offline on a laptop's CPU; absolute scores are lower than the papers'"),
    Deviation("all", "Indexing pass",
              "each method runs its own extraction prompt over the corpus",
              "one schema-constrained call per chunk returns entities (type, description, importance) "
              "and triples for both methods",
              "a corpus costs one pass; the papers' indexing-token figures are what it is compared with"),
    Deviation("all", "Query entities / cues",
              "NeuroPath extracts query entities; EcphoryRAG extracts cues, each in its own call",
              "one shared call gives both; it is billed to each method and counted once in totals",
              "the same question needs the same names; one call saves tokens and time"),
    Deviation("all", "Extraction prompt and clean-up",
              "the papers keep their extractor's names as returned (OpenIE phrases, LLM entity lists)",
              "one invented example turn in the extraction prompt; names cleaned against the passage: "
              "leading lowercase articles dropped, an object's leading preposition moved into the relation, "
              "clause endpoints kept as triple values without an entity node, foreign-script fragments "
              "repaired, descriptions cut at a word; the entity key ignores a leading 'the'",
              "a 1.5B extractor put 'in 1920', 'of the Varrow Coast' and whole clauses in name slots: "
              "13 % of the sample's entity names, which both methods' graphs inherited"),
    Deviation("all", "Answer prompt",
              "each paper's own zero-shot answer prompt",
              "one prompt for all methods: two invented example turns (a bridge and a comparison), a "
              "one-sentence reasoning capped at 320 characters, a short answer; replies that reach a cap "
              "are counted in every evaluation",
              "with a 200-character cap and no example, 17 of 59 recorded answers stopped mid-thought "
              "and 3 answered with sentences"),
    Deviation("neuropath", "Where the valid paths' chunks go (dp_position)",
              "D_p (chunks of the last hop's valid paths) first, then the completion ranking",
              "dp_position='fused' (default): reciprocal-rank fusion (dp_fusion_k 5) of the path order and "
              "the completion rank, so a path chunk completion also ranks high leads; 'first' is the paper's "
              "order, 'interleave' alternates completion and D_p, 'after_head' puts D_p after the first "
              "dp_head completion chunks",
              "a 1.5B tracker marks most listed paths valid, so D_p first lets its noise decide R@2; placed "
              "by evidence, R@2 rose on both selection sets (sample 49.2 -> 58.3, MuSiQue 31-60 45.3 -> 48.1)"),
    Deviation("neuropath", "Coreference set size",
              "the official code searches k = 5 including the node itself (at most 4 others)",
              "coref_top counts other nodes only (5 others by default)",
              "a parameter named 'top 5' should mean five candidates"),
    Deviation("neuropath", "Path vectors for pruning",
              "the text of each candidate path is embedded",
              "a path's vector is the normalised sum of its triples' stored vectors",
              "keeps query-time work to dot products; stated in every trace"),
    Deviation("neuropath", "Tracking failure",
              "the official code drops every kept path when the tracker's reply cannot be read",
              "tracking stops, the paths kept so far count as valid, completion still runs",
              "one unreadable reply from a small model should not erase the evidence found so far"),
    Deviation("neuropath", "Optional extras (off by default)",
              "not in the paper",
              "force_hops, seed_floor and verbatim_seeds parameters",
              "failure modes seen with a 1.5B tracker: early stops, weak seeds, missed names"),
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
    Deviation("dense", "Dense reference",
              "the papers' dense baselines use their own retrievers",
              "chunks ranked by cosine to the question with MiniLM, passages embedded as 'title\\ntext'",
              "the same reference for every method; reproduces the figures in DESIGN §6"),
)

METHOD_NAMES = {**registry.LABELS, "all": "All methods"}


def deviations_for(method: str, *, include_shared: bool = True) -> list[dict[str, str]]:
    """The deviations that apply to one method (with those shared by all methods first)."""
    if method not in METHOD_NAMES:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHOD_NAMES)}")
    # Dense ranking makes no LLM call, so of the shared rows only the models apply to it.
    rows = [d for d in DEVIATIONS if d.method == method or (
        include_shared and d.method == "all" and (method != "dense" or d.what == "Models"))]
    rows.sort(key=lambda d: d.method != "all")
    return [asdict(d) for d in rows]


def all_deviations() -> list[dict[str, str]]:
    return [asdict(d) for d in DEVIATIONS]


def markdown_table() -> str:
    """The README's deviations table (regenerate with `python -m memrag.deviations`)."""
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    rows = ["| method | what | papers / released code | memrag | why |", "|---|---|---|---|---|"]
    for d in DEVIATIONS:
        rows.append(f"| {METHOD_NAMES[d.method]} | {cell(d.what)} | {cell(d.paper)} | {cell(d.memrag)} | "
                    f"{cell(d.why)} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
