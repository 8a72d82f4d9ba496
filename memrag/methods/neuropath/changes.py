"""What NeuroPath found, step by step, for ask-again's before/after comparison: the seeds, then
per hop the paths it kept (valid or expanded) and those it listed without keeping. A path is named
by its whole chain, triple by triple (two paths that end in the same triple differ by where they
came from, and a reader must see that)."""

from __future__ import annotations

from memrag.methods.neuropath.detail import NeuroPathDetail, PathCandidate
from memrag.trace import Trace

KEPT = ("valid", "expanded")
LISTED_NOT_KEPT = ("shown", "dropped")


def chain(path: PathCandidate) -> str:
    """A path in words: its triples in order, "a → r → b ⇒ b → s → c"."""
    return " ⇒ ".join(f"{t.head} → {t.relation} → {t.tail}" for t in path.triples) or path.text


def steps(trace: Trace) -> list[tuple[str, list[str]]]:
    d = trace.details.get(trace.method)
    if not isinstance(d, NeuroPathDetail):
        return []
    out = [("seeds", [s.name for s in d.seeds if s.accepted])]
    for h in d.hops:
        out.append((f"hop {h.hop}: paths kept", [chain(p) for p in h.candidates if p.fate in KEPT]))
        out.append((f"hop {h.hop}: paths listed, not kept", [chain(p) for p in h.candidates
                                                            if p.fate in LISTED_NOT_KEPT]))
    return out
