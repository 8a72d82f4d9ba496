"""What NeuroPath found, step by step, for ask-again's before/after comparison: the seeds, then
per hop the paths it kept (valid or expanded) and those it listed without keeping."""

from __future__ import annotations

from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.trace import Trace

KEPT = ("valid", "expanded")
LISTED_NOT_KEPT = ("shown", "dropped")


def steps(trace: Trace) -> list[tuple[str, list[str]]]:
    d = trace.details.get(trace.method)
    if not isinstance(d, NeuroPathDetail):
        return []
    out = [("seeds", [s.name for s in d.seeds if s.accepted])]
    for h in d.hops:
        out.append((f"hop {h.hop}: paths kept", [p.text for p in h.candidates if p.fate in KEPT]))
        out.append((f"hop {h.hop}: paths listed, not kept", [p.text for p in h.candidates
                                                            if p.fate in LISTED_NOT_KEPT]))
    return out
