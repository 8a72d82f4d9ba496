"""Scoring one question: a memory's chunks mapped to the dataset's recall units, then each
method's ranked list scored (recall@k over deduplicated units, EM / F1 and raw EM of the answer,
each gold passage's fate, tokens and calls)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memrag.eval.datasets import Dataset, Passage, Question
from memrag.eval.gold import NOT_IN_MEMORY, best_fate, gold_fate
from memrag.eval.metrics import exact_match, f1_score, raw_exact_match, recall_at_k
from memrag.index.memory import Memory
from memrag.eval.records import CallTotals
from memrag.eval.tracker_precision import question_counts
from memrag.methods.neuropath.reach import gold_reach
from memrag.trace import LLMCallRecord, Trace
from memrag.trace import calls_counted_once

RECALL_KS = (1, 2, 5, 10)
RANKED_KEPT = 100  # ranked entries kept in each stored trace; recall and fates are computed before the cut
TOP_PASSAGES = 10  # distinct passages listed per method in each record, for drill-down

# ------------------------------------------------------------------ chunks → recall units
@dataclass
class ChunkUnits:
    """Which passage (and so which recall unit) each chunk of a memory belongs to."""
    pid_of_chunk: dict[int, str]
    unit_of_chunk: dict[int, str]
    chunks_of_unit: dict[str, list[int]]
    missing: list[str]  # passages of the scope with no chunk in the memory

    def unit(self, chunk_id: int) -> str:
        # A chunk of no known passage still takes a slot of its own in the ranking.
        return self.unit_of_chunk.get(chunk_id, f"chunk:{chunk_id}")


def map_chunks(memory: Memory, ds: Dataset, passages: list[Passage]) -> ChunkUnits:
    """Map each memory document to its passage: by (title, text) as the corpus gives them (an
    OpenIE import keeps them verbatim), else by document id (built memories use the pid).
    Refuses a memory holding documents outside the scope: its recall would not be the scope's."""
    by_text = {(p.title, p.text): p for p in ds.passages.values()}
    in_scope = {p.pid for p in passages}
    pid_of_doc: dict[str, str] = {}
    foreign: list[str] = []
    for d in memory.documents:
        p = by_text.get((d.title, d.text)) or ds.passages.get(d.doc_id)
        if p is None or p.pid not in in_scope:
            foreign.append(d.doc_id)
        else:
            pid_of_doc[d.doc_id] = p.pid
    if foreign:
        raise ValueError(
            f"the memory holds {len(foreign)} document(s) that are not passages of this {ds.name} scope "
            f"(first: {foreign[0]!r}); it was built for another corpus or scope: give another --memory or --out")
    pid_of_chunk, unit_of_chunk, chunks_of_unit = {}, {}, {}
    for c in memory.chunks:
        pid = pid_of_doc.get(c.doc_id)
        if pid is None:
            continue
        unit = ds.passages[pid].unit
        pid_of_chunk[c.chunk_id] = pid
        unit_of_chunk[c.chunk_id] = unit
        chunks_of_unit.setdefault(unit, []).append(c.chunk_id)
    covered = set(pid_of_chunk.values())
    return ChunkUnits(pid_of_chunk, unit_of_chunk, chunks_of_unit, [p.pid for p in passages if p.pid not in covered])


# ------------------------------------------------------------------ scoring one question
def call_totals(traces: list[Trace]) -> tuple[dict[str, CallTotals], CallTotals]:
    """Per method (the shared query-entity call billed to each) and across methods (counted once),
    summed from the traces' calls."""
    by_method: dict[str, list[LLMCallRecord]] = {}
    for t in traces:
        by_method.setdefault(t.method, []).extend(t.llm_calls)
    return ({m: CallTotals.of(calls) for m, calls in by_method.items()},
            CallTotals.of(calls_counted_once(traces)))


def _answer_scores(trace: Trace, answers: list[str]) -> dict[str, float | None]:
    if trace.answer is None:
        return {"em": None, "raw_em": None, "f1": None}
    a = trace.answer
    return {"em": exact_match(a.answer, answers), "raw_em": raw_exact_match(a.raw_answer, answers),
            "f1": f1_score(a.answer, answers)}


def unit_fates(trace: Trace, q: Question, units: ChunkUnits, k: int) -> list[dict[str, Any]]:
    """One fate per gold passage (unit): the best of its chunks' fates."""
    out = []
    for u in q.gold_units:
        cids = units.chunks_of_unit.get(u, [])
        if not cids:
            out.append({"unit": u, "chunk_id": None, "fate": NOT_IN_MEMORY,
                        "detail": "no chunk of this gold passage is in the memory", "rank": None})
            continue
        best = best_fate(gold_fate(trace, cids, k, unit_of=units.unit))
        out.append({"unit": u, **best})
    return out


def score_question(q: Question, traces: list[Trace], units: ChunkUnits, fate_k: int) -> dict[str, Any]:
    per_method, across = call_totals(traces)
    methods: dict[str, Any] = {}
    gold_chunks = [c for u in q.gold_units for c in units.chunks_of_unit.get(u, [])]
    for t in traces:
        ranked_units = [units.unit(r.chunk_id) for r in t.ranked]
        metrics: dict[str, float | None] = {f"recall@{k}": recall_at_k(ranked_units, q.gold_units, k)
                                            for k in RECALL_KS}
        metrics.update(_answer_scores(t, q.answers))
        top: list[str] = []
        seen: set[str] = set()
        for r in t.ranked:
            u = units.unit(r.chunk_id)
            if u not in seen:
                seen.add(u)
                top.append(units.pid_of_chunk.get(r.chunk_id, f"chunk:{r.chunk_id}"))
                if len(top) == TOP_PASSAGES:
                    break
        trace = t.to_dict()
        trace["ranked"] = trace["ranked"][:RANKED_KEPT]
        methods[t.method] = {
            "metrics": metrics,
            "gold_fate": unit_fates(t, q, units, fate_k),
            "tokens": per_method[t.method].to_json(),
            "seconds": t.seconds,
            "retrieval_seconds": t.retrieval_seconds,
            "answer": t.answer.answer if t.answer is not None else None,
            "answer_capped": list(t.answer.capped) if t.answer is not None else [],
            "top_passages": top,
            "ranked_total": len(t.ranked),
            "trace": trace,
        }
        tracked = question_counts(t, gold_chunks)
        if tracked is not None:  # a method with a path tracker: its judgements, counted for precision
            methods[t.method]["tracker"] = [h.to_json() for h in tracked]
        reach = gold_reach(t, [units.chunks_of_unit.get(u, []) for u in q.gold_units])
        if reach is not None:  # a method with seeds and paths: how far towards each gold passage it got
            methods[t.method]["reach"] = reach
    return {"qid": q.qid, "question": q.question, "answers": q.answers, "gold_units": q.gold_units,
            "hops": q.meta.get("hops"), "methods": methods, "all_methods": across.to_json()}
