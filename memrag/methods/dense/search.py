"""Dense baseline: chunks ranked by cosine to the question (passages embedded as `title\\ntext`)."""

from __future__ import annotations

import time

from memrag.fields import params_dict
from memrag.methods.dense.params import DenseParams
from memrag.methods.base import QueryContext, new_trace, set_ranked
from memrag.trace import GraphNode, RankedChunk, Trace


def dense_ranking(ctx: QueryContext, query_vec=None) -> list[tuple[int, float]]:
    """Every chunk, best first: (chunk id, cosine)."""
    qv = ctx.question_vec if query_vec is None else query_vec
    scores, order = ctx.memory.index("chunks").rank_all(qv)
    return [(int(i), float(s)) for s, i in zip(scores, order)]


def retrieve(ctx: QueryContext, params: DenseParams | None = None) -> Trace:
    params = params or DenseParams()
    t0 = time.perf_counter()
    trace = new_trace(ctx, "dense", params_dict(params))
    ranking = dense_ranking(ctx)
    step = trace.add_step("dense", "Dense retrieval",
                          "Chunks ranked by cosine similarity between the question and `title + text`.")
    set_ranked(trace, ctx.memory, [RankedChunk(cid, r, s, "dense", f"cosine {s:.3f}")
                                   for r, (cid, s) in enumerate(ranking)])
    trace.nodes.append(GraphNode("q", "question", "query", step=0, tooltip=ctx.question))
    for r, (cid, s) in enumerate(ranking[: params.answer_passages]):
        c = ctx.memory.chunks[cid]
        trace.nodes.append(GraphNode(f"c:{cid}", c.title, "chunk", step=0, score=s, chunk_ids=[cid],
                                     role="context", tooltip=c.text[:300]))
        step.node_ids.append(f"c:{cid}")
    trace.retrieval_seconds = time.perf_counter() - t0
    return trace
