"""NeuroPath's retrieval as a route, left to right: the seeds, then what hop 1 reached, then hop 2.

Kept paths (valid or expanded at any hop) are drawn whole, bold, their relations written; the
paths the model was shown and did not keep are folded, per node they leave from, into one count
node that a click opens (`expanded` names the open ones). A hop-2 path that left its parent's
frontier through a coreference candidate (1889 → 1890) draws that jump as its own edge.
An entity met at two hops appears in both columns: each column is one hop of the route."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from memrag import words
from memrag.index.normalise import entity_key
from memrag.methods.neuropath.detail import NeuroPathDetail, PathCandidate
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.trace import Trace

KEPT = ("valid", "expanded")
HIDDEN = ("pruned", "unlisted")  # never shown to the model: counted, not drawn
COUNT_PREFIX = "more:"


@dataclass
class RoutePath:
    """One path in its best state across the hops that listed it."""
    pid: str  # the first listing's id
    fate: str
    hops: list[tuple[int, str, str]]  # (hop, pid there, fate there): its history
    cand: PathCandidate
    frontiers: list[str]  # entity key reached after each triple


@dataclass
class _Build:
    nodes: dict[str, dict] = field(default_factory=dict)
    edges: dict[str, dict] = field(default_factory=dict)
    paths_of: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def node(self, nid: str, **kw) -> None:
        have = self.nodes.setdefault(nid, kw)
        if words.fate_rank(kw.get("fate", "")) < words.fate_rank(have.get("fate", "")):
            have["fate"] = kw["fate"]
        have["labelled"] = have.get("labelled", False) or kw.get("labelled", False)

    def edge(self, eid: str, **kw) -> None:
        have = self.edges.setdefault(eid, kw)
        if words.fate_rank(kw.get("fate", "")) < words.fate_rank(have.get("fate", "")):
            have["fate"] = kw["fate"]
        have["bold"] = have.get("bold", False) or kw.get("bold", False)


def route_paths(detail: NeuroPathDetail, upto: int | None = None) -> list[RoutePath]:
    """Every path once, in its best fate over the hops that listed it (a path kept at hop 1 and
    listed again, not kept, at hop 2 was still kept), pruned and unlisted ones included; with
    `upto`, only what the hops up to that one listed."""
    hops = [h for h in detail.hops if upto is None or h.hop <= upto]
    by_pid = {c.pid: c for h in hops for c in h.candidates}
    out: dict[str, RoutePath] = {}
    for h in hops:
        for c in h.candidates:
            root = c
            while root.kept_from is not None and root.parent in by_pid:
                root = by_pid[root.parent]
            p = out.get(root.pid)
            if p is None:
                p = out[root.pid] = RoutePath(root.pid, c.fate, [], root, _frontiers(root, by_pid))
            p.hops.append((h.hop, c.pid, c.fate))
            if words.fate_rank(c.fate) < words.fate_rank(p.fate):
                p.fate = c.fate
    return list(out.values())


def _frontiers(c: PathCandidate, by_pid: dict[str, PathCandidate]) -> list[str]:
    chain = [c]
    while chain[0].parent in by_pid and len(chain) < len(c.triples):
        chain.insert(0, by_pid[chain[0].parent])
    keys = [x.frontier for x in chain]
    # a path whose ancestors are not recorded: each triple's tail reaches on
    return [entity_key(t.tail) for t in c.triples[:len(c.triples) - len(keys)]] + keys


def _touched(head: str, tail: str, reached: str) -> str:
    """The end of a triple the route came from (the other end is where it reached)."""
    return head if tail == reached else tail if head == reached else head


def route(trace: Trace, *, expanded: Iterable[str] = (), gold_chunk_ids: Iterable[int] | None = None,
          upto: int | None = None) -> Picture:
    """The route (see the module); `expanded`: the count nodes a click opened; `upto`: the route as
    it stood after that hop (the Retrieval tab's hop view)."""
    detail = trace.detail(NeuroPathDetail)
    if detail is None:
        raise ValueError(f"this is a {trace.method!r} trace, not a NeuroPath trace")
    opened, gold = set(expanded), set(gold_chunk_ids or ())
    b = _Build()
    seeds = {s.key: s for s in detail.seeds if s.accepted}
    coref_of = {m.key: s.key for s in seeds.values() for m in s.coref}
    names: dict[str, str] = {s.key: s.name for s in seeds.values()}
    for s in seeds.values():
        b.node(f"{s.key}@0", key=s.key, layer=0, role="seed", fate="", labelled=True, hop=0)
        for m in s.coref:
            names.setdefault(m.key, m.name)
    paths = route_paths(detail, upto)
    shown = [p for p in paths if p.fate not in HIDDEN]
    folded: dict[str, list[RoutePath]] = defaultdict(list)  # count node id → its paths
    jumps = 0
    for p in sorted(shown, key=lambda p: (words.fate_rank(p.fate), p.pid)):
        kept = p.fate in KEPT
        prev = None  # the entity key the route stands on
        for i, (t, reached) in enumerate(zip(p.cand.triples, p.frontiers)):
            head, tail = entity_key(t.head), entity_key(t.tail)
            names.setdefault(head, t.head)
            names.setdefault(tail, t.tail)
            came = _touched(head, tail, reached)
            start_layer = i
            if prev is None and came not in seeds and came in coref_of:
                prev = coref_of[came]
            is_jump = prev is not None and came != prev
            last = i == len(p.cand.triples) - 1  # a folded path's own new triple is its last one
            if is_jump:
                # the jump shows even on a folded path: its count node hangs from the jumped-to node
                jumps += b.edges.get(f"coref:{prev}|{came}@{start_layer}") is None
                b.node(f"{came}@{start_layer}", key=came, layer=start_layer, role="coref", fate=p.fate if kept else "",
                       labelled=True, hop=start_layer)
                b.edge(f"coref:{prev}|{came}@{start_layer}", source=f"{prev}@{start_layer}",
                       target=f"{came}@{start_layer}", kind="coreference", fate=p.fate if kept else "",
                       bold=False, relation="", triple=None, chunk=None)
            anchor = f"{came}@{start_layer}"
            b.node(anchor, key=came, layer=start_layer, role="seed" if came in seeds and start_layer == 0 else "path",
                   fate=p.fate if kept else "", labelled=kept, hop=start_layer)
            if not kept and last:
                cid = f"{COUNT_PREFIX}{anchor}"
                folded[cid].append(p)
                b.paths_of[anchor].append(p.pid)
                if cid not in opened:
                    prev = reached
                    continue
            to = f"{reached}@{i + 1}"
            b.node(to, key=reached, layer=i + 1, role="path", fate=p.fate, labelled=kept, hop=i + 1)
            src, dst = (f"{head}@{start_layer}", to) if head == came else (to, f"{tail}@{start_layer}")
            if head == tail:
                src, dst = anchor, to
            b.edge(f"t:{t.triple_id}@{i + 1}", source=src, target=dst, kind="triple", fate=p.fate, bold=kept,
                   relation=t.relation, triple=t.triple_id, chunk=t.chunk_id)
            b.paths_of[to].append(p.pid)
            b.paths_of[anchor].append(p.pid)
            prev = reached
    hops = [h.hop for h in detail.hops if upto is None or h.hop <= upto]
    return _picture(hops, b, paths, folded, opened, names, gold, jumps)


def _picture(hops: list[int], b: _Build, paths: list[RoutePath],
             folded: dict[str, list[RoutePath]], opened: set[str], names: dict[str, str], gold: set[int],
             jumps: int) -> Picture:
    fates = Counter(p.fate for p in paths)
    gold_keys = {entity_key(x) for p in paths if p.fate in KEPT for t in p.cand.triples if t.chunk_id in gold
                 for x in (t.head, t.tail)}
    nodes = []
    for nid, n in b.nodes.items():
        key = n["key"]
        on = sorted(set(b.paths_of.get(nid, [])))
        tip = f"{names.get(key, key)}" + (f"\non {len(on)} path(s): {', '.join(on[:8])}" if on else "")
        nodes.append(PictureNode(nid, names.get(key, key), "entity", role=n["role"], fate=n["fate"],
                                 weight=1.3 if n["role"] == "seed" else 1.1 if n["labelled"] else 0.8,
                                 step=n["hop"], layer=n["layer"], labelled=n["labelled"],
                                 gold=key in gold_keys and n["labelled"], tooltip=tip, ref=key))
    for cid, members in folded.items():
        anchor = cid[len(COUNT_PREFIX):]
        layer = b.nodes[anchor]["layer"] + 1
        count = len(members)
        label = (f"− fold {count} not kept" if cid in opened else f"+{count} listed, not kept")
        holds_gold = any(t.chunk_id in gold for p in members for t in p.cand.triples[-1:])
        nodes.append(PictureNode(cid, label, "count", role="count", fate="dropped", weight=1.0, step=layer,
                                 layer=layer, labelled=True, ref=",".join(p.pid for p in members), gold=holds_gold,
                                 tooltip=f"{count} path(s) shown to the model at hop {layer} and not kept; "
                                         f"click to {'fold' if cid in opened else 'open'} them"))
    edges = _joined([PictureEdge(eid, e["source"], e["target"], e["kind"], relation=e["relation"], fate=e["fate"],
                                 bold=e["bold"], step=b.nodes.get(e["target"], {}).get("hop"),
                                 ref="" if e["triple"] is None else str(e["triple"]),
                                 tooltip=_edge_tip(e, names, gold))
                     for eid, e in b.edges.items()])
    edges += [PictureEdge(f"fold:{cid}", cid[len(COUNT_PREFIX):], cid, "triple", fate="dropped")
              for cid in folded]
    folded_paths = sum(len(m) for cid, m in folded.items())
    legend = [LegendEntry("node:seed:valid", "seed", len([n for n in nodes if n.role == "seed" and n.layer == 0]),
                          "")]
    for fate in KEPT:
        if fates.get(fate):
            legend.append(LegendEntry(f"edge:triple:{fate}:bold", words.path_fate(fate), fates[fate],
                                      "path" if fates[fate] == 1 else "paths"))
    if folded_paths:
        legend.append(LegendEntry("node:count", words.path_fate("dropped"), folded_paths,
                                  "path" if folded_paths == 1 else "paths"))
    if jumps:
        legend.append(LegendEntry("edge:coreference", "coreference jump", jumps, ""))
    if any(n.gold for n in nodes):
        legend.append(LegendEntry("node:gold", "ring: from a gold passage"))
    note = route_note(len(hops), fates, folded_paths)
    titles = tuple(["seeds"] + [f"hop {h}" for h in hops])
    return Picture("neuropath-route", tuple(nodes), tuple(edges), tuple(legend), note, layer_titles=titles)


def route_note(hops: int, fates: Counter, folded: int) -> str:
    """What the route shows, in the legend's numbers."""
    kept = words.path_counts({f: fates.get(f, 0) for f in KEPT}) or "no kept path"
    hidden = sum(fates.get(f, 0) for f in HIDDEN)
    parts = [f"NeuroPath's route over {hops} hop(s): {kept}, drawn bold"]
    if folded:
        parts.append(f"{folded} {words.path_fate('dropped')} folded into boxes (click one to open it)")
    if hidden:
        parts.append(f"{hidden} pruned or over the listing cap, never shown to the model, not drawn")
    return "; ".join(parts) + "."


def _edge_tip(e: dict, names: dict[str, str], gold: set[int]) -> str:
    if e["kind"] == "coreference":
        return "coreference jump: the path went on from a coreference candidate of this node"
    if e["kind"] == "triple" and e["triple"] is not None:
        star = " (a gold passage)" if e["chunk"] in gold else ""
        return f"{e['relation']} · from chunk {e['chunk']}{star} · {words.path_fate(e['fate'])}"
    return ""


def _joined(edges: list[PictureEdge]) -> list[PictureEdge]:
    """Triples joining the same two nodes as one drawn edge (they would lie on one line, their
    words on one spot): its relations joined, its ref every triple id, its look the best one's."""
    groups: dict[tuple[str, str, str], list[PictureEdge]] = defaultdict(list)
    for e in edges:
        groups[(e.kind, *sorted((e.source, e.target)))].append(e)
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append(members[0])
            continue
        members.sort(key=lambda e: (not e.bold, words.fate_rank(e.fate)))
        best = members[0]
        said = list(dict.fromkeys(e.relation for e in members if e.relation and (e.bold or not best.bold)))
        out.append(PictureEdge(best.id, best.source, best.target, best.kind,
                               relation=" / ".join(said[:2]) + (f" +{len(said) - 2}" if len(said) > 2 else ""),
                               fate=best.fate, bold=best.bold, step=best.step,
                               ref=",".join(e.ref for e in members if e.ref),
                               tooltip="\n".join(e.tooltip for e in members)))
    return out
