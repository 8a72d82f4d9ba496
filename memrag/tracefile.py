"""The one traces file: what `python -m memrag ask --json/--out` writes, the Ask page downloads,
and the Ask page, the Evaluate page and `ask --open` read.

    {"memrag": "traces", "version": 1, "meta": {"question": ..., "mode": ..., "model": ..., "qid": ...},
     "traces": [<Trace.to_dict()>, ...], "summaries": [...]}     # summaries: optional, for scripts

Also read: a single trace object, an evaluation results line (its methods' stored traces), and
the CLI's older `{"results": [{..., "trace": ...}]}` output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from memrag import jsonsafe
from memrag.methods import registry
from memrag.trace import Trace

FORMAT = "traces"
VERSION = 1
MAX_TRACE_BYTES = 20_000_000
# Integers a trace may hold (ids, ranks, token counts): those every JSON reader, pandas column
# and browser holds exactly. Anything beyond is not a count memrag wrote.
MAX_INT = 2**53


def check_numbers(obj: Any, where: str = "the file") -> None:
    """Refuse integers beyond ±MAX_INT and non-finite numbers anywhere in parsed JSON (a ValueError
    naming the field), before they reach a table or a chart."""
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            raise ValueError(f"{where}: {path or 'a value'} is {str(value)[:30]}, beyond any count or id memrag writes")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where}: {path or 'a value'} is {value}, not a finite number")


def check_graph(trace: Trace, where: str = "the trace") -> None:
    """A trace's graph is whole: node and edge ids unique, every edge between two of its nodes
    (what the graph views assume). A ValueError says which id breaks it."""
    nodes = set()
    for n in trace.nodes:
        if n.id in nodes:
            raise ValueError(f"{where}: node id {n.id[:80]!r} appears twice")
        nodes.add(n.id)
    edges = set()
    for e in trace.edges:
        if e.id in edges:
            raise ValueError(f"{where}: edge id {e.id[:80]!r} appears twice")
        edges.add(e.id)
        for end in (e.source, e.target):
            if end not in nodes:
                raise ValueError(f"{where}: edge {e.id[:80]!r} refers to node {end[:80]!r}, which it does not have")


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
        traces.append(load_trace(item, f"trace {n}"))
    return traces, {k: v for k, v in meta.items() if isinstance(v, (str, int, float, bool)) or v is None}


def load_trace(item: Any, where: str) -> Trace:
    """One trace from its JSON form, checked for shape, numbers and a whole graph (ValueError)."""
    if not isinstance(item, dict):
        raise ValueError(f"{where} is not an object")
    check_numbers(item, where)
    registry.methods()  # every registered method's detail type, for the trace's details
    try:
        trace = Trace.from_dict(item)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where} is not a valid memrag trace: {e}") from e
    if trace.method not in registry.LABELS:
        raise ValueError(f"{where} is of an unknown method; expected one of {', '.join(registry.LABELS)}")
    check_graph(trace, where)
    return trace


def record_traces(record: dict[str, Any]) -> list[Trace]:
    """The traces an evaluation results line stores, one per method, checked like any file's: a run
    folder opened on the Evaluate page may come from anyone."""
    methods = record.get("methods") if isinstance(record, dict) else None
    if not isinstance(methods, dict):
        raise ValueError("the result line has no 'methods' object")
    return [load_trace(e.get("trace") if isinstance(e, dict) else e, f"the {str(m)[:40]} trace")
            for m, e in methods.items()]
