"""HippoRAG 2's record in a trace (`Trace.details`): the facts and recognition memory's verdicts,
the PageRank seeds and where the mass went."""

from __future__ import annotations

from dataclasses import dataclass, field


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
