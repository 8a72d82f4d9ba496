"""What changed for one method between two traces of the same question — before and after a memory
edit: the answer, each gold passage's rank and fate before → after, the passages that entered or
left the head of the ranked list, and, step by step, what the method's search found that appeared
or disappeared (its wing's `changes_at`: paths per hop, engrams per round, facts).

Both traces must number passages alike (a memory edit never renumbers them; adding or removing
documents does, and such traces are refused rather than compared wrongly).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from memrag.eval.gold import gold_fate_records
from memrag.methods import registry
from memrag.trace import Trace

HEAD = 10  # ranked passages compared at the head of each list


@dataclass(frozen=True)
class GoldChange:
    chunk_id: int
    title: str
    rank_before: int | None
    rank_after: int | None
    fate_before: str
    fate_after: str

    @property
    def changed(self) -> bool:
        return (self.rank_before, self.fate_before) != (self.rank_after, self.fate_after)

    def text(self) -> str:
        def rank(r: int | None) -> str:
            return f"rank {r}" if r is not None else "unranked"
        return (f"{self.title}: {rank(self.rank_before)}, {self.fate_before} → {rank(self.rank_after)}, "
                f"{self.fate_after}")


@dataclass(frozen=True)
class StepChange:
    label: str  # "hop 1: paths kept", "round 2: newly activated", "facts kept"
    appeared: list[str]
    disappeared: list[str]
    unchanged: int

    @property
    def changed(self) -> bool:
        return bool(self.appeared or self.disappeared)


@dataclass(frozen=True)
class MethodDiff:
    method: str
    label: str
    answer_before: str
    answer_after: str
    gold: list[GoldChange] = field(default_factory=list)
    entered: list[int] = field(default_factory=list)  # passages now in the head of the ranked list
    left: list[int] = field(default_factory=list)  # passages no longer there
    steps: list[StepChange] = field(default_factory=list)

    @property
    def answer_changed(self) -> bool:
        return self.answer_before != self.answer_after

    @property
    def changed(self) -> bool:
        return (self.answer_changed or self.entered or self.left or any(g.changed for g in self.gold)
                or any(s.changed for s in self.steps))

    def lines(self) -> list[str]:
        """The difference in words, one line each (nothing changed: one line saying so)."""
        if not self.changed:
            return [f"{self.label}: nothing changed"]
        out = [f"{self.label}: answer {self.answer_before!r} → {self.answer_after!r}" if self.answer_changed
               else f"{self.label}: same answer {self.answer_after!r}"]
        out += [f"gold {g.text()}" for g in self.gold if g.changed]
        if self.entered or self.left:
            out.append(f"top {HEAD} passages: in {self.entered or 'none'}, out {self.left or 'none'}")
        for s in self.steps:
            if s.changed:
                parts = ([f"+ {x}" for x in s.appeared] + [f"- {x}" for x in s.disappeared])
                out.append(f"{s.label}: " + "; ".join(parts))
        return out


def _answer(t: Trace) -> str:
    return t.answer.answer if t.answer is not None else ""


def _check_numbering(before: Trace, after: Trace) -> None:
    ids = {c.chunk_id: (c.doc_id, c.text) for c in before.chunks}
    clash = [c.chunk_id for c in after.chunks if c.chunk_id in ids and ids[c.chunk_id] != (c.doc_id, c.text)]
    if clash:
        raise ValueError(f"the two traces number passages differently (passage {clash[0]}): they were made on "
                         "memories with different documents, which a before/after comparison cannot pair")


def _steps(before: Trace, after: Trace) -> list[StepChange]:
    target = registry.get(after.method).changes_at if after.method in registry.names() else ""
    if not target:
        return []
    found = registry.get(after.method).optional(target)
    was, now = dict(found(before)), found(after)
    out = []
    for label, items in now:
        old = was.pop(label, [])
        out.append(StepChange(label, [x for x in items if x not in old], [x for x in old if x not in items],
                              sum(1 for x in items if x in old)))
    out += [StepChange(label, [], list(old), 0) for label, old in was.items()]  # a step that is gone
    return out


def diff_method(before: Trace, after: Trace, gold_chunk_ids: Iterable[int] = (), k: int = 5,
                unit_of: Callable[[int], Hashable] | None = None) -> MethodDiff:
    """How `after` differs from `before` (one method, one question)."""
    if before.method != after.method:
        raise ValueError(f"compare a method with itself ({before.method} vs {after.method})")
    _check_numbering(before, after)
    gold = list(gold_chunk_ids)
    old = {r.chunk_id: r for r in gold_fate_records(before, gold, k, unit_of)} if gold else {}
    new = gold_fate_records(after, gold, k, unit_of) if gold else []
    changes = []
    for r in new:
        o = old[r.chunk_id]
        ref = after.chunk(r.chunk_id) or before.chunk(r.chunk_id)
        changes.append(GoldChange(r.chunk_id, ref.title if ref else f"passage {r.chunk_id}", o.rank, r.rank,
                                  o.fate, r.fate))
    head_before, head_after = before.ranked_ids()[:HEAD], after.ranked_ids()[:HEAD]
    label = registry.get(after.method).label if after.method in registry.names() else after.method
    return MethodDiff(after.method, label, _answer(before), _answer(after), changes,
                      [c for c in head_after if c not in head_before], [c for c in head_before if c not in head_after],
                      _steps(before, after))


def diff_traces(before: Sequence[Trace], after: Sequence[Trace], gold_chunk_ids: Iterable[int] = (), k: int = 5,
                unit_of: Callable[[int], Hashable] | None = None) -> list[MethodDiff]:
    """One MethodDiff per method present in both lists, in `after`'s order."""
    was = {t.method: t for t in before}
    gold = list(gold_chunk_ids)
    return [diff_method(was[t.method], t, gold, k, unit_of) for t in after if t.method in was]
