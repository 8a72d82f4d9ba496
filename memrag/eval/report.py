"""Evaluation outputs, all computed from the per-question lines (results.jsonl) and run.json:
summary.json, a Markdown summary, a plotly HTML report with 95% intervals, and the
`docs/results.md` page built from summary.json files alone (no number typed by hand):

    python -m memrag.eval.report --out docs/results.md RUN_DIR [RUN_DIR ...]

Scores are fractions in summary.json and percentages in the tables. Text that comes from a
run (model names, paths, method names) is escaped wherever it is shown.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from memrag import jsonsafe
from memrag.assets import asset_text
from memrag.eval.stats import bootstrap_ci, mean, paired_win_loss
from memrag.eval.rundir import REPORT_HTML, SUMMARY, SUMMARY_MD, write_json_atomic
from memrag.filesafe import UnreadableFile, read_bytes
from memrag.eval.gold import fate_family, fate_order
from memrag.eval.records import (LABELS, PAIRED_SCORES, SCORES, CostPerQuery, MethodSummary, PairedScore,
                                  RunSummary, TrackerHop, TrackerPrecision)
from memrag.eval.tracker_precision import aggregate as tracker_aggregate
from memrag.methods.neuropath.reach import REACH_KEYS
from memrag.methods import registry


# ------------------------------------------------------------------ summary.json
def _mean_or_none(values: Sequence[float | None]) -> float | None:
    """Mean, or None when there are no values or any is unknown (an unknown count is never 0)."""
    if not values or any(v is None for v in values):
        return None
    return mean([float(v) for v in values])  # type: ignore[arg-type]


def _scores(rows: list[dict[str, Any]], metric: str) -> list[float] | None:
    vals = [r["metrics"].get(metric) for r in rows]
    if not vals or any(v is None for v in vals):
        return None
    return [float(v) for v in vals]


def _fate_counts(method: str, rows: list[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(f["fate"] for r in rows for f in r["gold_fate"])
    for fate in fate_family(method):  # always listed (zero counts too), so runs compare line by line
        counts.setdefault(fate, 0)
    return {f: counts[f] for f in sorted(counts, key=lambda f: (fate_order(f), f))}


def _tracker_precision(rows: list[dict[str, Any]]) -> list[TrackerPrecision] | None:
    """Per hop and over all hops, when every question recorded its tracking counts (a method with a
    path tracker, scored since the figure existed); else None."""
    if not rows or any(r.get("tracker") is None for r in rows):
        return None
    return tracker_aggregate([[TrackerHop.from_json(h, "tracker") for h in r["tracker"]] for r in rows])


def _reach(rows: list[dict[str, Any]]) -> dict[str, int] | None:
    """NeuroPath's reach counts summed over the questions, when every question recorded them."""
    if not rows or any(not isinstance(r.get("reach"), dict) for r in rows):
        return None
    return {k: sum(int(r["reach"].get(k, 0)) for r in rows) for k in REACH_KEYS}


def _method_summary(method: str, rows: list[dict[str, Any]]) -> MethodSummary:
    scores: dict[str, float | None] = {}
    ci: dict[str, tuple[float, float]] = {}
    for metric in SCORES:
        vals = _scores(rows, metric)
        scores[metric] = mean(vals) if vals else None
        if vals:
            ci[metric] = bootstrap_ci(vals)
    return MethodSummary(
        n=len(rows), scores=scores,
        prompt_tokens_per_query=_mean_or_none([r["tokens"]["prompt_tokens"] for r in rows]),
        completion_tokens_per_query=_mean_or_none([r["tokens"]["completion_tokens"] for r in rows]),
        llm_calls_per_query=_mean_or_none([r["tokens"]["llm_calls"] for r in rows]),
        seconds_per_query=_mean_or_none([r["seconds"] for r in rows]),
        llm_seconds_per_query=_mean_or_none([r["tokens"].get("llm_seconds") for r in rows]),
        gold_fate=_fate_counts(method, rows), answers_capped=sum(1 for r in rows if r.get("answer_capped")), ci95=ci,
        tracker_precision=_tracker_precision(rows), reach=_reach(rows))


def _same_top5_as_dense(methods: list[str], records: list[dict[str, Any]]) -> dict[str, int]:
    """Per method: on how many questions its first five passages are dense's first five (as a set).
    A method that mostly reproduces dense's head has not beaten dense, whatever its scores."""
    base = registry.baseline()
    if base not in methods:
        return {}
    out = {}
    for m in methods:
        if m == base:
            continue
        out[m] = sum(1 for r in records
                     if set(r["methods"][m].get("top_passages", [])[:5])
                     == set(r["methods"][base].get("top_passages", [])[:5]))
    return out


def _paired(methods: list[str], records: list[dict[str, Any]]) -> dict[str, dict[str, PairedScore]]:
    """For each pair (a vs b): per question, does a score above, below or level with b;
    the mean difference a − b and its bootstrap 95% interval."""
    out: dict[str, dict[str, PairedScore]] = {}
    for a, b in itertools.combinations(methods, 2):
        pair: dict[str, PairedScore] = {}
        for metric in PAIRED_SCORES:
            va = _scores([r["methods"][a] for r in records], metric)
            vb = _scores([r["methods"][b] for r in records], metric)
            if va is None or vb is None:
                continue
            diffs = [x - y for x, y in zip(va, vb)]
            pair[metric] = PairedScore(**paired_win_loss(va, vb), mean_diff=mean(diffs),
                                       diff_ci95=bootstrap_ci(diffs))
        out[f"{a} vs {b}"] = pair
    return out


def _indexing(run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    info = run.get("indexing") or {}
    if not info.get("per_question"):
        return dict(info)
    per = [r["indexing"] for r in records if r.get("indexing")]
    total: dict[str, Any] = {"per_question": True, "memories": len(per),
                             "built": sum(1 for x in per if x["source"] != "opened")}
    for key in ("documents", "chunks", "entities", "engrams", "triples", "failures", "llm_calls",
                "prompt_tokens", "completion_tokens", "extraction_seconds", "missing_passages"):
        vals = [x.get(key) for x in per]
        total[key] = None if any(v is None for v in vals) else round(sum(vals), 3)
    return total


def _deviations(methods: list[str]) -> list[dict[str, str]]:
    from memrag.methods.deviations import all_deviations  # read from the wings when a report is written

    return [d for d in all_deviations() if d["method"] in ("all", *methods)]


def summarise(records: list[dict[str, Any]], run: dict[str, Any]) -> dict[str, Any]:
    """summary.json (memrag.eval.records.RunSummary) from the finished questions (in question order)
    and run.json."""
    methods = list(run["identity"]["methods"])
    return RunSummary(
        stamp=run["stamp"], scope=run["identity"]["scope"],
        methods={m: _method_summary(m, [r["methods"][m] for r in records]) for m in methods},
        same_top5_as_dense=_same_top5_as_dense(methods, records), indexing=_indexing(run, records),
        paired=_paired(methods, records),
        all_methods=CostPerQuery(
            prompt_tokens_per_query=_mean_or_none([r["all_methods"]["prompt_tokens"] for r in records]),
            completion_tokens_per_query=_mean_or_none([r["all_methods"]["completion_tokens"] for r in records]),
            llm_calls_per_query=_mean_or_none([r["all_methods"]["llm_calls"] for r in records])),
        deviations=_deviations(methods)).to_json()


def write_summary(out: Path, run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    summary = summarise(records, run)
    write_json_atomic(Path(out) / SUMMARY, summary)
    return summary


def write_outputs(out: Path, run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """summary.json, summary.md and report.html."""
    summary = write_summary(out, run, records)
    (Path(out) / SUMMARY_MD).write_text(summary_markdown(summary), encoding="utf-8")
    (Path(out) / REPORT_HTML).write_text(html_report(summary, records), encoding="utf-8")
    return summary


# ------------------------------------------------------------------ Markdown
# Characters that can start markup inside a Markdown table cell or a line (emphasis, code, links,
# images, HTML, math, strikethrough, cell borders). Escaping only these keeps the page readable
# while run text (model names, paths) still cannot become a link, an image or HTML.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|$~])")


def _md(text: Any) -> str:
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _num(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _with_ci(entry: MethodSummary, metric: str) -> str:
    v = entry.figure(metric)
    ci = entry.ci95.get(metric)
    if v is None:
        return "–"
    return f"{_pct(v)} [{_pct(ci[0])}–{_pct(ci[1])}]" if ci else _pct(v)


def _name(method: Any) -> str:
    """A method as every table names it: its display name (the files keep the registry name)."""
    return registry.label_of(str(method))


def pair_name(pair: str) -> str:
    """'neuropath vs dense' (a summary's pair key) as 'NeuroPath vs Dense'."""
    return " vs ".join(_name(m) for m in pair.split(" vs "))


# Each table is built once as plain cells and rendered as Markdown or HTML. Only the columns
# listed in `text_cols` hold text from the run (names, fates): those are escaped for Markdown.
Table = tuple[list[str], list[list[str]], tuple[int, ...]]


def _markdown(table: Table) -> str:
    header, rows, text_cols = table
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_md(c) if i in text_cols else c for i, c in enumerate(r)) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(table: Table) -> str:
    header, rows, _ = table
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def replayed(summary: RunSummary | dict[str, Any]) -> bool:
    """True when the run's replies came from recordings: its seconds are the replay's, not a method's."""
    return RunSummary.of(summary).replayed


def score_rows(summary: RunSummary | dict[str, Any]) -> Table:
    """One row per method: recall@k, EM / raw EM / F1 (percent, 95% bootstrap intervals for
    R@2, R@5, EM and F1), then the cost per query."""
    s = RunSummary.of(summary)
    header = ["method", "n", "R@1", "R@2", "R@5", "R@10", "EM", "raw EM", "F1", "capped answers",
              "top 5 = dense's", "prompt tok/q", "completion tok/q", "LLM calls/q", "s/q"]
    if s.replayed:  # the replay's seconds are named as such, beside what the recorded calls took
        header[-1:] = ["replay s/q", "original LLM s/q"]
    rows = []
    same = s.same_top5_as_dense or {}
    for m, e in s.methods.items():
        rows.append([_name(m), str(e.n), _pct(e.figure("recall@1")), _with_ci(e, "recall@2"), _with_ci(e, "recall@5"),
                     _pct(e.figure("recall@10")), _with_ci(e, "em"), _pct(e.figure("raw_em")), _with_ci(e, "f1"),
                     "–" if e.answers_capped is None else str(e.answers_capped), str(same[m]) if m in same else "–",
                     _num(e.prompt_tokens_per_query, 0), _num(e.completion_tokens_per_query, 0),
                     _num(e.llm_calls_per_query, 2), _num(e.seconds_per_query, 2)]
                    + ([_num(e.llm_seconds_per_query, 2)] if s.replayed else []))
    return header, rows, (0,)


def fate_rows(summary: RunSummary | dict[str, Any]) -> Table:
    """Gold passages by fate, per method."""
    rows = []
    for m, e in RunSummary.of(summary).methods.items():
        total = sum(e.gold_fate.values())
        for fate, n in e.gold_fate.items():
            rows.append([_name(m), str(fate), str(n), f"{100 * n / total:.1f}" if total else "–"])
    return ["method", "gold passage fate", "count", "%"], rows, (0, 1)


def paired_rows(summary: RunSummary | dict[str, Any]) -> Table:
    rows = []
    for pair, metrics in RunSummary.of(summary).paired.items():
        for metric, p in metrics.items():
            lo, hi = p.diff_ci95
            rows.append([pair_name(pair), LABELS[metric], str(p.wins), str(p.losses), str(p.ties),
                         f"{100 * p.mean_diff:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"])
    return ["pair (a vs b)", "score", "a wins", "a loses", "ties", "mean a − b (95% CI), points"], rows, (0,)


NOT_BETTER = "not better than list order"
NOT_RECORDED = "not recorded"
TRACKER_NOTE = ("New paths only (paths carried from the previous hop left out); kept = the tracker's valid "
                "paths; a path counts when it touches a gold passage — in runs made from 2026-12-07 on, through the "
                "passage of the triple its hop added only (a grown path's inherited passages count at the hop "
                "that found them); earlier runs counted any of its passages. Top of list and random keep as many new "
                "paths as the tracker did (random: its exact expectation); recall = gold-touching listed new "
                "paths the tracker kept. Sums over questions, then the ratio; [95% paired bootstrap interval "
                f"over questions]. Flagged \"{NOT_BETTER}\" when tracker − top of list is ≤ 0 or its interval "
                "reaches 0.")


def _has_tracker(method: str) -> bool:
    """A method that judges listed paths with a tracking call (its stage is '<name>.track')."""
    return method in registry.names() and any(s.endswith(".track") for s in registry.get(method).stage_tokens)


def tracker_rows(summary: RunSummary | dict[str, Any]) -> Table:
    """Tracker precision per method with a tracker, per hop then over all hops (percent); a method
    whose summary predates the figure gets one row saying so."""
    rows = []
    for m, e in RunSummary.of(summary).methods.items():
        if e.tracker_precision is None:
            if _has_tracker(m):
                rows.append([_name(m), "–", "–", "–", NOT_RECORDED, "–", "–", "–", "–", ""])
            continue
        for r in e.tracker_precision:
            ci = "" if r.diff_ci95 is None else f" [{100 * r.diff_ci95[0]:+.1f}, {100 * r.diff_ci95[1]:+.1f}]"
            rows.append([_name(m), r.hop, str(r.questions), f"{r.kept_new} / {r.listed_new}", _pct(r.precision),
                         _pct(r.top_precision), _pct(r.random_precision), _pct(r.recall),
                         "–" if r.diff is None else f"{100 * r.diff:+.1f}{ci}",
                         NOT_BETTER if r.not_better_than_list_order else ""])
    return (["method", "hop", "questions", "kept / listed new paths", "tracker %", "top of list %", "random %",
             "recall %", "tracker − top (95% CI), points", "flag"], rows, (0, 1))  # the hop label is the file's text


def _tracker_section(s: RunSummary, heading: str) -> list[str]:
    """The tracker table with its note; one line when the run's summary predates the figure."""
    tracker = tracker_rows(s)
    if not tracker[1]:
        return []
    if all(e.tracker_precision is None for e in s.methods.values()):
        return [f"Tracker precision (new paths): {NOT_RECORDED} (this run's summary predates the figure).", ""]
    return [f"{heading}# Tracker precision (new paths)", "", _markdown(tracker), "", TRACKER_NOTE, ""]


def _reach_section(s: RunSummary) -> list[str]:
    """One line per method with reach counts: its gold passages by how far it got towards them."""
    lines = [f"{_name(m)} reach: of {e.reach['gold']} gold passages, {e.reach['within_max_hops']} within max_hops "
             f"of a seed, {e.reach['on_listed_paths']} on a listed path, {e.reach['kept']} in a kept path's passages."
             for m, e in s.methods.items() if e.reach is not None]
    return lines + [""] if lines else []


def markdown_table(summary: RunSummary | dict[str, Any]) -> str:
    return _markdown(score_rows(summary))


def fate_table(summary: RunSummary | dict[str, Any]) -> str:
    return _markdown(fate_rows(summary))


def paired_table(summary: RunSummary | dict[str, Any]) -> str:
    return _markdown(paired_rows(summary))


def _indexing_line(ix: dict[str, Any]) -> str:
    if not ix:
        return "Indexing: not recorded."
    parts = [f"{k} {_md(ix[k])}" for k in ("memories", "documents", "chunks", "entities", "engrams", "triples",
                                            "failures", "prompt_tokens", "completion_tokens", "extraction_seconds")
             if k in ix and ix[k] is not None]
    where = f" ({_md(ix['source'])}, {_md((ix.get('llm') or {}).get('model', ''))})" if "source" in ix else ""
    return "Indexing" + where + ": " + ", ".join(parts) + "."


def _stamp_lines(stamp: dict[str, Any]) -> list[str]:
    model = stamp.get("llm_model") or "none (retrieval only)"
    lines = [
        f"- dataset {_md(stamp.get('dataset'))}, scope {_md(stamp.get('scope'))}, "
        f"{stamp.get('questions')} questions (limit {_md(stamp.get('limit') or 'none')}), "
        f"corpus {stamp.get('corpus_size')} passages",
        f"- LLM {_md(stamp.get('llm_backend') or '–')} / {_md(model)}"
        + (f" (sha256 {_md(stamp['llm_file_sha256'][:12])}…)" if stamp.get("llm_file_sha256") else "")
        + f"; embedder {_md(stamp.get('embedder'))}; answers {'on' if stamp.get('answers') else 'off'}",
        f"- memrag {_md(stamp.get('memrag_revision'))}"
        + (f" (resumed with {_md(', '.join(stamp['resumed_revisions']))})" if stamp.get("resumed_revisions") else "")
        + f", prompts {_md(stamp.get('prompt_version'))}, started {_md(stamp.get('started'))}",
    ]
    if stamp.get("command"):
        lines.append(f"- command: `{stamp['command'].replace('`', '')}`")
    return lines


def deviations_table(summary: RunSummary | dict[str, Any]) -> str:
    rows = [[_name(d.get("method", "")), *(d.get(k, "") for k in ("what", "paper", "memrag"))]
            for d in RunSummary.of(summary).deviations]
    return _markdown((["method", "what", "papers", "memrag"], rows, (0, 1, 2, 3))) if rows else ""


def _replay_note(s: RunSummary) -> str:
    if not s.replayed:
        return ""
    return (f" Replies were replayed from recordings made with {_md(s.stamp.get('llm_model'))}: "
            "s/q is the replay's time (retrieval recomputed, no model), not the model's.")


def summary_markdown(summary: RunSummary | dict[str, Any], title: str | None = None, heading: str = "#",
                     deviations: bool = True) -> str:
    s = RunSummary.of(summary)
    stamp = s.stamp
    across = s.all_methods or CostPerQuery(None, None, None)
    title = title or f"{stamp.get('dataset')} — {s.scope}"
    parts = [f"{heading} {_md(title)}", "", *_stamp_lines(stamp), "", markdown_table(s), "",
             "Percent; [95% bootstrap interval over questions]. Tokens and calls per query bill the shared "
             "query-entity call to each method; across methods (counted once): "
             f"{_num(across.prompt_tokens_per_query, 0)} prompt / "
             f"{_num(across.completion_tokens_per_query, 0)} completion tokens, "
             f"{_num(across.llm_calls_per_query, 2)} calls per question." + _replay_note(s),
             "",
             _indexing_line(s.indexing), "",
             f"{heading}# Gold passage fates (k = {stamp.get('fate_k')})", "", fate_table(s), ""]
    parts += _tracker_section(s, heading)
    parts += _reach_section(s)
    if any(s.paired.values()):
        parts += [f"{heading}# Paired comparison", "", paired_table(s), ""]
    dev = deviations_table(s) if deviations else ""
    if dev:
        parts += [f"{heading}# Deviations from the papers", "", dev, ""]
    return "\n".join(parts)


# ------------------------------------------------------------------ HTML (plotly)
def _label(text: Any) -> str:
    # plotly reads a few HTML tags in labels: keep angle brackets from ever forming one
    return str(text).replace("<", "‹").replace(">", "›")


def _bars(s: RunSummary, metrics: Sequence[str], title: str):
    import plotly.graph_objects as go

    fig = go.Figure()
    for m, e in s.methods.items():
        shown = [k for k in metrics if e.figure(k) is not None]
        if not shown:
            continue
        y = [100 * e.figure(k) for k in shown]
        ci = [e.ci95.get(k) for k in shown]
        fig.add_trace(go.Bar(
            name=_label(registry.label_of(m)), x=[LABELS[k] for k in shown], y=y,
            error_y={"type": "data", "symmetric": False,
                     "array": [100 * c[1] - v if c else 0 for c, v in zip(ci, y)],
                     "arrayminus": [v - 100 * c[0] if c else 0 for c, v in zip(ci, y)]}))
    fig.update_layout(title=title, barmode="group", yaxis_title="percent (95% bootstrap interval)",
                      yaxis_range=[0, 100], height=380, margin={"t": 50, "b": 40})
    return fig


def cost_intervals(records: Sequence[dict[str, Any]], methods: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    """95% bootstrap intervals of tokens (prompt + completion) and seconds per query, per method, from
    the question lines (summary.json keeps intervals for the scores only). A quantity some question
    does not know (tokens of an engine that does not count them) gets no interval."""
    out: dict[str, dict[str, list[float]]] = {}
    for m in methods:
        rows = [r["methods"][m] for r in records if m in r.get("methods", {})]
        tokens = [None if r["tokens"]["prompt_tokens"] is None or r["tokens"]["completion_tokens"] is None
                  else r["tokens"]["prompt_tokens"] + r["tokens"]["completion_tokens"] for r in rows]
        seconds = [r.get("seconds") for r in rows]
        ci: dict[str, list[float]] = {}
        for key, vals in (("tokens_per_query", tokens), ("seconds_per_query", seconds)):
            if vals and all(v is not None for v in vals):
                ci[key] = list(bootstrap_ci([float(v) for v in vals]))  # type: ignore[arg-type]
        out[m] = ci
    return out


def _error_bars(value: float | None, ci: Sequence[float] | None) -> tuple[float, float]:
    if value is None or not ci:
        return 0.0, 0.0
    return max(0.0, ci[1] - value), max(0.0, value - ci[0])


def _cost(summary: RunSummary | dict[str, Any], records: Sequence[dict[str, Any]] | None = None):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    s = RunSummary.of(summary)
    names = list(s.methods)
    e = s.methods
    ci = cost_intervals(records, names) if records else {m: {} for m in names}
    seconds_key = "llm_seconds_per_query" if s.replayed else "seconds_per_query"  # never the replay's own time
    # short titles, the long one on two lines: side by side in a narrow column they ran into each other
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.16, subplot_titles=(
        "tokens per query", "LLM seconds per query<br>in the original run" if s.replayed else "seconds per query"))
    labels = [_label(registry.label_of(m)) for m in names]
    totals = [None if e[m].prompt_tokens_per_query is None or e[m].completion_tokens_per_query is None
              else e[m].prompt_tokens_per_query + e[m].completion_tokens_per_query for m in names]
    for key, label in (("prompt_tokens_per_query", "prompt"), ("completion_tokens_per_query", "completion")):
        bar: dict[str, Any] = {}
        if key == "completion_tokens_per_query" and records:
            # stacked: the top segment ends at the total, so the total's interval hangs from it
            up, down = zip(*(_error_bars(t, ci[m].get("tokens_per_query")) for t, m in zip(totals, names)))
            bar["error_y"] = {"type": "data", "symmetric": False, "array": list(up), "arrayminus": list(down)}
        fig.add_trace(go.Bar(name=label, x=labels, y=[e[m].figure(key) for m in names], **bar),
                      row=1, col=1)
    up, down = zip(*(_error_bars(e[m].figure(seconds_key), None if s.replayed else ci[m].get("seconds_per_query"))
                     for m in names))
    fig.add_trace(go.Bar(name="seconds", x=labels, y=[e[m].figure(seconds_key) for m in names],
                         showlegend=False, error_y={"type": "data", "symmetric": False, "array": list(up),
                                                    "arrayminus": list(down)}), row=1, col=2)
    title = "Cost per query" + (" (95% bootstrap intervals)" if records else "")
    fig.update_layout(title=title, barmode="stack", height=380, margin={"t": 80, "b": 40})
    return fig


def _fates(s: RunSummary):
    import plotly.graph_objects as go

    names = list(s.methods)
    fates: list[str] = []
    for m in names:
        fates += [f for f in s.methods[m].gold_fate if f not in fates]
    fig = go.Figure()
    for fate in sorted(fates, key=fate_order):
        counts = [s.methods[m].gold_fate.get(fate, 0) for m in names]
        if any(counts):
            fig.add_trace(go.Bar(name=_label(fate), y=[_label(registry.label_of(m)) for m in names], x=counts,
                                 orientation="h"))
    fig.update_layout(title=f"Gold passage fates (k = {s.stamp.get('fate_k')})", barmode="stack",
                      xaxis_title="gold passages", height=120 + 60 * len(names), margin={"t": 50, "b": 40})
    return fig


def figures(summary: RunSummary | dict[str, Any],
            records: Sequence[dict[str, Any]] | None = None) -> list[tuple[str, Any]]:
    """The run's plotly figures, named: recall@k and (with answers) EM / F1 with 95% intervals, cost per
    query (with intervals when the question lines are given), gold fates. The HTML report and the
    app's Evaluate page both draw these."""
    s = RunSummary.of(summary)
    figs = [("recall", _bars(s, ("recall@1", "recall@2", "recall@5", "recall@10"), "Recall@k"))]
    if any(e.figure("f1") is not None for e in s.methods.values()):
        figs.append(("answers", _bars(s, ("em", "raw_em", "f1"), "Answers")))
    return figs + [("cost", _cost(s, records)), ("fates", _fates(s))]


def html_report(summary: RunSummary | dict[str, Any], records: Sequence[dict[str, Any]] | None = None) -> str:
    """A standalone page: plotly is embedded (no remote loads); every text is escaped."""
    summary = RunSummary.of(summary)
    stamp = summary.stamp
    figs = [f for _, f in figures(summary, records)]
    plots = "".join(f.to_html(full_html=False, include_plotlyjs=(i == 0)) for i, f in enumerate(figs))
    tables = "".join(f"<h2>{html.escape(name)}</h2>" + _html_table(t)
                     for name, t in (("Scores", score_rows(summary)), ("Gold passage fates", fate_rows(summary)),
                                     ("Tracker precision (new paths)", tracker_rows(summary)),
                                     ("Paired comparison", paired_rows(summary))) if t[1])
    facts = "".join(f"<li>{html.escape(f'{k}: {v}')}</li>" for k, v in stamp.items()
                    if k not in ("params", "index_params", "stage_versions"))
    title = html.escape(f"memrag evaluation — {stamp.get('dataset')} / {summary.scope}")
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>" + title + "</title>"
            f"<style>{asset_text('report.css')}</style></head><body>"
            f"<h1>{title}</h1><ul>{facts}</ul>{plots}{tables}"
            f"<h2>Stamp</h2><pre>{html.escape(json.dumps(stamp, indent=1, ensure_ascii=False))}</pre></body></html>")


# ------------------------------------------------------------------ docs/results.md
SUMMARY_MAX_BYTES = 20_000_000  # a summary holds figures, not traces: a few hundred KB


def load_summary(run_dir: Path) -> dict[str, Any]:
    """A run's summary.json, checked against the schema (memrag.eval.records.RunSummary): a
    malformed file is a ValueError naming the file and the field. `read_summary` gives it typed."""
    path = Path(run_dir) / SUMMARY
    if not path.is_file():
        raise FileNotFoundError(f"no summary.json in {run_dir}: give the --out folder of an evaluation run")
    try:
        summary = jsonsafe.loads(read_bytes(path, SUMMARY_MAX_BYTES, what="run summary"))
    except UnreadableFile:
        raise
    except ValueError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from e
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be an evaluation summary") from None
    RunSummary.from_json(summary, str(path))
    return summary


def read_summary(run_dir: Path) -> RunSummary:
    """A run's summary.json as the typed record (checked as load_summary checks it)."""
    return RunSummary.from_json(load_summary(run_dir), str(Path(run_dir) / SUMMARY))


def results_page(run_dirs: Sequence[Path], notes: str = "") -> str:
    """The results page: one section per run, every figure read from its summary.json; `notes`
    (hand-written Markdown: commands, a reading of the runs) goes after the introduction."""
    summaries = [(Path(d), read_summary(d)) for d in run_dirs]
    parts = ["# Results", "",
             "Generated by `python -m memrag.eval.report` from the `summary.json` of each run below; "
             "no figure in its tables is typed by hand. Percent; [95% bootstrap interval over questions].", ""]
    if notes.strip():
        parts += [notes.strip(), ""]
    for run_dir, s in summaries:
        st = s.stamp
        # the folder name tells runs of one scope apart (a change and the previous default)
        title = f"{st.get('dataset')} — {s.scope}, {st.get('questions')} questions ({run_dir.name})"
        body = summary_markdown(s, title=title, heading="##", deviations=False)
        parts += [body.rstrip(), "", f"Source: `{_md(run_dir.name)}/summary.json`", ""]
    # The deviations are the same for every run: shown once, at the end of the page.
    dev = next((deviations_table(s) for _, s in summaries if s.deviations), "")
    if dev:
        parts += ["## Deviations from the papers", "", dev, ""]
    return "\n".join(parts)


def _replace_section(page_path: Path, heading_prefix: str, run_dirs: Sequence[Path]) -> int:
    """Rewrite one '## …' section of an existing page from summary.json files."""
    lines = page_path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("## " + heading_prefix)), None)
    if start is None:
        raise ValueError(f"{page_path} has no section starting with '## {heading_prefix}'")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    body: list[str] = []
    n = None
    for run_dir in run_dirs:
        s = read_summary(Path(run_dir))
        n = max(v.n for v in s.methods.values())
        cmd = s.stamp.get("command", "")
        body += [f"Generated from `{_md(Path(run_dir).name)}/summary.json` by `{cmd}` and "
                 f"`python -m memrag.eval.report --section Results --out {page_path} {run_dir}`. "
                 "Illustrative only: a small sample, one small model." + _replay_note(s), "",
                 markdown_table(s).rstrip(), ""]
    new = [f"## {heading_prefix} (illustrative, n = {n})", ""] + body
    page_path.write_text("\n".join(lines[:start] + new + lines[end:]) + "\n", encoding="utf-8")
    print(f"rewrote section '{heading_prefix}' of {page_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memrag.eval.report",
                                     description="Build a results page from evaluation summary.json files.")
    parser.add_argument("run_dirs", nargs="+", type=Path, help="--out folders of evaluation runs")
    parser.add_argument("--out", type=Path, required=True, help="the Markdown page to write (e.g. docs/results.md)")
    parser.add_argument("--notes", type=Path, help="hand-written Markdown placed after the page's introduction")
    parser.add_argument("--section", help="replace only this '## ' section of --out (e.g. the sample README's "
                        "results section) with the run's table, keeping the rest of the page")
    args = parser.parse_args(argv)
    try:
        if args.section:
            return _replace_section(args.out, args.section, args.run_dirs)
        page = results_page(args.run_dirs, args.notes.read_text(encoding="utf-8") if args.notes else "")
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page, encoding="utf-8")
    print(f"wrote {args.out} from {len(args.run_dirs)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
