"""The schema of an evaluation run's files: a question's result record (a line of results.jsonl)
and the run summary (summary.json), as typed records.

The writers build these records and write `to_json()`; every reader (the results page, the
Evaluate page, compare_runs) checks a file with `from_json()` first. A run folder may come from
anywhere (another machine, an older version, a damaged disk, someone hostile), so `from_json`
takes nothing on trust: a missing or mistyped field is a `RunFormatError` (a ValueError) naming
the file and the field, never a TypeError deep inside a chart. Fields added after the first
committed runs (`llm_seconds_per_query`, `answers_capped`, `same_top5_as_dense`, a record's
`cached_calls` / `llm_seconds`, …) are optional so that every committed summary still loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from memrag.trace import LLMCallRecord, token_sum

SCORES = ("recall@1", "recall@2", "recall@5", "recall@10", "em", "raw_em", "f1")
PAIRED_SCORES = ("recall@2", "recall@5", "em", "f1")
PER_QUERY = ("prompt_tokens_per_query", "completion_tokens_per_query", "llm_calls_per_query", "seconds_per_query",
             "llm_seconds_per_query")
LABELS = {"recall@1": "R@1", "recall@2": "R@2", "recall@5": "R@5", "recall@10": "R@10", "em": "EM",
          "raw_em": "raw EM", "f1": "F1"}

T = TypeVar("T")


class RunFormatError(ValueError):
    """A run file that does not follow the schema; the message names the file and the field."""


# ------------------------------------------------------------------ checking JSON values
class _Fields:
    """Reads one JSON object, each read checking its field's type; errors say `where` and the field."""

    def __init__(self, obj: Any, where: str, what: str) -> None:
        if not isinstance(obj, dict):
            raise RunFormatError(f"{where}: {what} is a JSON {_kind(obj)}, not an object")
        self.obj, self.where = obj, where

    def fail(self, key: str, expected: str) -> RunFormatError:
        return RunFormatError(f"{self.where}: {key!r} is {expected}"
                              + ("" if key not in self.obj else f" (got a JSON {_kind(self.obj[key])})"))

    def get(self, key: str, check: Callable[[Any], bool], expected: str, *, optional: bool = False,
            default: Any = None) -> Any:
        if key not in self.obj:
            if optional:
                return default
            raise RunFormatError(f"{self.where}: no {key!r}")
        value = self.obj[key]
        if not check(value):
            raise self.fail(key, f"not {expected}")
        return value

    def count(self, key: str, **kw: Any) -> int | None:
        return self.get(key, _count, "a count", **kw)

    def number(self, key: str, **kw: Any) -> float | None:
        return self.get(key, _number_or_none, "a number", **kw)

    def text(self, key: str, **kw: Any) -> str | None:
        return self.get(key, lambda v: v is None or isinstance(v, str), "text", **kw)

    def object(self, key: str, **kw: Any) -> dict[str, Any]:
        return self.get(key, lambda v: isinstance(v, dict), "an object", **kw)

    def items(self, key: str, read: Callable[[Any, str], T], *, optional: bool = False) -> dict[str, T]:
        """An object of named parts, each read by `read(value, where)`."""
        obj = self.object(key, optional=optional, default={})
        return {str(k): read(v, f"{self.where}, {key}[{k!r}]") for k, v in obj.items()}


def _kind(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), "number" if isinstance(v, (int, float)) else type(v).__name__)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number_or_none(v: Any) -> bool:
    return v is None or _is_number(v)


def _count(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


def _interval(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_is_number(x) for x in v)


def _texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# ------------------------------------------------------------------ a question's result record
@dataclass(frozen=True)
class CallTotals:
    """What a method's LLM calls cost on one question (None: an engine that does not count)."""
    prompt_tokens: int | None
    completion_tokens: int | None
    llm_calls: int
    cached_calls: int | None = None
    llm_seconds: float | None = None  # the calls' own seconds: for replayed replies, the original run's

    @classmethod
    def of(cls, calls: Sequence[LLMCallRecord]) -> CallTotals:
        """Summed from the calls themselves (memrag.trace.token_sum: unknown stays unknown)."""
        return cls(prompt_tokens=token_sum(c.prompt_tokens for c in calls),
                   completion_tokens=token_sum(c.completion_tokens for c in calls),
                   llm_calls=len(calls), cached_calls=sum(1 for c in calls if c.cached),
                   llm_seconds=round(sum(c.seconds for c in calls), 3))

    @classmethod
    def from_json(cls, obj: Any, where: str) -> CallTotals:
        f = _Fields(obj, where, "the token counts")
        calls = f.count("llm_calls", optional=True)
        return cls(f.count("prompt_tokens"), f.count("completion_tokens"), calls or 0,
                   f.count("cached_calls", optional=True), f.number("llm_seconds", optional=True))

    def to_json(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "llm_calls": self.llm_calls, "cached_calls": self.cached_calls, "llm_seconds": self.llm_seconds}


@dataclass(frozen=True)
class GoldFate:
    """What happened to one gold passage (recall unit) in one method's search."""
    unit: str
    chunk_id: int | None
    fate: str
    detail: str
    rank: int | None

    @classmethod
    def from_json(cls, obj: Any, where: str) -> GoldFate:
        f = _Fields(obj, where, "a gold fate")
        return cls(f.text("unit", optional=True) or "", f.count("chunk_id", optional=True),
                   f.get("fate", lambda v: isinstance(v, str), "text"), f.text("detail", optional=True) or "",
                   f.count("rank", optional=True))

    def to_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "chunk_id": self.chunk_id, "fate": self.fate, "detail": self.detail,
                "rank": self.rank}


@dataclass(frozen=True)
class TrackerHop:
    """One tracking judgement on one question, counted on the hop's *new* listed paths only (paths
    carried from the previous hop are left out); memrag.eval.tracker_precision computes it."""
    hop: int
    listed_new: int  # new paths shown to the tracker
    kept_new: int  # of those, the ones it kept (its valid ids)
    gold_listed: int  # listed new paths touching a gold passage
    gold_kept: int  # kept new paths touching a gold passage
    gold_top: int  # of the first kept_new listed new paths (listing order), those touching gold

    @classmethod
    def from_json(cls, obj: Any, where: str) -> TrackerHop:
        f = _Fields(obj, where, "a tracking hop's counts")
        hop, *counts = (f.get(k, lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a count")
                        for k in ("hop", "listed_new", "kept_new", "gold_listed", "gold_kept", "gold_top"))
        return cls(hop, *counts)

    def to_json(self) -> dict[str, Any]:
        return {"hop": self.hop, "listed_new": self.listed_new, "kept_new": self.kept_new,
                "gold_listed": self.gold_listed, "gold_kept": self.gold_kept, "gold_top": self.gold_top}


def _tracker_hops(v: Any) -> bool:
    return v is None or isinstance(v, list)


def _reach_counts(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and _count(n) for k, n in v.items())


@dataclass(frozen=True)
class MethodResult:
    """One method on one question: scores, gold fates, cost, answer, and its trace (kept as JSON;
    memrag.tracefile reads it)."""
    metrics: dict[str, float | None]
    gold_fate: list[GoldFate]
    tokens: CallTotals
    seconds: float | None
    trace: dict[str, Any]
    retrieval_seconds: float | None = None
    answer: str | None = None
    answer_capped: list[str] = field(default_factory=list)
    top_passages: list[str] = field(default_factory=list)
    ranked_total: int | None = None
    tracker: list[TrackerHop] | None = None  # a tracking method's judgements; absent from older runs
    reach: dict[str, int] | None = None  # NeuroPath's gold_reach counts; absent from older runs

    @classmethod
    def from_json(cls, obj: Any, where: str) -> MethodResult:
        f = _Fields(obj, where, "a method's result")
        metrics = f.object("metrics")
        bad = [k for k, v in metrics.items() if not _number_or_none(v)]
        if bad:
            raise f.fail(f"metrics.{bad[0]}", "not a number")
        fates = f.get("gold_fate", lambda v: isinstance(v, list), "a list")
        hops = f.get("tracker", _tracker_hops, "a list", optional=True)
        reach = f.get("reach", _reach_counts, "a set of counts", optional=True)
        return cls(metrics=metrics,
                   gold_fate=[GoldFate.from_json(x, f"{where}, gold_fate[{i}]") for i, x in enumerate(fates)],
                   tokens=CallTotals.from_json(f.object("tokens"), f"{where}, tokens"),
                   seconds=f.number("seconds"), trace=f.object("trace"),
                   retrieval_seconds=f.number("retrieval_seconds", optional=True),
                   answer=f.text("answer", optional=True),
                   answer_capped=f.get("answer_capped", _texts, "a list of texts", optional=True, default=[]),
                   top_passages=f.get("top_passages", _texts, "a list of texts", optional=True, default=[]),
                   ranked_total=f.count("ranked_total", optional=True),
                   tracker=None if hops is None else [TrackerHop.from_json(x, f"{where}, tracker[{i}]")
                                                      for i, x in enumerate(hops)],
                   reach=None if reach is None else dict(reach))

    def to_json(self) -> dict[str, Any]:
        out = {"metrics": self.metrics, "gold_fate": [g.to_json() for g in self.gold_fate],
               "tokens": self.tokens.to_json(), "seconds": self.seconds, "retrieval_seconds": self.retrieval_seconds,
               "answer": self.answer, "answer_capped": list(self.answer_capped),
               "top_passages": list(self.top_passages), "ranked_total": self.ranked_total}
        if self.tracker is not None:
            out["tracker"] = [h.to_json() for h in self.tracker]
        if self.reach is not None:
            out["reach"] = dict(self.reach)
        return out | {"trace": self.trace}


def _indexing(v: Any) -> bool:
    return v is None or (isinstance(v, dict) and isinstance(v.get("path") or "", str))


def check_indexing(info: Any, where: str) -> None:
    """How a memory was made (run.json, a record, a summary): an object whose path, if any, is text."""
    if not _indexing(info):
        raise RunFormatError(f"{where}: 'indexing' is not an object with a text 'path'")


@dataclass(frozen=True)
class QuestionRecord:
    """One finished question: a line of results.jsonl."""
    qid: str
    question: str
    answers: list[str]
    gold_units: list[str]
    methods: dict[str, MethodResult]
    all_methods: CallTotals | None  # every method's calls, a call shared between methods counted once
    hops: int | None = None
    memory: str | None = None
    indexing: dict[str, Any] | None = None  # per-question scopes: how this question's memory was made
    seconds: float | None = None

    @classmethod
    def from_json(cls, obj: Any, where: str, methods: Sequence[str] = ()) -> QuestionRecord:
        """Checked, with a complete result for each of `methods` (the run's) required."""
        f = _Fields(obj, where, "an evaluation result")
        per = f.object("methods")
        missing = [m for m in methods if m not in per]
        if missing:
            raise RunFormatError(f"{where}: no complete result for method {missing[0]!r}")
        all_methods = f.object("all_methods", optional=True)
        return cls(qid=f.get("qid", lambda v: isinstance(v, str), "text"),
                   question=f.get("question", lambda v: isinstance(v, str), "text"),
                   answers=f.get("answers", _texts, "a list of texts"),
                   gold_units=f.get("gold_units", _texts, "a list of texts", optional=True, default=[]),
                   methods={str(m): MethodResult.from_json(v, f"{where}, method {m!r}") for m, v in per.items()},
                   all_methods=CallTotals.from_json(all_methods, f"{where}, all_methods") if all_methods else None,
                   hops=f.count("hops", optional=True), memory=f.text("memory", optional=True),
                   indexing=f.get("indexing", _indexing, "an object with a text 'path'", optional=True),
                   seconds=f.number("seconds", optional=True))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"qid": self.qid, "question": self.question, "answers": self.answers,
                               "gold_units": self.gold_units, "hops": self.hops,
                               "methods": {m: r.to_json() for m, r in self.methods.items()},
                               "all_methods": self.all_methods.to_json() if self.all_methods else None}
        for key in ("memory", "indexing", "seconds"):  # set by the runner after scoring
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


# ------------------------------------------------------------------ the run summary
@dataclass(frozen=True)
class PairedScore:
    """Two methods on one score, paired per question: a's wins / losses / ties and the mean a − b."""
    wins: int
    losses: int
    ties: int
    mean_diff: float
    diff_ci95: tuple[float, float]

    @classmethod
    def from_json(cls, obj: Any, where: str) -> PairedScore:
        f = _Fields(obj, where, "a paired comparison")
        counts = [f.get(k, lambda v: isinstance(v, int) and not isinstance(v, bool), "a count")
                  for k in ("wins", "losses", "ties")]
        mean_diff = f.get("mean_diff", _is_number, "a number")
        low, high = f.get("diff_ci95", _interval, "a [low, high] interval")
        return cls(*counts, mean_diff, (low, high))

    def to_json(self) -> dict[str, Any]:
        return {"wins": self.wins, "losses": self.losses, "ties": self.ties, "mean_diff": self.mean_diff,
                "diff_ci95": list(self.diff_ci95)}


@dataclass(frozen=True)
class TrackerPrecision:
    """The tracker's precision over a run's questions on one hop ("1", "2", …) or all hops ("all"),
    new paths only, micro-averaged (sums of counts over questions, then the ratio): the share of
    kept paths touching a gold passage, beside the same number of new paths taken from the top of
    the list and at random (its expectation, exact), and the recall of the gold-touching listed
    paths by the kept ones (so keeping fewer paths cannot buy precision)."""
    hop: str
    questions: int  # questions with a tracking judgement at this hop
    listed_new: int
    kept_new: int
    precision: float | None  # None: nothing kept
    top_precision: float | None
    random_precision: float | None
    recall: float | None  # None: no gold-touching new path listed
    diff: float | None  # precision − top_precision
    diff_ci95: tuple[float, float] | None  # paired bootstrap over questions

    @property
    def not_better_than_list_order(self) -> bool:
        """The flag: the tracker is not shown to choose better than the order it was shown when its
        precision is not above top-of-list precision, or the 95% interval of the difference reaches 0
        (or there is nothing to compare)."""
        return self.diff is None or self.diff <= 0 or self.diff_ci95 is None or self.diff_ci95[0] <= 0

    @classmethod
    def from_json(cls, obj: Any, where: str) -> TrackerPrecision:
        f = _Fields(obj, where, "a tracker precision row")
        ci = f.get("diff_ci95", lambda v: v is None or _interval(v), "a [low, high] interval")
        return cls(hop=f.get("hop", lambda v: isinstance(v, str), "text"),
                   questions=f.count("questions") or 0, listed_new=f.count("listed_new") or 0,
                   kept_new=f.count("kept_new") or 0, precision=f.number("precision"),
                   top_precision=f.number("top_precision"), random_precision=f.number("random_precision"),
                   recall=f.number("recall"), diff=f.number("diff"),
                   diff_ci95=None if ci is None else (ci[0], ci[1]))

    def to_json(self) -> dict[str, Any]:
        return {"hop": self.hop, "questions": self.questions, "listed_new": self.listed_new,
                "kept_new": self.kept_new, "precision": self.precision, "top_precision": self.top_precision,
                "random_precision": self.random_precision, "recall": self.recall, "diff": self.diff,
                "diff_ci95": None if self.diff_ci95 is None else list(self.diff_ci95)}


@dataclass(frozen=True)
class MethodSummary:
    """One method over the run's questions: mean scores with 95% intervals, cost per query, fates."""
    n: int
    scores: dict[str, float | None]  # SCORES → mean (None: not measured, e.g. EM without answers)
    prompt_tokens_per_query: float | None
    completion_tokens_per_query: float | None
    llm_calls_per_query: float | None
    seconds_per_query: float | None
    gold_fate: dict[str, int]
    ci95: dict[str, tuple[float, float]]
    llm_seconds_per_query: float | None = None
    answers_capped: int | None = None
    # per hop, then "all"; None: not a tracking method, or a run made before the figure existed
    tracker_precision: list[TrackerPrecision] | None = None
    # NeuroPath's gold passages by how far it got: {"gold", "within_max_hops", "on_listed_paths",
    # "kept"}, summed over questions; None: another method, or a run made before the figure existed
    reach: dict[str, int] | None = None

    @classmethod
    def from_json(cls, obj: Any, where: str) -> MethodSummary:
        f = _Fields(obj, where, "a method's summary")
        n = f.get("n", lambda v: isinstance(v, int) and not isinstance(v, bool), "a count")
        ci = f.object("ci95")
        bad = [k for k, v in ci.items() if not _interval(v)]
        if bad:
            raise RunFormatError(f"{where}: 'ci95' {bad[0]!r} is not a [low, high] interval")
        fates = f.object("gold_fate")
        if not all(_is_number(v) for v in fates.values()):
            raise f.fail("gold_fate", "not a set of counts")
        tracker = f.get("tracker_precision", _tracker_hops, "a list", optional=True)
        reach = f.get("reach", _reach_counts, "a set of counts", optional=True)
        return cls(n=n, scores={k: f.number(k) for k in SCORES},
                   prompt_tokens_per_query=f.number("prompt_tokens_per_query"),
                   completion_tokens_per_query=f.number("completion_tokens_per_query"),
                   llm_calls_per_query=f.number("llm_calls_per_query"), seconds_per_query=f.number("seconds_per_query"),
                   gold_fate=fates, ci95={k: (v[0], v[1]) for k, v in ci.items()},
                   llm_seconds_per_query=f.number("llm_seconds_per_query", optional=True),
                   answers_capped=f.count("answers_capped", optional=True),
                   tracker_precision=None if tracker is None else [
                       TrackerPrecision.from_json(x, f"{where}, tracker_precision[{i}]")
                       for i, x in enumerate(tracker)],
                   reach=None if reach is None else dict(reach))

    def figure(self, key: str) -> float | None:
        """A score (SCORES) or a per-query figure, by its name in summary.json."""
        if key in SCORES:
            return self.scores.get(key)
        if key not in PER_QUERY:
            raise KeyError(f"{key!r} is not a figure of a method's summary")
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        out = {"n": self.n, **self.scores, "prompt_tokens_per_query": self.prompt_tokens_per_query,
               "completion_tokens_per_query": self.completion_tokens_per_query,
               "llm_calls_per_query": self.llm_calls_per_query, "seconds_per_query": self.seconds_per_query,
               "llm_seconds_per_query": self.llm_seconds_per_query, "gold_fate": dict(self.gold_fate),
               "answers_capped": self.answers_capped, "ci95": {k: list(v) for k, v in self.ci95.items()}}
        if self.tracker_precision is not None:  # absent, not null, so older summaries write back byte for byte
            out["tracker_precision"] = [r.to_json() for r in self.tracker_precision]
        if self.reach is not None:
            out["reach"] = dict(self.reach)
        return out


@dataclass(frozen=True)
class CostPerQuery:
    """Tokens and calls per question across methods (a call they share counted once)."""
    prompt_tokens_per_query: float | None
    completion_tokens_per_query: float | None
    llm_calls_per_query: float | None

    @classmethod
    def from_json(cls, obj: Any, where: str) -> CostPerQuery:
        f = _Fields(obj, where, "the cost across methods")
        return cls(f.number("prompt_tokens_per_query"), f.number("completion_tokens_per_query"),
                   f.number("llm_calls_per_query"))

    def to_json(self) -> dict[str, Any]:
        return {"prompt_tokens_per_query": self.prompt_tokens_per_query,
                "completion_tokens_per_query": self.completion_tokens_per_query,
                "llm_calls_per_query": self.llm_calls_per_query}


# Stamp fields a reader shows or computes with (the rest of the stamp is a record kept as given).
_STAMP_COUNTS = ("questions", "fate_k", "corpus_size", "limit")
_STAMP_TEXTS = ("dataset", "scope", "replies", "llm_model", "llm_backend", "embedder", "memrag_revision",
                "prompt_version", "started", "command")


@dataclass(frozen=True)
class RunSummary:
    """summary.json: the run's stamp and, per method and across them, what its questions gave."""
    stamp: dict[str, Any]
    scope: str
    methods: dict[str, MethodSummary]
    indexing: dict[str, Any]
    paired: dict[str, dict[str, PairedScore]]
    all_methods: CostPerQuery | None
    deviations: list[dict[str, str]]
    same_top5_as_dense: dict[str, int] | None = None  # absent from summaries older than that count

    @classmethod
    def of(cls, summary: RunSummary | dict[str, Any]) -> RunSummary:
        """The typed summary of a summary.json object (checked), or the summary itself."""
        return summary if isinstance(summary, RunSummary) else cls.from_json(summary, "the run summary")

    @property
    def replayed(self) -> bool:
        """True when the run's replies came from recordings: its seconds are the replay's, not a method's."""
        return self.stamp.get("replies") == "recorded"

    @classmethod
    def from_json(cls, obj: Any, where: str) -> RunSummary:
        where = f"{where}: not an evaluation summary"
        f = _Fields(obj, where, "the file")
        stamp = _Fields(f.object("stamp"), f"{where}, stamp", "the stamp")
        for key in _STAMP_COUNTS:
            stamp.count(key, optional=True)
        for key in _STAMP_TEXTS:
            stamp.text(key, optional=True)
        methods = f.items("methods", MethodSummary.from_json)
        if not methods:
            raise RunFormatError(f"{where}: 'methods' names no method")
        paired = f.items("paired", lambda v, w: _Fields(v, w, "a pair").obj)
        all_methods = f.object("all_methods", optional=True)
        deviations = f.get("deviations", lambda v: isinstance(v, list) and all(
            isinstance(d, dict) and all(isinstance(x, str) for x in d.values()) for d in v),
            "a list of text rows", optional=True, default=[])
        same = f.get("same_top5_as_dense", lambda v: isinstance(v, dict) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v.values()), "a set of counts", optional=True)
        return cls(stamp=stamp.obj, scope=f.get("scope", lambda v: isinstance(v, str), "text"), methods=methods,
                   indexing=f.get("indexing", _indexing, "an object with a text 'path'") or {},
                   paired={p: {m: PairedScore.from_json(x, f"{where}, paired[{p!r}][{m!r}]")
                               for m, x in _paired_scores(scores, f"{where}, paired[{p!r}]").items()}
                           for p, scores in paired.items()},
                   all_methods=CostPerQuery.from_json(all_methods, f"{where}, all_methods") if all_methods else None,
                   deviations=deviations, same_top5_as_dense=same)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stamp": self.stamp, "scope": self.scope,
                               "methods": {m: e.to_json() for m, e in self.methods.items()}}
        if self.same_top5_as_dense is not None:
            out["same_top5_as_dense"] = dict(self.same_top5_as_dense)
        out |= {"indexing": self.indexing,
                "paired": {p: {m: s.to_json() for m, s in scores.items()} for p, scores in self.paired.items()},
                "all_methods": self.all_methods.to_json() if self.all_methods else None,
                "deviations": self.deviations}
        return out


def _paired_scores(scores: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = [m for m in scores if m not in LABELS]
    if unknown:
        raise RunFormatError(f"{where}: {unknown[0]!r} is not a score")
    return scores


__all__ = ["CallTotals", "CostPerQuery", "GoldFate", "LABELS", "MethodResult", "MethodSummary", "PAIRED_SCORES",
           "PER_QUERY", "PairedScore", "QuestionRecord", "RunFormatError", "RunSummary", "SCORES", "TrackerHop",
           "TrackerPrecision", "check_indexing"]
