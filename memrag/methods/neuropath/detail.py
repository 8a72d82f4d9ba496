"""NeuroPath's record in a trace (`Trace.details`): its seeds, every hop's candidate paths and the
model's judgements, what completion added and the memory graph's reach."""

from __future__ import annotations

from dataclasses import dataclass, field

from memrag.trace import CorefMember


@dataclass
class PathTriple:
    triple_id: int
    head: str
    relation: str
    tail: str
    chunk_id: int


@dataclass
class PathCandidate:
    pid: str  # unique within the trace
    hop: int  # hop that created it
    triples: list[PathTriple]
    frontier: str  # entity key where it may grow
    frontier_name: str
    chunk_ids: list[int]
    text: str
    score: float | None = None  # pruning similarity to the goal
    rank: int | None = None  # rank among this hop's new paths by score
    fate: str = "shown"  # pruned | shown | valid | expanded | dropped | unlisted
    listed_as: int | None = None  # the number shown in the prompt
    parent: str | None = None
    kept_from: int | None = None  # hop it was kept from (re-listed, not expandable)
    # The likelihood tracker's judgement: P("yes") to "does this path help?", normalised over yes +
    # no (0 when neither was among the top tokens); a path carried from an earlier hop keeps the
    # probability it was judged with there. None: not judged (generative tracker, a hop that fell back).
    probability: float | None = None

    @property
    def is_new(self) -> bool:
        """Created at this hop's listing, not carried from an earlier hop."""
        return self.kept_from is None


@dataclass
class NeuroPathSeed:
    query_entity: str
    key: str
    name: str
    similarity: float
    origin: str = "query-entity"  # query-entity | verbatim
    accepted: bool = True
    coref: list[CorefMember] = field(default_factory=list)
    link: int = 1  # which nearest node of its query entity (1 = the nearest; seed_top links per entity)


@dataclass
class NeuroPathHop:
    hop: int
    # what this hop's new paths were pruned against: the previous hop's expansion requirement, or
    # the question at hop 1 (the JSON key stays "goal" so older traces read)
    goal: str
    candidates: list[PathCandidate] = field(default_factory=list)
    new_count: int = 0
    pruned_count: int = 0
    capped: bool = False
    reasoning_chain: str = ""
    expansion_requirement: str = ""
    valid_ids: list[int] = field(default_factory=list)
    expand_ids: list[int] = field(default_factory=list)
    invalid_ids: list[int] = field(default_factory=list)
    continue_: int = 0
    call_index: int | None = None  # index into Trace.llm_calls
    failed: bool = False
    failure: str = ""
    # Which tracker decided the kept paths (valid_ids) at this hop: "generative" (the model's
    # valid_ids) or "likelihood" (judged by probability; the candidates carry it). A likelihood
    # hop that fell back says why in tracker_note; tracker_note also states the expansion rule.
    tracker: str = "generative"
    tracker_note: str = ""
    # With the likelihood tracker, the generative call's own valid_ids (recorded for comparison,
    # not used); empty with the generative tracker, whose picks are valid_ids.
    generated_valid_ids: list[int] = field(default_factory=list)
    judge_call_indices: list[int] = field(default_factory=list)  # indexes into Trace.llm_calls


@dataclass
class ReachedChunk:
    chunk_id: int
    hop: int  # the first hop at which a path from the seeds could reach it


@dataclass
class NeuroPathDetail:
    query_entities: list[str] = field(default_factory=list)
    seeds: list[NeuroPathSeed] = field(default_factory=list)
    hops: list[NeuroPathHop] = field(default_factory=list)
    dp_chunk_ids: list[int] = field(default_factory=list)
    de_query: str = ""
    stop_reason: str = ""
    fallback_dense: bool = False
    tracking_failed: bool = False
    # chunks a path from the seeds could reach within max_hops that no candidate path touched (the
    # memory graph's reach, so a gold fate can tell "tracking did not go there" from "no seed
    # reaches it"); None in traces written before it was recorded
    unlisted_reach: list[ReachedChunk] | None = None
    path_vector_note: str = ("a path's vector is the normalised sum of its triples' stored vectors "
                             "(an approximation of embedding the path text)")
