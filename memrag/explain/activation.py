"""EcphoryRAG's activation counted one way for every page: entities (each name once) and engrams
(one per mention, so an entity mentioned in four passages is four engrams).

The Ask page's graph notes, the Learn page's lessons and their seed lists all count with these.
"""

from __future__ import annotations

from dataclasses import dataclass

from memrag.methods.ecphory.detail import EcphoryDetail, EcphoryRound


@dataclass(frozen=True)
class Activated:
    entities: int
    engrams: int


def new_in_round(detail: EcphoryDetail, round_: int) -> Activated:
    """What round `round_` (0 = the initial activation) activated for the first time. `new_counts`
    holds every engram even when the round's `new` list was cut; entities are counted from the
    engrams listed, leaving out entities already active before the round."""
    before = {a.key for a in detail.initial} if round_ > 0 else set()
    for r in detail.rounds:
        if r.round < round_:
            before |= {a.key for a in r.new}
    if round_ == 0:
        return Activated(len({a.key for a in detail.initial}), len(detail.initial))
    r = next((x for x in detail.rounds if x.round == round_), None)
    if r is None:
        return Activated(0, 0)
    return Activated(len({a.key for a in r.new} - before), sum(r.new_counts.values()) or len(r.new))


def active_after(detail: EcphoryDetail, round_: int) -> Activated:
    """Everything active after round `round_` (0 = after the initial activation)."""
    engrams = list(detail.initial) + [a for r in detail.rounds if r.round <= round_ for a in r.new]
    listed_all = sum(new_in_round(detail, r.round).engrams for r in detail.rounds if r.round <= round_)
    return Activated(len({a.key for a in engrams}), len(detail.initial) + listed_all)


@dataclass(frozen=True)
class Seed:
    name: str
    engrams: int  # how many of the round's seed engrams are mentions of this entity
    weight: float  # their weights summed


def merged_seeds(r: EcphoryRound, names: dict[int, str]) -> list[Seed]:
    """A round's seeds, one per entity name, in first-seed order; several seed engrams of one
    entity (mentions in several passages) become one entry with their count and summed weight."""
    out: dict[str, Seed] = {}
    for e, w in zip(r.seed_ids, r.weights):
        name = names.get(e, str(e))
        s = out.get(name)
        out[name] = Seed(name, 1, w) if s is None else Seed(name, s.engrams + 1, s.weight + w)
    return list(out.values())


def seed_text(s: Seed) -> str:
    """'Northern Tidewater Company ×4 (0.42)': name, engram count when more than one, weight."""
    return s.name + (f" ×{s.engrams}" if s.engrams > 1 else "") + f" ({s.weight:.2f})"


def names_counted(names: list[str]) -> str:
    """'Northern Tidewater Company ×3, islands': repeated names (several engrams of one entity) once."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(n + (f" ×{c}" if c > 1 else "") for n, c in counts.items())
