"""NeuroPath's route now, with what is new since an earlier run of the same question marked (ask
again after a memory edit): per hop, a path kept, or listed and not kept, that the earlier run did
not keep (or list) at that hop. Paths are compared by their chain of triples in words, as the
text diff compares them (memrag.methods.neuropath.changes): an edit renumbers triples, so ids would
call every path new.

A new path's own last triple and the node it reached (when that node is new to the route too) wear
the look of `change="appeared"`; a fold of listed, not kept paths says how many of them are new.
What disappeared is no longer in the route: the legend counts those paths, the note per hop."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable

from memrag.methods.neuropath import changes, route
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.trace import Trace

APPEARED = "appeared"


def _listings(trace: Trace) -> dict[str, set[str]]:
    """Per hop step ("hop 1: paths kept" …), the paths it kept or listed, as chains in words."""
    return {label: set(items) for label, items in changes.steps(trace) if label.startswith("hop ")}


def _label(hop: int, fate: str) -> str | None:
    if fate in changes.KEPT:
        return f"hop {hop}: paths kept"
    return f"hop {hop}: paths listed, not kept" if fate in changes.LISTED_NOT_KEPT else None


def comparable(before: Trace, now: Trace) -> bool:
    """Whether both traces hold NeuroPath's paths (a trace with no hop has no route to mark)."""
    return all((d := t.detail(NeuroPathDetail)) is not None and bool(d.hops) for t in (before, now))


def new_paths(before: Trace, now: Trace) -> dict[str, list[int]]:
    """The hops at which each of `now`'s paths (route.route_paths' ids) is new since `before`."""
    detail = now.detail(NeuroPathDetail)
    if detail is None:
        raise ValueError(f"this is a {now.method!r} trace, not a NeuroPath trace")
    was = _listings(before)
    by_pid = {c.pid: c for h in detail.hops for c in h.candidates}
    out: dict[str, list[int]] = {}
    for p in route.route_paths(detail):
        hops = [hop for hop, pid, fate in p.hops
                if (label := _label(hop, fate)) and changes.chain(by_pid[pid]) not in was.get(label, set())]
        if hops:
            out[p.pid] = hops
    return out


def step_counts(before: Trace, now: Trace) -> list[tuple[str, int, int]]:
    """(hop step, paths new there, paths gone from there), for the steps where something changed."""
    was, has = _listings(before), _listings(now)
    out = [(label, len(has.get(label, set()) - was.get(label, set())), len(was.get(label, set()) - has.get(label, set())))
           for label in dict.fromkeys([*has, *was])]
    return [c for c in out if c[1] or c[2]]


def since(before: Trace, now: Trace, *, expanded: Iterable[str] = (),
          gold_chunk_ids: Iterable[int] | None = None) -> Picture:
    """`now`'s route (route.route) with what is new since `before` marked, and what is gone counted."""
    opened, gold = set(expanded), list(gold_chunk_ids or ())
    picture = route.route(now, expanded=opened, gold_chunk_ids=gold)
    earlier = {n.id for n in route.route(before, expanded=opened, gold_chunk_ids=gold).nodes}
    new = new_paths(before, now)
    by_root = {p.pid: p for p in route.route_paths(now.detail(NeuroPathDetail))}
    folded = {pid for n in picture.nodes if n.kind == "count" and n.id not in opened for pid in n.ref.split(",")}
    drawn_new: dict[tuple[int, int], tuple[str, list[int]]] = {}  # (triple id, layer) → (its relation, hops)
    for pid, hops in new.items():
        if pid not in folded:
            last = by_root[pid].cand.triples[-1]
            drawn_new[(last.triple_id, len(by_root[pid].cand.triples))] = (last.relation, hops)
    layer = {n.id: n.layer or 0 for n in picture.nodes}
    edges, reached = [], set()
    for e in picture.edges:
        at = max(layer.get(e.source, 0), layer.get(e.target, 0))
        found = [drawn_new[(int(ref), at)] for ref in e.ref.split(",") if ref.isdigit() and (int(ref), at) in drawn_new]
        if e.kind == "triple" and found:  # a joined edge says which of its relations are new
            said = "; ".join(f"{rel} (hop {', '.join(map(str, hops))})" for rel, hops in found)
            e = dataclasses.replace(e, change=APPEARED, tooltip=f"{e.tooltip}\nnew since the edit: {said}".strip())
            reached |= {e.source, e.target} - earlier
        edges.append(e)
    nodes = [_node(n, reached, new) for n in picture.nodes]
    counts = step_counts(before, now)
    gone = len(new_paths(now, before))  # the earlier run's paths it kept or listed where this one does not
    legend = [*picture.legend, LegendEntry(f"edge:triple:valid:bold:{APPEARED}", f"new since the edit ({gone} gone)",
                                           len(new), "path" if len(new) == 1 else "paths")] if counts else picture.legend
    said = "; ".join(f"{label} +{n} −{g}" for label, n, g in counts) or "no path changed"
    return dataclasses.replace(picture, name="neuropath-route-since-edit", nodes=tuple(nodes), edges=tuple(edges),
                               legend=tuple(legend), note=f"{picture.note} Since the edit: {said}.")


def _node(n: PictureNode, reached: set[str], new: dict[str, list[int]]) -> PictureNode:
    if n.kind == "count":
        fresh = sum(1 for pid in n.ref.split(",") if pid in new)
        if not fresh:
            return n
        return dataclasses.replace(n, change=APPEARED, label=f"{n.label} ({fresh} new)",
                                   tooltip=f"{n.tooltip}\n{fresh} of them new since the edit")
    if n.id in reached:
        return dataclasses.replace(n, change=APPEARED, tooltip=f"{n.tooltip}\nnew on the route since the edit")
    return n


def marked(picture: Picture) -> tuple[list[PictureNode], list[PictureEdge]]:
    """The nodes and edges a picture marks as new since an edit."""
    return ([n for n in picture.nodes if n.change == APPEARED], [e for e in picture.edges if e.change == APPEARED])
