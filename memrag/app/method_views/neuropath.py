"""NeuroPath's views on the Ask page: its paths beside the other methods, and its Retrieval tab
(seeds, each hop's candidate paths and the model's judgement, completion)."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app import focus, graph_view
from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import TypedPicture, chart_key, chart_width, method_picture_of, numbers
from memrag.app.table_fit import fitted_table, ranked_passages
from memrag.app.widgets import fitted_lines, frame, text, wrapped_table
from memrag.methods.fate_kit import FateRecord, Moment
from memrag.methods.neuropath.fates import NeuroPathFate
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop
from memrag.index.normalise import entity_key
from memrag.methods.neuropath import picture as np_picture, route
from memrag.picture import PictureEdge, PictureNode
from memrag.viz import figure, look as looks, tables
from memrag import words
from memrag.plain_text import clip, escape_markdown

ROUTE_WIDTH = figure.DESIGN_WIDTH  # px the Retrieval tab's route is laid out for
DETAIL_HEIGHT = 560  # px of the Retrieval tab's route

COMPLETION = "Completion"


def hop_step(hop: int) -> str:
    return f"Hop {hop}"


def overview_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> TypedPicture:
    """The side-by-side picture, which a prefetch makes ahead: the route, or only the dense ranking
    of a trace with no hop."""
    d = trace.detail(NeuroPathDetail)
    if d is not None and not d.hops:
        return method_picture_of(trace, ids, height, drawable=False)
    return _route(trace, ids, chart_key(trace, "route"), height, chart_width(looks.current()))


def _route(trace: Trace, ids: Iterable[int] | None, key: str, height: int, width: float,
           upto: int | None = None) -> TypedPicture:
    gold = tuple(ids or ())
    return TypedPicture(lambda opened: np_picture.picture(trace, expanded=opened, gold_chunk_ids=gold, upto=upto),
                        key, height, width, route_part)


def overview(trace: Trace, ids: Iterable[int] | None, height: int) -> None:
    d = trace.detail(NeuroPathDetail)
    if d is not None and not d.hops:
        # no hop ran: say why the picture is a dense ranking rather than paths
        st.info("NeuroPath fell back to dense retrieval: no query entities." if d.fallback_dense else
                f"NeuroPath tracked no path ({d.stop_reason or 'no hop ran'}): the ranking shown is "
                "post-retrieval completion alone.")
    overview_picture(trace, ids, height).show(trace, height)


def route_part(trace: Trace, target: PictureNode | PictureEdge, results_key: str) -> None:
    """What NeuroPath did with a clicked node or edge: the paths through it, their fate at each hop
    that listed them, and "show where" to open the hop that listed one, its row in view."""
    d = trace.detail(NeuroPathDetail)
    if d is None:
        return
    ids = set(graph_view.triple_ids(target)) if isinstance(target, PictureEdge) and target.kind == "triple" else set()
    keys = {target.ref} if isinstance(target, PictureNode) else set()
    through = [p for p in route.route_paths(d)
               if ids & {t.triple_id for t in p.cand.triples}
               or keys & {entity_key(x) for t in p.cand.triples for x in (t.head, t.tail)}]
    if not through:
        return
    through.sort(key=lambda p: (words.fate_rank(p.fate), p.pid))
    st.markdown(f"**On {len(through)} path(s)**")
    rows = [{"path": p.cand.text, "fate": words.path_fate(p.fate),
             "at each hop": "; ".join(f"hop {h}: {words.path_fate(f)}" for h, _, f in p.hops), "id": p.pid}
            for p in through]
    wrapped_table(frame(rows, ["path", "fate", "at each hop", "id"]), ["path"])
    pick = st.selectbox("show where a path was listed", range(len(through)), key=f"np_where_{id(trace)}",
                        format_func=lambda i: f"{through[i].pid}: {clip(through[i].cand.text, 80)}")
    if st.button("show where", key=f"np_where_go_{id(trace)}", icon=":material/search:",
                 help="Opens NeuroPath's details at the hop that listed this path, its row highlighted."):
        hop, pid, _ = through[pick].hops[0]
        focus.open_view(results_key, trace.method, "Retrieval", hop_step(hop), pid)
        st.rerun()


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    d = trace.detail(NeuroPathDetail)
    if d is None:
        st.info("This trace has no NeuroPath detail.")
        return
    text(", ".join(d.query_entities) or "(none)", prefix="**Query entities:** ")
    fitted_table(frame([{"query entity": s.query_entity, "seed": s.name, "similarity": round(s.similarity, 3),
                         "origin": s.origin, "accepted": s.accepted,
                         "coreference members": ", ".join(f"{m.name} ({m.similarity:.2f})" for m in s.coref)}
                        for s in d.seeds], ["query entity", "seed", "similarity", "origin", "accepted",
                                            "coreference members"]), wrap=["coreference members"])
    if d.fallback_dense:
        st.info("No query entities: NeuroPath fell back to dense retrieval.")
    steps = [hop_step(h.hop) for h in d.hops] + ["All hops", COMPLETION]
    step_key = f"{key}_np_step"  # the gold line's button may have chosen the step already
    pick = st.segmented_control("step", steps, default=None if step_key in st.session_state else steps[0],
                                key=step_key) or steps[0]
    if pick.startswith("Hop "):
        h = next(x for x in d.hops if x.hop == int(pick.split()[1]))
        st.caption(escape_markdown(f"{h.new_count} new path(s), {h.pruned_count} pruned"
                                   + (", listing capped" if h.capped else "")
                                   + ("; the model asked for another hop" if h.continue_ else
                                      "; the model said it had enough")),
                   help=words.GOES_ON.help)
        text(h.goal, prefix="**Goal:** ")
        text(h.reasoning_chain or "(none)", prefix="**Reasoning chain:** ")
        text(h.expansion_requirement or "(none)", prefix="**Expansion requirement:** ")
        st.caption(escape_markdown(_kept_line(h)), help=words.PATH_NUMBERS.help)
        if h.tracker_note:
            text(h.tracker_note, prefix="**Tracker:** ")
        if h.failed:
            st.warning(escape_markdown(f"Tracking failed at this hop: {h.failure}"))

        paths = tables.candidates_table(h)
        helps = {"fate": words.PATH_FATE_HELP, words.PATH_PROBABILITY.label: words.PATH_PROBABILITY.help}
        helps = {c: x for c, x in helps.items() if c in paths.columns}
        row = focus.focused(key)
        if row in set(paths["id"]):  # "show where" chose a path of this hop: its row first, in view
            with st.container(key=focus.anchor_key(key), border=True):
                st.caption("The path 'show where' points at, highlighted in this hop's table below:")
                wrapped_table(focus.highlighted(paths[paths["id"] == row], "id", row), ["path"], help=helps,
                              lines=fitted_lines(paths, ["path"]))
            focus.scroll_once(key)
        route_chart(trace, gold_ids, key, upto=h.hop)
        wrapped_table(focus.highlighted(paths, "id", row) if row in set(paths["id"]) else paths, ["path"],
                      help=helps, lines=fitted_lines(paths, ["path"]))
    elif pick == "All hops":
        route_chart(trace, gold_ids, key)
    else:
        st.caption(escape_markdown(f"Tracking stopped: {d.stop_reason or 'n/a'}. First the "
                                   f"{words.KEPT_PATH_PASSAGES.label} (chunks {numbers(d.dp_chunk_ids)}), then the "
                                   f"{words.COMPLETION_PASSAGES.label}, searching with the text below."),
                   help=f"{words.KEPT_PATH_PASSAGES.label}: {words.KEPT_PATH_PASSAGES.help}. "
                        f"{words.COMPLETION_PASSAGES.label}: {words.COMPLETION_PASSAGES.help}.")
        text(d.de_query or "(no completion query)")
        ranked_passages(tables.ranked_table(trace, gold_ids, limit=20))


def route_chart(trace: Trace, gold_ids: Iterable[int] | None, key: str, upto: int | None = None) -> None:
    """The route as it stood after hop `upto` (all of it: None), in the Retrieval tab (`key`: the
    tab's, "<results key>_<method>"; "show where" opens there)."""
    with graph_view.results(key.removesuffix(f"_{trace.method}")):
        _detail_route(trace, gold_ids, upto).show(trace, DETAIL_HEIGHT)


def _detail_route(trace: Trace, gold_ids: Iterable[int] | None, upto: int | None) -> TypedPicture:
    return _route(trace, gold_ids, f"np_detail_{id(trace)}_{upto}", DETAIL_HEIGHT, ROUTE_WIDTH, upto)


def first_detail_picture(trace: Trace, gold_ids: Iterable[int] | None) -> TypedPicture | None:
    """The route the Retrieval tab shows first (its first hop; all of it when no hop ran), made ahead."""
    d = trace.detail(NeuroPathDetail)
    return None if d is None else _detail_route(trace, gold_ids, d.hops[0].hop if d.hops else None)


def _kept_line(h: NeuroPathHop) -> str:
    """Which paths the hop kept and extended, and who chose them (the model's ids, or likelihood)."""
    invalid = (f", and named {numbers(h.invalid_ids)}, which match no listed path" if h.invalid_ids else "")
    if h.tracker == "likelihood":
        return (f"Kept by the model's probability of 'yes': paths {numbers(h.valid_ids)}, extending "
                f"{numbers(h.expand_ids)}; the generative call itself picked {numbers(h.generated_valid_ids)}"
                f"{invalid}.")
    return f"The model kept paths {numbers(h.valid_ids)}, chose to extend {numbers(h.expand_ids)}{invalid}."


def moment_at(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """A hop's listing opens that hop's table (the row: the path); a place in the list, Ranked passages."""
    if moment.hop is not None and moment.path_id is not None:
        return "Retrieval", hop_step(moment.hop)
    return "Ranked passages", None


def lost_at(record: FateRecord, trace: Trace) -> tuple[str | None, str | int | None]:
    """The Retrieval tab's step that shows what happened to a gold chunk: completion, or its hop."""
    if record.kind is NeuroPathFate.BY_COMPLETION:
        return "Retrieval", COMPLETION
    if record.kind in (NeuroPathFate.SHOWN_NOT_VALID, NeuroPathFate.PRUNED, NeuroPathFate.NOT_FOLLOWED,
                       NeuroPathFate.NO_PATH) \
            and record.hop is not None:
        return "Retrieval", hop_step(record.hop)
    return "Ranked passages", None


def since(before: Trace, now: Trace, gold: list[int]) -> None:
    """The route now, its paths new since an edit marked hop by hop (after an ask-again), with clicks
    reaching the same panel as the route above."""
    from memrag.app import graph_view
    from memrag.methods.neuropath import route_diff
    from memrag.viz import look as looks

    if not route_diff.comparable(before, now):
        return
    st.markdown("**NeuroPath's route now**, what is new since the edit in magenta (per hop: the note counts "
                "what appeared and what is gone)")
    chart = graph_view.Chart(looks.current(), 560, ROUTE_WIDTH, graph_view.results_key())
    graph_view.picture_chart(now, lambda opened: route_diff.since(before, now, expanded=opened,
                                                                   gold_chunk_ids=gold),
                             f"np_since_{id(now)}", chart, route_part)


VIEWS = MethodViews(detail, overview, lost_at=lost_at, step_key="np", moment_at=moment_at,
                    overview_picture=overview_picture,
                    first_detail_picture=first_detail_picture, since=since)
