"""The trace: everything a retrieval did, as typed dataclasses that round-trip through JSON.

This is the only contract between the methods and the app: methods fill a
Trace, `memrag.viz` draws it. Nothing here is rendered as markup anywhere; all
text fields are plain text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
from dataclasses import dataclass, field
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from memrag import trace_legacy

TRACE_VERSION = 1
D = TypeVar("D")

# Method name → the dataclass its detail reads back into. Filled by each method's spec when its
# wing is imported (`MethodSpec.detail`); trace.py sits below the methods and never imports them.
_DETAIL_TYPES: dict[str, type] = {}


def register_detail(method: str, kind: type) -> None:
    """Read `method`'s detail in a trace file back as a `kind`."""
    _DETAIL_TYPES[method] = kind


def detail_type(method: str) -> type:
    kind = _DETAIL_TYPES.get(method)
    if kind is None:
        raise ValueError(f"a detail recorded by {method[:40]!r}, which no loaded method reads")
    return kind


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


def call_identity(call: LLMCallRecord) -> str:
    """What makes two records the same call: the response-cache key, or failing that a hash
    of stage, messages and reply."""
    if call.key:
        return call.key
    blob = json.dumps([call.stage, call.messages, call.raw_reply], sort_keys=True, ensure_ascii=False)
    return "h:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()


def calls_counted_once(traces: Sequence[Trace]) -> list[LLMCallRecord]:
    """Every call of the traces, a call shared by several methods (same identity, `shared=True`)
    once: what the question cost across methods."""
    out: list[LLMCallRecord] = []
    seen_shared: set[str] = set()
    for t in traces:
        for c in t.llm_calls:
            if c.shared:
                ident = call_identity(c)
                if ident in seen_shared:
                    continue
                seen_shared.add(ident)
            out.append(c)
    return out


# A similar entity: one of the memory's coreference candidates (NeuroPath's seeds record them).
@dataclass
class CorefMember:
    key: str
    name: str
    similarity: float


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
    # What the method itself recorded, beyond the shared parts above: method name → its wing's
    # detail dataclass (memrag/methods/<name>/detail.py), read back through `detail_type`.
    details: dict[str, Any] = field(default_factory=dict)

    # --- convenience
    def chunk(self, chunk_id: int) -> ChunkRef | None:
        for c in self.chunks:
            if c.chunk_id == chunk_id:
                return c
        return None

    def detail(self, kind: type[D]) -> D | None:
        """The method's own record if it is a `kind` (a wing's detail dataclass), else None."""
        return next((d for d in self.details.values() if isinstance(d, kind)), None)

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
        data = trace_legacy.details_in_slot(data)
        details = data.get("details", {})
        if not isinstance(details, dict):
            raise ValueError(f"expected an object for details, got {type(details).__name__}")
        trace = _build(cls, {k: v for k, v in data.items() if k != "details"})
        trace.details = {name: _build(detail_type(name), value) for name, value in details.items()}
        return trace

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
