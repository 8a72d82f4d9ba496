"""How a method stands to its paper, as data each wing declares: its ablations as pairs of
parameter overrides for Compare mode (the wing's ablations.py; memrag.explain.ablations runs them)
and where memrag departs from the paper (the wing's deviations.py; memrag.methods.deviations lists
them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Preset:
    name: str
    about: str  # what the paper found or why the switch matters (our words)
    a: dict[str, Any]
    b: dict[str, Any]
    a_label: str
    b_label: str


PAPER_ABOUT = ("memrag's defaults against every deviation with a switch turned off (the deviations table "
               "lists them): how much of what you see is the paper's method, how much memrag's choices.")


def paper_preset(cls: type, paper_settings: dict[str, Any]) -> Preset:
    """memrag's defaults against the paper's values, for the parameters where they differ."""
    ours = {k: getattr(cls(), k) for k in paper_settings}
    keys = [k for k in ours if ours[k] != paper_settings[k]]
    return Preset("memrag defaults / as the papers wrote it", PAPER_ABOUT, {k: ours[k] for k in keys},
                  {k: paper_settings[k] for k in keys}, "memrag defaults", "as the paper wrote it")


@dataclass(frozen=True)
class Deviation:
    method: str  # "all" (shared by every method) or the method's name
    what: str
    paper: str
    memrag: str
    why: str
