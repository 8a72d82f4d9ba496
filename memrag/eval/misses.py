"""What each method missed on each question of a run, read from its results lines: the gold
passages it did not rank in the top k (each named, with its fate), and whether its answer was
wrong — so the Evaluate page can filter questions and mark them without reading any trace.

A gold passage is one recall unit (the sample's documents; a benchmark's passages): its best
chunk decides (memrag.eval.gold.best_fate). "Missed" means not among the first k units of the
ranked list, k being the run's fate_k. "Answered wrong" means an answer step ran and its EM is 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from memrag.eval.gold import best_fate, fate_record

MISSED, WRONG, DIFFERS = "missed a gold passage", "answered wrong", "differs from"
RULES = (MISSED, WRONG, DIFFERS)


@dataclass(frozen=True)
class PassageMiss:
    """One gold passage a method did not rank in the top k."""
    unit: str
    title: str
    fate: str  # the answer card's few words for its fate
    rank: int | None


@dataclass(frozen=True)
class MethodOutcome:
    """One method on one question: the gold passages it missed, and its answer's correctness."""
    method: str
    missed: tuple[PassageMiss, ...]
    wrong: bool | None  # None: no answer step (retrieval only)
    gold: int  # gold passages of the question

    def text(self) -> str:
        """'1/3 · EM ✗ — Corwin Penhallow: shown to the model, not kept; …' for a compact table cell:
        gold passages in the top k of all, the answer, then each missed passage with its fate."""
        found = self.gold - len(self.missed)
        em = "" if self.wrong is None else f" · EM {'✗' if self.wrong else '✓'}"
        missed = "; ".join(f"{m.title}: {m.fate}" for m in self.missed)
        return f"{found}/{self.gold}{em}" + (f" — {missed}" if missed else "")


def titles_of(entries: Iterable[dict[str, Any]]) -> dict[str, str]:
    """doc id → title from methods' stored traces (their passages' references): a passage one
    method never retrieved is named by another's trace."""
    out: dict[str, str] = {}
    for entry in entries:
        for c in (entry.get("trace") or {}).get("chunks") or []:
            if isinstance(c, dict) and c.get("title"):
                out.setdefault(str(c.get("doc_id")), str(c["title"]))
    return out


def method_outcome(method: str, entry: dict[str, Any], k: int, titles: dict[str, str] | None = None) -> MethodOutcome:
    """A method's misses on one question, from its results entry (gold fates, metrics, trace refs);
    `titles` names passages its own trace does not hold."""
    by_unit: dict[str, list[dict[str, Any]]] = {}
    for f in entry.get("gold_fate") or []:
        unit = str(f.get("unit") or f"chunk:{f.get('chunk_id')}")
        by_unit.setdefault(unit, []).append(f)
    titles = {**(titles or {}), **titles_of([entry])}
    missed = []
    for unit, fates in by_unit.items():
        best = best_fate(fates)
        rank = best.get("rank")
        if rank is None or rank > k:
            missed.append(PassageMiss(unit, titles.get(unit) or unit, fate_record(best, method).short, rank))
    em = (entry.get("metrics") or {}).get("em")
    return MethodOutcome(method, tuple(missed), None if em is None else em == 0, len(by_unit))


def question_outcomes(record: dict[str, Any], methods: Iterable[str], k: int) -> dict[str, MethodOutcome]:
    """method → its outcome on this question (methods the record lacks are left out)."""
    per = record.get("methods") or {}
    titles = titles_of(per.values())
    return {m: method_outcome(m, per[m], k, titles) for m in methods if m in per}


def differs(a: MethodOutcome, b: MethodOutcome) -> bool:
    """Two methods differ on a question when they missed different gold passages or one answered
    right where the other answered wrong."""
    return {m.unit for m in a.missed} != {m.unit for m in b.missed} or (
        a.wrong is not None and b.wrong is not None and a.wrong != b.wrong)


def matches(outcomes: dict[str, MethodOutcome], rule: str, method: str, other: str | None = None) -> bool:
    """Whether one question's outcomes meet a filter: `method` missed a gold passage, answered
    wrong, or differs from `other`."""
    if rule not in RULES:
        raise ValueError(f"unknown filter {rule!r}; one of {', '.join(RULES)}")
    mine = outcomes.get(method)
    if mine is None:
        return False
    if rule == MISSED:
        return bool(mine.missed)
    if rule == WRONG:
        return bool(mine.wrong)
    if other is None or other == method:
        raise ValueError("'differs from' needs a second, different method")
    theirs = outcomes.get(other)
    return theirs is not None and differs(mine, theirs)


def filter_questions(records: Sequence[dict[str, Any]], methods: Sequence[str], k: int, rule: str, method: str,
                     other: str | None = None) -> list[str]:
    """The qids (in run order) whose outcomes meet the filter."""
    return [r["qid"] for r in records if matches(question_outcomes(r, methods, k), rule, method, other)]


def missed_by(record: dict[str, Any], methods: Sequence[str], k: int) -> list[str]:
    """The methods (in `methods` order) that missed a gold passage of this question."""
    return [m for m, o in question_outcomes(record, methods, k).items() if o.missed]
