"""EcphoryRAG's views on the Ask page: its activation beside the other methods, and its Retrieval
tab (cues, the activation step by step, each round's seeds and centroid, the final ranking). The
picture is the wing's (memrag.methods.ecphory.recall), drawn by memrag.viz.figure through
graph_view: a click on a node opens a panel Python writes (an engram's activation per round, its
fate, the passages it brought, "show where")."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app import focus, graph_view
from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import (TypedPicture, chart_key, chart_width, current_gold_answers,
                                            method_picture_of, passage_part)
from memrag.app.widgets import frame, text
from memrag.methods.ecphory import activation, recall
from memrag.methods.ecphory.fates import EcphoryFate, passage_engrams, step_words
from memrag.methods.fate_kit import FateRecord, Moment
from memrag.picture import PictureEdge, PictureNode
from memrag.trace import Trace
from memrag.viz import figure, look as looks
from memrag import words
from memrag.plain_text import escape_markdown
from memrag.methods.ecphory.detail import EcphoryDetail

DETAIL_HEIGHT = 600  # px of the Retrieval tab's picture


def activation_picture_of(trace: Trace, gold_ids: Iterable[int] | None, height: int, width: float,
                          what: str) -> TypedPicture:
    """EcphoryRAG's activation (memrag.methods.ecphory.recall), the whole retrieval; a click opens
    the node's panel (`engram_part`)."""
    gold, answers = tuple(gold_ids or ()), current_gold_answers()
    return TypedPicture(lambda opened: recall.picture(trace, gold_chunk_ids=gold, gold_answers=answers,
                                                      expanded=opened), chart_key(trace, what), height, width,
                        engram_part)


def overview_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> "Picture | TypedPicture":
    """The picture beside the other methods, or in the focus layout (large or small); a trace with
    no EcphoryRAG detail shows its ranked list."""
    if trace.detail(EcphoryDetail) is None:
        return method_picture_of(trace, ids, height, drawable=False)
    return activation_picture_of(trace, ids, height, chart_width(looks.current()), "overview")


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    overview_picture(trace, ids, height).show(trace, height)


def first_detail_picture(trace: Trace, gold_ids: Iterable[int] | None) -> TypedPicture | None:
    """The Retrieval tab's picture at its default step (the last: the whole retrieval), made ahead by
    the Ask page's prefetch."""
    if trace.detail(EcphoryDetail) is None:
        return None
    return activation_picture_of(trace, gold_ids, DETAIL_HEIGHT, figure.DESIGN_WIDTH, "detail")


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    d = trace.detail(EcphoryDetail)
    if d is None:
        st.info("This trace has no EcphoryRAG detail.")
        return
    text(", ".join(d.cues) or "(none)", prefix="**Cues:** ")
    names = {a.engram_id: a.name for a in [*d.initial, *d.final, *(a for r in d.rounds for a in r.new),
                                           *(a for r in d.rounds for a in r.centroid_neighbours)]}
    if d.cue_hits:
        st.dataframe(frame([{"cue": cue, "engrams it activated": activation.names_counted([names.get(e, str(e))
                                                                                           for e in hits])}
                          for cue, hits in d.cue_hits.items()], ["cue", "engrams it activated"]), hide_index=True)
    steps = [s.title for s in trace.steps]
    step_key = f"{key}_ec_step"
    step = st.select_slider(words.ACTIVATION_STEP.label, options=list(range(len(steps))),
                            value=None if step_key in st.session_state else len(steps) - 1,
                            format_func=lambda i: steps[i], key=step_key, help=words.ACTIVATION_STEP.help)
    _focused_passage(d, key)
    gold, answers = tuple(gold_ids or ()), current_gold_answers()
    chart = graph_view.Chart(looks.current(), DETAIL_HEIGHT, figure.DESIGN_WIDTH, key.removesuffix(f"_{trace.method}"),
                             step=step)
    graph_view.picture_chart(trace, lambda opened: recall.picture(trace, gold_chunk_ids=gold, gold_answers=answers,
                                                                  expanded=opened, upto=step),
                             chart_key(trace, "detail"), chart, engram_part)
    st.dataframe(frame([{"round": r.round,
                         "seeds": ", ".join(activation.seed_text(x) for x in activation.merged_seeds(r, names)),
                         "new entities": activation.new_in_round(d, r.round).entities,
                         **{f"new engrams by {o}": r.new_counts.get(o, 0) for o in ("semantic", "graph")},
                         "note": r.note} for r in d.rounds],
                       ["round", "seeds", "new entities", "new engrams by semantic", "new engrams by graph", "note"]),
                 hide_index=True, column_config={
                     "seeds": st.column_config.TextColumn(help="one entry per entity: ×n = n of its engrams "
                                                               "(mentions) were seeds; their weights summed"),
                     "new entities": st.column_config.NumberColumn(help=words.ENGRAMS_AND_ENTITIES)})
    if d.rounds:
        rn = st.selectbox("centroid neighbourhood of round", [r.round for r in d.rounds], key=f"{key}_ec_round")
        r = next(x for x in d.rounds if x.round == rn)
        scores = r.centroid_scores + [None] * (len(r.centroid_neighbours) - len(r.centroid_scores))
        st.dataframe(frame([{"engram": a.name, "type": a.type, "cosine to centroid": s,
                           "similarity to question": round(a.similarity, 3), "first activated": a.round,
                           "origin": a.origin} for a, s in zip(r.centroid_neighbours, scores)]), hide_index=True)
    st.caption("Final ranking: the re-ranked engrams given to the answer step (one per entity). "
               + activation.rounds_added_sentence(activation.rounds_added(d)))
    st.dataframe(frame([{"rank": i + 1, "engram": a.name, "type": a.type, "similarity": round(a.similarity, 3),
                       "round": a.round, "origin": a.origin, "via": a.via, "chunk": a.chunk_id,
                       "description": a.description} for i, a in enumerate(d.final)]), hide_index=True)


def _focused_passage(d: EcphoryDetail, key: str) -> None:
    """"show where" chose a passage (its first miss): its activated engrams, the earliest highlighted, in view."""
    row = focus.focused(key)
    mine = passage_engrams(d, row) if isinstance(row, int) else []
    if not mine:
        return
    final = {e.engram_id: str(i) for i, e in enumerate(d.final, start=1)}  # text: "–" where not final
    engrams = frame([{"engram": e.name, "activated in": step_words(e.round), "origin": e.origin, "via": e.via,
                      "similarity": round(e.similarity, 3), "final engram #": final.get(e.engram_id, "–")}
                     for e in mine], ["engram", "activated in", "origin", "via", "similarity", "final engram #"])
    with st.container(key=focus.anchor_key(key), border=True):
        st.caption(f"The passage 'show where' points at (chunk {row}): its activated engrams, the earliest "
                   "activation highlighted.")
        st.dataframe(focus.highlighted(engrams, "activated in", step_words(mine[0].round)), hide_index=True)
    focus.scroll_once(key)


def engram_part(trace: Trace, target: PictureNode | PictureEdge, results_key: str) -> None:
    """What EcphoryRAG did with a clicked node: an entity's activation per round and its fate, a
    passage's reason for being there and its engrams, with "show where" to open the step that shows it."""
    d = trace.detail(EcphoryDetail)
    if d is None or not isinstance(target, PictureNode):
        return
    if target.kind == "entity" and target.role != "cue":
        _entity_part(trace, d, target.ref, results_key)
    elif target.kind == "passage" and target.ref.isdigit():
        passage_part(trace, target, results_key)  # its rank, why, fate, text and "show where", as every list's
        _passage_engrams(d, int(target.ref))
    elif target.role == "cue":
        hits = d.cue_hits.get(target.ref, [])
        names = {a.engram_id: a.name for a in d.initial}
        text(activation.names_counted([names.get(e, str(e)) for e in hits]) or "(none)",
             prefix=f"**Engrams this cue activated ({len(hits)}):** ")


def _entity_part(trace: Trace, d: EcphoryDetail, key: str, results_key: str) -> None:
    mine = [a for a in [*d.initial, *(a for r in d.rounds for a in r.new)] if a.key == key]
    final = next((i for i, a in enumerate(d.final, start=1) if a.key == key), None)
    if not mine and final is None:
        return
    first = mine[0] if mine else d.final[final - 1]
    seeds = [f"round {r.round} ({sum(w for e, w in zip(r.seed_ids, r.weights) if e in {a.engram_id for a in mine}):.2f})"
             for r in d.rounds if {a.engram_id for a in mine} & set(r.seed_ids)]
    fate = (f"Recalled: final engram #{final} of {len(d.final)} (E_final, by similarity to the question)."
            if final is not None else
            f"Activated in {step_words(first.round)}, not recalled: the re-rank kept {len(d.final)} engrams "
            "more similar to the question.")
    st.markdown(f"**{fate}**")
    if seeds:
        st.caption("Seed of " + ", ".join(seeds) + " (weight).")
    st.dataframe(frame([{"activated in": step_words(a.round), "origin": a.origin, "via": a.via,
                         "similarity": round(a.similarity, 3), "chunk": a.chunk_id} for a in mine],
                       ["activated in", "origin", "via", "similarity", "chunk"]), hide_index=True)
    brought = [r for r in trace.ranked if any(e.kind == "provenance" and e.source == f"e:{key}"
                                              and e.target == f"c:{r.chunk_id}" for e in trace.edges)]
    for r in brought:
        text(r.why or r.source, prefix=f"**Brought context passage chunk {r.chunk_id}:** ")
    if mine and st.button("show where", key=f"ec_where_{id(trace)}", icon=":material/search:",
                          help="Opens EcphoryRAG's Retrieval tab at the step that first activated this entity, "
                               "the passage it was read from in view."):
        focus.open_view(results_key, trace.method, "Retrieval", recall.round_step(trace, first.round), first.chunk_id)
        st.rerun()


def _passage_engrams(d: EcphoryDetail, cid: int) -> None:
    mine = passage_engrams(d, cid)
    if mine:
        st.caption(escape_markdown(f"Its activated engrams: {activation.names_counted([a.name for a in mine])}; "
                                   f"the first in {step_words(mine[0].round)}."))


def moment_at(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """An activation step opens the Retrieval tab at that step; a place in the list, Ranked passages."""
    if moment.round is not None:
        return "Retrieval", recall.round_step(trace, moment.round)
    return "Ranked passages", None


def lost_at(record: FateRecord, trace: Trace) -> tuple[str | None, str | int | None]:
    """The activation step that shows a gold chunk's fate: the step of the round that first activated it."""
    if record.kind is EcphoryFate.ACTIVATED_OUTSIDE and record.round is not None:
        return "Retrieval", recall.round_step(trace, record.round)
    if record.kind is EcphoryFate.NEVER_ACTIVATED:
        return "Retrieval", recall.round_step(trace, 0)
    return "Ranked passages", None


def step_name(trace: Trace, step: str | int) -> str:
    if isinstance(step, int) and trace.steps:
        return trace.steps[min(step, len(trace.steps) - 1)].title
    return str(step)


VIEWS = MethodViews(detail, overview, lost_at=lost_at, step_key="ec", step_name=step_name, moment_at=moment_at,
                    overview_picture=overview_picture, first_detail_picture=first_detail_picture)
