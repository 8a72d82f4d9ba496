"""Trace files written before the generic detail slot: each method's detail sat in a field of its
own, named after the method (with null for the others). The one place the trace format names
methods; what it returns is today's shape, {"details": {name: detail}}."""

from __future__ import annotations

from typing import Any

# The fields older traces had, one per method, in the order they were declared.
OLD_DETAIL_FIELDS = ("neuropath", "ecphory", "hipporag2")


def details_in_slot(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with any old per-method detail field moved into "details" (nulls dropped)."""
    if not any(name in data for name in OLD_DETAIL_FIELDS):
        return data
    out = {k: v for k, v in data.items() if k not in OLD_DETAIL_FIELDS}
    details = dict(out.get("details") or {})
    for name in OLD_DETAIL_FIELDS:
        if data.get(name) is not None:
            details[name] = data[name]
    out["details"] = details
    return out
