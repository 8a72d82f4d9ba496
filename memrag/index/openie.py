"""Import a HippoRAG-style OpenIE file as the extraction result for its corpus (no LLM calls).

The file's `docs` are index-aligned with the corpus (a list of {title, text}).
Imported mentions have no description: each gets its own triples in its chunk
(at most 5), which is what the paper's engram text would say about it there.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from memrag.index.build import (BuildEvent, embed_new_rows, integrate_chunk, new_memory, refresh_entity_vectors,
                          save_and_finish)
from memrag import jsonsafe
from memrag.config import IndexParams
from memrag.filesafe import read_bytes
from memrag.embed import Embedder
from memrag.index.extract import Extraction, Mention, postprocess
from memrag.index.memory import ChunkRow, DocRow, ExtractionLog
from memrag.index.normalise import entity_key

MAX_DESCRIPTION_TRIPLES = 5


class OpenIEFormatError(ValueError):
    pass


OPENIE_MAX_BYTES = 2_000_000_000  # an OpenIE file of a whole benchmark corpus is tens of MB


def _load_json(path: Path) -> Any:
    try:
        return jsonsafe.loads(read_bytes(path, OPENIE_MAX_BYTES, what="OpenIE or corpus file"))
    except (OSError, ValueError) as e:
        raise OpenIEFormatError(f"cannot read {path}: {e}") from e


def openie_extraction(entities: list[Any], triples: list[Any]) -> Extraction:
    """One passage's OpenIE record → our Extraction (descriptions from the mention's own triples)."""
    clean_triples = [[" ".join(str(x).split()) for x in t] for t in triples
                     if isinstance(t, list) and len(t) == 3 and all(isinstance(x, (str, int, float)) for x in t)]
    names = [" ".join(str(e).split()) for e in entities if isinstance(e, (str, int, float))]
    ex = postprocess([Mention(n, "other", "", 3) for n in names if entity_key(n)],
                     [t for t in clean_triples if entity_key(t[0]) and t[1] and entity_key(t[2])])
    for m in ex.entities:
        k = entity_key(m.name)
        own = [f"{h} {r} {t}" for h, r, t in ex.triples if entity_key(h) == k or entity_key(t) == k]
        m.description = "; ".join(own[:MAX_DESCRIPTION_TRIPLES])
    return ex


def import_openie(openie_path: Path, corpus_path: Path, embedder: Embedder, params: IndexParams,
                  path: Path | None = None, dataset: str = "openie", name: str = "") -> Iterator[BuildEvent]:
    """Build a memory from an OpenIE file + its corpus; one passage = one chunk (never split)."""
    t_start = time.perf_counter()
    data = _load_json(openie_path)
    corpus = _load_json(corpus_path)
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise OpenIEFormatError(f"{openie_path}: expected an object with a 'docs' list")
    if not isinstance(corpus, list) or len(corpus) != len(docs):
        raise OpenIEFormatError(
            f"{corpus_path} has {len(corpus) if isinstance(corpus, list) else '?'} passages but the OpenIE "
            f"file has {len(docs)}: they must be index-aligned")
    m = new_memory(embedder, params, name or dataset)
    m.llm = {"backend": "import", "model": Path(openie_path).name}
    yield BuildEvent("start", {"documents": len(docs), "chunks": len(docs)})
    seen: set[tuple[str, str]] = set()
    cleanup: Counter[str] = Counter()
    for i, (rec, passage) in enumerate(zip(docs, corpus)):
        title, text = str(passage.get("title", "")), str(passage.get("text", ""))
        if isinstance(rec, dict) and rec.get("title", title) != title:
            raise OpenIEFormatError(f"passage {i}: OpenIE title {rec.get('title')!r} != corpus title {title!r}")
        if (title, text) in seen:
            yield BuildEvent("skipped", {"doc_id": f"p{i}", "title": title, "reason": "duplicate passage"})
            continue
        seen.add((title, text))
        doc_id = f"p{i}"
        m.documents.append(DocRow(doc_id, title, text, f"benchmark:{dataset}", "benchmark", {"index": i}))
        chunk_id = len(m.chunks)
        m.chunks.append(ChunkRow(chunk_id, doc_id, 0, title, text))
        ex = openie_extraction(rec.get("extracted_entities", []) if isinstance(rec, dict) else [],
                               rec.get("extracted_triples", []) if isinstance(rec, dict) else [])
        integrate_chunk(m, chunk_id, ex)
        cleanup.update(ex.cleanup)
        m.extraction_log[chunk_id] = ExtractionLog(chunk_id, "imported")
        if i % 200 == 0:
            yield BuildEvent("chunk_done", {"i": i, "total": len(docs), "chunk_id": chunk_id, "ok": True,
                                            "resumed": False, "nodes": [], "edges": []})
    t0 = time.perf_counter()
    refresh_entity_vectors(m, embedder, {})
    yield BuildEvent("embedding", {"what": "entities", "count": len(m.entities),
                                   "seconds": round(time.perf_counter() - t0, 3)})
    yield from embed_new_rows(m, embedder)
    t0 = time.perf_counter()
    m.coref_sets(params.coref_top, params.coref_threshold)
    yield BuildEvent("coref", {"seconds": round(time.perf_counter() - t0, 3)})
    yield from save_and_finish(m, path, t_start, {"cleanup": dict(sorted(cleanup.items()))})
