"""A memory of two documents that share entities, built with a scripted extraction (a test double),
for the memory-edit tests: 'Port Alder' is in both; 'Ada Brennick' / 'Brennick' and
'Varrow Coast Lines' / 'Varrow Coast' are coreference candidates across them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from memrag.config import IndexParams
from memrag.index import store
from memrag.index.build import build_memory, run_build
from memrag.index.memory import Memory
from memrag.index.readers import benchmark_document
from scripted import HashEmbedder, ScriptedLLM

PARAMS = IndexParams(coref_threshold=0.6)
ADA = benchmark_document("ada", "Ada Brennick", "Ada Brennick was born in Port Alder. She founded Varrow Coast Lines.",
                         "t")
MILL = benchmark_document("mill", "Brennick mill",
                          "Brennick built a mill in Port Alder on the Vell. Varrow Coast ran ferries from Port Alder.", "t")


def _ext(entities: list[tuple[str, str, str]], triples: list[list[str]]) -> dict:
    return {"entities": [{"name": n, "type": t, "description": d, "importance": 3} for n, t, d in entities],
            "triples": triples}


REPLY = {
    "ada": _ext([("Ada Brennick", "person", "a shipowner"), ("Port Alder", "place", "a harbour town"),
                 ("Varrow Coast Lines", "organization", "a ferry company")],
                [["Ada Brennick", "born in", "Port Alder"], ["Ada Brennick", "founded", "Varrow Coast Lines"]]),
    "mill": _ext([("Brennick", "person", "a miller"), ("Port Alder", "place", "a town"), ("Vell", "river", ""),
                  ("Varrow Coast", "organization", "")],
                 [["Brennick", "built a mill in", "Port Alder"], ["Port Alder", "lies on", "Vell"],
                  ["Varrow Coast", "ran ferries from", "Port Alder"]]),
}


def extraction(messages: list[dict], stage: str) -> dict:
    return REPLY["ada"] if "Ada Brennick was born" in messages[-1]["content"] else REPLY["mill"]


def build_two(path: Path | None, embedder: Any = None) -> Memory:
    llm = ScriptedLLM({"index.extract": extraction})
    return run_build(build_memory(path, [ADA, MILL], llm, embedder or HashEmbedder(), PARAMS))


def hash_embedder(model_id: str) -> HashEmbedder:
    """The memory's embedder by its id, as `edit_memory` opens it."""
    assert model_id == "hash-test", model_id
    return HashEmbedder()


def content(m: Memory) -> dict[str, Any]:
    """Everything a memory holds, comparable with ==: rows, edits and vectors (as bytes)."""
    rows = store.memory_to_rows(m)
    rows["extraction_log"] = [{**x, "seconds": 0} for x in rows["extraction_log"]]
    rows["vectors"] = {name: np.ascontiguousarray(getattr(m, name)).tobytes() for name in store.VECTORS}
    return rows
