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
from memrag.app.method_views.common import Picture, method_picture_of
from memrag.app.session import AppState
from memrag.app.widgets import frame, text
from memrag.methods.ecphory import activation, recall
from memrag.methods.ecphory.fates import EcphoryFate, passage_engrams, step_words
from memrag.methods.fate_kit import FateRecord, Moment
from memrag.picture import PictureEdge, PictureNode
from memrag.trace import Trace
from memrag.viz import figure, look as looks
from memrag import words
from memrag.methods.ecphory.detail import EcphoryDetail

WIDTH = figure.DESIGN_WIDTH  # px the picture is laid out for, large (the focus graph) or small
SIDE_WIDTH = 400.0  # … and beside the other methods (a third of the page)
DETAIL_HEIGHT = 600  # px of the Retrieval tab's picture


def overview_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> Picture | None:
    """The HTML picture a prefetch makes: only the dense ranking of a trace with no EcphoryRAG detail
    (the typed picture is drawn when shown, in milliseconds)."""
    return None if trace.detail(EcphoryDetail) is not None else method_picture_of(trace, ids, height, drawable=False)


def gold_answers(trace: Trace) -> tuple[str, ...]:
    """The reference answers of the ask this trace belongs to (the Ask page's result, or traces opened
    from a file), so the gold answer's node says so; () when the trace is not one of them."""
    state = AppState()
    for result in (state.ask_result, state.loaded_traces):
        if result is not None and result.record and any(t is trace for t in result.traces):
            record = result.record
            return tuple(a for a in [record.get("answer"), *record.get("answer_aliases", [])] if isinstance(a, str))
    return ()


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    if trace.detail(EcphoryDetail) is None:  # nothing of its own to draw: its ranking
        method_picture_of(trace, ids, height, drawable=False).show(trace, height)
        return
    look = looks.current()
    gold, answers = tuple(ids or ()), gold_answers(trace)
    chart = graph_view.Chart(look, height, WIDTH if look.label_all or look.compact else SIDE_WIDTH,
                             graph_view.results_key())
    graph_view.picture_chart(trace, lambda opened: recall.picture(trace, gold_chunk_ids=gold, gold_answers=answers,
                                                                  expanded=opened),
                             f"ec_overview_{id(trace)}_{'small' if look.compact else 'large'}", chart, engram_part)


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
    gold, answers = tuple(gold_ids or ()), gold_answers(trace)
    chart = graph_view.Chart(looks.current(), DETAIL_HEIGHT, WIDTH, key.removesuffix(f"_{trace.method}"), step=step)
    graph_view.picture_chart(trace, lambda opened: recall.picture(trace, gold_chunk_ids=gold, gold_answers=answers,
                                                                  expanded=opened, upto=step),
                             f"ec_detail_{id(trace)}", chart, engram_part)
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
        _passage_part(trace, d, int(target.ref), results_key)
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


def _passage_part(trace: Trace, d: EcphoryDetail, cid: int, results_key: str) -> None:
    ranked = next((r for r in trace.ranked if r.chunk_id == cid), None)
    if ranked is not None:
        text(ranked.why or ranked.source, prefix=f"**Ranked {ranked.rank}:** ")
    mine = passage_engrams(d, cid)
    if mine:
        st.caption(f"Its activated engrams: {activation.names_counted([a.name for a in mine])}; the first in "
                   f"{step_words(mine[0].round)}.")
    c = trace.chunk(cid)
    if c is not None:
        with st.expander(f"passage: chunk {cid}"):
            st.text(c.text)
    if st.button("show where", key=f"ec_where_p_{id(trace)}", icon=":material/search:",
                 help="Opens EcphoryRAG's ranked passages, this passage's row highlighted."):
        focus.open_view(results_key, trace.method, "Ranked passages", None, cid)
        st.rerun()


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
                    overview_picture=overview_picture)
