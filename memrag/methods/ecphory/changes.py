"""What EcphoryRAG found, step by step, for ask-again's before/after comparison: the cues, the
engrams each activation step brought (the initial one, then each round's new ones) and the final,
re-ranked engrams. An engram reads as its name and the passage it is a mention in."""

from __future__ import annotations

from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail
from memrag.trace import Trace


def _engram(e: ActivatedEngram) -> str:
    return f"{e.name} (passage {e.chunk_id})"


def steps(trace: Trace) -> list[tuple[str, list[str]]]:
    d = trace.details.get(trace.method)
    if not isinstance(d, EcphoryDetail):
        return []
    out = [("cues", list(d.cues)), ("initial activation", [_engram(e) for e in d.initial])]
    out += [(f"round {r.round}: newly activated", [_engram(e) for e in r.new]) for r in d.rounds]
    out.append(("final engrams", [_engram(e) for e in d.final]))
    return out
