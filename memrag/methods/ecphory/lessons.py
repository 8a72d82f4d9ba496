"""EcphoryRAG's lesson for the Learn page: cues, engrams and ecphory, step by step.

`here` texts quote the trace (names, model text): plain text, shown escaped."""

from __future__ import annotations

from memrag.methods.ecphory import activation
from memrag.methods.lesson_kit import Lesson, LessonPlan, Pair, NAMES_SHOWN, dedupe, quote, step_item
from memrag.trace import Step, Trace
from memrag.plain_text import clip
from memrag.methods.ecphory.detail import EcphoryDetail


def _ec_names(trace: Trace) -> dict[int, str]:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    return {a.engram_id: a.name for a in [*d.initial, *d.final, *(a for r in d.rounds for a in r.new),
                                          *(a for r in d.rounds for a in r.centroid_neighbours)]}


def _ec_cues(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    names = _ec_names(trace)
    here = f"The cues taken from the question: {quote(d.cues)}."
    hits = [f"'{clip(c, 60)}' reaches {quote(dedupe([names.get(e, str(e)) for e in ids]), 3)}"
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
    d = trace.detail(EcphoryDetail)
    assert d is not None
    top = sorted(d.initial, key=lambda a: -a.similarity)
    names = dedupe([a.name for a in top])
    n_cue = sum(1 for a in d.initial if a.origin == "cue")
    first = activation.new_in_round(d, 0)
    here = (f"{first.engrams} engrams ({first.entities} entities) light up: the ones most similar to the question"
            + (f" and {n_cue} reached through the cues" if n_cue else "")
            + f". The strongest: {quote(names)}. Their passages are the first context candidates "
              f"({len(d.c_assoc)} chunk(s)).")
    return Lesson(step.index, step.title, "engram ↔ entity trace · ecphory ↔ activation",
                  "An engram is the trace an experience left behind. Ecphory is the meeting of cue and engram "
                  "that brings the memory back. Here every mention of an entity in a passage is an engram; "
                  "those that match the cue become active.", here, names)


def _ec_round(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    r = step_item(trace, step, d.rounds)
    brain = ("One recollection calls up others linked to it: activation spreads along associations. "
             "Each round takes the most question-like active engrams as seeds, blends them into one "
             "weighted centre, and activates what lies near that centre and what co-occurs with the seeds.")
    if r is None or not r.seed_ids:
        why = (r.note if r is not None and r.note else step.summary) or "This round did not run."
        return Lesson(step.index, step.title, "ecphory ↔ associative activation", brain, why, [])
    seeds = [f"'{clip(activation.seed_text(x), 80)}'"
             for x in activation.merged_seeds(r, _ec_names(trace))[:NAMES_SHOWN]]
    semantic = dedupe([a.name for a in r.new if a.origin == "semantic"])
    graph = dedupe([a.name for a in r.new if a.origin == "graph"])
    new, after = activation.new_in_round(d, r.round), activation.active_after(d, r.round)
    here = (f"Round {r.round}: seeds {', '.join(seeds)} (weight = share of similarity to the question; ×n = n "
            f"mentions of one entity). {new.entities} new entities became active ({new.engrams} engrams, one "
            f"per mention): {after.entities} entities are active now")
    here += f"; near the centre: {quote(semantic)}" if semantic else ""
    here += f"; co-occurring with a seed: {quote(graph)}" if graph else ""
    here += "." + (f" {r.note[:1].upper()}{r.note[1:]}." if r.note else "")
    return Lesson(step.index, step.title, "ecphory ↔ associative activation", brain, here, semantic + graph)


def _ec_rerank(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    names = dedupe([a.name for a in d.final])
    here = (f"Every activated engram is ranked by its similarity to the question; the best {len(d.final)} "
            f"entities are recalled, one engram each: {quote(names)}. "
            + activation.rounds_added_sentence(activation.rounds_added(d)))
    return Lesson(step.index, step.title, "from activation to recollection",
                  "Not everything a cue stirs up is recalled: what finally comes to mind is what fits the "
                  "question best.", here, names)


def _ec_context(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(EcphoryDetail)
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    chunks = dedupe([titles.get(c, f"chunk {c}") for c in d.context_chunk_ids])
    here = (f"The answer step reads the recalled entities' descriptions and the passages {quote(chunks)}.")
    return Lesson(step.index, step.title, "recollection → answer",
                  "The recollected memory is what we can report: here, what the model answers from.", here, chunks)


LESSON = LessonPlan(
    intro=(
        "EcphoryRAG follows Endel Tulving's account of remembering: a memory comes back when a retrieval "
        "cue meets the stored trace of an experience, its engram — the meeting is called ecphory. "
        "Here the engrams are entity mentions, the cues come from the question, and one recollection "
        "calls up associated ones in rounds."),
    analogies=[
        Pair("engram", "the lasting trace an experience leaves in the brain (Semon's word, used by Tulving)",
             "entity trace (engram)", "one mention of an entity in one chunk, with its type and description"),
        Pair("retrieval cue", "what is present when we try to remember; it works when it matches what was stored",
             "query cue", "an entity named in the question, plus the question itself"),
        Pair("ecphory", "Tulving's word for the meeting of cue and engram that brings a memory back",
             "associative activation", "engrams near the cues light up, then their weighted centroid and "
             "their co-occurring neighbours light up more, round by round"),
    ],
    builders={"cues": _ec_cues, "initial": _ec_initial, "round": _ec_round, "rerank": _ec_rerank,
              "context": _ec_context},
)
