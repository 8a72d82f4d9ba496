"""What a method teaches on the Learn page, as data its wing declares (memrag/methods/<name>/lessons.py):
the paper's brain analogy as pairs, an introduction, and one lesson builder per kind of replay step."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from memrag.trace import Step, Trace
from memrag.plain_text import clip

NAMES_SHOWN = 5  # concrete names quoted per list in a lesson
T = TypeVar("T")


@dataclass(frozen=True)
class Pair:
    brain: str
    brain_means: str
    method: str
    method_means: str


@dataclass
class Lesson:
    """What one replay step teaches. `concept` and `brain` are our words; `here` quotes the trace
    (entity names, model text): plain text, to be shown escaped."""
    step: int
    title: str
    concept: str
    brain: str
    here: str
    names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LessonPlan:
    intro: str
    analogies: list[Pair]
    builders: dict[str, Callable[[Trace, Step], Lesson]]  # step kind → its lesson


def nth_of_kind(trace: Trace, step: Step) -> int:
    """Position of the step among the trace's steps of its kind (hop 1 → 0, round 2 → 1)."""
    return [s.index for s in trace.steps if s.kind == step.kind].index(step.index)


def step_item(trace: Trace, step: Step, items: Sequence[T]) -> T | None:
    """What a step shows of its kind's records (the second hop step → the second hop), or None."""
    n = nth_of_kind(trace, step)
    return items[n] if n < len(items) else None


def quote(names: list[str], limit: int = NAMES_SHOWN) -> str:
    shown = [f"'{clip(n, 60)}'" for n in names[:limit]]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(shown) + more) if shown else "none"


def dedupe(names: list[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))
