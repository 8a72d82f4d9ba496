"""The trace: everything a retrieval did, as typed dataclasses that round-trip through JSON.

This is the only contract between the methods and the app: methods fill a
Trace, `memrag.viz` draws it. Nothing here is rendered as markup anywhere; all
text fields are plain text.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

TRACE_VERSION = 1


# ---------------------------------------------------------------- shared parts
@dataclass
class Stamp:
    """Reproducibility stamp: what produced this trace."""
    memrag_revision: str = ""
    llm_backend: str = ""
    llm_model: str = ""
    llm_file_sha256: str | None = None
    embedder: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    prompt_version: str = ""
    corpus: str = ""


def token_sum(counts: Iterable[int | None]) -> int | None:
    """The one rule for adding token counts: unknown stays unknown (a sum that includes an
    unknown count is not a count), never 0."""
    total = 0
    for c in counts:
        if c is None:
            return None
        total += c
    return total


@dataclass(kw_only=True)
class CallCost:
    """What one LLM call cost, as the engine reported it: unknown counts stay None, never 0.
    `prompt_tokens` is the whole prompt, `prompt_tokens_cached` the prefix the engine reused. A
    response-cache hit keeps its original counts and seconds, with cached=True: it is shown as
    recorded, never as free work. The records of a call (the backend's Completion, the trace's
    LLMCallRecord, the ledger's CallRecord) are CallCosts; memory ledger rows and recordings store
    these fields flat under these names."""
    prompt_tokens: int | None = None
    prompt_tokens_cached: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    cached: bool = False

    @property
    def total_tokens(self) -> int | None:
        return token_sum((self.prompt_tokens, self.completion_tokens))

    def cost(self) -> CallCost:
        """Only the cost, whatever record carries it."""
        return CallCost(**self.cost_dict())

    def cost_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in COST_FIELDS}

    @staticmethod
    def from_row(row: dict[str, Any]) -> CallCost:
        """The cost fields of a stored row (a memory's ledger row, a recorded response); a field
        an older file lacks takes its default (an unknown count)."""
        return CallCost(**{name: row[name] for name in COST_FIELDS if name in row})


COST_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(CallCost))


def token_totals(costs: Iterable[CallCost]) -> tuple[int | None, int | None]:
    """Prompt and completion tokens over calls; an unknown count in either column leaves both
    unknown (a prompt total beside an unknown completion total would read as the whole cost)."""
    costs = list(costs)
    if token_sum(n for c in costs for n in (c.prompt_tokens, c.completion_tokens)) is None:
        return None, None
    return token_sum(c.prompt_tokens for c in costs), token_sum(c.completion_tokens for c in costs)


@dataclass
class LLMCallRecord(CallCost):
    stage: str
    messages: list[dict[str, str]]
    raw_reply: str
    parse_errors: list[str] = field(default_factory=list)
    retries: int = 0
    ok: bool = True
    model: str = ""
    backend: str = ""
    key: str = ""  # response-cache key: identical calls shared by methods are counted once in totals
    shared: bool = False  # the query-entity call, used by more than one method
    structured: str = ""  # the server's structured-output mode, where it has several (see Completion)


@dataclass
class Step:
    """One replayable step (seeds, hop 1, completion, cues, round 2, re-rank …)."""
    index: int
    kind: str
    title: str
    summary: str = ""
    node_ids: list[str] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)


@dataclass
class GraphNode:
    id: str  # "e:<entity key>", "c:<chunk id>", "q"
    label: str
    kind: str  # entity | chunk | query
    step: int | None = None  # first step it appears in
    score: float | None = None
    chunk_ids: list[int] = field(default_factory=list)
    role: str = ""  # method-specific: seed, coref, frontier, valid, pruned / query, cue, semantic, graph
    group: str = ""  # entity type, for colour
    round: int | None = None
    tooltip: str = ""
    gold: bool = False


@dataclass
class GraphEdge:
    id: str
    source: str
    target: str
    kind: str  # triple | coref | activation | cooccur | provenance
    label: str = ""
    step: int | None = None
    chunk_id: int | None = None
    role: str = ""


@dataclass
class ChunkRef:
    chunk_id: int
    doc_id: str
    title: str
    text: str


@dataclass
class RankedChunk:
    chunk_id: int
    rank: int
    score: float | None
    source: str  # path | completion | dense | c_assoc | c_direct | activated
    why: str = ""


@dataclass
class AnswerResult:
    answer: str
    raw_answer: str
    reasoning: str = ""
    cited_chunk_ids: list[int] = field(default_factory=list)
    context_chunk_ids: list[int] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    error: str | None = None
    capped: list[str] = field(default_factory=list)  # reply fields that reached their schema length cap


# ---------------------------------------------------------------- NeuroPath
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
class CorefMember:
    key: str
    name: str
    similarity: float


@dataclass
class NeuroPathSeed:
    query_entity: str
    key: str
    name: str
    similarity: float
    origin: str = "query-entity"  # query-entity | verbatim
    accepted: bool = True
    coref: list[CorefMember] = field(default_factory=list)


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


# ---------------------------------------------------------------- EcphoryRAG
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


# ---------------------------------------------------------------- HippoRAG 2
@dataclass
class RetrievedFact:
    fact_id: int  # row of the method's fact table (distinct triples of the memory)
    head: str
    relation: str
    tail: str
    head_key: str
    tail_key: str
    cosine: float  # to the question
    score: float  # min-max normalised over every fact (what the seeds use)
    chunk_ids: list[int] = field(default_factory=list)  # chunks the triple was extracted from
    verdict: str = "kept"  # kept | dropped (by recognition memory) | unjudged (the call failed)


@dataclass
class PhraseSeed:
    key: str
    name: str
    weight: float  # its reset weight before PageRank normalises the seed vector
    fact_scores: list[float] = field(default_factory=list)  # score of each kept fact naming it
    passages: int = 0  # passages containing it: each fact score is divided by this
    chunk_ids: list[int] = field(default_factory=list)  # those passages
    mass: float = 0.0  # its PageRank mass


@dataclass
class PassageSeed:
    chunk_id: int
    dense_score: float  # min-max normalised cosine to the question
    weight: float  # dense_score × passage_node_weight


@dataclass
class NodeMass:
    node_id: str  # "e:<key>" or "c:<chunk id>"
    label: str
    kind: str  # phrase | passage
    mass: float
    seed: float = 0.0  # its reset weight (0 = not a seed)


@dataclass
class HippoRAG2Detail:
    facts: list[RetrievedFact] = field(default_factory=list)
    recognition: bool = True
    recognition_call: int | None = None  # index into Trace.llm_calls of the (last) recognition call
    recognition_error: str = ""
    fallback_dense: bool = False
    fallback_reason: str = ""
    phrase_seeds: list[PhraseSeed] = field(default_factory=list)
    passage_seeds: list[PassageSeed] = field(default_factory=list)  # the heaviest; every passage has one
    passage_seed_total: float = 0.0  # the sum over every passage
    top_nodes: list[NodeMass] = field(default_factory=list)  # by PageRank mass, phrases and passages
    phrase_mass: float = 0.0  # total PageRank mass on phrase nodes (passages hold the rest)
    graph: dict[str, int] = field(default_factory=dict)  # node and edge counts by kind
    graph_built: bool = False  # False: the memory's graph was reused from an earlier query
    graph_seconds: float = 0.0  # time building it (outside retrieval_seconds)


# ---------------------------------------------------------------- the trace
@dataclass
class Trace:
    method: str
    question: str
    memory_fingerprint: str = ""
    version: int = TRACE_VERSION
    stamp: Stamp = field(default_factory=Stamp)
    params: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    chunks: list[ChunkRef] = field(default_factory=list)
    llm_calls: list[LLMCallRecord] = field(default_factory=list)
    ranked: list[RankedChunk] = field(default_factory=list)
    context_facts: list[str] = field(default_factory=list)  # fact lines given to the answer step
    answer: AnswerResult | None = None
    flags: list[str] = field(default_factory=list)
    retrieval_seconds: float = 0.0
    seconds: float = 0.0
    neuropath: NeuroPathDetail | None = None
    ecphory: EcphoryDetail | None = None
    hipporag2: HippoRAG2Detail | None = None

    # --- convenience
    def chunk(self, chunk_id: int) -> ChunkRef | None:
        for c in self.chunks:
            if c.chunk_id == chunk_id:
                return c
        return None

    def ranked_ids(self) -> list[int]:
        return [r.chunk_id for r in self.ranked]

    def add_step(self, kind: str, title: str, summary: str = "") -> Step:
        s = Step(index=len(self.steps), kind=kind, title=title, summary=summary)
        self.steps.append(s)
        return s

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Trace":
        version = data.get("version")
        if version != TRACE_VERSION:
            raise ValueError(f"trace format version {version!r} is not supported (expected {TRACE_VERSION})")
        return _build(cls, data)

    @classmethod
    def from_json(cls, text: str) -> "Trace":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ValueError(f"not a JSON trace: {e}") from e
        if not isinstance(data, dict):
            raise ValueError("not a JSON trace: expected an object")
        return cls.from_dict(data)


def _build(tp: Any, value: Any) -> Any:
    """Rebuild a value of type `tp` from its JSON form, checking shapes as it goes."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _build(inner[0], value)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise ValueError(f"expected an object for {tp.__name__}, got {type(value).__name__}")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        unknown = set(value) - names
        if unknown:
            raise ValueError(f"unknown field(s) for {tp.__name__}: {sorted(unknown)}")
        return tp(**{k: _build(hints[k], v) for k, v in value.items()})
    if origin is list:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(tp)
        return [_build(item, v) for v in value]
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, got {type(value).__name__}")
        _, vt = typing.get_args(tp)
        return {k: _build(vt, v) for k, v in value.items()}
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    if tp in (int, str, bool):
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            raise ValueError(f"expected {tp.__name__}, got {value!r}")
        return value
    return value  # Any
