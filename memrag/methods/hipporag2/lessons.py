"""HippoRAG 2's lesson for the Learn page: the hippocampal index and pattern completion, step by step.

`here` texts quote the trace (names, model text): plain text, shown escaped."""

from __future__ import annotations

from typing import Any

from memrag.methods.lesson_kit import Lesson, LessonPlan, Pair, NAMES_SHOWN, dedupe, quote
from memrag.trace import Step, Trace
from memrag.plain_text import clip
from memrag.methods.hipporag2.detail import HippoRAG2Detail


def _hr_fact(f: Any) -> str:
    return f"'{clip(f.head, 50)} | {clip(f.relation, 40)} | {clip(f.tail, 50)}'"


def _hr_facts(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    here = (f"The question's vector meets every fact's vector; the {len(d.facts)} nearest: "
            + ("; ".join(f"{_hr_fact(f)} ({f.score:.2f})" for f in d.facts[:NAMES_SHOWN]) or "none") + ".")
    if not d.facts:
        here = "The memory holds no facts, so there is nothing for the question to meet."
    return Lesson(step.index, step.title, "parahippocampal regions ↔ the encoder",
                  "Signals reach the hippocampus through the parahippocampal regions, which turn what we "
                  "perceive into a form the index can match. HippoRAG 2's encoder does that job: the question "
                  "and every stored fact become vectors, and the closest facts are the first candidates.",
                  here, dedupe([n for f in d.facts for n in (f.head, f.tail)]))


def _hr_recognition(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    kept = [f for f in d.facts if f.verdict == "kept"]
    dropped = [f for f in d.facts if f.verdict == "dropped"]
    if not d.recognition:
        here = (f"Recognition memory is off in this run (the retrieval-only variant): all {len(d.facts)} "
                "facts are taken as they are, and no LLM call is made.")
    elif d.recognition_error:
        here = f"The model's verdict could not be read ({clip(d.recognition_error, 120)}), so no fact is kept."
    else:
        here = (f"The model kept {len(kept)} of {len(d.facts)} facts: "
                + ("; ".join(_hr_fact(f) for f in kept[:NAMES_SHOWN]) or "none") + ".")
        if dropped:
            here += f" It dropped {'; '.join(_hr_fact(f) for f in dropped[:NAMES_SHOWN])}."
    return Lesson(step.index, step.title, "recognition memory ↔ the fact filter",
                  "Recognising is judging that something is familiar and fits, without recalling everything "
                  "about it. HippoRAG 2 asks the LLM, its neocortex, that one question about each candidate "
                  "fact: does it belong to this question?", here,
                  dedupe([n for f in kept for n in (f.head, f.tail)]))


def _hr_seeds(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    seeds = "; ".join(f"'{clip(s.name, 60)}' {s.weight:.3g} (in {s.passages} passage(s))"
                      for s in d.phrase_seeds[:NAMES_SHOWN])
    more = f" and {len(d.phrase_seeds) - NAMES_SHOWN} more" if len(d.phrase_seeds) > NAMES_SHOWN else ""
    here = (f"The kept facts point into the index at {len(d.phrase_seeds)} phrase(s), each seeded with its "
            f"fact's score divided by how many passages contain it (a rare name weighs more): {seeds or 'none'}"
            f"{more}. Every passage also gets a small seed from its dense similarity (together "
            f"{d.passage_seed_total:.3g}).")
    return Lesson(step.index, step.title, "hippocampal index ↔ the graph",
                  "The hippocampus does not store an experience, only where its pieces lie in the cortex. "
                  "HippoRAG's graph is such an index: phrase nodes and passage nodes, linked by facts. The "
                  "cue switches on a few entries of the index: the seeds.", here,
                  dedupe([s.name for s in d.phrase_seeds]))


def _hr_pagerank(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    seeded = {f"e:{s.key}" for s in d.phrase_seeds}
    reached = [n.label for n in d.top_nodes if n.kind == "phrase" and n.node_id not in seeded]
    passages = [n.label for n in d.top_nodes if n.kind == "passage"]
    here = (f"The walk from the seeds left {d.phrase_mass:.0%} of its mass on phrase nodes and the rest on "
            f"passages. Phrases it reached without seeding them: {quote(dedupe(reached))}. The passages "
            f"holding the most: {quote(dedupe(passages), 3)}.")
    return Lesson(step.index, step.title, "pattern completion ↔ personalised PageRank",
                  "Given part of a stored pattern, the hippocampus brings back the rest: pattern completion. "
                  "Personalised PageRank completes from the seeds: a walker follows the graph's links and keeps "
                  "jumping back to a seed, so weight gathers where many short links lead from the seeds.",
                  here, dedupe(reached)[:NAMES_SHOWN])


def _hr_ranked(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(HippoRAG2Detail)
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    k = int(trace.params.get("answer_passages", 5))
    won = dedupe([titles.get(r.chunk_id, f"chunk {r.chunk_id}") for r in trace.ranked[:k]])
    if d.fallback_dense:
        return Lesson(step.index, step.title, "no cue to complete",
                      "Without a recognised cue there is no index entry to start pattern completion from.",
                      f"HippoRAG 2 fell back to dense retrieval ({clip(d.fallback_reason, 120)}): the passages "
                      f"nearest the question are read instead: {quote(won, 3)}.", won)
    return Lesson(step.index, step.title, "index → neocortex",
                  "The index only points; the content is in the cortex. The passages the completed pattern "
                  "points to most are handed back to the LLM, which reads them and answers.",
                  f"The passages with the most PageRank mass go to the answer step: {quote(won)}.", won)


LESSON = LessonPlan(
    intro=(
        "HippoRAG 2 follows the hippocampal indexing theory of Teyler and DiScenna: the neocortex keeps the "
        "content of an experience, the hippocampus only an index that points to it, and a fragment of a cue "
        "is enough to reactivate the whole indexed pattern (pattern completion). Here the LLM plays the "
        "neocortex, the graph of phrases and passages is the index, the encoder and its synonymy links "
        "stand for the regions that connect the two, and personalised PageRank does the completing."),
    analogies=[
        Pair("neocortex", "where what we perceive is processed and where the content of memories is kept",
             "the LLM", "it read every passage once and wrote the facts down; at question time it judges "
             "facts and writes the answer"),
        Pair("hippocampal index", "a compact set of pointers to the cortical patterns of an experience, "
             "not the experience itself", "the graph",
             "phrase nodes and passage nodes joined by facts (triples) and by the passages that mention them"),
        Pair("parahippocampal regions", "the way in and out of the hippocampus; they also tie together "
             "inputs that are alike", "the encoder and synonymy edges",
             "vectors carry the question to the facts, and names whose vectors are nearly the same are "
             "linked, so one spelling leads to the other"),
        Pair("recognition memory", "the sense that something was seen before and belongs here",
             "the fact filter", "one LLM call keeps the retrieved facts that bear on the question"),
        Pair("pattern completion", "a part of a stored pattern is enough for the hippocampus to bring back "
             "the whole of it", "personalised PageRank",
             "a walk that keeps restarting at the seeds spreads their weight through the graph; the passages "
             "where most of it settles are the memory recalled"),
    ],
    builders={"facts": _hr_facts, "recognition": _hr_recognition, "seeds": _hr_seeds, "pagerank": _hr_pagerank,
              "ranked": _hr_ranked},
)
