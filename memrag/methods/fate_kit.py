"""Gold fates as typed records: where a method found or lost each gold chunk of a question.

Each method's wing declares its fates as an enum whose members carry a `FateInfo` (the sentence
counted across questions, its order, the answer card's few words) and one `judge` function that
turns a trace into `FateRecord`s with structured fields (hop, round, rank, path id, score). The
sentence is made from the record; nothing reads the sentence back, except `read_fate`, which maps
the sentences of old run files (legacy labels included) onto records.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from memrag.trace import RankedChunk, Trace

# A gold chunk's place in the ranked list: (1-based rank counted in distinct units, its entry).
Position = tuple[int, RankedChunk]
UNKNOWN_ORDER = 10_000  # not in the memory, and any fate no method declares, come last


@dataclass(frozen=True)
class FateInfo:
    sentence: str  # as counted; "{round}" is filled from the record
    order: int  # lower is closer to "found"; a templated fate adds its round
    short: str = ""  # the answer card's few words (default: the sentence)
    clean: bool = False  # found by the method's own step: no caveat on the answer card
    legacy: tuple[str, ...] = ()  # older sentences for this fate ("{round}" filled the same way)

    @property
    def templated(self) -> bool:
        return "{round}" in self.sentence


class FateKind(Enum):
    """Base of each method's fate enum (members' values are FateInfo)."""

    @property
    def info(self) -> FateInfo:
        return self.value


class DenseFate(FateKind):
    """The dense ranking's fates: the baseline's, and a graph method's that fell back to it."""
    IN_TOP_K = FateInfo("in the top k", 0, "in the top k", clean=True)
    BEYOND_K = FateInfo("beyond k", 1, "ranked beyond k")


class MissingFate(FateKind):
    """Not a method's doing: the evaluation found no chunk of that gold passage in the memory."""
    NOT_IN_MEMORY = FateInfo("not in the memory", UNKNOWN_ORDER, "not in the memory")


NOT_IN_MEMORY = MissingFate.NOT_IN_MEMORY.info.sentence


@dataclass(frozen=True)
class Moment:
    """One step of a gold passage's story that a "show where" can open: a hop's listing (NeuroPath:
    `hop` and the path's `path_id`), an activation step (EcphoryRAG: `round`, 0 = the initial
    activation), a row of a method's own table (`row`: HippoRAG 2's retrieved fact), or a place in
    the ranked list (`rank`)."""
    text: str  # "hop 1: path #2 listed, not kept, score 0.735, rank 2"
    hop: int | None = None
    round: int | None = None
    path_id: str | None = None
    rank: int | None = None
    chunk_id: int | None = None
    row: str | None = None  # the key of the row the method's own view highlights, when not its path

    @property
    def own_row(self) -> str | int | None:
        """The row the method's own view highlights: the row named, else the path, else the passage."""
        return next((x for x in (self.row, self.path_id, self.chunk_id) if x is not None), None)


@dataclass(frozen=True)
class FateRecord:
    chunk_id: int | None
    kind: FateKind
    detail: str = ""
    rank: int | None = None
    hop: int | None = None  # NeuroPath: the hop that showed, pruned or last judged it
    round: int | None = None  # EcphoryRAG: the round that first activated it
    path_id: str | None = None  # NeuroPath: the path that reached it
    score: float | None = None  # the path's pruning score, the passage's PageRank mass …
    first_miss: Moment | None = None  # the earliest step where it could have been kept
    final_loss: Moment | None = None  # the step where it was finally lost (None: it was not)

    @property
    def fate(self) -> str:
        s = self.kind.info.sentence
        return s.format(round=self.round) if self.kind.info.templated else s

    @property
    def order(self) -> int:
        return self.kind.info.order + ((self.round or 0) if self.kind.info.templated else 0)

    @property
    def short(self) -> str:
        s = self.kind.info.short or self.kind.info.sentence
        return s.format(round=self.round) if "{round}" in s else s

    @property
    def clean(self) -> bool:
        return self.kind.info.clean

    def to_dict(self) -> dict[str, Any]:
        """The JSON form in results.jsonl (unchanged since fates were sentences)."""
        return {"chunk_id": self.chunk_id, "fate": self.fate, "detail": self.detail, "rank": self.rank}


Judge = Callable[[Trace, int, "Position | None", int], FateRecord]


@dataclass(frozen=True)
class FateRules:
    """A method's fates: its kinds (closest to found first) and the judge of one gold chunk."""
    kinds: type[FateKind]
    judge: Judge

    @property
    def family(self) -> tuple[str, ...]:
        """The fates always listed for the method (zero counts too), so runs compare line by line;
        a templated fate is listed only where it occurs."""
        return tuple(k.info.sentence for k in self.kinds if not k.info.templated)


# ------------------------------------------------------------------ shared judging helpers
def positions(trace: Trace, unit_of: Callable[[int], Hashable] | None) -> dict[int, Position]:
    """chunk id → (1-based rank counted in distinct units up to it, its first ranked entry)."""
    units: set[Hashable] = set()
    out: dict[int, Position] = {}
    for r in trace.ranked:
        units.add(unit_of(r.chunk_id) if unit_of is not None else r.chunk_id)
        if r.chunk_id not in out:
            out[r.chunk_id] = (len(units), r)
    return out


def where(pos: Position | None) -> str:
    if pos is None:
        return "not in the ranked list"
    rank, r = pos
    return f"rank {rank} ({r.source}{': ' + r.why if r.why else ''})"


def rank_of(pos: Position | None) -> int | None:
    return pos[0] if pos else None


def in_top(pos: Position | None, k: int) -> bool:
    return pos is not None and pos[0] <= k


def dense_fate(chunk_id: int, pos: Position | None, k: int, note: str = "") -> FateRecord:
    """The dense ranking's fate: in the first k, or beyond."""
    if in_top(pos, k):
        return FateRecord(chunk_id, DenseFate.IN_TOP_K, f"rank {pos[0]}{note}", rank_of(pos))
    said = f"beyond k at rank {pos[0]}" if pos is not None else "beyond k: not in the ranked list"
    return FateRecord(chunk_id, DenseFate.BEYOND_K, f"{said} (k = {k}){note}", rank_of(pos))


def best_record(records: list[FateRecord]) -> FateRecord:
    """Of several chunks of one gold passage, the one that got furthest (ties: best rank)."""
    if not records:
        raise ValueError("best_record needs at least one record")
    return min(records, key=lambda r: (r.order, r.rank if r.rank is not None else 1 << 30))


def judge_all(rules: FateRules, trace: Trace, gold_chunk_ids: Iterable[int], k: int,
              unit_of: Callable[[int], Hashable] | None) -> list[FateRecord]:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    pos = positions(trace, unit_of)
    return [_with_final_loss(rules.judge(trace, cid, pos.get(cid), k), k)
            for cid in dict.fromkeys(int(c) for c in gold_chunk_ids)]


def _with_final_loss(record: FateRecord, k: int) -> FateRecord:
    """A passage outside the top k was finally lost where the ranked list placed it, unless its
    method's judge named a later, more telling step."""
    if record.final_loss is not None or (record.rank is not None and record.rank <= k):
        return record
    said = f"ranked {record.rank}, beyond k = {k}" if record.rank is not None else "not in the ranked list"
    return replace(record, final_loss=Moment(said, rank=record.rank, chunk_id=record.chunk_id))


# ------------------------------------------------------------------ reading old files
def _templated_round(sentence: str, template: str) -> int | None:
    """The round in a sentence made from `template`, or None when it was not made from it."""
    head, _, tail = template.partition("{round}")
    if len(sentence) <= len(head) + len(tail) or not (sentence.startswith(head) and sentence.endswith(tail)):
        return None
    middle = sentence[len(head):len(sentence) - len(tail)]
    return int(middle) if middle.isdigit() else None


def read_fate(entry: dict[str, Any], kinds: Iterable[type[FateKind]]) -> FateRecord:
    """A results line's fate entry (its sentence, legacy labels included) as a record; a sentence
    no kind declares stays readable as its text through `UnknownFate`."""
    sentence = str(entry.get("fate", ""))
    for family in (*kinds, DenseFate, MissingFate):
        for kind in family:
            for template in (kind.info.sentence, *kind.info.legacy):
                if "{round}" in template:
                    rnd = _templated_round(sentence, template)
                    if rnd is not None:
                        return FateRecord(entry.get("chunk_id"), kind, str(entry.get("detail", "")),
                                          entry.get("rank"), round=rnd)
                elif sentence == template:
                    return FateRecord(entry.get("chunk_id"), kind, str(entry.get("detail", "")), entry.get("rank"))
    return FateRecord(entry.get("chunk_id"), UnknownFate(sentence), str(entry.get("detail", "")),  # type: ignore[arg-type]
                      entry.get("rank"))


class UnknownFate:
    """A fate sentence from a file that no registered method declares: shown as written, last."""

    name = "UNKNOWN"

    def __init__(self, sentence: str) -> None:
        self.info = FateInfo(sentence.replace("{round}", "(round)"), UNKNOWN_ORDER)
