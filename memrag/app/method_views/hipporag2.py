"""HippoRAG 2's views on the Ask page: its overview beside the other methods, and its Retrieval tab
(retrieved facts and the recognition verdicts, seed weights, PageRank mass, the picture)."""

from __future__ import annotations

import dataclasses
from typing import Iterable

import streamlit as st

from memrag.app import focus
from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import TypedPicture, chart_key, chart_width, current_gold_answers, passage_part
from memrag.app.table_fit import fitted_table
from memrag.app.widgets import frame
from memrag.methods.fate_kit import Moment
from memrag.methods.hipporag2 import mass_picture
from memrag.methods.hipporag2.fates import fact_row
from memrag.methods.hipporag2.picture import mass_text
from memrag.picture import PictureEdge, PictureNode
from memrag.trace import Trace
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.viz import figure, tables
from memrag.viz import look as looks
from memrag.plain_text import escape_markdown

DETAIL_HEIGHT = 600  # px of the Retrieval tab's picture
PICTURE_STEPS = ("seeds", "pagerank", "ranked")  # the retrieval steps its picture has a look for


def fallback_message(d: HippoRAG2Detail) -> str:
    """Said plainly wherever the ranking is dense's instead of the graph search's."""
    return (f"HippoRAG 2 fell back to dense retrieval: {d.fallback_reason}. No graph search ran; the passages "
            "are ranked by their cosine to the question.")


def recognition_summary(d: HippoRAG2Detail) -> str:
    if not d.recognition:
        return (f"Recognition memory is off (the retrieval-only variant): all {len(d.facts)} retrieved facts seed "
                "the graph search, no LLM call.")
    if d.recognition_error:
        return f"The recognition call failed ({d.recognition_error}): no fact could be kept."
    kept = sum(1 for f in d.facts if f.verdict == "kept")
    return f"Recognition memory (one LLM call) kept {kept} of {len(d.facts)} retrieved facts."


def mass_picture_of(trace: Trace, gold_ids: Iterable[int] | None, height: int, width: float,
                    what: str) -> TypedPicture:
    """Where the walk left its mass (memrag.methods.hipporag2.mass_picture), or the dense head after
    a fallback; a click opens the node's panel (`mass_part`)."""
    gold, narrow = tuple(gold_ids or ()), width < figure.DESIGN_WIDTH  # beside three others: no column heads
    answers = current_gold_answers()
    return TypedPicture(lambda opened: mass_picture.picture(trace, gold_chunk_ids=gold, gold_answers=answers,
                                                            narrow=narrow),
                        chart_key(trace, what), height, width, mass_part)


def overview_picture(trace: Trace, gold_ids: Iterable[int] | None, height: int) -> TypedPicture:
    """The picture beside the other methods, or in the focus layout (large or small)."""
    return mass_picture_of(trace, gold_ids, height, chart_width(looks.current()), "overview")


def overview(trace: Trace, gold_ids: Iterable[int] | None, height: int) -> None:
    d = trace.detail(HippoRAG2Detail)
    if d is not None and d.fallback_dense:
        st.info(escape_markdown(fallback_message(d)))
    overview_picture(trace, gold_ids, height).show(trace, height)


def first_detail_picture(trace: Trace, gold_ids: Iterable[int] | None) -> TypedPicture | None:
    """The Retrieval tab's picture (made ahead by the Ask page's prefetch)."""
    if trace.detail(HippoRAG2Detail) is None:
        return None
    return mass_picture_of(trace, gold_ids, DETAIL_HEIGHT, figure.DESIGN_WIDTH, "detail")


def mass_part(trace: Trace, target: PictureNode | PictureEdge, results_key: str) -> None:
    """What HippoRAG 2 did with a clicked node or edge: a passage's rank, score and fate (as every
    ranked list's); a phrase's PageRank mass, its seed weight and the retrieved facts naming it,
    with "show where" opening the Retrieval tab at the first of them; a kept fact's row."""
    d = trace.detail(HippoRAG2Detail)
    if d is None:
        return
    if isinstance(target, PictureNode) and target.kind != "entity":
        passage_part(trace, target, results_key)
        return
    if isinstance(target, PictureNode):
        mass = next((n.score for n in trace.nodes if n.id == target.id), None)
        seed = next((s for s in d.phrase_seeds if s.key == target.ref), None)
        said = [f"PageRank mass {mass_text(mass)}" if mass is not None else "",
                f"seed weight {seed.weight:.3g} (in {seed.passages} passage(s))" if seed is not None else "not a seed"]
        st.markdown(escape_markdown(" · ".join(x for x in said if x)))
        facts = [(n, f) for n, f in enumerate(d.facts, start=1) if target.ref in (f.head_key, f.tail_key)]
    elif target.kind == "triple":  # an edge between two phrases: the retrieved facts joining them
        ends = {target.source.partition(":")[2], target.target.partition(":")[2]}
        facts = [(n, f) for n, f in enumerate(d.facts, start=1) if {f.head_key, f.tail_key} == ends]
    else:
        return
    if not facts:
        return
    st.markdown(f"**{len(facts)} retrieved fact(s)** " + ("name it" if isinstance(target, PictureNode) else "join these"))
    st.dataframe(frame([{"#": n, "fact": f"{f.head} | {f.relation} | {f.tail}", "score": round(f.score, 3),
                         "verdict": f.verdict} for n, f in facts], ["#", "fact", "score", "verdict"]), hide_index=True)
    if st.button("show where", key=f"{results_key}_hr_where_{target.id}", icon=":material/search:",
                 help="Opens HippoRAG 2's Retrieval tab at this fact, its row highlighted."):
        focus.open_view(results_key, trace.method, "Retrieval", None, fact_row(facts[0][0]))
        st.rerun()


def detail(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    """The Retrieval tab: each stage of the method in the order it ran."""
    d = trace.detail(HippoRAG2Detail)
    if d is None:
        st.info("This trace has no HippoRAG 2 detail.")
        return
    st.markdown("**1. Query to fact** — the facts whose triple vectors are nearest the question "
                "(score = cosine min-max normalised over every fact).")
    facts, row = tables.hippo_facts_table(trace), focus.focused(key)
    number = next((n for n in facts["#"] if fact_row(n) == row), None)
    if number is not None:  # "show where" chose a fact (a first miss): its row first, in view
        with st.container(key=focus.anchor_key(key), border=True):
            st.caption("The fact 'show where' points at, highlighted in the list below:")
            st.dataframe(focus.highlighted(facts[facts["#"] == number], "#", number), hide_index=True)
        focus.scroll_once(key)
    st.dataframe(facts if number is None else focus.highlighted(facts, "#", number), hide_index=True,
                 key=f"{key}_hr_facts")
    st.markdown("**2. Recognition memory**")
    st.caption(escape_markdown(recognition_summary(d)))
    picture = first_detail_picture(trace, gold_ids)
    if d.fallback_dense:
        st.warning(escape_markdown(fallback_message(d)))
        picture.show(trace, DETAIL_HEIGHT)
        return
    st.markdown("**3. Seeds** — a phrase of a kept fact: the fact's score ÷ the passages containing the phrase; "
                "every passage: its normalised dense score × passage_node_weight.")
    st.dataframe(tables.hippo_phrase_seeds_table(trace), hide_index=True, key=f"{key}_hr_phrases")
    st.caption(escape_markdown(f"Passage seeds together weigh {d.passage_seed_total:.3g}; the heaviest "
                               f"{len(d.passage_seeds)}:"))
    st.dataframe(tables.hippo_passage_seeds_table(trace), hide_index=True, key=f"{key}_hr_passages")
    st.markdown("**4. Personalised PageRank** — where the walk from the seeds left its mass.")
    st.caption(escape_markdown(f"{d.phrase_mass:.1%} of the mass is on phrase nodes, the rest on passages. Graph: "
                               + ", ".join(f"{v} {k}" for k, v in d.graph.items())
                               + (f" (built for this query in {d.graph_seconds:.2f} s)" if d.graph_built
                                  else " (reused from an earlier query)") + "."))
    st.dataframe(tables.hippo_mass_table(trace), hide_index=True, key=f"{key}_hr_mass")
    st.caption("Left to right: the question, its seeded phrases, what the walk reached, the passages by mass "
               "(size = mass). Click a node for its mass, its facts and its passages.")
    steps = {s.title: s.index for s in trace.steps if s.kind in PICTURE_STEPS}
    pick = st.segmented_control("the picture at", list(steps), default=next(reversed(steps), None),
                                key=f"{key}_hr_step", help="Seeds: where the walk starts; PageRank: what it "
                                "reached, lit; the ranking: the passages the answer read, lit, the phrases faded.")
    dataclasses.replace(picture, step=steps.get(pick) if pick else None).show(trace, DETAIL_HEIGHT)
    st.markdown("**5. Passages by PageRank mass** — why each is there:")
    head = tables.ranked_table(trace, gold_ids, limit=10)
    fitted_table(head[["position", "chunk", "title", "score", "why", "gold", "in answer context"]],
                 wrap=["title", "why"], key=f"{key}_hr_ranked")


def moment_at(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """A retrieved fact opens the Retrieval tab (its row: the fact); a place in the list, Ranked passages."""
    return ("Retrieval", None) if moment.row is not None else ("Ranked passages", None)


VIEWS = MethodViews(detail, overview, moment_at=moment_at, overview_picture=overview_picture,
                    first_detail_picture=first_detail_picture)
