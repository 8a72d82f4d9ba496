"""Memory → pictures and tables: the knowledge graph and the coreference candidates.

Coreference candidate sets are per node (each node's nearest other names above a
threshold): not symmetric, not transitive, never merges. The graph draws them
as links (a hover says which set lists which); any grouping the eye sees in it is an approximation, and
the notes say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx
import pandas as pd

from memrag.index.memory import Memory
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.trace import GraphEdge, GraphNode
from memrag.viz import palette
from memrag.viz.entity_search import resolve_entity
from memrag.viz.graph_html import DEFAULT_NODES, MAX_NODES, Neighbours, render
from memrag.plain_text import clip

Result = tuple[str, str]
DEPTHS = (1, 2, 3)

COREF_NOTE = ("Coreference candidates are per node: a link joins A and B when one is in the other's own candidate "
              "set (its hover says which). Sets are not symmetric and not transitive, so groups seen here are an "
              "approximation, not merges.")


def _check_max(max_nodes: int) -> None:
    if not 1 <= max_nodes <= MAX_NODES:
        raise ValueError(f"max_nodes must be between 1 and {MAX_NODES}, got {max_nodes}")


def _doc_titles(memory: Memory) -> dict[str, str]:
    return {d.doc_id: d.title for d in memory.documents}


def _entity_tooltip(memory: Memory, key: str, titles: dict[str, str]) -> str:
    node = memory.entity(key)
    if node is None:
        return key
    docs = []
    for cid in node.chunk_ids:
        t = titles.get(memory.chunks[cid].doc_id, memory.chunks[cid].doc_id) if cid < len(memory.chunks) else "?"
        if t not in docs:
            docs.append(t)
    lines = [f"{node.name} ({node.type})", f"{len(node.engram_ids)} mention(s) in {len(node.chunk_ids)} chunk(s)",
             "documents: " + clip(", ".join(docs), 200)]
    first = memory.engrams[node.engram_ids[0]] if node.engram_ids else None
    if first is not None and first.description:
        lines.append(clip(first.description, 300))
    return "\n".join(lines)


def _passages(memory: Memory, nodes: Iterable[GraphNode], titles: dict[str, str]) -> dict[int, tuple[str, str]]:
    """(title, text) of the passages the nodes come from, for their details panels."""
    out = {}
    for n in nodes:
        for cid in n.chunk_ids[:3]:
            if 0 <= cid < len(memory.chunks) and cid not in out:
                c = memory.chunks[cid]
                out[cid] = (f"{titles.get(c.doc_id, c.doc_id)} · chunk {cid}", c.text)
    return out


NEIGHBOURS_EACH, NEIGHBOURS_MAX = 3, 24  # what "expand neighbours" may add: per node, per page (frame size)


def _neighbours(memory: Memory, g: nx.Graph, keys: list[str], titles: dict[str, str],
                edge_titles: dict[str, str]) -> Neighbours:
    """For each drawn entity, its most connected neighbours not drawn (bounded), with the triples
    that join them to what is drawn or to each other (their hover text added to `edge_titles`)."""
    shown = set(keys)
    degree = dict(g.degree())
    out = Neighbours()
    extra: dict[str, GraphNode] = {}
    for k in keys:
        fresh = sorted(set(g.neighbors(k)) - shown, key=lambda x: (-degree.get(x, 0), x))[:NEIGHBOURS_EACH]
        for nb in fresh:
            if nb not in extra and len(extra) >= NEIGHBOURS_MAX:
                break
            if nb not in extra:
                e = memory.entity(nb)
                extra[nb] = GraphNode(f"e:{nb}", e.name if e else nb, "entity", group=e.type if e else "other",
                                      chunk_ids=list(e.chunk_ids) if e else [],
                                      tooltip=_entity_tooltip(memory, nb, titles))
            out.of.setdefault(f"e:{k}", []).append(f"e:{nb}")
    out.nodes = list(extra.values())
    near = shown | set(extra)
    for t in memory.triples:
        if len(out.edges) >= 2 * NEIGHBOURS_MAX:
            break
        if (t.head_key in extra or t.tail_key in extra) and t.head_key in near and t.tail_key in near \
                and t.head_key != t.tail_key:
            out.edges.append(GraphEdge(f"t:{t.triple_id}", f"e:{t.head_key}", f"e:{t.tail_key}", "triple",
                                       t.relation, chunk_id=t.chunk_id))
            edge_titles[f"t:{t.triple_id}"] = f"{t.head} {t.relation} {t.tail}"
    return out


def entity_types(memory: Memory) -> list[tuple[str, int]]:
    """The memory's entity types with how many entities have each, most common first."""
    return Counter(n.type or "other" for n in memory.entities).most_common()


def _select(g: nx.Graph, order: list[str], max_nodes: int, focus: str | None, depth: int) -> list[str]:
    """Highest-degree nodes, or the focus node's neighbourhood up to `depth` steps, grown ring by
    ring (most connected first within a ring) until `max_nodes`."""
    degree = dict(g.degree())
    if focus is None:
        ranked = sorted(order, key=lambda k: -degree.get(k, 0))  # stable: ties keep memory order
        return ranked[:max_nodes]
    position = {k: i for i, k in enumerate(order)}
    chosen, ring = [focus], [focus]
    seen = {focus}
    for _ in range(depth):
        if not ring or len(chosen) >= max_nodes:
            break
        nxt = sorted({nb for k in ring for nb in g.neighbors(k)} - seen,
                     key=lambda k: (-degree.get(k, 0), position[k]))
        take = nxt[: max_nodes - len(chosen)]
        chosen += take
        seen.update(take)
        ring = take
    return chosen


def knowledge_graph(memory: Memory, max_nodes: int = DEFAULT_NODES, focus: str | None = None, *,
                    depth: int = 1, types: Iterable[str] | None = None, height: int = 620) -> Result:
    """Entities coloured by type, one arrow per triple labelled with its relation; hover shows
    provenance (document, chunk, triple text). Big memories keep the highest-degree entities,
    or with `focus` (a name or key; UnknownEntity with suggestions if none matches) the entities
    within `depth` steps of it. `types` keeps only entities of those types (the focus stays)."""
    _check_max(max_nodes)
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {DEPTHS}, got {depth}")
    focus_key = resolve_entity(memory, focus) if focus else None
    wanted = None if types is None else {t.lower() for t in types}
    order = [n.key for n in memory.entities
             if wanted is None or (n.type or "other").lower() in wanted or n.key == focus_key]
    g = nx.Graph()
    g.add_nodes_from(order)
    g.add_edges_from((t.head_key, t.tail_key) for t in memory.triples
                     if t.head_key != t.tail_key and t.head_key in g and t.tail_key in g)
    keys = _select(g, order, max_nodes, focus_key, depth)
    keep = set(keys)
    titles = _doc_titles(memory)
    nodes = []
    for k in keys:
        n = memory.entity(k)
        nodes.append(GraphNode(f"e:{k}", n.name if n else k, "entity", group=n.type if n else "other",
                               chunk_ids=list(n.chunk_ids) if n else [], role="focus" if k == focus_key else "",
                               tooltip=_entity_tooltip(memory, k, titles)))
    edges, edge_titles = [], {}
    for t in memory.triples:
        if t.head_key in keep and t.tail_key in keep:
            if len(edges) >= 4 * max_nodes:
                continue
            eid = f"t:{t.triple_id}"
            c = memory.chunks[t.chunk_id]
            edges.append(GraphEdge(eid, f"e:{t.head_key}", f"e:{t.tail_key}", "triple", t.relation,
                                   chunk_id=t.chunk_id))
            edge_titles[eid] = (f"{t.head} {t.relation} {t.tail}\n"
                                f"{titles.get(c.doc_id, c.doc_id)} · chunk {t.chunk_id}")
    total = len(memory.entities)
    note = f"Showing {len(keys)} of {total} entities"
    if focus_key:
        note += (f" (those within {depth} step{'s' if depth > 1 else ''} of {memory.entity(focus_key).name}"
                 + (f", capped at {max_nodes}" if len(keys) >= max_nodes else "") + ")")
    elif len(keys) < total:
        note += " (the most connected ones" + (" of the chosen types" if wanted is not None else "") + ")"
    note += f" and {len(edges)} of {len(memory.triples)} triples."
    more = _neighbours(memory, g, keys, titles, edge_titles)
    candidates = {f"e:{k}": [f"{m.name} ({m.similarity:.2f})" for m in memory.coref_of(k)] for k in keys}
    return render(nodes, edges, height=height, edge_titles=edge_titles, neighbours=more, group_heading="type",
                  passages=_passages(memory, [*nodes, *more.nodes], titles), candidates=candidates), note


# ------------------------------------------------------------------ coreference
def coref_table(memory: Memory, top: int, threshold: float) -> pd.DataFrame:
    """One row per (node, candidate): each node's own candidate set with similarities,
    and whether the candidate lists the node back (sets are not symmetric)."""
    sets = memory.coref_sets(top, threshold)
    listed = {(k, m.key) for k, ms in sets.items() for m in ms}
    rows = []
    for n in memory.entities:
        for rank, m in enumerate(sets.get(n.key, []), start=1):
            rows.append({"entity": n.name, "type": n.type, "candidate": m.name, "rank": rank,
                         "similarity": round(m.similarity, 4), "lists it back": (m.key, n.key) in listed,
                         "entity key": n.key, "candidate key": m.key})
    cols = ["entity", "type", "candidate", "rank", "similarity", "lists it back", "entity key", "candidate key"]
    return pd.DataFrame(rows, columns=cols)


def coref_threshold_preview(memory: Memory, thresholds: tuple[float, ...] = (0.7, 0.8, 0.9),
                            top: int = 5, examples: int = 3) -> pd.DataFrame:
    """How many candidate links each threshold would make, with its weakest admitted pairs as examples."""
    rows = []
    for th in thresholds:
        sets = memory.coref_sets(top, th)
        links = [(k, m) for k, ms in sets.items() for m in ms]
        pairs = {(k, m.key) for k, m in links}
        mutual = sum(1 for a, b in pairs if (b, a) in pairs) // 2
        weakest = sorted(links, key=lambda x: x[1].similarity)[:examples]
        names = {n.key: n.name for n in memory.entities}
        rows.append({"threshold": th, "links": len(links), "nodes with candidates": sum(1 for v in sets.values() if v),
                     "mutual pairs": mutual,
                     "weakest links": "; ".join(f"{names.get(k, k)} → {m.name} ({m.similarity:.2f})"
                                                for k, m in weakest)})
    return pd.DataFrame(rows, columns=["threshold", "links", "nodes with candidates", "mutual pairs", "weakest links"])


def coref_picture(memory: Memory, top: int, threshold: float, max_nodes: int = DEFAULT_NODES) -> Picture:
    """Entities joined when one lists the other among its coreference candidates (the most linked
    entities first), coloured by type; a link's hover says who lists whom, with the cosine."""
    _check_max(max_nodes)
    sets = memory.coref_sets(top, threshold)
    links = [(k, m) for k, ms in sets.items() for m in ms]
    involvement: Counter = Counter()
    for k, m in links:
        involvement[k] += 1
        involvement[m.key] += 1
    order = [n.key for n in memory.entities if involvement[n.key]]
    keys = sorted(order, key=lambda k: -involvement[k])[:max_nodes]
    keep = set(keys)
    titles = _doc_titles(memory)
    nodes = []
    for k in keys:
        n = memory.entity(k)
        own = ", ".join(f"{m.name} ({m.similarity:.2f})" for m in sets.get(k, [])) or "none"
        nodes.append(entity_node(k, n.name, n.type, weight=min(2.0, 0.8 + 0.1 * involvement[k]),
                                 tooltip=_entity_tooltip(memory, k, titles) + f"\nown candidate set: {clip(own, 300)}"))
    # one link per pair, however many of the two sets list the other (straight lines would overlap)
    said: dict[tuple[str, str], list[str]] = {}
    best: dict[tuple[str, str], float] = {}
    for k, m in links:
        if k in keep and m.key in keep:
            pair = (min(k, m.key), max(k, m.key))
            said.setdefault(pair, []).append(f"{m.name} is in {memory.entity(k).name}'s candidate set "
                                             f"(cosine {m.similarity:.3f})")
            best[pair] = max(best.get(pair, 0.0), m.similarity)
    edges = [PictureEdge(f"coref:{a}|{b}", f"e:{a}", f"e:{b}", kind="coreference", relation=f"{best[(a, b)]:.2f}",
                         tooltip="\n".join(said[(a, b)])) for a, b in said]
    mutual = sum(1 for lines in said.values() if len(lines) > 1)
    legend = (*type_legend(nodes), LegendEntry("edge:coreference", "coreference candidates (hover a link's middle: "
                                                                   "who lists whom)", len(edges), "links"))
    note = (f"top {top}, threshold {threshold}: {len(links)} candidate links among {len(order)} entities"
            + (f"; showing {len(keys)} of {len(order)} entities (most linked first)" if len(keys) < len(order) else "")
            + f"; {len(edges)} linked pairs drawn, {mutual} of them listing each other. " + COREF_NOTE)
    return Picture("coreference-graph", tuple(nodes), tuple(edges), legend, note)


# ------------------------------------------------------------------ a build's growing graph
def growing_picture(state: Mapping[str, Any], max_nodes: int = DEFAULT_NODES) -> Picture:
    """The graph a build has made so far (its job state: nodes, edges, coref_links): the most
    connected entities by type, their triples, and the coreference links among them."""
    found, triples, links = state["nodes"], state["edges"], state.get("coref_links", [])
    degree: Counter = Counter()
    for e in triples:
        degree[e["source"]] += 1
        degree[e["target"]] += 1
    keys = sorted(found, key=lambda k: -degree[k])[:max_nodes]  # stable: ties keep arrival order
    keep = set(keys)
    nodes = [entity_node(k, found[k]["name"], found[k]["type"], tooltip=f"{found[k]['name']} ({found[k]['type']})")
             for k in keys]
    names = {k: found[k]["name"] for k in keys}
    edges = [PictureEdge(f"t:{i}", f"e:{e['source']}", f"e:{e['target']}", kind="triple", relation=e["relation"],
                         tooltip=f"{names[e['source']]} {e['relation']} {names[e['target']]}")
             for i, e in enumerate(triples) if e["source"] in keep and e["target"] in keep]
    jumps = [PictureEdge(f"c:{i}", f"e:{c['source']}", f"e:{c['target']}", kind="coreference",
                         relation=f"{c['similarity']:.2f}", tooltip=f"{names[c['source']]} ~ {names[c['target']]} "
                                                                    f"(cosine {c['similarity']:.2f})")
             for i, c in enumerate(links) if c["source"] in keep and c["target"] in keep]
    legend = (*type_legend(nodes), LegendEntry("edge:triple", "relation (a triple; hover its middle)", len(edges), "drawn"),
              LegendEntry("edge:coreference", "coreference candidate link", len(jumps), "drawn"))
    note = (f"So far: {len(found)} entities, {len(triples)} triples, {len(links)} coreference links"
            + (f" (showing the {len(keys)} most connected entities)" if len(keys) < len(found) else "") + ".")
    return Picture("growing-graph", tuple(nodes), tuple([*edges, *jumps]), legend, note)


def entity_node(key: str, name: str, kind: str, *, weight: float = 1.0, tooltip: str = "") -> PictureNode:
    """An entity of a memory picture: its type is what its colour says (the legend's fill)."""
    return PictureNode(f"e:{key}", name, "entity", role="entity", fate=kind or "other", weight=weight,
                       tooltip=tooltip or name, ref=key)


def type_legend(nodes: Iterable[PictureNode]) -> tuple[LegendEntry, ...]:
    """One legend entry per entity type drawn, most common first, with how many entities carry it."""
    return tuple(LegendEntry(f"node:entity:{kind}", palette.group_word(kind), count, "entities")
                 for kind, count in Counter(n.fate for n in nodes).most_common())
