"""HippoRAG 2's views on the Ask page: its overview beside the other methods, and its Retrieval tab
(retrieved facts and the recognition verdicts, seed weights, PageRank mass, the picture)."""

from __future__ import annotations

from typing import Iterable

import streamlit as st

from memrag.app import focus
from memrag.app.method_views import MethodViews
from memrag.app.method_views.common import Picture
from memrag.app.table_fit import fitted_table
from memrag.app.view_cache import drawn
from memrag.app.widgets import graph
from memrag.methods.fate_kit import Moment
from memrag.methods.hipporag2.fates import fact_row
from memrag.trace import Trace
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.viz import tables, trace_graphs
from memrag.plain_text import escape_markdown


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


def overview_picture(trace: Trace, gold_ids: Iterable[int] | None, height: int) -> Picture:
    """The side-by-side picture: the PageRank subgraph, or the dense head after a fallback."""
    d = trace.detail(HippoRAG2Detail)
    renderer = trace_graphs.hipporag2_overview if d is not None and not d.fallback_dense else trace_graphs.dense_graph
    return Picture(renderer, "hipporag2-overview", gold_ids, height)


def overview(trace: Trace, gold_ids: Iterable[int] | None, height: int) -> None:
    d = trace.detail(HippoRAG2Detail)
    if d is not None and d.fallback_dense:
        st.info(escape_markdown(fallback_message(d)))
    overview_picture(trace, gold_ids, height).show(trace, height)


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
    if d.fallback_dense:
        st.warning(escape_markdown(fallback_message(d)))
        graph(drawn(trace_graphs.dense_graph, trace, gold_chunk_ids=gold_ids), 420, name="hipporag2-fallback")
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
    graph(drawn(trace_graphs.hipporag2_overview, trace, gold_chunk_ids=gold_ids), 600, name="hipporag2-pagerank")
    st.markdown("**5. Passages by PageRank mass** — why each is there:")
    head = tables.ranked_table(trace, gold_ids, limit=10)
    fitted_table(head[["position", "chunk", "title", "score", "why", "gold", "in answer context"]],
                 wrap=["title", "why"], key=f"{key}_hr_ranked")


def moment_at(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """A retrieved fact opens the Retrieval tab (its row: the fact); a place in the list, Ranked passages."""
    return ("Retrieval", None) if moment.row is not None else ("Ranked passages", None)


VIEWS = MethodViews(detail, overview, moment_at=moment_at, overview_picture=overview_picture)
