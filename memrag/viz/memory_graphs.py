"""Memory → pictures and tables: the coreference candidates, a build's growing graph (the whole
knowledge graph is the explorer's: memory_explorer).

Coreference candidate sets are per node (each node's nearest other names above a
threshold): not symmetric, not transitive, never merges. The graph draws them
as links (a hover says which set lists which); any grouping the eye sees in it is an approximation, and
the notes say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from memrag.index.memory import Memory
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.viz import palette
from memrag.plain_text import clip

DEFAULT_NODES = 40  # what a memory picture draws unless asked for more: a few dozen nodes can be read
MAX_NODES = 600

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


def entity_types(memory: Memory) -> list[tuple[str, int]]:
    """The memory's entity types with how many entities have each, most common first."""
    return Counter(n.type or "other" for n in memory.entities).most_common()


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
