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


@dataclass(frozen=True)
class RoundsAdded:
    """What the associative rounds changed in what was recalled (E_final), counted from one trace."""
    recalled: int  # engrams in E_final
    from_rounds: int  # of them first activated in a round ≥ 1
    displaced: int  # initial engrams that E_final would hold had no round run, and does not
    above_a_query_hit: int  # round engrams E_final ranks above one of its initial query hits


def rounds_added(detail: EcphoryDetail) -> RoundsAdded:
    final_keys = {a.key for a in detail.final}
    from_rounds = [i for i, a in enumerate(detail.final) if a.round >= 1]
    query_at = [i for i, a in enumerate(detail.final) if a.round == 0 and a.origin == "query"]
    above = sum(1 for i in from_rounds if query_at and i < query_at[-1])
    # E_final without the rounds: the initial engrams by similarity, one per entity, as many as recalled
    without: list[str] = []
    for a in sorted(detail.initial, key=lambda a: -a.similarity):
        if a.key not in without and len(without) < len(detail.final):
            without.append(a.key)
    return RoundsAdded(len(detail.final), len(from_rounds), len(set(without) - final_keys), above)


def rounds_added_sentence(r: RoundsAdded) -> str:
    """The count for a trace, and why spreading can only displace cue hits (the paper's Algorithm 1:
    the initial query hits and the final re-rank use the same similarity to the question)."""
    if not r.recalled:
        return "Nothing was recalled, so the rounds added nothing."
    out = (f"What the rounds added: {r.from_rounds} of the {r.recalled} recalled engrams were first "
           f"activated by spreading (a round ≥ 1)")
    if r.displaced:
        out += f", in place of {r.displaced} initially activated engram(s) that would otherwise be recalled"
    out += ". "
    if r.above_a_query_hit:
        return out + f"{r.above_a_query_hit} of them rank above an initial query hit."
    return out + ("None ranks above an initial query hit, and none can: the query hits are the engrams most "
                  "similar to the question, and the re-rank orders by that same similarity, so spreading "
                  "can only displace cue hits.")
