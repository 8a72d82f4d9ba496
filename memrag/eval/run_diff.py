"""Two runs of the same questions compared question by question: per method and metric the paired
difference with its bootstrap 95% interval and wins / losses / ties (memrag.eval.compare_runs, the
one home of that rule), and per question what changed — the scores, the gold passages found or
lost (memrag.eval.misses) and the answer.

Made for a run asked again on an edited memory (memrag.explain.rerun), it compares any two runs that
share questions; questions only one run answered are left out and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from memrag.eval.compare_runs import compare
from memrag.eval.misses import method_outcome, titles_of
from memrag.eval.records import LABELS, QuestionRecord

METRICS = ("recall@2", "recall@5", "em")


@dataclass(frozen=True)
class QuestionChange:
    """One method on one question, before → after."""
    qid: str
    method: str
    before: dict[str, float | None]  # METRICS
    after: dict[str, float | None]
    found: tuple[str, ...]  # gold passages missed before, in the top k now (titles)
    lost: tuple[str, ...]  # gold passages in the top k before, missed now
    answer_before: str | None
    answer_after: str | None

    @property
    def changed(self) -> bool:
        return (self.before != self.after or bool(self.found) or bool(self.lost)
                or self.answer_before != self.answer_after)

    def scores_text(self) -> str:
        """'R@5 50 → 100 · EM 0 → 100': only the metrics that moved."""
        def pct(v: float | None) -> str:
            return "–" if v is None else f"{100 * v:.0f}"
        return " · ".join(f"{LABELS[m]} {pct(self.before.get(m))} → {pct(self.after.get(m))}" for m in METRICS
                          if self.before.get(m) != self.after.get(m))


@dataclass(frozen=True)
class RunDiff:
    paired: list[dict[str, Any]]  # compare_runs rows: method, metric, n, before, after, diff, diff_ci95, wins…
    changes: list[QuestionChange]  # the (question, method) pairs where something changed, in run order
    shared: int  # questions both runs answered
    only_before: int
    only_after: int


def _typed(records: Sequence[dict[str, Any]], what: str) -> dict[str, QuestionRecord]:
    return {r["qid"]: QuestionRecord.from_json(r, f"{what} run, question {r.get('qid')!r}") for r in records}


def question_change(qid: str, method: str, before: dict[str, Any], after: dict[str, Any], k: int,
                    titles: dict[str, str] | None = None) -> QuestionChange:
    """One method's entry of one question in both runs (results.jsonl's method entries)."""
    was, now = method_outcome(method, before, k, titles), method_outcome(method, after, k, titles)
    missed_before = {m.unit: m.title for m in was.missed}
    missed_after = {m.unit: m.title for m in now.missed}
    return QuestionChange(
        qid, method, {m: before["metrics"].get(m) for m in METRICS}, {m: after["metrics"].get(m) for m in METRICS},
        tuple(t for u, t in missed_before.items() if u not in missed_after),
        tuple(t for u, t in missed_after.items() if u not in missed_before),
        before.get("answer"), after.get("answer"))


def diff_runs(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], methods: Sequence[str],
              k: int) -> RunDiff:
    """`after` against `before` (results lines), over the questions and methods both hold."""
    b, a = {r["qid"]: r for r in before}, {r["qid"]: r for r in after}
    shared = [q for q in b if q in a]
    paired = compare(_typed([b[q] for q in shared], "earlier"), _typed([a[q] for q in shared], "later"), METRICS)
    changes = []
    for q in shared:
        titles = titles_of([*b[q]["methods"].values(), *a[q]["methods"].values()])
        for m in methods:
            if m in b[q]["methods"] and m in a[q]["methods"]:
                c = question_change(q, m, b[q]["methods"][m], a[q]["methods"][m], k, titles)
                if c.changed:
                    changes.append(c)
    return RunDiff(paired, changes, len(shared), len(b) - len(shared), len(a) - len(shared))
