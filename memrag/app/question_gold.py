"""A question's gold as the app scores it: reference answers, gold documents and their chunks,
recall and EM/F1 of one trace, and where each gold passage was found or lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from memrag.eval.gold import best_by_doc, doc_unit, gold_fate, gold_fate_records
from memrag.eval.metrics import exact_match, f1_score, recall_at_k
from memrag.index.memory import Memory
from memrag.app.method_views import ranked_moment
from memrag.methods import registry
from memrag.methods.fate_kit import FateRecord, MissingFate
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


_unit_of = doc_unit  # the older name


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


# ------------------------------------------------------------------ one line per answer
@dataclass
class Where:
    """One moment of a passage's story and the view that shows it: `tab` a detail tab's label,
    `step` a step of the Retrieval tab or None, `row` the row to highlight there (a NeuroPath path
    id in a hop's table, or a chunk id in the ranked list)."""
    label: str  # "first miss" | "finally lost"
    text: str
    tab: str | None
    step: str | int | None = None
    row: str | int | None = None
    passage: str = ""  # the gold passage whose story this is (its title)


@dataclass
class FateLine:
    """The answer card's gold line and the detail view that shows where a passage was lost:
    `tab` is a detail tab's label, `step` a step of the Retrieval tab (NeuroPath's "Hop 2" or
    "Completion", EcphoryRAG's activation step index) or None, for the first passage named;
    `moments` every named passage's first miss and final loss, in the order the passages are
    named, each with its own view and its passage's title."""
    text: str
    tab: str | None = None
    step: str | int | None = None
    passage: str = ""
    moments: list[Where] = field(default_factory=list)


def _lost_at(trace: Trace, record: FateRecord) -> tuple[str | None, str | int | None]:
    """Which detail tab (and step) shows a passage's fate: the method's views read it from the
    record's hop or round."""
    if record.kind is MissingFate.NOT_IN_MEMORY:
        return "Gold", None
    return registry.get(trace.method).views.lost_at(record, trace)


def gold_fate_line(trace: Trace, gold: Gold, memory: Memory | None, k: int = 5) -> FateLine:
    """'2 of 2 gold passages in the top 5; Osric Penhallow: only by completion': per gold document
    its best chunk's fate; the passages not found by the method's own step (lost, or found only by
    NeuroPath's completion) are named with their fate, and the line points at the view of the
    first one of them."""
    unit = _unit_of(trace, memory)
    best = best_by_doc(gold_fate_records(trace, gold.chunk_ids, k=k, unit_of=unit), unit)
    titles = ({d.doc_id: d.title for d in memory.documents} if memory is not None
              else {c.doc_id: c.title for c in trace.chunks})  # a run's traces without their memory
    found = [d for d in gold.gold_docs if d in best and best[d].clean]
    in_top = [d for d in gold.gold_docs if d in best and best[d].rank is not None and best[d].rank <= k]
    text = f"{len(in_top)} of {len(gold.gold_docs)} gold passages in the top {k}"
    caveats = [d for d in gold.gold_docs if d not in found]
    missing = FateRecord(None, MissingFate.NOT_IN_MEMORY)
    parts = [f"{titles.get(d, d)}: " + best.get(d, missing).short for d in caveats]
    line = FateLine("; ".join([text, *parts]))
    if caveats:
        first = caveats[0]
        line.passage = titles.get(first, first)
        line.tab, line.step = _lost_at(trace, best.get(first, missing))
        line.moments = [w for d in caveats for w in moments(trace, best.get(d, missing), titles.get(d, d))]
    return line


def moments(trace: Trace, record: FateRecord, passage: str = "") -> list[Where]:
    """The record's first miss and final loss, each with the view that shows it and the row there:
    the passage's in the ranked list, else the method's own row (a path, a fact, the passage)."""
    at = registry.get(trace.method).views.moment_at
    out = []
    for label, m in (("first miss", record.first_miss), ("finally lost", record.final_loss)):
        if m is not None:
            tab, step = at(m, trace)
            ranked = (tab, step) == ranked_moment(m, trace)
            out.append(Where(label, m.text, tab, step, m.chunk_id if ranked else m.own_row, passage))
    return out

