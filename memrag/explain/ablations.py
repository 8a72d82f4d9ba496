"""Compare mode: one question, one method, two parameter sets — the papers' ablations on a user's question.

`PRESETS` (from each method's wing, ablations.py) names the papers' ablations as pairs of parameter overrides; `run_variants`
runs both variants on one query context (so the query-entity call is made once; the app runs it
as a background job, memrag.app.work.compare_work); `what_changed` lists the parameters that differ and what that did to the result.

Recordings hold replies for default parameters only. A variant whose retrieval asks the model
something new cannot be replayed at all; one whose retrieval replays but whose answer prompt
changed (other passages) keeps its retrieval and says that its answer needs a live run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from memrag.ask import make_stamp, run_method
from memrag.index.memory import Memory
from memrag.methods import registry
from memrag.methods.base import QueryContext
from memrag.methods.paper_kit import Preset
from memrag.llm.recordings import StaleRecording
from memrag.trace import Trace, token_sum
from memrag import words
from memrag.plain_text import clip

TOP = 5  # the head of the ranked list compared for chunks gained / lost
NEEDS_LIVE = "needs 'run live'"
ANSWER_NOT_RECORDED = "answer not recorded for these settings — run live to answer"


def __getattr__(attr: str) -> Any:
    """Read from the registry now, so a method registered later is in them: METHODS (the methods
    with ablations), PRESETS (method → its presets), PARAM_CLASSES (method → its parameters)."""
    if attr == "METHODS":
        return tuple(s.name for s in registry.methods() if s.ablations_at)
    if attr == "PRESETS":
        return {s.name: s.optional(s.ablations_at) for s in registry.methods() if s.ablations_at}
    if attr == "PARAM_CLASSES":
        return {s.name: s.params for s in registry.methods() if s.ablations_at}
    raise AttributeError(attr)


CUSTOM = "custom"


def preset(method: str, name: str) -> Preset:
    presets = registry.get(method).optional(registry.get(method).ablations_at) or []
    for p in presets:
        if p.name == name:
            return p
    raise KeyError(f"no preset {name!r} for {method}; choose from {[p.name for p in presets]}")


def paper_params(method: str) -> Any:
    """The method's parameters as its paper wrote them (defaults with its paper settings)."""
    return registry.paper_params(method)


def preset_params(method: str, base: Any, p: Preset) -> tuple[Any, Any]:
    """The two parameter sets of a preset: the user's parameters with each side's overrides."""
    return replace(base, **p.a), replace(base, **p.b)


def differing(a: Any, b: Any) -> dict[str, tuple[Any, Any]]:
    """Parameter name → (A value, B value) for the fields that differ."""
    return {f.name: (getattr(a, f.name), getattr(b, f.name)) for f in fields(a)
            if getattr(a, f.name) != getattr(b, f.name)}


# ------------------------------------------------------------------ running both
@dataclass
class Variant:
    label: str
    params: Any
    trace: Trace | None = None
    error: str = ""  # the variant could not run at all (its retrieval needs unrecorded calls)
    answer_missing: str = ""  # retrieval replayed; the answer call was not recorded
    replayed: list[str] = field(default_factory=list)  # stages of the calls the recordings answered
    needs_model: list[str] = field(default_factory=list)  # stages of the calls they lack

    @property
    def ok(self) -> bool:
        return self.trace is not None


class _CallTally:
    """Passes calls to the LLM and notes, per stage, which ones the recordings answered and which
    they lacked (a live LLM answers every call: nothing is noted as lacking)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self.answered: list[str] = []
        self.lacking: list[str] = []

    def __getattr__(self, name: str) -> Any:  # backend, model, identity(), replays …
        return getattr(self.llm, name)

    def complete(self, messages: Any, **kw: Any) -> Any:
        try:
            out = self.llm.complete(messages, **kw)
        except StaleRecording:
            self.lacking.append(kw.get("stage", "?"))
            raise
        self.answered.append(kw.get("stage", "?"))
        return out


def run_variants(memory: Memory, question: str, llm: Any, embedder: Any, method: str,
                 variants: list[Variant], *, corpus: str = "") -> list[Variant]:
    """Run each variant on one query context. Retrieval is recomputed; every call whose request
    equals a recorded one replays. A variant whose answer call alone is unrecorded keeps its
    retrieval (ranked passages, recall) and says the answer needs a live run; one whose retrieval
    asks something new says which call would need the model."""
    tally = _CallTally(llm)
    ctx = QueryContext(memory, tally, embedder, question, make_stamp(memory, llm, embedder, corpus))
    shared: list[str] = []  # calls of the query context (query entities), made once for both sets
    for v in variants:
        tally.answered, tally.lacking = list(shared), []
        try:
            v.trace = run_method(ctx, method, v.params)
        except StaleRecording:
            tally.answered = [s for s in tally.answered if s != "answer"]
            try:  # was it only the answer? then keep the retrieval, which replayed
                v.trace = run_method(ctx, method, v.params, answer=False)
                v.answer_missing = f"{v.label}: {ANSWER_NOT_RECORDED}. Its retrieval replayed."
            except StaleRecording as e:
                what = str(e).split(":")[0]  # "no recorded response for this <stage> call"
                v.error = (f"{v.label} asks the model something new ({what}), so this set {NEEDS_LIVE}.")
        v.replayed = list(dict.fromkeys(tally.answered))
        v.needs_model = list(dict.fromkeys(tally.lacking))
        shared = [s for s in tally.answered if s == "query.entities"]
    return variants


# ------------------------------------------------------------------ what changed
def _tokens(trace: Trace) -> int | None:
    return token_sum(n for c in trace.llm_calls for n in (c.prompt_tokens, c.completion_tokens))


def _fmt(v: Any, none: str = "–") -> str:
    if v is None:
        return none
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def _delta(a: float | int | None, b: float | int | None, digits: int = 0) -> str:
    if a is None or b is None:
        return ""
    d = b - a
    return f"{d:+.{digits}f}" if d else "same"


def _chunk_name(trace: Trace, cid: int) -> str:
    c = trace.chunk(cid)
    return f"{cid} ({clip(c.title, 40)})" if c and c.title else str(cid)


def retrieval_facts(trace: Trace) -> dict[str, Any]:
    """A few method-specific counts that an ablation moves (its wing's, named by its spec)."""
    spec = registry.get(trace.method)
    facts = spec.optional(spec.ablation_facts_at)
    return facts(trace) if facts is not None else {}


def what_changed(a: Variant, b: Variant, *,
                 scores: tuple[dict[str, float | None], dict[str, float | None]] | None = None
                 ) -> list[dict[str, str]]:
    """Rows (what, A, B, change): the parameters that differ, then the differences in the result.

    scores: each side's gold scores (recall@2/@5, EM, F1) when the question has gold.
    """
    rows = [{"what": f"parameter: {name}", "A": _fmt(x, "none"), "B": _fmt(y, "none"), "change": "changed"}
            for name, (x, y) in differing(a.params, b.params).items()]
    if not rows:
        rows.append({"what": "parameters", "A": "same", "B": "same", "change": "no parameter differs"})
    ta, tb = a.trace, b.trace
    if ta is None or tb is None:
        rows.append({"what": "result", "A": "ran" if ta else NEEDS_LIVE, "B": "ran" if tb else NEEDS_LIVE,
                     "change": "cannot compare"})
        return rows

    def answer_of(v: Variant) -> str:
        if v.trace is None or v.trace.answer is None:
            return NEEDS_LIVE if v.answer_missing else "(no answer)"
        return v.trace.answer.answer or v.trace.answer.error or "(empty answer)"

    ans_a, ans_b = answer_of(a), answer_of(b)
    rows.append({"what": "answer", "A": ans_a, "B": ans_b, "change": "same" if ans_a == ans_b else "differs"})
    if scores is not None:
        sa, sb = scores
        for name in sa:
            rows.append({"what": name, "A": _fmt(sa[name]), "B": _fmt(sb.get(name)),
                         "change": _delta(sa[name], sb.get(name), 2)})
    ka, kb = _tokens(ta), _tokens(tb)
    unequal = " (one side has no answer call)" if (ta.answer is None) != (tb.answer is None) else ""
    rows.append({"what": "tokens", "A": _fmt(ka), "B": _fmt(kb), "change": _delta(ka, kb) + unequal})
    rows.append({"what": "LLM calls", "A": str(len(ta.llm_calls)), "B": str(len(tb.llm_calls)),
                 "change": _delta(len(ta.llm_calls), len(tb.llm_calls)) + unequal})
    rows.append({"what": words.THIS_RUN_S.label, "A": f"{ta.seconds:.2f}", "B": f"{tb.seconds:.2f}",
                 "change": _delta(ta.seconds, tb.seconds, 2)})
    fa, fb = retrieval_facts(ta), retrieval_facts(tb)
    for name in fa:
        rows.append({"what": name, "A": _fmt(fa[name]), "B": _fmt(fb.get(name)),
                     "change": _delta(fa[name], fb.get(name), 2 if isinstance(fa[name], float) else 0)})
    head_a, head_b = ta.ranked_ids()[:TOP], tb.ranked_ids()[:TOP]
    gained = [c for c in head_b if c not in head_a]
    lost = [c for c in head_a if c not in head_b]
    rows.append({"what": f"top-{TOP} chunks", "A": ", ".join(map(str, head_a)), "B": ", ".join(map(str, head_b)),
                 "change": "same" if head_a == head_b else
                 ("same chunks, new order" if set(head_a) == set(head_b) else "differs")})
    rows.append({"what": f"gained in B's top {TOP}", "A": "", "B": "; ".join(_chunk_name(tb, c) for c in gained)
                 or "none", "change": str(len(gained))})
    rows.append({"what": f"lost from A's top {TOP}", "A": "; ".join(_chunk_name(ta, c) for c in lost) or "none",
                 "B": "", "change": str(len(lost))})
    return rows


__all__ = ["PRESETS", "CUSTOM", "Preset", "Variant", "preset", "preset_params", "differing", "run_variants",
           "what_changed", "retrieval_facts", "paper_params", "METHODS", "NEEDS_LIVE"]
