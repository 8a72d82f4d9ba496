"""The one traces file: what `python -m memrag ask --json/--out` writes, the Ask page downloads,
and the Ask page, the Evaluate page and `ask --open` read.

    {"memrag": "traces", "version": 1, "meta": {"question": ..., "mode": ..., "model": ..., "qid": ...},
     "traces": [<Trace.to_dict()>, ...], "summaries": [...]}     # summaries: optional, for scripts

Also read: a single trace object, an evaluation results line (its methods' stored traces), and
the CLI's older `{"results": [{..., "trace": ...}]}` output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memrag import jsonsafe
from memrag.methods import registry
from memrag.trace import Trace

FORMAT = "traces"
VERSION = 1
MAX_TRACE_BYTES = 20_000_000


def traces_json(traces: Sequence[Trace], meta: dict[str, Any], *, summaries: Sequence[dict[str, Any]] = ()) -> str:
    obj: dict[str, Any] = {"memrag": FORMAT, "version": VERSION, "meta": meta, "traces": [t.to_dict() for t in traces]}
    if summaries:
        obj["summaries"] = list(summaries)
    return json.dumps(obj, ensure_ascii=False)


def traces_file_name(traces: Sequence[Trace], meta: dict[str, Any]) -> str:
    """The download's name: the question (its id, or its words), the methods and the day."""
    from memrag.textsafe import download_name

    question = meta.get("qid") or " ".join(str(meta.get("question") or "").split()[:6])
    return download_name(question, "-".join(dict.fromkeys(t.method for t in traces)), ext="json")


def _items_and_meta(obj: Any) -> tuple[Any, Any]:
    if not isinstance(obj, dict):
        raise ValueError("not a trace file: expected a JSON object")
    if obj.get("memrag") == FORMAT:
        items, meta = obj.get("traces"), obj.get("meta") or {}
    elif "results" in obj and "method" not in obj:  # the CLI's output before the one format
        results = obj["results"]
        if not isinstance(results, list):
            raise ValueError("a results file needs a 'results' list")
        items = [r.get("trace") if isinstance(r, dict) else r for r in results]
        meta = {}
    elif "qid" in obj and isinstance(obj.get("methods"), dict):  # one line of an evaluation's results.jsonl
        items = [e.get("trace") if isinstance(e, dict) else e for e in obj["methods"].values()]
        meta = {"qid": obj["qid"], "question": obj.get("question"), "mode": "evaluation"}
    else:
        return [obj], {}
    if not isinstance(items, list) or not items or not isinstance(meta, dict):
        raise ValueError("a trace file needs a non-empty 'traces' list")
    return items, meta


def read_traces(data: bytes) -> tuple[list[Trace], dict[str, Any]]:
    """Traces from a file in any of the forms above, validated; ValueError says what is wrong."""
    if len(data) > MAX_TRACE_BYTES:
        raise ValueError(f"the file is {len(data):,} bytes; traces are at most {MAX_TRACE_BYTES:,}")
    try:
        obj = jsonsafe.loads(data)
    except ValueError as e:  # bad UTF-8, bad JSON, nested too deep
        raise ValueError(f"not a JSON trace file: {e}") from e
    items, meta = _items_and_meta(obj)
    traces = []
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ValueError(f"trace {n} is not an object")
        try:
            trace = Trace.from_dict(item)
        except (ValueError, TypeError) as e:
            raise ValueError(f"trace {n} is not a valid memrag trace: {e}") from e
        if trace.method not in registry.LABELS:
            raise ValueError(f"trace {n} is of an unknown method; expected one of {', '.join(registry.LABELS)}")
        traces.append(trace)
    return traces, {k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool)) or v is None}


def record_traces(record: dict[str, Any]) -> list[Trace]:
    """The traces an evaluation results line stores, one per method (trusted: the run wrote them)."""
    return [Trace.from_dict(e["trace"]) for e in record["methods"].values()]
