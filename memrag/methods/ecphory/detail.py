"""EcphoryRAG's record in a trace (`Trace.details`): the cues, each round's activated engrams and
the re-ranked final engrams with the context they gave."""

from __future__ import annotations

from dataclasses import dataclass, field


ORIGINS = ("query", "cue", "semantic", "graph")  # how an engram was activated (its `origin`)


@dataclass
class ActivatedEngram:
    engram_id: int
    key: str
    name: str
    type: str
    description: str
    chunk_id: int
    similarity: float  # cosine to the question
    round: int  # 0 = initial activation
    origin: str  # query | cue | semantic | graph
    via: str = ""  # the cue, or the seed that brought it


@dataclass
class EcphoryRound:
    round: int
    seed_ids: list[int]
    weights: list[float]
    centroid_neighbours: list[ActivatedEngram] = field(default_factory=list)
    new: list[ActivatedEngram] = field(default_factory=list)
    centroid_scores: list[float] = field(default_factory=list)  # cosine of each centroid neighbour to the centroid
    new_counts: dict[str, int] = field(default_factory=dict)  # origin → engrams newly activated (all, even if `new` is cut)
    note: str = ""  # why the round added nothing or did not run


@dataclass
class EcphoryDetail:
    cues: list[str] = field(default_factory=list)
    cue_hits: dict[str, list[int]] = field(default_factory=dict)
    initial: list[ActivatedEngram] = field(default_factory=list)
    rounds: list[EcphoryRound] = field(default_factory=list)
    final: list[ActivatedEngram] = field(default_factory=list)
    c_assoc: list[int] = field(default_factory=list)
    c_direct: list[int] = field(default_factory=list)
    context_chunk_ids: list[int] = field(default_factory=list)
