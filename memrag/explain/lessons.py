"""The Learn page's teaching: the papers' brain analogies, and one lesson per replay step of a trace.

NeuroPath (Li et al., 2025) borrows from hippocampal place cells (O'Keefe & Dostrovsky, 1971):
entities are places, triples are the fields that link places into a map, path tracking is like
preplay, post-retrieval completion like replay. EcphoryRAG (Liao, 2025) borrows Tulving's ecphory:
a retrieval cue meets a stored trace (an engram) and brings the memory back; activation spreads
by association. HippoRAG (Gutiérrez et al., 2024) and HippoRAG 2 (Gutiérrez et al., 2025) borrow the
hippocampal indexing theory (Teyler & DiScenna, 1986): the neocortex holds what was experienced, the
hippocampus an index of pointers into it, and a partial cue completes the whole pattern.

Each method's analogy, introduction and step lessons live in its wing (memrag/methods/<name>/lessons.py,
named by its spec's `lessons_at`); a method without one is not taught. `lessons(trace)` writes, for each step of `trace.steps`, which part of the analogy the step shows
and what this trace did there with its own names. The `here` text mixes our words with document
and model text: show it escaped (as plain text), never as markup.
"""

from __future__ import annotations

from typing import Any

from memrag.index.memory import Memory
from memrag.methods import registry
from memrag.methods.lesson_kit import Lesson, LessonPlan, Pair
from memrag.trace import Trace

SOURCES = ("NeuroPath: Li et al., 2025. EcphoryRAG: Liao, 2025. Place cells: O'Keefe & Dostrovsky, 1971; "
           "preplay: Dragoi & Tonegawa, 2011; replay: Wilson & McNaughton, 1994, Foster & Wilson, 2006. "
           "Ecphory and encoding specificity: Tulving, 1983; Tulving & Thomson, 1973. HippoRAG: Gutiérrez et al., "
           "2024; HippoRAG 2: Gutiérrez et al., 2025; hippocampal indexing theory: Teyler & DiScenna, 1986. The "
           "analogies are the papers' inspiration, not a claim that any of these methods works like a brain.")


def plans() -> dict[str, LessonPlan]:
    """method → its lesson plan, for the registered methods that teach one (registry order)."""
    return {s.name: s.optional(s.lessons_at) for s in registry.methods() if s.lessons_at}


def __getattr__(attr: str) -> Any:
    """TEACHABLE, ANALOGIES and INTROS, read from the registry now."""
    if attr == "TEACHABLE":
        return tuple(plans())
    if attr == "ANALOGIES":
        return {m: p.analogies for m, p in plans().items()}
    if attr == "INTROS":
        return {m: p.intro for m, p in plans().items()}
    raise AttributeError(attr)


def lessons(trace: Trace) -> list[Lesson]:
    """One lesson per step of the trace, in step order."""
    taught = plans()
    if trace.method not in taught:
        raise ValueError(f"the Learn page teaches {', '.join(taught)} traces, not {trace.method!r}")
    builders = taught[trace.method].builders
    out = []
    for step in trace.steps:
        build = builders.get(step.kind)
        out.append(build(trace, step) if build else
                   Lesson(step.index, step.title, "", "", step.summary or step.title, []))
    return out


def teachable(traces: list[Trace]) -> dict[str, Trace]:
    """method → trace for the traces the Learn page can replay (a method with steps)."""
    taught = plans()
    return {t.method: t for t in traces if t.method in taught and t.steps}


def demo_traces(memory: Memory, recordings: Any, embedder: Any, question: str) -> list[Trace]:
    """Every teachable method on a recorded demo question, replayed from the memory's recordings
    (raises `memrag.llm.recordings.StaleRecording` when the recordings lack a call)."""
    from memrag.ask import ask

    return ask(memory, question, llm=recordings.replay_llm(), embedder=embedder, methods=list(plans()))


__all__ = ["ANALOGIES", "INTROS", "SOURCES", "Pair", "Lesson", "LessonPlan", "lessons", "teachable", "demo_traces",
           "TEACHABLE", "plans"]
