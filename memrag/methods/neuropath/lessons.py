"""NeuroPath's lesson for the Learn page: place cells, preplay and replay, step by step.

`here` texts quote the trace (names, model text): plain text, shown escaped."""

from __future__ import annotations

from memrag.methods.lesson_kit import Lesson, LessonPlan, Pair, NAMES_SHOWN, dedupe, quote, step_item
from memrag.trace import Step, Trace
from memrag import words
from memrag.plain_text import clip
from memrag.methods.neuropath.detail import NeuroPathDetail


def _np_seeds(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(NeuroPathDetail)
    assert d is not None
    seeds = [s for s in d.seeds if s.accepted]
    members = dedupe([m.name for s in seeds for m in s.coref])
    if seeds:
        found = "; ".join(f"'{clip(s.query_entity, 60)}' → '{clip(s.name, 60)}' ({s.similarity:.2f})"
                          for s in seeds[:NAMES_SHOWN])
        here = (f"The question names {quote(d.query_entities)}. Each is matched to the closest entity in the "
                f"memory, and that entity becomes a seed, a place the search starts from: {found}.")
        if members:
            here += (f" Entities whose names are very close to a seed's count as the same place under another "
                     f"name (coreference candidates): {quote(members)}.")
    else:
        here = (f"The question names {quote(d.query_entities)}, but no entity of the memory is close enough to "
                "any of them: there is no place to start from.")
    return Lesson(step.index, step.title, "place cells ↔ entities",
                  "A place cell fires when the animal is at one particular spot; together the cells form a "
                  "map. Here the map is the knowledge graph and every entity is a place. A search starts at "
                  "the places the question points to.", here, dedupe([s.name for s in seeds] + members))


def _np_hop(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(NeuroPathDetail)
    assert d is not None
    h = step_item(trace, step, d.hops)
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
    counts: dict[str, int] = {}
    for p in listed.values():
        counts[p.fate] = counts.get(p.fate, 0) + 1
    here = (f"Hop {h.hop}: {h.new_count} new path(s) grew from {start}"
            + (f"; {h.pruned_count} were pruned as least similar to the goal" if h.pruned_count else "")
            + f"; {len(listed)} were listed for the model. Its judgement: {words.path_counts(counts) or 'none'}")
    here += (f". A valid one: '{clip(valid[0].text, 160)}'." if valid else ".")
    if expand:
        here += f" It chose {len(expand)} to extend from {quote(dedupe([p.frontier_name for p in expand]))}."
    if h.reasoning_chain:
        here += f" Its reasoning so far: '{clip(h.reasoning_chain, 240)}'."
    if h.expansion_requirement:
        here += f" What it still needs: '{clip(h.expansion_requirement, 160)}'."
    here += " It asked to go on." if h.continue_ else " It said it had enough."
    if h.failed:
        here += f" The reply could not be read ({clip(h.failure, 120)}): the paths kept so far count as valid."
    names = dedupe([t.head for p in valid for t in p.triples] + [t.tail for p in valid for t in p.triples])
    return Lesson(step.index, step.title, "place fields ↔ triples · preplay ↔ path tracking", brain, here, names)


def _np_completion(trace: Trace, step: Step) -> Lesson:
    d = trace.detail(NeuroPathDetail)
    assert d is not None
    titles = {c.chunk_id: c.title for c in trace.chunks}
    dp = [titles.get(c, f"chunk {c}") for c in d.dp_chunk_ids]
    filled = [titles.get(r.chunk_id, f"chunk {r.chunk_id}") for r in trace.ranked if r.source == "completion"]
    here = f"First come the passages the valid paths were read from: {quote(dp)}."
    if trace.params.get("completion", True):
        here += (f" Then the whole memory is searched again with the question plus the model's chain and "
                 f"requirement — '{clip(d.de_query, 300)}' — and its best matches fill the list behind them: "
                 f"{quote(filled, 3)}.")
    else:
        here += " Completion is off in this run, so nothing else is added."
    return Lesson(step.index, step.title, "replay ↔ post-retrieval completion",
                  "After a run, at rest or in sleep, place cells fire the route again, often compressed and "
                  "sometimes backwards (replay); it is thought to help keep and judge what just happened. "
                  "NeuroPath's completion looks back over what tracking found and searches once more with "
                  "what the model learnt on the way.", here, dedupe(dp + filled[:3]))


def _np_fallback(trace: Trace, step: Step) -> Lesson:
    return Lesson(step.index, step.title, "no place to start",
                  "Without a place cell for where you are, there is no map to follow.",
                  "The question gave no entities, so NeuroPath had no seeds and ranked passages by their "
                  "similarity to the question, like dense retrieval.", [])


LESSON = LessonPlan(
    intro=(
        "NeuroPath treats the knowledge graph like the map the hippocampus keeps of a place. "
        "Place cells each stand for one spot; a route is a sequence of them. Before moving, animals "
        "'preplay' possible routes; afterwards they 'replay' the route taken. NeuroPath plans paths "
        "through the graph with the model's help, then searches once more with what it learnt."),
    analogies=[
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
    builders={"seeds": _np_seeds, "hop": _np_hop, "completion": _np_completion, "fallback": _np_fallback},
)
