"""Gold fate: for each gold chunk of a question, where a method found it or lost it.

Read from the trace alone, so the app (one question) and the evaluation (many) give the same
answer. Each method's wing declares its fates (memrag/methods/<name>/fates.py, typed records with
the hop, round, rank, path or score that decided them); this module asks the method's spec and
keeps the JSON form the run files hold: {"chunk_id", "fate", "detail", "rank"}, the fate being the
record's sentence, so fates can be counted across questions.

"Top k" means the first k recall units of the ranked list when `unit_of` is given (the list is
deduplicated by unit, exactly as recall@k counts it), else the first k chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Hashable

from memrag.methods import registry
from memrag.methods.fate_kit import NOT_IN_MEMORY, UNKNOWN_ORDER, FateRecord, best_record, judge_all, read_fate
from memrag.trace import Trace

__all__ = ["NOT_IN_MEMORY", "doc_unit", "best_by_doc", "gold_fate", "gold_fate_records", "fate_record", "fate_order", "best_fate",
           "fate_family"]


def doc_unit(trace: Trace, memory: Any | None) -> Callable[[int], str]:
    """Recall unit of a chunk: its document id (the sample corpus counts documents), from the trace's
    chunks, else from `memory` when the trace was made on it."""
    same = memory is not None and memory.fingerprint() == trace.memory_fingerprint

    def unit(cid: int) -> str:
        c = trace.chunk(cid)
        if c is not None:
            return c.doc_id
        if same and 0 <= cid < len(memory.chunks):
            return memory.chunks[cid].doc_id
        return f"chunk:{cid}"
    return unit


def gold_fate_records(trace: Trace, gold_chunk_ids: Iterable[int], k: int = 5,
                      unit_of: Callable[[int], Hashable] | None = None) -> list[FateRecord]:
    """One typed record per gold chunk, by the trace's method's rules."""
    try:
        spec = registry.get(trace.method)
    except ValueError:
        raise ValueError(f"no gold-fate rules for method {trace.method!r}") from None
    return judge_all(spec.fates, trace, gold_chunk_ids, k, unit_of)


def best_by_doc(records: Iterable[FateRecord], unit: Callable[[int], Hashable]) -> dict[Hashable, FateRecord]:
    """Per gold document (its unit), the record of its chunk that got furthest."""
    by: dict[Hashable, list[FateRecord]] = {}
    for r in records:
        by.setdefault(unit(r.chunk_id), []).append(r)
    return {doc: best_record(rs) for doc, rs in by.items()}


def gold_fate(trace: Trace, gold_chunk_ids: Iterable[int], k: int = 5,
              unit_of: Callable[[int], Hashable] | None = None) -> list[dict[str, Any]]:
    """One entry per gold chunk: {"chunk_id", "fate", "detail", "rank"} (rank 1-based or None)."""
    return [r.to_dict() for r in gold_fate_records(trace, gold_chunk_ids, k, unit_of)]


def _all_kinds() -> list[type]:
    return [s.fates.kinds for s in registry.methods()]


def fate_record(entry: dict[str, Any], method: str | None = None) -> FateRecord:
    """A fate entry of a run file (its sentence, legacy labels included) as a typed record: by the
    method's kinds when it is named, else by every registered method's."""
    kinds = [registry.get(method).fates.kinds] if method in registry.names() else _all_kinds()
    return read_fate(entry, kinds)


def fate_order(fate: str) -> int:
    """Sort key: lower is closer to being found (for picking a passage's best chunk)."""
    return fate_record({"fate": fate}).order if fate else UNKNOWN_ORDER


def fate_family(method: str) -> tuple[str, ...]:
    """The fates always listed for a method (zero counts too), so runs compare line by line."""
    return registry.get(method).fates.family if method in registry.names() else ()


def best_fate(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Of several chunks of one gold passage, the one that got furthest (ties: best rank)."""
    if not entries:
        raise ValueError("best_fate needs at least one entry")
    records = [fate_record(e) for e in entries]
    return entries[records.index(best_record(records))]
