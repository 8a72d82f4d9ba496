"""What a method tells the rest of memrag: one `MethodSpec` per wing (memrag/methods/<name>/).

Everything outside a wing — ask, the evaluation, the report, the estimates, the app's views,
Learn and Compare — asks the spec and never branches on a method's name. The heavy parts (the
search, its picture, its app view, its lessons) are named as 'module:attribute' strings and
imported on first use, so listing the methods (CLI help) loads none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memrag.trace import register_detail


# Stages one ask makes once whatever the number of methods that need them (the query-entity call).
SHARED_STAGES: tuple[str, ...] = ("query.entities",)


# How a method's replay steps are drawn (memrag.explain.step_picture, on the Learn page), a spec's data:
#   plain     nodes in the groups its search gave them;
#   paths     an entity in the colour of the best fate of a path through it, a gold star only where
#             a path (or its dense fallback) found the passage;
#   rounds    an entity by the round that activated it, final engrams marked once re-ranked;
#   pagerank  the PageRank colours, each node sized by its mass.
STEP_STYLES: tuple[str, ...] = ("plain", "paths", "rounds", "pagerank")
# Method name → its step style, filled as each spec is made: memrag.explain reads it here, below the
# registry (importing the registry from there would close a circle).
_STEP_STYLE: dict[str, str] = {}


def step_style(method: str) -> str:
    """How `method`'s replay steps are drawn; "plain" for a method no spec names."""
    return _STEP_STYLE.get(method, "plain")


@dataclass(frozen=True)
class Picture:
    """How a method's traces are drawn: its overview picture's builder (an outside wing's; None: its
    app views draw it) and its replay steps' style."""
    overview: Callable[..., Any] | None
    step_style: str


def resolve(target: str) -> Any:
    """'package.module:name' → that object, importing the module on first use."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _answer_passages(params: Any) -> int:
    return params.answer_passages


def _no_stages(params: Any) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class MethodSpec:
    name: str  # the id in traces, CLI flags and results files
    label: str  # what a reader sees
    params: type  # its parameters dataclass, with help text per field
    # 'module:attribute' names, imported on first use.
    retrieve_at: str  # (QueryContext, params) -> Trace
    fates_at: str  # its FateRules (memrag.methods.fate_kit): where each gold chunk went
    view_at: str  # the app's views of its trace (memrag/app/method_views/<name>.py): a MethodViews
    # A wing outside memrag may name its overview picture's builder here ((trace, gold_chunk_ids=) -> a
    # typed picture, memrag.picture.Picture, which memrag.viz draws); memrag's own wings draw through
    # their app views, so nothing below the app names memrag.viz. Empty: none.
    renderer_at: str = ""
    # The LLM stages one query makes before the answer (the shared query-entity call included),
    # for the time estimates; retries come on top.
    expected_stages: Callable[[Any], tuple[str, ...]] = _no_stages
    # Typical (fresh prompt, completion) tokens of its own stage families, until measured.
    stage_tokens: dict[str, tuple[float, float]] = field(default_factory=dict)
    # How many chunks from the head of the ranked list the answer step reads.
    context_size: Callable[[Any], int] = _answer_passages
    # "As the paper wrote it": the overrides that turn each memrag deviation with a switch off.
    paper_settings: dict[str, Any] = field(default_factory=dict)
    # Old parameter names still accepted when reading params, traces, summaries and CLI JSON.
    renamed: dict[str, str] = field(default_factory=dict)
    baseline: bool = False  # the reference the others are read against (listed after them)
    vectors_only: bool = False  # reads chunk vectors alone: a passages-only memory (no extraction) serves it
    start_line: str = ""  # its line on the start page, in our own words (markdown); empty = none
    learn_title: str = ""  # its heading on the Learn page; empty = not taught there
    lessons_at: str = ""  # 'module:LESSON' for the Learn page (memrag.explain.lessons.Lesson)
    ablations_at: str = ""  # 'module:PRESETS' for Compare mode (memrag.explain.ablations.Preset list)
    # 'module:function' (trace -> {label: number}): a few counts of its own an ablation moves, shown
    # beside the shared ones in Compare mode; empty = none
    ablation_facts_at: str = ""
    deviations_at: str = ""  # 'module:DEVIATIONS' (memrag.methods.deviations.Deviation tuple)
    # 'module:function' (trace -> [(step label, [item, ...]), ...]): what its search found step by step
    # (paths per hop, engrams per round, facts), compared by ask-again before and after a memory edit;
    # empty = only the answer, the ranked list and the gold passages are compared
    changes_at: str = ""
    # The dataclass of what its search records in `Trace.details` (its wing's detail.py); None: nothing.
    detail: type | None = None
    step_style: str = "plain"  # one of STEP_STYLES; its picture data is built by its wing's picture.py

    def __post_init__(self) -> None:
        if self.step_style not in STEP_STYLES:
            raise ValueError(f"{self.name}: step_style must be one of {', '.join(STEP_STYLES)}")
        # a trace file holding this method's detail reads it back as this type
        if self.detail is not None:
            register_detail(self.name, self.detail)
        _STEP_STYLE[self.name] = self.step_style

    def uses_llm(self, params: Any) -> bool:
        """Whether retrieval with these parameters calls the LLM (the answer step aside)."""
        return bool(self.expected_stages(params))

    @property
    def retrieve(self) -> Callable[..., Any]:
        return resolve(self.retrieve_at)

    @property
    def renderer(self) -> Callable[..., Any] | None:
        return resolve(self.renderer_at) if self.renderer_at else None

    @property
    def picture(self) -> Picture:
        return Picture(self.renderer, self.step_style)

    @property
    def fates(self) -> Any:
        return resolve(self.fates_at)

    @property
    def views(self) -> Any:
        return resolve(self.view_at)

    def optional(self, target: str) -> Any:
        return resolve(target) if target else None


# Each optional part of a wing: its spec field and the 'module:attribute' it names in the wing.
_PARTS = {"lessons": ("lessons_at", "lessons:LESSON"), "ablations": ("ablations_at", "ablations:PRESETS"),
          "deviations": ("deviations_at", "deviations:DEVIATIONS")}


def wing_spec(package: str, *, name: str, label: str, params: type, renderer_at: str = "",
              parts: tuple[str, ...] = ("lessons", "ablations", "deviations"), view_at: str = "",
              **fields: Any) -> MethodSpec:
    """A spec for a wing laid out as usual: `<package>.search:retrieve`, `<package>.fates:RULES`,
    each of `parts` (lessons, ablations, deviations) in its own module, and the app views in
    memrag/app/method_views/<name>.py unless `view_at` names them elsewhere."""
    named = {_PARTS[p][0]: f"{package}.{_PARTS[p][1]}" for p in parts}
    return MethodSpec(name=name, label=label, params=params, retrieve_at=f"{package}.search:retrieve",
                      renderer_at=renderer_at, fates_at=f"{package}.fates:RULES",
                      view_at=view_at or f"memrag.app.method_views.{name}:VIEWS", **named, **fields)
