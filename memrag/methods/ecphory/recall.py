"""EcphoryRAG's retrieval as a typed picture (memrag.picture), left to right: the question and its
cues, the entities the initial activation reached, then what each associative round added, then
the passages of the answer's context, each tied to the engram that brought it.

- Every activated entity the trace's graph holds is in the picture; a column draws its final
  engrams (E_final), the gold answer, the engrams that brought a context passage and the next
  round's seeds first, up to COLUMN_CAP, and folds the rest into a count node that a click opens
  (`expanded`).
- One node set for every step, so a step never moves what it shows. Each trace step has a look
  (memrag.picture.StepLook): a step adds its column lit; from the re-rank on, what it did not
  recall stays, faded (a step never takes away what the reader has seen).
- `upto` gives the picture as it stood at that step: no node is a final engram before the re-rank.
- The gold answer's node says so, and a node read from a gold passage wears the gold ring; a gold
  passage outside the context is drawn in the context column, joined to the engram that read it.
Words are plain text (the renderer escapes them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from memrag import words
from memrag.methods.ecphory import activation
from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail
from memrag.methods.ecphory.engram_words import engram_lines, origin_words
from memrag.picture import (GOLD_ANSWER, LegendEntry, Picture, PictureEdge, PictureNode, StepLook,
                            names_gold_answer, plain_name)
from memrag.plain_text import clip
from memrag.trace import GraphNode, Trace

COLUMN_CAP = 10  # entities a column draws before folding the rest (E_final and the gold answer always)
NAMED_FINALS = 8  # the final engrams whose names are always written (the others when there is room)
NAME_CHARS = 18  # a cue's written name, at most (the whole of it on hover and in the panel): room for the columns
PASSAGE_CHARS = 22  # … a passage's
ANSWER_WEIGHT = 1.8  # the gold answer's node: the largest, and its name written first (the renderer goes by weight)
MORE = "more:"  # a count node's id prefix, then its column
PASSAGE_TIP = 300
ROUND_WORDS = {0: "activated first"}
FINAL = "E_final (recalled)"
LEFT_OUT = "gold passage left out"


@dataclass
class _Story:
    """What the trace says, read once: its steps by kind, the engrams and the entities drawn."""
    trace: Trace
    detail: EcphoryDetail
    step_of: dict[str, int]  # "cues", "initial", "round 1" …, "rerank", "context" → trace step index
    entities: list[GraphNode]  # activated entities, in activation order
    first: dict[str, ActivatedEngram]  # entity key → its first listed activation
    final_rank: dict[str, int]  # entity key → its place in E_final (1 = first)
    seeds: dict[str, list[tuple[int, float]]]  # entity key → (round it seeded, weight summed)
    brought: dict[int, str]  # context chunk id → the node id of what brought it

    def column_step(self, round_: int) -> int:
        return self.step_of.get("initial" if round_ == 0 else f"round {round_}", 0)


def steps_by_kind(trace: Trace) -> dict[str, int]:
    """Trace step index of each EcphoryRAG step: "cues", "initial", "round <r>", "rerank", "context"."""
    out: dict[str, int] = {}
    rounds = 0
    for s in trace.steps:
        if s.kind == "round":
            rounds += 1
            out[f"round {rounds}"] = s.index
        else:
            out.setdefault(s.kind, s.index)
    return out


def round_step(trace: Trace, round_: int) -> int:
    """The trace step that shows activation round `round_` (0 = the initial activation)."""
    at = steps_by_kind(trace)
    return at.get("initial" if round_ == 0 else f"round {round_}", at.get("initial", 0))


def _story(trace: Trace) -> _Story:
    d = trace.detail(EcphoryDetail)
    if d is None:
        raise ValueError(f"this is a {trace.method!r} trace, not an EcphoryRAG trace")
    seen: set[str] = set()
    entities = []
    for n in trace.nodes:
        if n.kind == "entity" and n.round is not None and n.id not in seen:
            seen.add(n.id)
            entities.append(n)
    first: dict[str, ActivatedEngram] = {}
    for a in [*d.initial, *(a for r in d.rounds for a in r.new)]:
        first.setdefault(a.key, a)
    by_engram = {a.engram_id: a for a in [*d.initial, *d.final, *(a for r in d.rounds
                                                                    for a in [*r.new, *r.centroid_neighbours])]}
    seeds: dict[str, dict[int, float]] = defaultdict(dict)
    for r in d.rounds:
        for e, w in zip(r.seed_ids, r.weights):
            a = by_engram.get(e)
            if a is not None:
                seeds[a.key][r.round] = seeds[a.key].get(r.round, 0.0) + w
    brought = {int(e.target[2:]): e.source for e in trace.edges if e.kind == "provenance" and e.target.startswith("c:")}
    return _Story(trace, d, steps_by_kind(trace), entities, first,
                  {a.key: i for i, a in enumerate(d.final, start=1)},
                  {k: sorted(v.items()) for k, v in seeds.items()}, brought)


def _drawn(s: _Story, answers: frozenset[str], expanded: set[str]) -> tuple[dict[str, str], dict[int, int]]:
    """(entity node id → the node it is drawn as: itself, or its column's count node; round → how
    many of that column fold)."""
    columns: dict[int, list[GraphNode]] = defaultdict(list)
    for n in s.entities:
        columns[n.round or 0].append(n)
    bringers = set(s.brought.values())
    drawn_as: dict[str, str] = {}
    folded: dict[int, int] = {}
    for r, members in columns.items():
        def rank(n: GraphNode) -> tuple:
            key = n.id[2:]
            must = key in s.final_rank or names_gold_answer(n.label, answers) or n.id in bringers
            return (not must, s.final_rank.get(key, 10**6), key not in s.seeds, -(n.score or 0.0))
        ordered = sorted(members, key=rank)
        must = sum(1 for n in ordered if rank(n)[0] is False)
        keep = max(COLUMN_CAP, must)
        count_id = f"{MORE}{r}"
        opened = count_id in expanded
        for i, n in enumerate(ordered):
            drawn_as[n.id] = n.id if i < keep or opened else count_id
        if len(ordered) > keep:
            folded[r] = len(ordered) - keep
    return drawn_as, folded


def picture(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None, gold_answers: Iterable[str] = (),
            expanded: Iterable[str] = (), upto: int | None = None) -> Picture:
    """The retrieval as a picture (see the module); `expanded`: the count nodes a click opened;
    `upto`: a trace step index, the picture as it stood then (None: the whole retrieval)."""
    s = _story(trace)
    last = len(trace.steps) - 1
    upto = last if upto is None else max(0, min(upto, last))
    reranked = "rerank" in s.step_of and upto >= s.step_of["rerank"]
    gold = set(gold_chunk_ids or ())
    answers = frozenset(plain_name(a) for a in gold_answers if a.strip())
    opened = set(expanded)
    drawn_as, folded = _drawn(s, answers, opened)
    rounds = sorted({n.round or 0 for n in s.entities})
    context_layer = (max(rounds) if rounds else 0) + 2
    nodes: list[PictureNode] = [PictureNode("q", "question", "question", role="question", weight=1.3,
                                            step=s.step_of.get("cues", 0), layer=0, labelled=True,
                                            tooltip=trace.question)]
    for i, cue in enumerate(s.detail.cues):
        hits = len(s.detail.cue_hits.get(cue, []))
        nodes.append(PictureNode(f"cue:{i}", clip(cue, NAME_CHARS), "entity", role="cue", step=s.step_of.get("cues", 0), layer=0,
                                 labelled=True, tooltip=f"cue from the question: {cue}; {hits} engram hits",
                                 ref=cue))
    for n in s.entities:
        if drawn_as[n.id] != n.id:
            continue
        nodes.append(_entity(s, n, reranked, gold, answers))
    for r, count in folded.items():
        cid = f"{MORE}{r}"
        nodes.append(PictureNode(cid, f"− fold {count}" if cid in opened else f"+{count} more", "count", role="count",
                                 fate="dropped", step=s.column_step(r), layer=r + 1, labelled=True,
                                 ref=",".join(n.id[2:] for n in s.entities if drawn_as[n.id] == cid or
                                              (cid in opened and n.round == r)),
                                 tooltip=f"{count} more entities first activated in {_when(r)}, not drawn; "
                                         f"click to {'fold' if cid in opened else 'open'} them"))
    nodes += _passages(s, gold, context_layer, drawn_as)
    edges = _edges(s, drawn_as, {n.id for n in nodes})
    looks = _looks(s, nodes, edges)
    shown = looks[upto].shown if upto < len(looks) else frozenset()
    drawn_nodes = [n for n in nodes if not shown or n.id in shown]
    titles = ["question"] + [_column(r) for r in range(context_layer - 1)] + ["context"]
    return Picture(f"ecphory-activation-step-{upto + 1}" if upto != last else "ecphory-activation",
                   tuple(nodes), tuple(edges), _legend(drawn_nodes, edges, shown, folded, opened), _note(s, upto, drawn_as, folded),
                   tuple(looks), tuple(titles), listed_layers=(context_layer,))  # the context reads #1 down


def _when(round_: int) -> str:
    return "the initial activation" if round_ == 0 else f"round {round_}"


def _column(round_: int) -> str:
    return "initial" if round_ == 0 else f"round {round_}"


def _entity(s: _Story, n: GraphNode, reranked: bool, gold: set[int], answers: frozenset[str]) -> PictureNode:
    key = n.id[2:]
    a = s.first.get(key)
    final = s.final_rank.get(key) if reranked else None
    is_answer = names_gold_answer(n.label, answers)
    chunks = {c for c in (a.chunk_id if a else None, _final_chunk(s, key) if reranked else None) if c is not None}
    lines = engram_lines(n.label, n.group, n.round or 0, a, final)
    for r, w in s.seeds.get(key, []):
        lines.append(f"seed of round {r} (weight {w:.2f})")
    from_gold = bool(chunks & gold)
    if from_gold:
        lines.append("read from a gold passage")
    if is_answer:
        lines.append(f"the question's {GOLD_ANSWER}")
    return PictureNode(n.id, f"{n.label} ({GOLD_ANSWER})" if is_answer else n.label, "entity",
                       role="final" if final else "", fate="final" if final else f"round {n.round or 0}",
                       weight=ANSWER_WEIGHT if is_answer else 1.5 if final else 1.0, step=n.step, layer=(n.round or 0) + 1,
                       labelled=_named(s, key, n.round or 0) or is_answer or from_gold, gold=from_gold, tooltip="\n".join(lines), ref=key)


def _named(s: _Story, key: str, round_: int) -> bool:
    """A final engram's name is written when it ranks high, or when a round found it (what spreading added)."""
    rank = s.final_rank.get(key)
    return rank is not None and (rank <= NAMED_FINALS or round_ > 0)


def _final_chunk(s: _Story, key: str) -> int | None:
    return next((a.chunk_id for a in s.detail.final if a.key == key), None)


def _passages(s: _Story, gold: set[int], layer: int, drawn_as: dict[str, str]) -> list[PictureNode]:
    """The context passages in their order, each saying why it is there; then the gold passages the
    context left out (their engrams activated or not)."""
    t = s.trace
    ranked = {r.chunk_id: r for r in t.ranked}
    step = s.step_of.get("context", len(t.steps) - 1)
    out = []
    context = list(s.detail.context_chunk_ids)
    for pos, cid in enumerate(context, start=1):
        c, r = t.chunk(cid), ranked.get(cid)
        why = r.why if r is not None and r.why else (r.source if r is not None else "")
        out.append(PictureNode(f"c:{cid}", clip(f"#{pos} " + (c.title if c and c.title else f"chunk {cid}"), PASSAGE_CHARS),
                               "passage",
                               role="context", fate="context", weight=1.3, step=step, layer=layer, labelled=True,
                               gold=cid in gold, tooltip="\n".join(x for x in (
                                   f"context passage #{pos} (chunk {cid})" + (" · a gold passage" if cid in gold else ""),
                                   why, (c.text[:PASSAGE_TIP] if c else "")) if x), ref=str(cid)))
    for cid in sorted(gold - set(context)):
        c, r = t.chunk(cid), ranked.get(cid)
        where = f"ranked {r.rank}" if r is not None else "not ranked"
        out.append(PictureNode(f"c:{cid}", clip(c.title if c and c.title else f"chunk {cid}", PASSAGE_CHARS),
                               "passage",
                               role="left out", step=step, layer=layer, labelled=True, gold=True,
                               tooltip="\n".join(x for x in (f"a gold passage outside the context (chunk {cid}): {where}",
                                                             (c.text[:PASSAGE_TIP] if c else "")) if x),
                               ref=str(cid)))
    return out


def _edges(s: _Story, drawn_as: dict[str, str], present: set[str]) -> list[PictureEdge]:
    """Activation edges (what brought each entity), folded ends drawn to their count node; the
    passage edges from the engram that brought each passage (a left-out gold passage: from the
    first engram read from it that is drawn)."""
    out: dict[tuple[str, str], PictureEdge] = {}
    labels = {n.id: n.label for n in s.trace.nodes}

    def end(nid: str) -> str:
        return drawn_as.get(nid, nid)

    for e in s.trace.edges:
        if e.kind != "activation":
            continue
        a, b = end(e.source), end(e.target)
        if a == b or a not in present or b not in present or (a, b) in out:
            continue
        how = "a cue the question names" if e.source == "q" and e.target.startswith("cue:") else \
            origin_words(e.role or e.label)
        out[(a, b)] = PictureEdge(f"a:{a}->{b}", a, b, "activation", fate=e.role, step=e.step,
                                  tooltip=f"{labels.get(e.source, e.source)} → {labels.get(e.target, e.target)}: {how}",
                                  ref="" if e.chunk_id is None else str(e.chunk_id))
    for e in s.trace.edges:
        if e.kind != "provenance":
            continue
        a = end(e.source)
        if a in present and e.target in present:
            out[(a, e.target)] = PictureEdge(f"p:{a}->{e.target}", a, e.target, "passage", fate=e.role, step=e.step,
                                             tooltip=f"brought by {labels.get(e.source, e.source)} ({e.label})",
                                             ref=e.target[2:])
    for n in [x for x in present if x.startswith("c:")]:
        cid = int(n[2:])
        if any(b == n for _, b in out):
            continue
        from_ = next((end(f"e:{a.key}") for a in [*s.detail.initial, *(a for r in s.detail.rounds for a in r.new)]
                      if a.chunk_id == cid and end(f"e:{a.key}") in present), None)
        if from_ is not None:
            out[(from_, n)] = PictureEdge(f"p:{from_}->{n}", from_, n, "passage", fate="left out",
                                          step=s.step_of.get("context"),
                                          tooltip=f"{labels.get(from_, from_)} was read from this passage", ref=n[2:])
    return list(out.values())


def _looks(s: _Story, nodes: list[PictureNode], edges: list[PictureEdge]) -> list[StepLook]:
    """One look per trace step: what it shows (everything up to it), lights (what it added; the
    re-rank: the final engrams) and fades (from the re-rank on: the entities it did not recall)."""
    rerank = s.step_of.get("rerank")
    final_ids = {f"e:{k}" for k in s.final_rank}
    out = []
    step_of = {e.id: e.step for e in edges}
    for step in range(len(s.trace.steps)):
        shown = {n.id for n in nodes if (n.step or 0) <= step}
        ends = {e.id for e in edges if e.source in shown and e.target in shown and (e.step or 0) <= step}
        lit = {n.id for n in nodes if n.id in shown and n.step == step} | {e for e in ends if step_of[e] == step}
        faded: set[str] = set()
        if rerank is not None and step >= rerank:
            faded = {n.id for n in nodes if n.id in shown and (n.kind == "count" or
                                                              (n.kind == "entity" and n.role != "cue"
                                                               and n.id not in final_ids))}
            faded |= {e.id for e in edges if e.id in ends and (e.source in faded or e.target in faded)}
            if step == rerank:
                lit = {i for i in final_ids if i in shown}
        out.append(StepLook(step, s.trace.steps[step].title, frozenset(shown | ends), frozenset(lit - faded),
                            frozenset(faded)))
    return out


def _legend(nodes: list[PictureNode], edges: list[PictureEdge], shown: frozenset[str], folded: dict[int, int],
            opened: set[str]) -> tuple[LegendEntry, ...]:
    """One entry per mark drawn, counted as the note counts (entities folded count as entities)."""
    out: list[LegendEntry] = []

    def add(mark: str, label: str, count: int, unit: str = "") -> None:
        if count:
            out.append(LegendEntry(mark, label, count, unit))

    add("node:cue", "cue", sum(n.role == "cue" for n in nodes))
    # an activated entity's column is its round + 1 (the question's is 0)
    for r in sorted({(n.layer or 1) - 1 for n in nodes if n.kind == "entity" and n.role not in ("cue", "final")}):
        add(f"node:entity:round {r}", ROUND_WORDS.get(r, f"activated in round {r}"),
            sum(n.fate == f"round {r}" for n in nodes))
    add("node:final:final", FINAL, sum(n.fate == "final" for n in nodes))
    boxes = {n.id for n in nodes if n.kind == "count"}
    add("node:count", "folded (click to open)",
        sum(k for r, k in folded.items() if f"{MORE}{r}" in boxes and f"{MORE}{r}" not in opened), "entities")
    add("node:passage:context", "context passage", sum(n.role == "context" for n in nodes))
    add("node:passage", LEFT_OUT, sum(n.role == "left out" for n in nodes))
    if any(n.gold for n in nodes):
        out.append(LegendEntry("node:gold", "ring: from a gold passage"))
    drawn_edges = [e for e in edges if not shown or e.id in shown]
    if any(e.kind == "activation" for e in drawn_edges):
        out.append(LegendEntry("edge:activation", "activated by"))
    if any(e.kind == "passage" for e in drawn_edges):
        out.append(LegendEntry("edge:passage", "brought the passage"))
    return tuple(out)


def _note(s: _Story, upto: int, drawn_as: dict[str, str], folded: dict[int, int]) -> str:
    """What the step shows, in the same counts as the Learn page's lessons (memrag.methods.ecphory.activation)."""
    kinds = [st.kind for st in s.trace.steps[: upto + 1]]
    round_ = sum(1 for k in kinds if k == "round")
    title = s.trace.steps[upto].title
    if "initial" not in kinds:
        return f"{title}: {words.counted(len(s.detail.cues), 'cue')} from the question; nothing activated yet."
    active = activation.active_after(s.detail, round_)
    note = (f"{title}: {words.counted(active.entities, 'entity')} activated so far "
            f"({active.engrams} engrams: one per mention)")
    drawn = sum(1 for n in s.entities if drawn_as[n.id] == n.id and _known(s, n, upto))
    known = sum(1 for n in s.entities if _known(s, n, upto))
    if drawn < known:
        note += (f"; {drawn} of the graph's {known} drawn (E_final, the gold answer, the engrams that brought a "
                 f"passage and the seeds first); the rest fold into boxes (click one to open it)")
    note += "."
    if "rerank" in kinds:
        note += (f" The re-rank recalled {len(s.detail.final)} engrams (E_final, one per entity); "
                 "what it did not recall stays, faded." if upto == s.step_of.get("rerank") else
                 f" E_final: {len(s.detail.final)} engrams, one per entity.")
    if "context" in kinds:
        n = len(s.detail.context_chunk_ids)
        note += f" The answer reads {n} passage{'' if n == 1 else 's'}, each joined to the engram that brought it."
    for r in s.detail.rounds[:round_]:
        if r.note:
            note += f" {r.note[:1].upper()}{r.note[1:]}."
    return note


def _known(s: _Story, n: GraphNode, upto: int) -> bool:
    return (n.step or 0) <= upto
