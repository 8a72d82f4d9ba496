"""Traces and memories as pandas DataFrames (shown with `st.dataframe`, which renders text as text).

Token figures follow the ledger's rules: a response-cache hit keeps its original
counts and seconds and is labelled "recorded", never shown as free; an unknown
count stays unknown (<NA>) instead of becoming 0; a call shared by several
methods is billed to each method and counted once in totals across methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from memrag.index.memory import Memory
from memrag.methods.registry import label_of
from memrag.trace import LLMCallRecord, Trace, calls_counted_once, token_sum
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.neuropath.detail import NeuroPathHop
from memrag.plain_text import clip
from memrag.words import MADE_NOW_S, ORIGINAL_RUN_S, PATH_PROBABILITY, path_fate, stage_name

ORIGINAL_S = ORIGINAL_RUN_S.label  # a call's model seconds when it was made
MADE_NOW = MADE_NOW_S.label
COUNT_COLUMNS = ["prompt tokens", "cached-prefix tokens", "completion tokens", "total tokens"]


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=columns)
    for c in COUNT_COLUMNS:
        if c in df.columns:
            df[c] = df[c].astype("Int64")  # nullable: unknown counts stay <NA>
    return df


def _add(total: int | None, value: int | None) -> int | None:
    return token_sum((total, value))


def origin(call: LLMCallRecord) -> str:
    """"recorded" for a response-cache hit (original counts kept), "fresh" for engine work done now."""
    return "recorded" if call.cached else "fresh"


# ------------------------------------------------------------------ NeuroPath
def candidates_table(hop: NeuroPathHop) -> pd.DataFrame:
    """One row per candidate path at a hop: its number in the prompt, text, pruning score, rank, its
    probability when the likelihood tracker judged it, and fate."""
    cands = sorted(hop.candidates, key=lambda c: (c.listed_as is None, c.listed_as or 0,
                                                  c.rank if c.rank is not None else 10**9))
    rows = [{"#": c.listed_as, "path": c.text, "score": None if c.score is None else round(c.score, 4),
             "rank": c.rank,
             "fate": path_fate(c.fate), "kept from hop": c.kept_from, "created at hop": c.hop,
             "expandable at": "" if c.kept_from is not None else c.frontier_name,
             "chunks": ", ".join(str(x) for x in c.chunk_ids), "id": c.pid} for c in cands]
    columns = ["#", "path", "score", "rank", "fate", "kept from hop", "created at hop", "expandable at", "chunks",
               "id"]
    if any(c.probability is not None for c in cands):  # judged by likelihood: the column that decided
        for row, c in zip(rows, cands):
            row[PATH_PROBABILITY.label] = None if c.probability is None else round(c.probability, 3)
        columns.insert(columns.index("fate"), PATH_PROBABILITY.label)
    df = pd.DataFrame(rows, columns=columns)
    for col in ("#", "rank", "kept from hop"):
        df[col] = df[col].astype("Int64")
    return df


# ------------------------------------------------------------------ HippoRAG 2
VERDICT_WORDS = {"kept": "kept", "dropped": "dropped by recognition memory",
                 "unjudged": "not judged (the recognition call failed)"}


def _hippo(trace: Trace) -> HippoRAG2Detail:
    if trace.detail(HippoRAG2Detail) is None:
        raise ValueError(f"this is a {trace.method!r} trace, not a HippoRAG 2 trace")
    return trace.detail(HippoRAG2Detail)


def hippo_facts_table(trace: Trace) -> pd.DataFrame:
    """The retrieved facts, best first: the triple, its cosine and normalised score, the
    recognition verdict and the passages it was read from."""
    d = _hippo(trace)
    verdict = (lambda f: VERDICT_WORDS.get(f.verdict, f.verdict)) if d.recognition else (
        lambda f: "kept (recognition off)")
    rows = [{"#": i, "fact": f"{f.head} | {f.relation} | {f.tail}", "cosine": round(f.cosine, 4),
             "score": round(f.score, 4), "verdict": verdict(f), "passages": ", ".join(map(str, f.chunk_ids))}
            for i, f in enumerate(d.facts, start=1)]
    return pd.DataFrame(rows, columns=["#", "fact", "cosine", "score", "verdict", "passages"])


def hippo_phrase_seeds_table(trace: Trace) -> pd.DataFrame:
    """Each seeded phrase: its kept facts' scores ÷ the passages containing it = its seed weight."""
    rows = [{"phrase": s.name, "fact scores": ", ".join(f"{x:.3f}" for x in s.fact_scores),
             "passages containing it": s.passages, "seed weight": round(s.weight, 4),
             "how": f"mean of the fact scores ÷ {s.passages} passage(s)" if len(s.fact_scores) > 1
             else f"{s.fact_scores[0]:.3f} ÷ {s.passages} passage(s)" if s.fact_scores else "",
             "PageRank mass": round(s.mass, 5)} for s in _hippo(trace).phrase_seeds]
    return pd.DataFrame(rows, columns=["phrase", "fact scores", "passages containing it", "seed weight", "how",
                                       "PageRank mass"])


def hippo_passage_seeds_table(trace: Trace) -> pd.DataFrame:
    """The heaviest passage seeds: normalised dense score × passage_node_weight."""
    weight = trace.params.get("passage_node_weight")
    rows = [{"chunk": p.chunk_id, "title": (trace.chunk(p.chunk_id).title if trace.chunk(p.chunk_id) else ""),
             "normalised dense score": round(p.dense_score, 4),
             "× passage_node_weight": weight, "seed weight": round(p.weight, 5)}
            for p in _hippo(trace).passage_seeds]
    return pd.DataFrame(rows, columns=["chunk", "title", "normalised dense score", "× passage_node_weight",
                                       "seed weight"])


def hippo_mass_table(trace: Trace) -> pd.DataFrame:
    """The nodes holding the most PageRank mass, phrases and passages together."""
    rows = [{"rank": i, "node": n.label, "kind": n.kind, "PageRank mass": round(n.mass, 5),
             "share": f"{n.mass:.1%}", "seed weight": round(n.seed, 5) if n.seed else None}
            for i, n in enumerate(_hippo(trace).top_nodes, start=1)]
    return pd.DataFrame(rows, columns=["rank", "node", "kind", "PageRank mass", "share", "seed weight"])


# ------------------------------------------------------------------ ranked chunks
def ranked_table(trace: Trace, gold_chunk_ids: Iterable[int] | None = None, limit: int = 50) -> pd.DataFrame:
    """The ranked list's head: position, chunk, title, where it came from, score, why, gold, in context."""
    gold = set(gold_chunk_ids or ())
    context = set(trace.answer.context_chunk_ids) if trace.answer else set()
    rows = []
    for pos, r in enumerate(trace.ranked[:limit], start=1):
        c = trace.chunk(r.chunk_id)
        rows.append({"position": pos, "chunk": r.chunk_id, "title": c.title if c else "",
                     "source": r.source, "score": None if r.score is None else round(r.score, 4), "why": r.why,
                     "gold": r.chunk_id in gold, "in answer context": r.chunk_id in context,
                     "text": clip(c.text, 240) if c else ""})
    return pd.DataFrame(rows, columns=["position", "chunk", "title", "source", "score", "why", "gold",
                                       "in answer context", "text"])


# ------------------------------------------------------------------ tokens and calls
def _stage_rows(calls: Sequence[LLMCallRecord], key: str = "stage") -> list[dict]:
    groups: dict[tuple[str, str], dict] = {}
    for c in calls:
        g = groups.setdefault((c.stage, origin(c)), {
            "stage": stage_name(c.stage), "origin": origin(c), "calls": 0, "prompt tokens": 0, "cached-prefix tokens": 0,
            "completion tokens": 0, ORIGINAL_S: 0.0, "shared": False})
        g["calls"] += 1
        g["prompt tokens"] = _add(g["prompt tokens"], c.prompt_tokens)
        g["cached-prefix tokens"] = _add(g["cached-prefix tokens"], c.prompt_tokens_cached)
        g["completion tokens"] = _add(g["completion tokens"], c.completion_tokens)
        g[ORIGINAL_S] += c.seconds
        g["shared"] = g["shared"] or c.shared
    for g in groups.values():
        g["total tokens"] = _add(g["prompt tokens"], g["completion tokens"])
        g[ORIGINAL_S] = round(g[ORIGINAL_S], 3)
    return list(groups.values())


STAGE_COLUMNS = ["stage", "origin", "calls", "prompt tokens", "cached-prefix tokens", "completion tokens",
                 "total tokens", ORIGINAL_S, "shared"]


def tokens_by_stage(trace: Trace) -> pd.DataFrame:
    """One row per (stage, origin) in call order, the stage in words: calls, tokens and seconds. A response-cache hit is a
    "recorded" row with its original counts; shared calls are billed to this method (shared=True)."""
    return _frame(_stage_rows(trace.llm_calls), STAGE_COLUMNS)


def llm_calls_table(trace: Trace) -> pd.DataFrame:
    """Every LLM call of the trace: stage, fresh or recorded, success, retries, tokens, seconds, reply."""
    rows = [{"#": i, "stage": stage_name(c.stage), "origin": origin(c), "ok": c.ok, "retries": c.retries,
             "parse errors": "; ".join(c.parse_errors), "prompt tokens": c.prompt_tokens,
             "cached-prefix tokens": c.prompt_tokens_cached, "completion tokens": c.completion_tokens,
             ORIGINAL_S: round(c.seconds, 3), "shared": c.shared, "model": c.model, "backend": c.backend,
             "reply": clip(c.raw_reply, 200)} for i, c in enumerate(trace.llm_calls)]
    return _frame(rows, ["#", "stage", "origin", "ok", "retries", "parse errors", "prompt tokens",
                         "cached-prefix tokens", "completion tokens", ORIGINAL_S, "shared", "model", "backend",
                         "reply"])


def _totals_row(label: str, calls: Sequence[LLMCallRecord], traces: int) -> dict:
    row = {"method": label, "traces": traces, "calls": len(calls),
           "recorded calls": sum(1 for c in calls if c.cached), "prompt tokens": 0, "cached-prefix tokens": 0,
           "completion tokens": 0, ORIGINAL_S: 0.0, MADE_NOW: 0.0}
    for c in calls:
        row["prompt tokens"] = _add(row["prompt tokens"], c.prompt_tokens)
        row["cached-prefix tokens"] = _add(row["cached-prefix tokens"], c.prompt_tokens_cached)
        row["completion tokens"] = _add(row["completion tokens"], c.completion_tokens)
        row[ORIGINAL_S] += c.seconds
        if not c.cached:
            row[MADE_NOW] += c.seconds
    row["total tokens"] = _add(row["prompt tokens"], row["completion tokens"])
    row[ORIGINAL_S] = round(row[ORIGINAL_S], 3)
    row[MADE_NOW] = round(row[MADE_NOW], 3)
    return row


ALL_METHODS = "all methods (shared calls once)"


def totals_across(traces: Sequence[Trace]) -> pd.DataFrame:
    """Per method (all its traces summed; the method by its display name), then one row for everything where a call shared by
    several methods (same identity, `shared=True`) is counted once."""
    by_method: dict[str, list[Trace]] = {}
    for t in traces:
        by_method.setdefault(t.method, []).append(t)
    rows = [_totals_row(label_of(m), [c for t in ts for c in t.llm_calls], len(ts)) for m, ts in by_method.items()]
    rows.append(_totals_row(ALL_METHODS, calls_counted_once(traces), len(traces)))
    return _frame(rows, ["method", "traces", "calls", "recorded calls", "prompt tokens", "cached-prefix tokens",
                         "completion tokens", "total tokens", ORIGINAL_S, MADE_NOW])


# ------------------------------------------------------------------ memory
def engrams_table(memory: Memory) -> pd.DataFrame:
    """Every engram (one mention of an entity in one chunk)."""
    titles = {d.doc_id: d.title for d in memory.documents}
    rows = [{"engram": e.engram_id, "name": e.name, "type": e.type, "importance": e.importance,
             "description": e.description, "chunk": e.chunk_id,
             "document": titles.get(memory.chunks[e.chunk_id].doc_id, "") if e.chunk_id < len(memory.chunks) else "",
             "entity key": e.key} for e in memory.engrams]
    return pd.DataFrame(rows, columns=["engram", "name", "type", "importance", "description", "chunk",
                                       "document", "entity key"])


def chunks_table(memory: Memory) -> pd.DataFrame:
    """Every chunk with its size, what extraction found in it, and any extraction failure."""
    engrams = [0] * len(memory.chunks)
    triples = [0] * len(memory.chunks)
    for e in memory.engrams:
        if e.chunk_id < len(engrams):
            engrams[e.chunk_id] += 1
    for t in memory.triples:
        if t.chunk_id < len(triples):
            triples[t.chunk_id] += 1
    rows = []
    for c in memory.chunks:
        log = memory.extraction_log.get(c.chunk_id)
        rows.append({"chunk": c.chunk_id, "document": c.doc_id, "title": c.title, "part": c.index,
                     "words": len(c.text.split()), "engrams": engrams[c.chunk_id], "triples": triples[c.chunk_id],
                     "extraction": log.status if log else "", "error": log.error if log else "",
                     "text": clip(c.text, 240)})
    return pd.DataFrame(rows, columns=["chunk", "document", "title", "part", "words", "engrams", "triples",
                                       "extraction", "error", "text"])
