"""A memory's five tabs: knowledge graph, coreference candidates, engrams, documents and chunks,
indexing cost."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from memrag.app.edit_views import panel_actions
from memrag.app.view_cache import drawn
from memrag.app import graph_view
from memrag.app.widgets import frame, picture
from memrag.index.memory import Memory
from memrag.picture import Picture, PictureNode
from memrag.trace import CallCost
from memrag.plain_text import clip, escape_markdown
from memrag.viz import entity_search, memory_explorer, memory_graphs, memory_map, tables


# ------------------------------------------------------------------ memories
def memory_summary(memory: Memory) -> dict[str, Any]:
    stats = memory.stats()
    llm = memory.llm or {}
    return {**stats, "built with": f"{llm.get('backend', '?')} / {llm.get('model', '?')}" if llm else "unknown"}


def memory_tabs(memory: Memory, key: str = "mem", path: str | Path | None = None) -> None:
    """The five views of a memory; only the open tab is computed. With `path` (the memory's folder),
    the knowledge graph's entity panel offers edits of what it shows."""
    labels = ["Knowledge graph", "Coreference candidates", "Engrams", "Documents and chunks", "Indexing cost"]
    tabs = st.tabs(labels, key=f"{key}_tabs", on_change="rerun")
    views: list[Callable[[Memory, str], None]] = [partial(_kg_tab, path=path), _coref_tab, _engrams_tab, _docs_tab,
                                                  _cost_tab]
    for tab, view in zip(tabs, views):
        with tab:
            if tab.open:
                view(memory, key)


def _size_slider(container: Any, key: str) -> int:
    return container.slider("nodes drawn at most", 10, memory_graphs.MAX_NODES, memory_graphs.DEFAULT_NODES, step=10,
                            key=key, help="A few dozen nodes can be read; more draws a denser picture.")


# ------------------------------------------------------------------ the knowledge graph: the whole memory
def _explorer(memory: Memory, types: tuple[str, ...] | None) -> memory_explorer.Explorer:
    return memory_explorer.Explorer.of(memory_map.memory_map(memory), types)


def choose_entity(key: str, entity: str) -> None:
    """Open the knowledge-graph tab of `key` on `entity` (a link from elsewhere: the demo guide)."""
    _choose(key, entity, keep_expanded=False)


def _choose(key: str, entity: str | None, *, keep_expanded: bool = True) -> None:
    st.session_state[f"{key}_kg_chosen"] = entity
    if not keep_expanded or entity is None:
        st.session_state[f"{key}_kg_expanded"] = ()


def _clicked(key: str, explorer: memory_explorer.Explorer, chart: str) -> None:
    """A click on the map or the neighbourhood: the entity under it becomes the chosen one (a
    point's customdata is its place on the map)."""
    event = st.session_state.get(chart)
    points = event.selection.points if event else []
    if points and "customdata" in points[0]:
        i = int(points[0]["customdata"])
        if 0 <= i < len(explorer.map):
            _choose(key, explorer.map.keys[i])


def _typed(key: str, memory: Memory) -> None:
    """Typing a name chooses its best match at once (the list below offers the others)."""
    typed = st.session_state.get(f"{key}_kg_find", "")
    found = entity_search.suggest_entities(memory, typed) if typed.strip() else []
    if found:
        _choose(key, found[0][0], keep_expanded=False)


def _find(memory: Memory, key: str) -> None:
    typed = st.text_input("find an entity", key=f"{key}_kg_find", placeholder="part of a name",
                          on_change=_typed, args=(key, memory),
                          help="Part of a name is enough: 'Penhallow' offers every Penhallow.")
    if not typed.strip():
        return
    found = entity_search.suggest_entities(memory, typed)
    if not found:
        st.caption(escape_markdown(f"No entity matches {typed.strip()!r}."))
        return
    names = dict(found)
    st.selectbox("matches", list(names), format_func=lambda k: names[k], key=f"{key}_kg_pick",
                 on_change=lambda: _choose(key, st.session_state[f"{key}_kg_pick"], keep_expanded=False))


def _map_figure(memory: Memory, types: tuple[str, ...] | None) -> Any:
    return memory_explorer.map_figure(drawn(_explorer, memory, types))


def _map_caption(memory: Memory, types: tuple[str, ...] | None) -> str:
    return memory_explorer.map_caption(drawn(_explorer, memory, types))


def _lit_figure(memory: Memory, types: tuple[str, ...] | None, chosen: str, expanded: tuple[str, ...]) -> Any:
    explorer = drawn(_explorer, memory, types)
    return memory_explorer.neighbourhood_figure(memory, explorer, explorer.highlight(chosen, expanded))


def _kg_tab(memory: Memory, key: str, path: str | Path | None = None) -> None:
    c1, c2 = st.columns([3, 2])
    with c1:
        _find(memory, key)
    counts = memory_graphs.entity_types(memory)
    shown = {t: n for t, n in counts}
    picked = c2.multiselect("entity types", list(shown), key=f"{key}_kg_types", placeholder="all types",
                            format_func=lambda t: f"{t} ({shown[t]:,})", help="Draw only entities of these types.")
    types = tuple(sorted(picked)) or None
    explorer = drawn(_explorer, memory, types)
    graph_col, panel_col = st.columns([3, 2])
    with panel_col:  # first: a click's answer is sent before the map, which a click leaves as it is
        # its own fragment: a click in the panel (its neighbourhood, expand, clear) reruns the panel
        # alone, and the map (18,000 points for MuSiQue) is neither rebuilt nor sent again
        st.fragment(_entity_panel)(memory, key, types, path)
    with graph_col:
        st.plotly_chart(drawn(_map_figure, memory, types), key=f"{key}_kg_map",
                        on_select=lambda: _clicked(key, explorer, f"{key}_kg_map"), selection_mode="points",
                        config={"scrollZoom": True, "displaylogo": False})
        st.caption(escape_markdown(drawn(_map_caption, memory, types)))


def _entity_panel(memory: Memory, key: str, types: tuple[str, ...] | None,
                  path: str | Path | None = None) -> None:
    """What the chosen entity is, its neighbourhood, its relations and its passages: drawn here by Python."""
    explorer = drawn(_explorer, memory, types)
    light = explorer.highlight(st.session_state.get(f"{key}_kg_chosen"),
                               tuple(st.session_state.get(f"{key}_kg_expanded", ())))
    if light.chosen is None:
        st.caption("Click an entity on the map, or find one by name, to see what the memory holds about it.")
        return
    facts = memory_explorer.entity_facts(memory, explorer.map.keys[light.chosen])
    with st.container(border=True, key=f"{key}_kg_panel"):
        st.subheader(escape_markdown(facts.name), anchor=False)
        st.caption(escape_markdown(f"{facts.type} · {facts.mentions} mention(s) · {len(facts.relations)} "
                                   f"relation(s) · {len(explorer.adjacency[light.chosen])} linked entities"))
        row = st.container(horizontal=True, gap="small")
        row.button("expand neighbours", key=f"{key}_kg_expand", disabled=light.chosen in light.expanded,
                   on_click=_expand, args=(key, explorer, light),
                   help="Light the neighbours of this entity's neighbours too.")
        row.button("clear", key=f"{key}_kg_clear", on_click=_choose, args=(key, None))
        chosen, expanded = explorer.map.keys[light.chosen], tuple(explorer.map.keys[i] for i in light.expanded)
        st.plotly_chart(drawn(_lit_figure, memory, types, chosen, expanded), key=f"{key}_kg_lit",
                        on_select=lambda: _clicked(key, explorer, f"{key}_kg_lit"), selection_mode="points",
                        config={"scrollZoom": True, "displaylogo": False})
        st.caption(escape_markdown(memory_explorer.lit_caption(explorer, light)))
        if facts.relations:
            st.dataframe(frame(facts.relations, ["head", "relation", "tail", "passage"]), hide_index=True,
                         height=min(36 * (len(facts.relations) + 1), 260))
        for cid, title, text in facts.passages:
            with st.expander(escape_markdown(f"{title} · chunk {cid}")):
                st.text(text)
        if facts.candidates:
            st.caption(escape_markdown("coreference candidates: " + ", ".join(facts.candidates)))
        if path is not None:
            edit_key = f"{key}_kg_edit"  # open again after an edit: its outcome shows inside
            with st.expander("Edit this entity or one of its triples (a new version; the edit log undoes it)",
                             expanded=f"{edit_key}_done" in st.session_state):
                panel_actions(path, memory, facts.key, edit_key)


def _expand(key: str, explorer: memory_explorer.Explorer, light: memory_explorer.Highlight) -> None:
    """Expanding the chosen entity lights its neighbours' neighbours: each neighbour is expanded."""
    keys = explorer.map.keys
    grown = [*st.session_state.get(f"{key}_kg_expanded", ()), keys[light.chosen]]
    st.session_state[f"{key}_kg_expanded"] = tuple(dict.fromkeys(
        grown + [keys[i] for i in light.lit if i != light.chosen]))


def _coref_tab(memory: Memory, key: str) -> None:
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
    max_nodes = _size_slider(st, f"{key}_coref_max")
    _coref_graph(memory_graphs.coref_picture(memory, int(top), float(threshold), max_nodes), memory, key)
    who = st.text_input("show the candidate set of (name contains)", key=f"{key}_coref_who")
    if who.strip():
        df = df[df["entity"].str.contains(who.strip(), case=False, regex=False)]
    st.dataframe(df, hide_index=True)


def _coref_graph(pic: Picture, memory: Memory, key: str) -> None:
    """The coreference picture; a click on an entity shows its facts beneath (relations, passages,
    candidates), a click on a link says which candidate set lists which."""
    chosen = picture(pic, 560, key=f"{key}_coref_graph", clickable=True)
    if chosen is None:
        st.caption("Click an entity for its relations, passages and candidates; a link's middle for who lists whom.")
        return
    with st.container(border=True, key=f"{key}_coref_panel"):
        if isinstance(chosen, PictureNode):
            graph_view.node_facts(pic, chosen, memory)
        else:
            st.subheader("coreference candidates", anchor=False)
            st.text(chosen.tooltip)


def _engrams_tab(memory: Memory, key: str) -> None:
    df = tables.engrams_table(memory)
    q = st.text_input("filter by name", key=f"{key}_engram_filter")
    if q.strip():
        df = df[df["name"].str.contains(q.strip(), case=False, regex=False)]
    st.caption(f"{len(df)} engram(s): one row per mention of an entity in a chunk.")
    st.dataframe(df, hide_index=True)


def _docs_tab(memory: Memory, key: str) -> None:
    docs = frame([{"document": d.doc_id, "title": d.title, "source": d.source, "kind": d.kind,
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


def indexing_cost(memory: Memory) -> pd.DataFrame:
    """Indexing calls by stage and origin (fresh work, recorded/cached, resumed from the journal)."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for r in memory.ledger_rows:
        cost = CallCost.from_row(r)
        origin = "recorded" if cost.cached else "fresh"
        g = groups.setdefault((r.get("stage", ""), origin), {
            "stage": r.get("stage", ""), "origin": origin, "calls": 0, "prompt tokens": 0,
            "completion tokens": 0, "seconds": 0.0})
        g["calls"] += 1
        for col, v in (("prompt tokens", cost.prompt_tokens), ("completion tokens", cost.completion_tokens)):
            g[col] = None if g[col] is None or v is None else g[col] + v
        g["seconds"] = round(g["seconds"] + (cost.seconds or 0.0), 2)
    df = frame(list(groups.values()), ["stage", "origin", "calls", "prompt tokens", "completion tokens", "seconds"])
    for col in ("prompt tokens", "completion tokens"):
        df[col] = df[col].astype("Int64")
    return df


def failed_chunks_view(memory: Memory) -> None:
    """Which chunks failed, by id and title, each with the model's raw reply."""
    failed = sorted(cid for cid, log in memory.extraction_log.items() if log.status == "failed")
    if not failed:
        return
    title = {c.chunk_id: c.title for c in memory.chunks}
    names = [f"chunk {cid}" + (f" ({clip(title[cid], 60)})" if title.get(cid) else "") for cid in failed]
    st.warning(escape_markdown(f"Failed chunks: {', '.join(names)} (read again with the CLI's --retry-failed)."))
    for cid, name in zip(failed, names):
        log = memory.extraction_log[cid]
        with st.expander(escape_markdown(f"{name}: the model's raw reply")):
            st.text(log.error)
            st.code(log.raw_reply or "(empty reply)", language=None, wrap_lines=True)


def _cost_tab(memory: Memory, key: str) -> None:
    s = memory_summary(memory)
    cols = st.columns(4)
    for col, (label, value) in zip(cols, [("chunks", s["chunks"]), ("entities", s["entities"]),
                                          ("triples", s["triples"]), ("failed chunks", s["failures"])]):
        col.metric(label, value)
    failed_chunks_view(memory)
    st.caption(escape_markdown(f"Built with {s['built with']}. 'recorded' rows were answered from the response "
                               "cache or the build journal: their original tokens and seconds are shown, "
                               "not spent again."))
    st.dataframe(indexing_cost(memory), hide_index=True)


