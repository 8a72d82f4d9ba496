"""A question's gold as the app scores it: reference answers, gold documents and their chunks,
recall and EM/F1 of one trace, and where each gold passage was found or lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from memrag.eval.gold import gold_fate
from memrag.eval.metrics import exact_match, f1_score, recall_at_k
from memrag.index.memory import Memory
from memrag.trace import Trace


# ------------------------------------------------------------------ gold
@dataclass
class Gold:
    """A question's gold: reference answers and the chunks of its gold documents."""
    answers: list[str]
    gold_docs: list[str]
    chunk_ids: list[int] = field(default_factory=list)


def gold_of(record: dict[str, Any] | None, memory: Memory | None) -> Gold | None:
    if not record or not record.get("gold_docs") or "answer" not in record:
        return None
    docs = [str(d) for d in record["gold_docs"]]
    ids = [c.chunk_id for c in memory.chunks if c.doc_id in set(docs)] if memory is not None else []
    return Gold([record["answer"], *record.get("answer_aliases", [])], docs, ids)


def _unit_of(trace: Trace, memory: Memory | None) -> Callable[[int], str]:
    """Recall unit of a chunk: its document id (the sample corpus counts documents)."""
    same = memory is not None and memory.fingerprint() == trace.memory_fingerprint

    def unit(cid: int) -> str:
        c = trace.chunk(cid)
        if c is not None:
            return c.doc_id
        if same and 0 <= cid < len(memory.chunks):
            return memory.chunks[cid].doc_id
        return f"chunk:{cid}"
    return unit


def gold_scores(trace: Trace, gold: Gold, memory: Memory | None) -> dict[str, float | None]:
    unit = _unit_of(trace, memory)
    ranked = [unit(r.chunk_id) for r in trace.ranked]
    scores: dict[str, float | None] = {"R@2": recall_at_k(ranked, gold.gold_docs, 2),
                                       "R@5": recall_at_k(ranked, gold.gold_docs, 5), "EM": None, "F1": None}
    if trace.answer is not None:  # no answer step (e.g. compare mode's unrecorded answer): no EM/F1
        scores["EM"] = exact_match(trace.answer.answer, gold.answers)
        scores["F1"] = round(f1_score(trace.answer.answer, gold.answers), 3)
    return scores


def gold_fates(trace: Trace, gold: Gold, memory: Memory | None) -> pd.DataFrame:
    """Where each gold passage was found or lost."""
    rows = gold_fate(trace, gold.chunk_ids, k=5, unit_of=_unit_of(trace, memory))
    titles = {c.chunk_id: c.title for c in memory.chunks} if memory is not None else {}
    return pd.DataFrame([{"chunk": r["chunk_id"], "title": titles.get(r["chunk_id"], ""), "fate": r["fate"],
                 "rank": r.get("rank"), "detail": r["detail"]} for r in rows],
               columns=["chunk", "title", "fate", "rank", "detail"])


