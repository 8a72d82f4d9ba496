"""The memory an evaluation scope is scored on: opened when it already holds the scope's
passages, else built (or extended) by extraction, a passages-only build or an OpenIE import."""

from __future__ import annotations

import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from memrag import jsonsafe
from memrag.config import IndexParams
from memrag.filesafe import read_bytes
from memrag.embed import Embedder
from memrag.eval.config import EvalConfig, EvalEvent, dense_only
from memrag.eval.datasets import Dataset, Passage
from memrag.eval.rundir import write_json_atomic
from memrag.eval.scoring import ChunkUnits, map_chunks
from memrag.index import store
from memrag.index.build import build_memory
from memrag.index.memory import Memory
from memrag.index.openie import OPENIE_MAX_BYTES, import_openie
from memrag.index.passages_only import PASSAGES_ONLY, build_passages_only, is_passages_only
from memrag.index.readers import Document, benchmark_document, read_paths
from memrag.llm.base import LLM
from memrag.trace import CallCost, token_totals


def memory_indexing(memory: Memory) -> dict[str, Any]:
    """What the memory holds and what building it cost (from its own ledger and log)."""
    prompt_tokens, completion_tokens = token_totals(map(CallCost.from_row, memory.ledger_rows))
    return {
        "fingerprint": memory.fingerprint(),
        "llm": dict(memory.llm),
        "documents": len(memory.documents), "chunks": len(memory.chunks), "entities": len(memory.entities),
        "engrams": len(memory.engrams), "triples": len(memory.triples),
        "failures": sum(1 for x in memory.extraction_log.values() if x.status == "failed"),
        "llm_calls": len(memory.ledger_rows),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "extraction_seconds": round(sum(x.seconds for x in memory.extraction_log.values()), 3),
    }


def _sample_docs_dir(config: EvalConfig) -> Path:
    if config.corpus is not None:
        return Path(config.corpus)
    data = Path(config.data)
    if data.is_dir():
        return data / "docs" if (data / "docs").is_dir() else data
    return data.parent / "docs"


def _documents(config: EvalConfig, passages: list[Passage]) -> list[Document]:
    """The scope's passages as documents. Benchmark passages are never split; the sample corpus is
    read from its files exactly as `python -m memrag index` reads them (doc id = file stem = pid)."""
    if config.dataset != "sample":
        return [benchmark_document(p.pid, p.title, p.text, config.dataset) for p in passages]
    folder = _sample_docs_dir(config)
    report = read_paths([folder / f"{p.pid}.md" for p in passages], IndexParams())
    if report.problems:
        raise ValueError("cannot read sample documents: "
                         + "; ".join(f"{x.name}: {x.reason}" for x in report.problems))
    return report.documents


def _openie_files(config: EvalConfig, passages: list[Passage], work: Path) -> tuple[Path, Path]:
    """The OpenIE and corpus files for these passages: the given files when the scope is the whole
    corpus, else index-aligned subsets of both written under `work`."""
    assert config.import_openie is not None and config.corpus is not None
    corpus = jsonsafe.loads(read_bytes(config.corpus, OPENIE_MAX_BYTES, what="corpus file"))
    openie = jsonsafe.loads(read_bytes(config.import_openie, OPENIE_MAX_BYTES, what="OpenIE file"))
    docs = openie.get("docs") if isinstance(openie, dict) else None
    if not isinstance(corpus, list) or not isinstance(docs, list) or len(docs) != len(corpus):
        raise ValueError(f"{config.import_openie} and {config.corpus} are not index-aligned OpenIE and corpus files")
    wanted = {(p.title, p.text) for p in passages}
    if wanted == {(str(e.get("title", "")), str(e.get("text", ""))) for e in corpus}:
        return Path(config.import_openie), Path(config.corpus)
    picked: dict[tuple[str, str], int] = {}
    for i, e in enumerate(corpus):
        key = (str(e.get("title", "")), str(e.get("text", "")))
        if key in wanted and key not in picked:
            picked[key] = i
    if len(picked) != len(wanted):
        raise ValueError(f"{len(wanted) - len(picked)} passage(s) of the scope are not in {config.corpus}")
    order = sorted(picked.values())
    work.mkdir(parents=True, exist_ok=True)
    corpus_file, openie_file = work / "corpus.json", work / "openie.json"
    write_json_atomic(corpus_file, [corpus[i] for i in order])
    write_json_atomic(openie_file, {"docs": [docs[i] for i in order]})
    return openie_file, corpus_file


def _scalars(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if isinstance(v, (int, float, str, bool)) or v is None}


def ready_memory(config: EvalConfig, ds: Dataset, passages: list[Passage], path: Path, label: str,
                 embedder: Embedder, llm: LLM | None) -> Generator[EvalEvent, None, tuple[Memory, ChunkUnits, dict]]:
    """Open the memory at `path` if it already holds these passages, else build (or extend) it.
    Yields indexing events; returns (memory, chunk → unit map, indexing facts)."""
    t0 = time.perf_counter()
    source = "opened"
    build = True
    extracted = False  # an existing extraction memory is extended, never replaced by a passages-only one
    if store.is_memory_dir(path):
        memory = store.load(path, embedder.model_id)
        units = map_chunks(memory, ds, passages)
        # Passages without text make no chunk: they can never be added, so they do not call for a build.
        unbuilt = [pid for pid in units.missing if ds.passages[pid].text.strip()]
        if unbuilt and config.import_openie is not None:
            raise ValueError(f"{path} lacks {len(unbuilt)} passage(s) of this scope; it was imported "
                             "from another corpus: give another --memory or --out")
        if is_passages_only(memory) and not dense_only(config):
            raise ValueError(f"{path} holds passages only (built for a dense run): the graph methods and the "
                             "answer step need a memory built with extraction; give another --memory or --out")
        build = bool(unbuilt)  # an extraction build is extended; its journal keeps finished chunks
        extracted = not is_passages_only(memory)
        if build and is_passages_only(memory):
            raise ValueError(f"{path} is a passages-only memory lacking {len(unbuilt)} passage(s) of this "
                             "scope: give another --memory or --out")
    if build:
        if dense_only(config) and config.import_openie is None and not extracted:
            events = build_passages_only(path, _documents(config, passages), embedder, IndexParams(), name=label)
            source = PASSAGES_ONLY
        elif config.import_openie is not None:
            openie_file, corpus_file = _openie_files(config, passages, path.parent / f"{path.name}.openie")
            events = import_openie(openie_file, corpus_file, embedder, IndexParams(), path=path,
                                   dataset=config.dataset, name=label)
            source = "openie-import"
        else:
            events = build_memory(path, _documents(config, passages), llm, embedder, IndexParams(), name=label,
                                  parallel=config.extract_parallel)
            source = "extraction"
        memory = None
        for ev in events:
            yield EvalEvent("index", {"memory": label, "event": ev.kind, **_scalars(ev.data)})
            if ev.kind == "done":
                memory = ev.memory
        assert memory is not None
        units = map_chunks(memory, ds, passages)
    info = {**memory_indexing(memory), "source": source, "path": str(path),
            "seconds": round(time.perf_counter() - t0, 3), "passages": len(passages),
            "missing_passages": len(units.missing)}
    yield EvalEvent("memory", {"memory": label, **_scalars(info)})
    return memory, units, info
