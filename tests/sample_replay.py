"""The sample's recorded demo questions replayed (no model: recorded replies, retrieval recomputed),
for tests that read real traces."""

from __future__ import annotations

from typing import Any

from memrag.ask import ask
from memrag.demo import sample_memory_dir, sample_questions
from memrag.embed import get_embedder
from memrag.index import store
from memrag.llm.recordings import Recordings


def replay_sample(methods: list[str] | tuple[str, ...]) -> tuple[Any, list[tuple[dict[str, Any], list]]]:
    """(the sample memory, [(question record, its traces, one per method)]) for the recorded questions."""
    emb = get_embedder()
    memory, rec = store.load(sample_memory_dir(), emb.model_id), Recordings.open(sample_memory_dir())
    return memory, [(q, ask(memory, q["question"], llm=rec.replay_llm(), embedder=emb, methods=list(methods)))
                    for q in sample_questions() if rec.has_question(q["question"])]
