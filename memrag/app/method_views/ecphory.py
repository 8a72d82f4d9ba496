"""EcphoryRAG's views on the Ask page: its activation beside the other methods, and its Retrieval
tab (cues, the activation step by step, each round's seeds and centroid, the final ranking)."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app import focus
from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import Picture, method_picture_of
from memrag.app.view_cache import drawn
from memrag.app.widgets import frame, graph, text
from memrag.methods.ecphory import activation
from memrag.methods.ecphory.fates import EcphoryFate, passage_engrams, step_words
from memrag.methods.fate_kit import FateRecord, Moment
from memrag.trace import Trace
from memrag.viz import trace_graphs
from memrag import words
from memrag.methods.ecphory.detail import EcphoryDetail


def overview_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> Picture:
    return method_picture_of(trace, ids, height, drawable=trace.detail(EcphoryDetail) is not None)


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    overview_picture(trace, ids, height).show(trace, height)


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
    steps = trace_graphs.ecphory_steps(trace)
    step_key = f"{key}_ec_step"
    step = st.select_slider(words.ACTIVATION_STEP.label, options=list(range(len(steps))),
                            value=None if step_key in st.session_state else len(steps) - 1,
                            format_func=lambda i: steps[i], key=step_key, help=words.ACTIVATION_STEP.help)
    _focused_passage(d, key)
    graph(drawn(trace_graphs.ecphory_activation_graph, trace, step, gold_chunk_ids=gold_ids), 600,
          name=f"ecphory-step-{step}")
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


def moment_at(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """An activation step opens the Retrieval tab at that step; a place in the list, Ranked passages."""
    if moment.round is not None:
        return "Retrieval", moment.round
    return "Ranked passages", None


def lost_at(record: FateRecord, trace: Trace) -> tuple[str | None, str | int | None]:
    """The activation step that shows a gold chunk's fate: step r is the state after round r."""
    if record.kind is EcphoryFate.ACTIVATED_OUTSIDE and record.round is not None:
        return "Retrieval", record.round
    if record.kind is EcphoryFate.NEVER_ACTIVATED:
        return "Retrieval", 0
    return "Ranked passages", None


def step_name(trace: Trace, step: str | int) -> str:
    if isinstance(step, int) and trace.detail(EcphoryDetail) is not None:
        steps = trace_graphs.ecphory_steps(trace)
        return steps[min(step, len(steps) - 1)]
    return str(step)


VIEWS = MethodViews(detail, overview, lost_at=lost_at, step_key="ec", step_name=step_name, moment_at=moment_at,
                    overview_picture=overview_picture, renderer=trace_graphs.ecphory_activation_graph)
