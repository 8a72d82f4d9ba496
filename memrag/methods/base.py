"""What every method shares: the query context, the shared query-entity call, trace helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memrag import prompts
from memrag.embed import Embedder
from memrag.llm.base import LLM
from memrag.llm.jsoncall import call_json
from memrag.index.memory import Memory
from memrag.trace import ChunkRef, LLMCallRecord, RankedChunk, Stamp, Trace


class EmptyMemoryError(ValueError):
    """Asked a question of a memory with no chunks."""


@dataclass
class QueryContext:
    memory: Memory
    llm: LLM | None
    embedder: Embedder
    question: str
    stamp: Stamp = field(default_factory=Stamp)
    _question_vec: np.ndarray | None = None
    shared: dict[str, Any] = field(default_factory=dict)  # results shared between methods of one ask

    def __post_init__(self) -> None:
        if self.memory.is_empty():
            raise EmptyMemoryError("this memory has no documents yet: add documents before asking")
        if not self.question.strip():
            raise ValueError("the question is empty")

    @property
    def question_vec(self) -> np.ndarray:
        if self._question_vec is None:
            self._question_vec = self.embedder.encode([self.question])[0]
        return self._question_vec

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.encode(texts)


def _validate_entities(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        obj = obj.get("entities")
    if not isinstance(obj, list):
        raise ValueError("expected {\"entities\": [names]}")
    out: list[str] = []
    for x in obj:
        if isinstance(x, dict):
            x = x.get("name")
        if isinstance(x, str) and x.strip() and x.strip() not in out:
            out.append(" ".join(x.split()))
    return out


def query_entities(ctx: QueryContext) -> tuple[list[str], list[LLMCallRecord], str | None]:
    """The query-entity call, made once per ask and shared by NeuroPath and EcphoryRAG.

    Returns (entities, call records, error). Each method that uses it copies the
    records into its trace marked `shared=True`, so it is billed to each method
    and counted once in totals (by cache key).
    """
    if "query_entities" not in ctx.shared:
        if ctx.llm is None:
            raise ValueError("this method needs an LLM")
        res = call_json(ctx.llm, prompts.query_entities_messages(ctx.question),
                        prompts.QUERY_ENTITIES_SCHEMA, "query.entities", _validate_entities)
        for r in res.calls:
            r.shared = True
        ctx.shared["query_entities"] = (res.value or [], res.calls, res.error)
    ents, calls, err = ctx.shared["query_entities"]
    return list(ents), [LLMCallRecord(**r.__dict__) for r in calls], err


def new_trace(ctx: QueryContext, method: str, params: dict[str, Any]) -> Trace:
    stamp = Stamp(**{**ctx.stamp.__dict__, "params": params})
    return Trace(method=method, question=ctx.question, memory_fingerprint=ctx.memory.fingerprint(),
                 stamp=stamp, params=params)


def cite_chunks(trace: Trace, memory: Memory, chunk_ids: list[int]) -> None:
    """Copy the texts of chunks into the trace (once each), so the trace stands alone."""
    have = {c.chunk_id for c in trace.chunks}
    for cid in chunk_ids:
        if cid not in have:
            c = memory.chunks[cid]
            trace.chunks.append(ChunkRef(cid, c.doc_id, c.title, c.text))
            have.add(cid)


def set_ranked(trace: Trace, memory: Memory, ranked: list[RankedChunk], cite_top: int = 20) -> None:
    """The final ranked list; the head (what answers and recall@k read) is cited in full."""
    trace.ranked = ranked
    cite_chunks(trace, memory, [r.chunk_id for r in ranked[:cite_top]])


def fuse_ranks(lists: list[list[int]], k: int) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: Σ 1/(k + rank) over the lists (rank from 1). An id missing from a
    list counts as tied just past that list's end: activation that never reached a chunk says
    "last", not "nothing", so dense's best chunk is not buried below every activated one.
    Best first; ties in order of first appearance."""
    every = list(dict.fromkeys(i for ranking in lists for i in ranking))
    score = dict.fromkeys(every, 0.0)
    for ranking in lists:
        pos = {i: r for r, i in enumerate(ranking, start=1)}
        missing = len(ranking) + 1
        for i in every:
            score[i] += 1.0 / (k + pos.get(i, missing))
    return sorted(score.items(), key=lambda x: -x[1])  # stable: dict order breaks ties
