"""The Learn page's teaching: the papers' brain analogies, and one lesson per replay step of a trace.

NeuroPath (Li et al., 2025) borrows from hippocampal place cells (O'Keefe & Dostrovsky, 1971):
entities are places, triples are the fields that link places into a map, path tracking is like
preplay, post-retrieval completion like replay. EcphoryRAG (Liao, 2025) borrows Tulving's ecphory:
a retrieval cue meets a stored trace (an engram) and brings the memory back; activation spreads
by association. HippoRAG (Gutiérrez et al., 2024) and HippoRAG 2 (Gutiérrez et al., 2025) borrow the
hippocampal indexing theory (Teyler & DiScenna, 1986): the neocortex holds what was experienced, the
hippocampus an index of pointers into it, and a partial cue completes the whole pattern.

`lessons(trace)` writes, for each step of `trace.steps`, which part of the analogy the step shows
and what this trace did there with its own names. The `here` text mixes our words with document
and model text: show it escaped (as plain text), never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memrag.explain import activation
from memrag.index.memory import Memory
from memrag.trace import Step, Trace
from memrag.viz.safe_text import clip

NAMES_SHOWN = 5  # concrete names quoted per list in a lesson
TEACHABLE = ("neuropath", "ecphory", "hipporag2")


@dataclass(frozen=True)
class Pair:
    brain: str
    brain_means: str
    method: str
    method_means: str


ANALOGIES: dict[str, list[Pair]] = {
    "neuropath": [
        Pair("place cell", "a hippocampal neuron that fires when the animal is at one spot of its surroundings",
             "entity", "a node of the knowledge graph: one 'place' a search can stand on"),
        Pair("place field", "the patch of space where that cell fires; overlapping fields tie places into a map",
             "triple", "head – relation – tail: the link between two entities, one step a path can take"),
        Pair("preplay", "place-cell sequences that run ahead of the animal, sketching routes it has not yet "
             "taken, toward a goal", "path tracking",
             "at each hop the model looks at candidate paths, keeps those that lead toward the answer and "
             "says which to extend"),
        Pair("replay", "after the run, at rest, the cells fire the route again (forwards or backwards), "
             "which helps to keep and judge it", "post-retrieval completion",
             "after tracking, the model's reasoning chain and what it still needs search the whole memory "
             "again, filling in what the paths missed"),
    ],
    "ecphory": [
        Pair("engram", "the lasting trace an experience leaves in the brain (Semon's word, used by Tulving)",
             "entity trace (engram)", "one mention of an entity in one chunk, with its type and description"),
        Pair("retrieval cue", "what is present when we try to remember; it works when it matches what was stored",
             "query cue", "an entity named in the question, plus the question itself"),
        Pair("ecphory", "Tulving's word for the meeting of cue and engram that brings a memory back",
             "associative activation", "engrams near the cues light up, then their weighted centroid and "
             "their co-occurring neighbours light up more, round by round"),
    ],
    "hipporag2": [
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
}

INTROS: dict[str, str] = {
    "neuropath": (
        "NeuroPath treats the knowledge graph like the map the hippocampus keeps of a place. "
        "Place cells each stand for one spot; a route is a sequence of them. Before moving, animals "
        "'preplay' possible routes; afterwards they 'replay' the route taken. NeuroPath plans paths "
        "through the graph with the model's help, then searches once more with what it learnt."),
    "ecphory": (
        "EcphoryRAG follows Endel Tulving's account of remembering: a memory comes back when a retrieval "
        "cue meets the stored trace of an experience, its engram — the meeting is called ecphory. "
        "Here the engrams are entity mentions, the cues come from the question, and one recollection "
        "calls up associated ones in rounds."),
    "hipporag2": (
        "HippoRAG 2 follows the hippocampal indexing theory of Teyler and DiScenna: the neocortex keeps the "
        "content of an experience, the hippocampus only an index that points to it, and a fragment of a cue "
        "is enough to reactivate the whole indexed pattern (pattern completion). Here the LLM plays the "
        "neocortex, the graph of phrases and passages is the index, the encoder and its synonymy links "
        "stand for the regions that connect the two, and personalised PageRank does the completing."),
}

SOURCES = ("NeuroPath: Li et al., 2025. EcphoryRAG: Liao, 2025. Place cells: O'Keefe & Dostrovsky, 1971; "
           "preplay: Dragoi & Tonegawa, 2011; replay: Wilson & McNaughton, 1994, Foster & Wilson, 2006. "
           "Ecphory and encoding specificity: Tulving, 1983; Tulving & Thomson, 1973. HippoRAG: Gutiérrez et al., "
           "2024; HippoRAG 2: Gutiérrez et al., 2025; hippocampal indexing theory: Teyler & DiScenna, 1986. The "
           "analogies are the papers' inspiration, not a claim that any of these methods works like a brain.")


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


def _nth_of_kind(trace: Trace, step: Step) -> int:
    """Position of the step among the trace's steps of its kind (hop 1 → 0, round 2 → 1)."""
    return [s.index for s in trace.steps if s.kind == step.kind].index(step.index)


def _quote(names: list[str], limit: int = NAMES_SHOWN) -> str:
    shown = [f"'{clip(n, 60)}'" for n in names[:limit]]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return (", ".join(shown) + more) if shown else "none"


def _dedupe(names: list[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if n))


# ------------------------------------------------------------------ NeuroPath
def _np_seeds(trace: Trace, step: Step) -> Lesson:
    d = trace.neuropath
    assert d is not None
    seeds = [s for s in d.seeds if s.accepted]
    members = _dedupe([m.name for s in seeds for m in s.coref])
    if seeds:
        found = "; ".join(f"'{clip(s.query_entity, 60)}' → '{clip(s.name, 60)}' ({s.similarity:.2f})"
                          for s in seeds[:NAMES_SHOWN])
        here = (f"The question names {_quote(d.query_entities)}. Each is matched to the closest entity in the "
                f"memory, and that entity becomes a seed, a place the search starts from: {found}.")
        if members:
            here += (f" Entities whose names are very close to a seed's count as the same place under another "
                     f"name (coreference candidates): {_quote(members)}.")
    else:
        here = (f"The question names {_quote(d.query_entities)}, but no entity of the memory is close enough to "
                "any of them: there is no place to start from.")
    return Lesson(step.index, step.title, "place cells ↔ entities",
                  "A place cell fires when the animal is at one particular spot; together the cells form a "
                  "map. Here the map is the knowledge graph and every entity is a place. A search starts at "
                  "the places the question points to.", here, _dedupe([s.name for s in seeds] + members))


def _np_hop(trace: Trace, step: Step) -> Lesson:
    d = trace.neuropath
    assert d is not None
    n = _nth_of_kind(trace, step)
    h = d.hops[n] if n < len(d.hops) else None
    brain = ("Before moving, place cells can fire in quick sequences that sketch routes the animal has not "
             "taken yet, as if trying them out (preplay). Each step of such a route crosses from one place "
             "field to the next; in the graph a step is a triple linking two entities. NeuroPath lets the model "
             "do the trying-out: it reads candidate paths and keeps the ones that lead toward the answer.")
    if h is None:
        return Lesson(step.index, step.title, "place fields ↔ triples · preplay ↔ path tracking", brain,
                      step.summary or "This hop left no record.", [])
    listed = {p.listed_as: p for p in h.candidates if p.listed_as is not None}
    valid = [listed[i] for i in h.valid_ids if i in listed]
    expand = [listed[i] for i in h.expand_ids if i in listed]
    start = "the seeds" if h.hop == 1 else "the ends of the paths it chose to extend"
    here = (f"Hop {h.hop}: {h.new_count} new path(s) grew from {start}"
            + (f"; {h.pruned_count} were pruned as least similar to the goal" if h.pruned_count else "")
            + f"; {len(listed)} were shown to the model. It judged {len(valid)} valid")
    here += (f", e.g. '{clip(valid[0].text, 160)}'." if valid else ".")
    if expand:
        here += f" It chose {len(expand)} to extend from {_quote(_dedupe([p.frontier_name for p in expand]))}."
    if h.reasoning_chain:
        here += f" Its reasoning so far: '{clip(h.reasoning_chain, 240)}'."
    if h.expansion_requirement:
        here += f" What it still needs: '{clip(h.expansion_requirement, 160)}'."
    here += " It asked to go on." if h.continue_ else " It said it had enough."
    if h.failed:
        here += f" The reply could not be read ({clip(h.failure, 120)}): the paths kept so far count as valid."
    names = _dedupe([t.head for p in valid for t in p.triples] + [t.tail for p in valid for t in p.triples])
    return Lesson(step.index, step.title, "place fields ↔ triples · preplay ↔ path tracking", brain, here, names)


def _np_completion(trace: Trace, step: Step) -> Lesson:
    d = trace.neuropath
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    dp = [titles.get(c, f"chunk {c}") for c in d.dp_chunk_ids]
    filled = [titles.get(r.chunk_id, f"chunk {r.chunk_id}") for r in trace.ranked if r.source == "completion"]
    here = f"First come the passages the valid paths were read from: {_quote(dp)}."
    if trace.params.get("completion", True):
        here += (f" Then the whole memory is searched again with the question plus the model's chain and "
                 f"requirement — '{clip(d.de_query, 300)}' — and its best matches fill the list behind them: "
                 f"{_quote(filled, 3)}.")
    else:
        here += " Completion is off in this run, so nothing else is added."
    return Lesson(step.index, step.title, "replay ↔ post-retrieval completion",
                  "After a run, at rest or in sleep, place cells fire the route again, often compressed and "
                  "sometimes backwards (replay); it is thought to help keep and judge what just happened. "
                  "NeuroPath's completion looks back over what tracking found and searches once more with "
                  "what the model learnt on the way.", here, _dedupe(dp + filled[:3]))


def _np_fallback(trace: Trace, step: Step) -> Lesson:
    return Lesson(step.index, step.title, "no place to start",
                  "Without a place cell for where you are, there is no map to follow.",
                  "The question gave no entities, so NeuroPath had no seeds and ranked passages by their "
                  "similarity to the question, like dense retrieval.", [])


# ------------------------------------------------------------------ EcphoryRAG
def _ec_names(trace: Trace) -> dict[int, str]:
    d = trace.ecphory
    assert d is not None
    return {a.engram_id: a.name for a in [*d.initial, *d.final, *(a for r in d.rounds for a in r.new),
                                          *(a for r in d.rounds for a in r.centroid_neighbours)]}


def _ec_cues(trace: Trace, step: Step) -> Lesson:
    d = trace.ecphory
    assert d is not None
    names = _ec_names(trace)
    here = f"The cues taken from the question: {_quote(d.cues)}."
    hits = [f"'{clip(c, 60)}' reaches {_quote(_dedupe([names.get(e, str(e)) for e in ids]), 3)}"
            for c, ids in list(d.cue_hits.items())[:NAMES_SHOWN]]
    if hits:
        here += " Each cue also reaches the engrams closest to it: " + "; ".join(hits) + "."
    if not d.cues:
        here = "No cue entities came from the question: the question vector alone has to do the cueing."
    return Lesson(step.index, step.title, "cue ↔ query cue",
                  "Remembering starts from a cue: whatever is present when we try to recall. Tulving showed "
                  "that a cue works when it matches how the memory was stored (encoding specificity).",
                  here, list(d.cues))


def _ec_initial(trace: Trace, step: Step) -> Lesson:
    d = trace.ecphory
    assert d is not None
    top = sorted(d.initial, key=lambda a: -a.similarity)
    names = _dedupe([a.name for a in top])
    n_cue = sum(1 for a in d.initial if a.origin == "cue")
    first = activation.new_in_round(d, 0)
    here = (f"{first.engrams} engrams ({first.entities} entities) light up: the ones most similar to the question"
            + (f" and {n_cue} reached through the cues" if n_cue else "")
            + f". The strongest: {_quote(names)}. Their passages are the first context candidates "
              f"({len(d.c_assoc)} chunk(s)).")
    return Lesson(step.index, step.title, "engram ↔ entity trace · ecphory ↔ activation",
                  "An engram is the trace an experience left behind. Ecphory is the meeting of cue and engram "
                  "that brings the memory back. Here every mention of an entity in a passage is an engram; "
                  "those that match the cue become active.", here, names)


def _ec_round(trace: Trace, step: Step) -> Lesson:
    d = trace.ecphory
    assert d is not None
    n = _nth_of_kind(trace, step)
    r = d.rounds[n] if n < len(d.rounds) else None
    brain = ("One recollection calls up others linked to it: activation spreads along associations. "
             "Each round takes the most question-like active engrams as seeds, blends them into one "
             "weighted centre, and activates what lies near that centre and what co-occurs with the seeds.")
    if r is None or not r.seed_ids:
        why = (r.note if r is not None and r.note else step.summary) or "This round did not run."
        return Lesson(step.index, step.title, "ecphory ↔ associative activation", brain, why, [])
    seeds = [f"'{clip(activation.seed_text(x), 80)}'"
             for x in activation.merged_seeds(r, _ec_names(trace))[:NAMES_SHOWN]]
    semantic = _dedupe([a.name for a in r.new if a.origin == "semantic"])
    graph = _dedupe([a.name for a in r.new if a.origin == "graph"])
    new, after = activation.new_in_round(d, r.round), activation.active_after(d, r.round)
    here = (f"Round {r.round}: seeds {', '.join(seeds)} (weight = share of similarity to the question; ×n = n "
            f"mentions of one entity). {new.entities} new entities became active ({new.engrams} engrams, one "
            f"per mention): {after.entities} entities are active now")
    here += f"; near the centre: {_quote(semantic)}" if semantic else ""
    here += f"; co-occurring with a seed: {_quote(graph)}" if graph else ""
    here += "." + (f" {r.note[:1].upper()}{r.note[1:]}." if r.note else "")
    return Lesson(step.index, step.title, "ecphory ↔ associative activation", brain, here, semantic + graph)


def _ec_rerank(trace: Trace, step: Step) -> Lesson:
    d = trace.ecphory
    assert d is not None
    names = _dedupe([a.name for a in d.final])
    here = (f"Every activated engram is ranked by its similarity to the question; the best {len(d.final)} "
            f"entities are recalled, one engram each: {_quote(names)}.")
    return Lesson(step.index, step.title, "from activation to recollection",
                  "Not everything a cue stirs up is recalled: what finally comes to mind is what fits the "
                  "question best.", here, names)


def _ec_context(trace: Trace, step: Step) -> Lesson:
    d = trace.ecphory
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    chunks = _dedupe([titles.get(c, f"chunk {c}") for c in d.context_chunk_ids])
    here = (f"The answer step reads the recalled entities' descriptions and the passages {_quote(chunks)}.")
    return Lesson(step.index, step.title, "recollection → answer",
                  "The recollected memory is what we can report: here, what the model answers from.", here, chunks)


# ------------------------------------------------------------------ HippoRAG 2
def _hr_fact(f: Any) -> str:
    return f"'{clip(f.head, 50)} | {clip(f.relation, 40)} | {clip(f.tail, 50)}'"


def _hr_facts(trace: Trace, step: Step) -> Lesson:
    d = trace.hipporag2
    assert d is not None
    here = (f"The question's vector meets every fact's vector; the {len(d.facts)} nearest: "
            + ("; ".join(f"{_hr_fact(f)} ({f.score:.2f})" for f in d.facts[:NAMES_SHOWN]) or "none") + ".")
    if not d.facts:
        here = "The memory holds no facts, so there is nothing for the question to meet."
    return Lesson(step.index, step.title, "parahippocampal regions ↔ the encoder",
                  "Signals reach the hippocampus through the parahippocampal regions, which turn what we "
                  "perceive into a form the index can match. HippoRAG 2's encoder does that job: the question "
                  "and every stored fact become vectors, and the closest facts are the first candidates.",
                  here, _dedupe([n for f in d.facts for n in (f.head, f.tail)]))


def _hr_recognition(trace: Trace, step: Step) -> Lesson:
    d = trace.hipporag2
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
                  _dedupe([n for f in kept for n in (f.head, f.tail)]))


def _hr_seeds(trace: Trace, step: Step) -> Lesson:
    d = trace.hipporag2
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
                  _dedupe([s.name for s in d.phrase_seeds]))


def _hr_pagerank(trace: Trace, step: Step) -> Lesson:
    d = trace.hipporag2
    assert d is not None
    seeded = {f"e:{s.key}" for s in d.phrase_seeds}
    reached = [n.label for n in d.top_nodes if n.kind == "phrase" and n.node_id not in seeded]
    passages = [n.label for n in d.top_nodes if n.kind == "passage"]
    here = (f"The walk from the seeds left {d.phrase_mass:.0%} of its mass on phrase nodes and the rest on "
            f"passages. Phrases it reached without seeding them: {_quote(_dedupe(reached))}. The passages "
            f"holding the most: {_quote(_dedupe(passages), 3)}.")
    return Lesson(step.index, step.title, "pattern completion ↔ personalised PageRank",
                  "Given part of a stored pattern, the hippocampus brings back the rest: pattern completion. "
                  "Personalised PageRank completes from the seeds: a walker follows the graph's links and keeps "
                  "jumping back to a seed, so weight gathers where many short links lead from the seeds.",
                  here, _dedupe(reached)[:NAMES_SHOWN])


def _hr_ranked(trace: Trace, step: Step) -> Lesson:
    d = trace.hipporag2
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    k = int(trace.params.get("answer_passages", 5))
    won = _dedupe([titles.get(r.chunk_id, f"chunk {r.chunk_id}") for r in trace.ranked[:k]])
    if d.fallback_dense:
        return Lesson(step.index, step.title, "no cue to complete",
                      "Without a recognised cue there is no index entry to start pattern completion from.",
                      f"HippoRAG 2 fell back to dense retrieval ({clip(d.fallback_reason, 120)}): the passages "
                      f"nearest the question are read instead: {_quote(won, 3)}.", won)
    return Lesson(step.index, step.title, "index → neocortex",
                  "The index only points; the content is in the cortex. The passages the completed pattern "
                  "points to most are handed back to the LLM, which reads them and answers.",
                  f"The passages with the most PageRank mass go to the answer step: {_quote(won)}.", won)


_BUILDERS = {
    "neuropath": {"seeds": _np_seeds, "hop": _np_hop, "completion": _np_completion, "fallback": _np_fallback},
    "ecphory": {"cues": _ec_cues, "initial": _ec_initial, "round": _ec_round, "rerank": _ec_rerank,
                "context": _ec_context},
    "hipporag2": {"facts": _hr_facts, "recognition": _hr_recognition, "seeds": _hr_seeds, "pagerank": _hr_pagerank,
                  "ranked": _hr_ranked},
}


def lessons(trace: Trace) -> list[Lesson]:
    """One lesson per step of the trace, in step order."""
    if trace.method not in TEACHABLE:
        raise ValueError(f"the Learn page teaches {', '.join(TEACHABLE)} traces, not {trace.method!r}")
    builders = _BUILDERS[trace.method]
    out = []
    for step in trace.steps:
        build = builders.get(step.kind)
        out.append(build(trace, step) if build else
                   Lesson(step.index, step.title, "", "", step.summary or step.title, []))
    return out


def teachable(traces: list[Trace]) -> dict[str, Trace]:
    """method → trace for the traces the Learn page can replay (a method with steps)."""
    return {t.method: t for t in traces if t.method in TEACHABLE and t.steps}


def demo_traces(memory: Memory, recordings: Any, embedder: Any, question: str) -> list[Trace]:
    """Every teachable method on a recorded demo question, replayed from the memory's recordings
    (raises `memrag.llm.recordings.StaleRecording` when the recordings lack a call)."""
    from memrag.ask import ask

    return ask(memory, question, llm=recordings.replay_llm(), embedder=embedder, methods=list(TEACHABLE))


__all__ = ["ANALOGIES", "INTROS", "SOURCES", "Pair", "Lesson", "lessons", "teachable", "demo_traces", "TEACHABLE"]
