"""Rendering helpers the pages share: background-job progress, memory tabs, trace views.

Pages stay thin: they read state, start work through `memrag.app.jobs`, and call these.
Every piece of document or model text goes through `text()` (escaped markdown),
`st.text`, `st.code` or a dataframe — never raw into `st.markdown`, a label or HTML.
Graphs come from `memrag.viz` and are shown with `st.iframe`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import pandas as pd
import streamlit as st

from memrag.app import jobs
from memrag.app.state import METHOD_LABELS, AppState
from memrag.explain.deviations import deviations_for
from memrag.methods import registry
from memrag.eval.gold import gold_fate
from memrag.eval.metrics import exact_match, f1_score, recall_at_k
from memrag.tracefile import MAX_TRACE_BYTES, read_traces, traces_json  # noqa: F401  (also under the views' names)
from memrag.trace import GraphEdge, GraphNode, Trace, token_sum
from memrag.viz import charts, graph_html, memory_graphs, tables, trace_graphs
from memrag.viz.safe_text import clip, escape_markdown

LEGEND_PX = 40  # the legend line above a graph
GROWING_GRAPH_NODES = 150


# ------------------------------------------------------------------ text and graphs
def text(body: str, *, limit: int | None = None, prefix: str = "") -> None:
    """Untrusted text as markdown that shows it literally; `prefix` is our own markdown."""
    body = clip(body, limit, keep_lines=True) if limit else body
    st.markdown(prefix + escape_markdown(body))


def graph(result: tuple[str, str], height: int) -> None:
    """A `memrag.viz` (html, note) pair: the graph in an iframe and its note as a caption."""
    html, note = result
    st.iframe(html, height=height + LEGEND_PX)
    if note:
        st.caption(escape_markdown(note))


def seconds_text(s: float | None) -> str:
    if s is None:
        return "unknown"
    s = max(0.0, float(s))
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _df(rows: list[dict], columns: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ background jobs
def job_panel(job_id: str) -> None:
    """Progress of a running job, polled every second or so; ends with a full rerun."""
    _job_progress(job_id)
    job = jobs.get_job(job_id)
    if job is not None and job.kind == "build":
        _build_live_graph(job_id)


@st.fragment(run_every=1.0)
def _job_progress(job_id: str) -> None:
    job = jobs.get_job(job_id)
    if job is None:
        st.warning("That job is no longer known to this app (it was restarted).")
        return
    snap = job.snapshot()
    if job.finished:
        st.rerun()  # the page draws the result
    fraction = snap["fraction"]
    done_text = f"{snap['done']} of {snap['total']}" if snap["total"] else "working"
    st.progress(fraction or 0.0, text=escape_markdown(f"{snap['label']}: {done_text}"))
    eta = snap["eta_s"]
    left = "" if eta is None else (f", about {seconds_text(eta)} left" if eta >= 1
                                   else ", taking longer than estimated")
    st.caption(escape_markdown(f"{seconds_text(snap['elapsed_s'])} so far" + left
                               + (f" — {snap['note']}" if snap["note"] else "")))
    if snap["meta"].get("backend") == "embedded":
        from memrag.llm.embedded import engine_status

        es = engine_status()
        if es["waiting"]:
            st.caption(f"{es['waiting']} call(s) waiting for the embedded model (one call at a time).")
    if job.kind == "build":
        current = job.state.get("current")
        if current:
            with st.container(border=True):
                st.caption(f"Reading chunk {current['i'] + 1}")
                st.text(clip(current["title"], 200))
                st.text(clip(current["text"], 300))
        failures_view(job.state.get("failures", []))
    if snap["cancel_requested"]:
        st.info("Cancelling after the current step…")
    elif st.button("Cancel", key=f"cancel_{job_id}"):
        job.cancel()


def failures_view(failures: list[dict[str, Any]]) -> None:
    if not failures:
        return
    st.warning(f"{len(failures)} chunk(s) could not be extracted; the build goes on without them.")
    for f in failures[-5:]:
        with st.expander(f"chunk {int(f['chunk_id'])}: the model's raw reply"):
            st.text(clip(f.get("error", ""), 500))
            st.code(f.get("raw_reply", "") or "(empty reply)", language=None, wrap_lines=True)


@st.fragment(run_every=5.0)
def _build_live_graph(job_id: str) -> None:
    job = jobs.get_job(job_id)
    if job is None or job.finished:
        return
    snapshot: dict[str, Any] = {}
    job.update_state(lambda s: snapshot.update(nodes=dict(s.get("nodes", {})), edges=list(s.get("edges", [])),
                                               coref_links=list(s.get("coref_links", []))))
    if not snapshot.get("nodes"):
        st.caption("The knowledge graph appears here as chunks are read.")
        return
    # redraw only when the build added something (a page is ~700 KB of HTML)
    signature = (len(snapshot["nodes"]), len(snapshot["edges"]), len(snapshot["coref_links"]))
    memos = AppState().graph_memo
    if job_id not in memos or memos[job_id][0] != signature:
        memos.clear()  # one build at a time is watched per session
        memos[job_id] = (signature, growing_graph(snapshot))
    graph(memos[job_id][1], 420)


def growing_graph(state: dict[str, Any], max_nodes: int = GROWING_GRAPH_NODES) -> tuple[str, str]:
    """The graph a build has made so far: entities by type, triples, coreference links (dashed)."""
    nodes, edges, links = state["nodes"], state["edges"], state.get("coref_links", [])
    degree: Counter = Counter()
    for e in edges:
        degree[e["source"]] += 1
        degree[e["target"]] += 1
    keys = sorted(nodes, key=lambda k: -degree[k])[:max_nodes]  # stable: ties keep arrival order
    keep = set(keys)
    gnodes = [GraphNode(f"e:{k}", nodes[k]["name"], "entity", group=nodes[k]["type"] or "other",
                        tooltip=f"{nodes[k]['name']} ({nodes[k]['type']})") for k in keys]
    gedges = [GraphEdge(f"t:{i}", f"e:{e['source']}", f"e:{e['target']}", "triple", e["relation"])
              for i, e in enumerate(edges) if e["source"] in keep and e["target"] in keep]
    gedges += [GraphEdge(f"c:{i}", f"e:{c['source']}", f"e:{c['target']}", "coref", f"{c['similarity']:.2f}")
               for i, c in enumerate(links) if c["source"] in keep and c["target"] in keep]
    note = (f"So far: {len(nodes)} entities, {len(edges)} triples, {len(links)} coreference links"
            + (f" (showing the {len(keys)} most connected entities)" if len(keys) < len(nodes) else "") + ".")
    return graph_html.render(gnodes, gedges, height=420), note


# ------------------------------------------------------------------ memories
def memory_summary(memory: Any) -> dict[str, Any]:
    stats = memory.stats()
    llm = memory.llm or {}
    return {**stats, "built with": f"{llm.get('backend', '?')} / {llm.get('model', '?')}" if llm else "unknown"}


def memory_tabs(memory: Any, key: str = "mem") -> None:
    """The five views of a memory; only the open tab is computed."""
    labels = ["Knowledge graph", "Coreference candidates", "Engrams", "Documents and chunks", "Indexing cost"]
    tabs = st.tabs(labels, key=f"{key}_tabs", on_change="rerun")
    views: list[Callable[[Any, str], None]] = [_kg_tab, _coref_tab, _engrams_tab, _docs_tab, _cost_tab]
    for tab, view in zip(tabs, views):
        with tab:
            if tab.open:
                view(memory, key)


def _kg_tab(memory: Any, key: str) -> None:
    c1, c2 = st.columns([1, 2])
    max_nodes = c1.slider("entities shown at most", 20, graph_html.MAX_NODES, 100, step=20, key=f"{key}_kg_max")
    focus = c2.text_input("centre on an entity (name)", key=f"{key}_kg_focus",
                          help="Shows that entity's neighbourhood instead of the most connected entities.")
    try:
        graph(memory_graphs.knowledge_graph(memory, max_nodes, focus.strip() or None), 620)
    except ValueError as e:
        text(str(e))
        graph(memory_graphs.knowledge_graph(memory, max_nodes), 620)


def _coref_tab(memory: Any, key: str) -> None:
    top_default = int(memory.params.get("coref_top", 5))
    c1, c2 = st.columns(2)
    top = c1.number_input("candidates per entity (top)", 1, 20, top_default, key=f"{key}_coref_top")
    threshold = c2.select_slider("cosine threshold", [0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
                                 value=0.8, key=f"{key}_coref_th",
                                 help="Move it to see which links 0.7, 0.8 or 0.9 would make.")
    st.dataframe(memory_graphs.coref_threshold_preview(memory, (0.7, 0.8, 0.9), top=int(top)), hide_index=True)
    df = memory_graphs.coref_table(memory, int(top), float(threshold))
    if df.empty:
        st.caption(f"No entity has a candidate at cosine ≥ {threshold}.")
        return
    graph(memory_graphs.coref_graph(memory, int(top), float(threshold)), 560)
    who = st.text_input("show the candidate set of (name contains)", key=f"{key}_coref_who")
    if who.strip():
        df = df[df["entity"].str.contains(who.strip(), case=False, regex=False)]
    st.dataframe(df, hide_index=True)


def _engrams_tab(memory: Any, key: str) -> None:
    df = tables.engrams_table(memory)
    q = st.text_input("filter by name", key=f"{key}_engram_filter")
    if q.strip():
        df = df[df["name"].str.contains(q.strip(), case=False, regex=False)]
    st.caption(f"{len(df)} engram(s): one row per mention of an entity in a chunk.")
    st.dataframe(df, hide_index=True)


def _docs_tab(memory: Any, key: str) -> None:
    docs = _df([{"document": d.doc_id, "title": d.title, "source": d.source, "kind": d.kind,
                 "words": len(d.text.split())} for d in memory.documents],
               ["document", "title", "source", "kind", "words"])
    st.dataframe(docs, hide_index=True)
    st.dataframe(tables.chunks_table(memory), hide_index=True)
    if not memory.chunks:
        return
    cid = st.columns(4)[0].number_input("read chunk", 0, len(memory.chunks) - 1, 0, key=f"{key}_chunk")
    c = memory.chunks[int(cid)]
    st.text(c.title)
    st.text(c.text)
    log = memory.extraction_log.get(c.chunk_id)
    if log is not None and log.status == "failed":
        st.warning("Extraction failed for this chunk.")
        st.text(log.error)
        st.code(log.raw_reply or "(empty reply)", language=None, wrap_lines=True)


def indexing_cost(memory: Any) -> pd.DataFrame:
    """Indexing calls by stage and origin (fresh work, recorded/cached, resumed from the journal)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in memory.ledger_rows:
        origin = "recorded" if r.get("cached") else "fresh"
        g = groups.setdefault((r.get("stage", ""), origin), {
            "stage": r.get("stage", ""), "origin": origin, "calls": 0, "prompt tokens": 0,
            "completion tokens": 0, "seconds": 0.0})
        g["calls"] += 1
        for col, field_name in (("prompt tokens", "prompt_tokens"), ("completion tokens", "completion_tokens")):
            v = r.get(field_name)
            g[col] = None if g[col] is None or v is None else g[col] + v
        g["seconds"] = round(g["seconds"] + (r.get("seconds") or 0.0), 2)
    df = _df(list(groups.values()), ["stage", "origin", "calls", "prompt tokens", "completion tokens", "seconds"])
    for col in ("prompt tokens", "completion tokens"):
        df[col] = df[col].astype("Int64")
    return df


def _cost_tab(memory: Any, key: str) -> None:
    s = memory_summary(memory)
    cols = st.columns(4)
    for col, (label, value) in zip(cols, [("chunks", s["chunks"]), ("entities", s["entities"]),
                                          ("triples", s["triples"]), ("failed chunks", s["failures"])]):
        col.metric(label, value)
    st.caption(escape_markdown(f"Built with {s['built with']}. 'recorded' rows were answered from the response "
                               "cache or the build journal: their original tokens and seconds are shown, "
                               "not spent again."))
    st.dataframe(indexing_cost(memory), hide_index=True)


# ------------------------------------------------------------------ gold
@dataclass
class Gold:
    """A question's gold: reference answers and the chunks of its gold documents."""
    answers: list[str]
    gold_docs: list[str]
    chunk_ids: list[int] = field(default_factory=list)


def gold_of(record: dict[str, Any] | None, memory: Any) -> Gold | None:
    if not record or not record.get("gold_docs") or "answer" not in record:
        return None
    docs = [str(d) for d in record["gold_docs"]]
    ids = [c.chunk_id for c in memory.chunks if c.doc_id in set(docs)] if memory is not None else []
    return Gold([record["answer"], *record.get("answer_aliases", [])], docs, ids)


def _unit_of(trace: Trace, memory: Any) -> Callable[[int], str]:
    """Recall unit of a chunk: its document id (the sample corpus counts documents)."""
    same = memory is not None and memory.fingerprint() == trace.memory_fingerprint

    def unit(cid: int) -> str:
        c = trace.chunk(cid)
        if c is not None:
            return c.doc_id
        if same and 0 <= cid < len(memory.chunks):
            return memory.chunks[cid].doc_id
        return f"chunk:{cid}"
    return unit


def gold_scores(trace: Trace, gold: Gold, memory: Any) -> dict[str, float | None]:
    unit = _unit_of(trace, memory)
    ranked = [unit(r.chunk_id) for r in trace.ranked]
    scores: dict[str, float | None] = {"R@2": recall_at_k(ranked, gold.gold_docs, 2),
                                       "R@5": recall_at_k(ranked, gold.gold_docs, 5), "EM": None, "F1": None}
    if trace.answer is not None:  # no answer step (e.g. compare mode's unrecorded answer): no EM/F1
        scores["EM"] = exact_match(trace.answer.answer, gold.answers)
        scores["F1"] = round(f1_score(trace.answer.answer, gold.answers), 3)
    return scores


def gold_fates(trace: Trace, gold: Gold, memory: Any) -> pd.DataFrame:
    """Where each gold passage was found or lost."""
    rows = gold_fate(trace, gold.chunk_ids, k=5, unit_of=_unit_of(trace, memory))
    titles = {c.chunk_id: c.title for c in memory.chunks} if memory is not None else {}
    return _df([{"chunk": r["chunk_id"], "title": titles.get(r["chunk_id"], ""), "fate": r["fate"],
                 "rank": r.get("rank"), "detail": r["detail"]} for r in rows],
               ["chunk", "title", "fate", "rank", "detail"])


# ------------------------------------------------------------------ one answer
def recorded_totals(traces: Sequence[Trace]) -> tuple[float, int | None]:
    """Original seconds and tokens of the recorded calls (a call shared by methods counts once)."""
    seen: set[str] = set()
    seconds, tokens = 0.0, 0
    for t in traces:
        for c in t.llm_calls:
            ident = tables.call_identity(c)
            if not c.cached or ident in seen:
                continue
            seen.add(ident)
            seconds += c.seconds
            tokens = token_sum((tokens, c.prompt_tokens, c.completion_tokens))
    return seconds, tokens


def recorded_badge(model: str, traces: Sequence[Trace]) -> None:
    seconds, tokens = recorded_totals(traces)
    st.badge(escape_markdown(f"recorded with {model}"), icon=":material/history:", color="violet")
    st.caption(escape_markdown(f"original {seconds:.1f} s, {tokens if tokens is not None else 'unknown'} tokens "
                               "(replayed from the memory's recordings; retrieval recomputed now)"))


def answer_card(trace: Trace, gold: Gold | None, memory: Any, title: str | None = None) -> None:
    """The method's answer, its cost, its gold scores and its cited passages; `title` replaces the
    method's name as the heading (compare mode names its two parameter sets)."""
    st.subheader(escape_markdown(title or METHOD_LABELS.get(trace.method, trace.method)))
    a = trace.answer
    if a is None:
        st.caption("No answer step was run.")
    elif a.error:
        st.error(escape_markdown(a.error))
        st.code(a.raw_answer or "(empty reply)", language=None, wrap_lines=True)
    else:
        text(a.answer or "(empty answer)", prefix="**Answer:** ")
    tok = tables.totals_across([trace]).iloc[0]
    total = tok["total tokens"]
    st.caption(f"{'unknown' if pd.isna(total) else int(total)} tokens · {len(trace.llm_calls)} LLM call(s) · "
               f"{trace.seconds:.1f} s here (recorded calls: {int(tok['recorded calls'])})")
    if gold is not None:
        s = gold_scores(trace, gold, memory)
        cols = st.columns(4)
        for col, (label, v) in zip(cols, s.items()):
            col.metric(label, f"{v:.2f}" if v is not None else "–")
    if a is not None:
        with st.expander(f"Passages given to the answer ({len(a.context_chunk_ids)}, "
                         f"{len(a.cited_chunk_ids)} cited)"):
            gold_ids = set(gold.chunk_ids) if gold else set()
            for pos, cid in enumerate(a.context_chunk_ids, start=1):
                c = trace.chunk(cid)
                marks = (" · cited" if cid in a.cited_chunk_ids else "") + (" · ★ gold" if cid in gold_ids else "")
                st.markdown(f"**[{pos}]** chunk {cid}{marks} — " + escape_markdown(c.title if c else ""))
                if c:
                    st.text(clip(c.text, 600))


# ------------------------------------------------------------------ several answers
def comparison(traces: Sequence[Trace], gold: Gold | None, memory: Any, key: str) -> None:
    """Answers, scores and costs side by side, then tokens per stage as a table and a chart."""
    rows = []
    for t in traces:
        row = {"method": METHOD_LABELS.get(t.method, t.method), "answer": t.answer.answer if t.answer else "",
               "LLM calls": len(t.llm_calls), "seconds here": round(t.seconds, 2)}
        if gold is not None:
            row.update(gold_scores(t, gold, memory))
        rows.append(row)
    st.dataframe(_df(rows), hide_index=True)
    # The chart sits in a tab drawn only when opened: plotly's first draw holds the browser's main
    # thread ~1.5 s, which delayed the method graphs next to the answers (bench/app_bench.py).
    labels = ["Tokens by method", "As a chart"]
    for label, tab in zip(labels, st.tabs(labels, key=f"{key}_cost_tabs", on_change="rerun")):
        with tab:
            if not tab.open:
                continue
            if label == labels[0]:
                st.dataframe(tables.totals_across(traces), hide_index=True, key=f"{key}_totals")
            else:
                st.plotly_chart(charts.tokens_chart(traces), key=f"{key}_chart")


def overview_graph(trace: Trace, gold: Gold | None, height: int = 420) -> None:
    """One picture per method for the side-by-side view: NeuroPath's paths, EcphoryRAG's
    activation; dense gets its ranked head as a table (its graph, a star of question → passages,
    says no more, and every graph frame costs the browser ~0.3 s while the others draw)."""
    ids = gold.chunk_ids if gold else None
    if trace.method == "dense":
        st.caption("Dense: the passages nearest the question (the graph is under details).")
        head = tables.ranked_table(trace, ids, limit=10)
        # narrow column: the rank as the index, and only what compares with the graphs beside it
        st.dataframe(head.set_index("position")[["title", "score", "gold"]], height=height)
        return
    drawable = ((trace.method == "neuropath" and trace.neuropath is not None and trace.neuropath.hops)
                or (trace.method == "ecphory" and trace.ecphory is not None))
    if drawable:
        graph(registry.get(trace.method).renderer(trace, gold_chunk_ids=ids, height=height), height)
    else:
        if trace.method == "neuropath" and trace.neuropath is not None:
            # no hop ran: say why the picture is a dense ranking rather than paths
            d = trace.neuropath
            st.info("NeuroPath fell back to dense retrieval: no query entities." if d.fallback_dense else
                    f"NeuroPath tracked no path ({d.stop_reason or 'no hop ran'}): the ranking shown is "
                    "post-retrieval completion alone.")
        graph(trace_graphs.dense_graph(trace, gold_chunk_ids=ids, height=height), height)


# ------------------------------------------------------------------ one trace in detail
def trace_details(trace: Trace, gold: Gold | None, memory: Any, key: str) -> None:
    """Everything about one method's run, in lazily computed tabs."""
    labels = ["Retrieval", "Ranked passages", "Tokens", "LLM calls", "Gold", "Deviations from the paper"]
    if gold is None:
        labels.remove("Gold")
    tabs = dict(zip(labels, st.tabs(labels, key=f"{key}_tabs", on_change="rerun")))
    ids = gold.chunk_ids if gold else None
    for label, tab in tabs.items():
        with tab:
            if not tab.open:
                continue
            if label == "Retrieval":
                {"neuropath": neuropath_view, "ecphory": ecphory_view}.get(trace.method, dense_view)(trace, ids, key)
            elif label == "Ranked passages":
                ranked_view(trace, ids, key)
            elif label == "Tokens":
                st.dataframe(tables.tokens_by_stage(trace), hide_index=True)
                st.plotly_chart(charts.tokens_chart([trace], title=f"Tokens by stage: {trace.method}"),
                                key=f"{key}_tokchart")
            elif label == "LLM calls":
                llm_inspector(trace, key)
            elif label == "Gold":
                st.caption("Where each gold passage was found or lost (k = 5).")
                st.dataframe(gold_fates(trace, gold, memory), hide_index=True)
            else:
                st.dataframe(_df(deviations_for(trace.method)), hide_index=True)
    if trace.flags:
        with st.expander(f"{len(trace.flags)} note(s) from the method"):
            for f in trace.flags:
                text(f)


def ranked_view(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    st.dataframe(tables.ranked_table(trace, gold_ids), hide_index=True)
    cited = [c.chunk_id for c in trace.chunks]
    if cited:
        cid = st.selectbox("read a passage", cited, key=f"{key}_read")
        c = trace.chunk(cid)
        st.text(c.title)
        st.text(c.text)


def dense_view(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    graph(trace_graphs.dense_graph(trace, gold_chunk_ids=gold_ids), 420)


def neuropath_view(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    d = trace.neuropath
    if d is None:
        st.info("This trace has no NeuroPath detail.")
        return
    text(", ".join(d.query_entities) or "(none)", prefix="**Query entities:** ")
    st.dataframe(_df([{"query entity": s.query_entity, "seed": s.name, "similarity": round(s.similarity, 3),
                       "origin": s.origin, "accepted": s.accepted,
                       "coreference members": ", ".join(f"{m.name} ({m.similarity:.2f})" for m in s.coref)}
                      for s in d.seeds], ["query entity", "seed", "similarity", "origin", "accepted",
                                          "coreference members"]), hide_index=True)
    if d.fallback_dense:
        st.info("No query entities: NeuroPath fell back to dense retrieval.")
    steps = [f"Hop {h.hop}" for h in d.hops] + ["All hops", "Completion"]
    pick = st.segmented_control("step", steps, default=steps[0], key=f"{key}_np_step") or steps[0]
    if pick.startswith("Hop "):
        h = next(x for x in d.hops if x.hop == int(pick.split()[1]))
        st.caption(escape_markdown(f"{h.new_count} new path(s), {h.pruned_count} pruned"
                                   + (", listing capped" if h.capped else "") + f"; continue = {h.continue_}"))
        text(h.goal, prefix="**Goal:** ")
        text(h.reasoning_chain or "(none)", prefix="**Reasoning chain:** ")
        text(h.expansion_requirement or "(none)", prefix="**Expansion requirement:** ")
        st.caption(escape_markdown(f"valid ids {h.valid_ids} · expand ids {h.expand_ids} · "
                                   f"ignored ids {h.invalid_ids}"))
        if h.failed:
            st.warning(escape_markdown(f"Tracking failed at this hop: {h.failure}"))
        graph(trace_graphs.neuropath_hop_graph(trace, h.hop, gold_chunk_ids=gold_ids), 560)
        st.dataframe(tables.candidates_table(h), hide_index=True)
    elif pick == "All hops":
        graph(trace_graphs.neuropath_overview(trace, gold_chunk_ids=gold_ids), 600)
    else:
        st.caption(escape_markdown(f"Stop: {d.stop_reason or 'n/a'}. D_p = chunks of the last valid paths "
                                   f"{d.dp_chunk_ids}; D_e = dense ranking for the text below."))
        text(d.de_query or "(no completion query)")
        st.dataframe(tables.ranked_table(trace, gold_ids, limit=20), hide_index=True)


def ecphory_view(trace: Trace, gold_ids: Iterable[int] | None, key: str) -> None:
    d = trace.ecphory
    if d is None:
        st.info("This trace has no EcphoryRAG detail.")
        return
    text(", ".join(d.cues) or "(none)", prefix="**Cues:** ")
    names = {a.engram_id: a.name for a in [*d.initial, *d.final, *(a for r in d.rounds for a in r.new),
                                           *(a for r in d.rounds for a in r.centroid_neighbours)]}
    if d.cue_hits:
        st.dataframe(_df([{"cue": cue, "engrams it activated": ", ".join(names.get(e, str(e)) for e in hits)}
                          for cue, hits in d.cue_hits.items()], ["cue", "engrams it activated"]), hide_index=True)
    steps = trace_graphs.ecphory_steps(trace)
    step = st.select_slider("replay", options=list(range(len(steps))), value=len(steps) - 1,
                            format_func=lambda i: steps[i], key=f"{key}_ec_step")
    graph(trace_graphs.ecphory_activation_graph(trace, step, gold_chunk_ids=gold_ids), 600)
    st.dataframe(_df([{"round": r.round, "seeds": ", ".join(f"{names.get(s, s)} ({w:.2f})"
                                                            for s, w in zip(r.seed_ids, r.weights)),
                       **{f"new by {o}": r.new_counts.get(o, 0) for o in ("semantic", "graph")}, "note": r.note}
                      for r in d.rounds], ["round", "seeds", "new by semantic", "new by graph", "note"]),
                 hide_index=True)
    if d.rounds:
        rn = st.selectbox("centroid neighbourhood of round", [r.round for r in d.rounds], key=f"{key}_ec_round")
        r = next(x for x in d.rounds if x.round == rn)
        scores = r.centroid_scores + [None] * (len(r.centroid_neighbours) - len(r.centroid_scores))
        st.dataframe(_df([{"engram": a.name, "type": a.type, "cosine to centroid": s,
                           "similarity to question": round(a.similarity, 3), "first activated": a.round,
                           "origin": a.origin} for a, s in zip(r.centroid_neighbours, scores)]), hide_index=True)
    st.caption("Final ranking: the re-ranked engrams given to the answer step (one per entity).")
    st.dataframe(_df([{"rank": i + 1, "engram": a.name, "type": a.type, "similarity": round(a.similarity, 3),
                       "round": a.round, "origin": a.origin, "via": a.via, "chunk": a.chunk_id,
                       "description": a.description} for i, a in enumerate(d.final)]), hide_index=True)


def llm_inspector(trace: Trace, key: str) -> None:
    """Every LLM call of the trace: a table, then one call in full."""
    st.dataframe(tables.llm_calls_table(trace), hide_index=True)
    if not trace.llm_calls:
        return
    i = st.selectbox("inspect call", list(range(len(trace.llm_calls))),
                     format_func=lambda n: f"#{n} {trace.llm_calls[n].stage}", key=f"{key}_call")
    c = trace.llm_calls[i]
    st.caption(escape_markdown(
        f"{c.stage} · {tables.origin(c)} · ok={c.ok} · retries {c.retries} · prompt {c.prompt_tokens} "
        f"(cached prefix {c.prompt_tokens_cached}) + completion {c.completion_tokens} tokens · {c.seconds:.2f} s · "
        f"{c.backend}/{c.model}" + (" · shared by methods" if c.shared else "")))
    for m in c.messages:
        st.caption(escape_markdown(m.get("role", "?")))
        st.code(m.get("content", ""), language=None, wrap_lines=True)
    st.caption("raw reply")
    st.code(c.raw_reply or "(empty)", language=None, wrap_lines=True)
    for err in c.parse_errors:
        st.error(escape_markdown(err))


# ------------------------------------------------------------------ an ask's results
def ask_results(result: dict[str, Any], memory: Any, key: str = "res") -> None:
    """A finished ask (or traces opened from a file): answers side by side or one at a time,
    costs, and one method in detail; a download of the traces as JSON."""
    traces: list[Trace] = result["traces"]
    gold = gold_of(result.get("record"), memory)
    if gold is not None and memory is not None and any(t.memory_fingerprint != memory.fingerprint() for t in traces):
        gold.chunk_ids = []  # chunk ids of another memory: score by document only
        st.caption("These traces come from another memory: gold passages are matched by document only.")
    text(result["question"], prefix="**Question:** ")
    if gold is not None:
        text(" / ".join(gold.answers), prefix="**Gold answer:** ")
    if result.get("mode") == "recorded":
        recorded_badge(result.get("model", "?"), traces)
    methods = [t.method for t in traces]
    side = len(traces) > 1 and st.segmented_control(
        "view", ["Side by side", "One at a time"], default="Side by side", key=f"{key}_view") != "One at a time"
    if side:
        for col, t in zip(st.columns(len(traces)), traces):
            with col:
                answer_card(t, gold, memory)
                overview_graph(t, gold)
        comparison(traces, gold, memory, key)
    pick = st.segmented_control("details of", methods, default=methods[0], key=f"{key}_pick",
                                format_func=lambda m: METHOD_LABELS.get(m, m)) or methods[0]
    trace = next(t for t in traces if t.method == pick)
    if not side:
        answer_card(trace, gold, memory)
    trace_details(trace, gold, memory, key=f"{key}_{pick}")
    meta = {k: result.get(k) for k in ("question", "mode", "model")}
    meta["qid"] = (result.get("record") or {}).get("id")
    # a callable: the ~200 KB of JSON is made when clicked, not sent with every rerun of the page
    st.download_button("Download these traces (JSON)", lambda: traces_json(traces, meta), file_name="memrag-traces.json",
                       mime="application/json", key=f"{key}_download")
