"""A demo guide drawn from the recordings: the recorded questions grouped by what they show.

Every question with gold (the sample's) is replayed from the memory's recorded replies with every
registered method; its scores (recall@k, exact match) and gold fates (memrag.eval.gold) decide its
groups. Nothing is picked by hand: a change to a method or to the recordings moves questions between
groups, and each group says how it was computed (`Group.how`).

- **bridge**: a graph method put in its top k, by its own step, a gold passage the baseline ranked
  beyond k (NeuroPath's completion is a dense search, so a passage only completion found does not
  count: its fate is not "clean").
- **all right**: every method's answer matches the reference.
- **all wrong**: no method's answer matches — error-analysis cases, each saying whether retrieval
  or the reader failed.

The default demo question is the first bridge question where a method that found the passage also
answered right while the baseline did not: it shows a method's difference on both counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memrag.eval.gold import best_by_doc, doc_unit, gold_fate_records
from memrag.eval.metrics import exact_match, recall_at_k
from memrag.methods import registry
from memrag.methods.fate_kit import FateRecord
from memrag.trace import Trace

K = 5  # "top k", as the Ask page's gold line counts it

BRIDGE, ALL_RIGHT, ALL_WRONG = "bridge", "all right", "all wrong"


@dataclass(frozen=True)
class MethodOutcome:
    """One method on one question: its recall@k, whether its answer matched, each gold passage's fate."""
    method: str
    recall: float
    correct: bool | None  # None: no answer step
    answer: str
    fates: dict[str, FateRecord]  # gold document id → the best fate of its chunks


@dataclass(frozen=True)
class QuestionOutcome:
    qid: str
    question: str
    gold_docs: list[str]
    titles: dict[str, str]  # gold document id → title
    methods: dict[str, MethodOutcome]


@dataclass(frozen=True)
class Pick:
    qid: str
    question: str
    why: str  # what this question shows, computed from its outcome


@dataclass(frozen=True)
class Group:
    key: str
    title: str
    how: str  # how the group was computed, said on the page
    picks: list[Pick] = field(default_factory=list)


@dataclass(frozen=True)
class Guide:
    groups: list[Group]
    default: str | None  # the default demo question's id
    default_why: str
    k: int = K

    def tags(self, qid: str) -> list[str]:
        """The titles of the groups a question is in (for a question picker)."""
        return [g.title for g in self.groups if any(p.qid == qid for p in g.picks)]


# ------------------------------------------------------------------ outcomes
def outcome(record: dict[str, Any], traces: Sequence[Trace], memory: Any, k: int = K) -> QuestionOutcome:
    """A gold question's outcome from its traces (one per method) on `memory`."""
    gold_docs = [str(d) for d in record["gold_docs"]]
    answers = [record["answer"], *record.get("answer_aliases", [])]
    chunk_ids = [c.chunk_id for c in memory.chunks if c.doc_id in set(gold_docs)]
    titles = {d.doc_id: d.title for d in memory.documents if d.doc_id in set(gold_docs)}
    methods = {}
    for t in traces:
        unit = doc_unit(t, memory)
        fates = best_by_doc(gold_fate_records(t, chunk_ids, k=k, unit_of=unit), unit)
        correct = None if t.answer is None else exact_match(t.answer.answer, answers) == 1.0
        methods[t.method] = MethodOutcome(t.method, recall_at_k([unit(r.chunk_id) for r in t.ranked], gold_docs, k),
                                          correct, t.answer.answer if t.answer else "",
                                          {str(d): r for d, r in fates.items()})
    return QuestionOutcome(str(record.get("id", "")), record["question"], gold_docs, titles, methods)


def replay_outcomes(memory: Any, recordings: Any, embedder: Any, records: Iterable[dict[str, Any]],
                    k: int = K) -> list[QuestionOutcome]:
    """Every recorded gold question replayed with every registered method (no model: the replies are
    the recorded ones, retrieval is recomputed), as outcomes. Questions the recordings lack are left out."""
    from memrag.ask import ask

    out = []
    for r in records:
        if not r.get("gold_docs") or "answer" not in r or not recordings.has_question(r["question"]):
            continue
        traces = ask(memory, r["question"], llm=recordings.replay_llm(), embedder=embedder)
        out.append(outcome(r, traces, memory, k))
    return out


# ------------------------------------------------------------------ groups
def _in_top(rec: FateRecord | None, k: int) -> bool:
    return rec is not None and rec.rank is not None and rec.rank <= k


def bridges(q: QuestionOutcome, baseline: str, k: int = K) -> list[tuple[str, str]]:
    """(graph method, gold document) pairs: the method found the passage by its own step (a clean
    fate, in its top k) where the baseline ranked it beyond k."""
    base = q.methods.get(baseline)
    if base is None:
        return []
    out = []
    for doc in q.gold_docs:
        if _in_top(base.fates.get(doc), k):
            continue
        for m, o in q.methods.items():
            rec = o.fates.get(doc)
            if m != baseline and rec is not None and rec.clean and _in_top(rec, k):
                out.append((m, doc))
    return out


def _names(items: Iterable[str]) -> str:
    items = list(dict.fromkeys(items))
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _bridge_pick(q: QuestionOutcome, pairs: list[tuple[str, str]], baseline: str, k: int) -> tuple[Pick, int]:
    """The pick and how many finders also answered right where the baseline did not (its sort key)."""
    label = registry.label_of
    by_doc: dict[str, list[str]] = {}
    for m, doc in pairs:
        by_doc.setdefault(doc, []).append(m)
    parts = [f"'{q.titles.get(doc, doc)}' in the top {k} of "
             + _names(f"{label(m)} (rank {q.methods[m].fates[doc].rank})" for m in ms)
             + f", not of {label(baseline)}" for doc, ms in by_doc.items()]
    base_right = q.methods[baseline].correct
    won = [m for m in dict.fromkeys(m for m, _ in pairs) if q.methods[m].correct and not base_right]
    if won:
        parts.append(f"{_names(label(m) for m in won)} answered right, {label(baseline)} wrong")
    return Pick(q.qid, q.question, "; ".join(parts) + "."), len(won)


def _wrong_pick(q: QuestionOutcome, k: int) -> Pick:
    missed = [d for d in q.gold_docs if not all(_in_top(o.fates.get(d), k) for o in q.methods.values())]
    if not missed:
        why = f"every method had every gold passage in its top {k}: the reader, not retrieval, went wrong"
    else:
        never = [d for d in missed if not any(_in_top(o.fates.get(d), k) for o in q.methods.values())]
        why = (f"no method had {_names(repr(q.titles.get(d, d)) for d in never)} in its top {k}" if never else
               f"some methods missed {_names(repr(q.titles.get(d, d)) for d in missed)}")
    answers = _names(f"{registry.label_of(m)} '{o.answer}'" for m, o in q.methods.items() if o.answer)
    return Pick(q.qid, q.question, f"{why}; answers: {answers}." if answers else f"{why}.")


def build_guide(outcomes: Sequence[QuestionOutcome], baseline: str | None = None, k: int = K) -> Guide:
    """The groups and the default question, from the outcomes alone."""
    baseline = baseline or registry.baseline() or ""
    label = registry.label_of
    bridge: list[tuple[int, int, Pick]] = []
    right: list[Pick] = []
    wrong: list[Pick] = []
    for i, q in enumerate(outcomes):
        pairs = bridges(q, baseline, k)
        if pairs:
            pick, won = _bridge_pick(q, pairs, baseline, k)
            bridge.append((-won, i, pick))
        answered = [o.correct for o in q.methods.values() if o.correct is not None]
        if answered and all(answered):
            first = next(o.answer for o in q.methods.values() if o.correct)
            right.append(Pick(q.qid, q.question, f"all {len(answered)} methods answered '{first}'."))
        elif answered and not any(answered):
            wrong.append(_wrong_pick(q, k))
    bridge.sort(key=lambda x: (x[0], x[1]))
    groups = [
        Group(BRIDGE, f"a graph method found the bridge {label(baseline)} missed",
              f"A gold passage {label(baseline)} ranked beyond its top {k} that a graph method put in its top {k} "
              "by its own step (a passage only NeuroPath's completion found does not count: completion is a "
              "dense search). First the questions where a method that found it also answered right and "
              f"{label(baseline)} did not.", [p for _, _, p in bridge]),
        Group(ALL_RIGHT, "every method right",
              "Every method's answer matches the reference answer (exact match after normalisation).", right),
        Group(ALL_WRONG, "every method wrong (error analysis)",
              "No method's answer matches the reference; each says whether every method had every gold passage "
              f"in its top {k} (the reader failed) or which passages retrieval missed.", wrong),
    ]
    if bridge and bridge[0][0] < 0:
        default, why = bridge[0][2].qid, ("the first question where a method found a gold passage "
                                          f"{label(baseline)} missed and answered right where {label(baseline)} "
                                          "did not")
    elif bridge:
        default, why = bridge[0][2].qid, f"the first question where a method found a gold passage {label(baseline)} missed"
    else:
        default, why = (outcomes[0].qid if outcomes else None), "no question shows a method's difference: the first one"
    return Guide(groups, default, why, k)


def how_computed(guide: Guide) -> str:
    """One paragraph for the page: where the figures come from."""
    return ("Computed now from the recorded replies (replayed, no model): every method on every recorded "
            f"question, scored against the gold answer and passages (top {guide.k}). The default demo question "
            f"is {guide.default or 'none'}: {guide.default_why}.")


__all__ = ["K", "BRIDGE", "ALL_RIGHT", "ALL_WRONG", "MethodOutcome", "QuestionOutcome", "Pick", "Group", "Guide",
           "outcome", "replay_outcomes", "bridges", "build_guide", "how_computed"]
