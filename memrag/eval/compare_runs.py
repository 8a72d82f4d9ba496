"""Two evaluation runs of the same questions side by side: each method's change, paired per question.

    python -m memrag.eval.compare_runs BEFORE_DIR AFTER_DIR [--metrics recall@2,recall@5,em]

A run folder's `results.jsonl` holds one record per question; records are paired by question id,
so the two runs may come from different commits or parameter sets (the previous default and a
change). For each method in both runs and each metric: the mean before and after, the mean
difference after − before with its paired bootstrap 95% interval, and wins / losses / ties.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memrag.eval.records import QuestionRecord
from memrag.eval.rundir import RESULTS, read_results
from memrag.eval.stats import bootstrap_ci, mean, paired_win_loss
from memrag.methods import registry

DEFAULT_METRICS = ("recall@2", "recall@5", "em", "f1")


def read_records(run_dir: Path) -> dict[str, QuestionRecord]:
    """qid → record, from a run folder's results.jsonl (read as the runner reads it, never
    repaired: a viewer must not change a run; the last record of a qid wins), each checked
    against the schema (memrag.eval.records)."""
    path = Path(run_dir) / RESULTS
    if not path.is_file():
        raise ValueError(f"no {RESULTS} in {run_dir}")
    out: dict[str, QuestionRecord] = {}
    for n, rec in enumerate(read_results(path, repair=False), start=1):
        record = QuestionRecord.from_json(rec, f"{path}, record {n}")
        out[record.qid] = record
    return out


def compare(before: dict[str, QuestionRecord], after: dict[str, QuestionRecord],
            metrics: tuple[str, ...] = DEFAULT_METRICS) -> list[dict[str, Any]]:
    """One row per (method, metric) present in both runs, over the questions both answered."""
    qids = [q for q in before if q in after]
    rows = []
    methods = [m for m in (after[qids[0]].methods if qids else {}) if qids and m in before[qids[0]].methods]
    for m in methods:
        for metric in metrics:
            a = [before[q].methods[m].metrics.get(metric) for q in qids]
            b = [after[q].methods[m].metrics.get(metric) for q in qids]
            if any(v is None for v in a + b):
                continue
            diffs = [y - x for x, y in zip(a, b)]
            rows.append({"method": m, "metric": metric, "n": len(qids), "before": mean(a), "after": mean(b),
                         "diff": mean(diffs), "diff_ci95": list(bootstrap_ci(diffs)),
                         **paired_win_loss(b, a)})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a table, methods by their display names (--json keeps the registry names)."""
    lines = ["| method | metric | n | before | after | after − before [95% CI] | wins / losses / ties |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["diff_ci95"]
        lines.append(f"| {registry.label_of(r['method'])} | {r['metric']} | {r['n']} | {100 * r['before']:.1f} "
                     f"| {100 * r['after']:.1f} "
                     f"| {100 * r['diff']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] "
                     f"| {r['wins']} / {r['losses']} / {r['ties']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memrag.eval.compare_runs", description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--metrics", default=",".join(DEFAULT_METRICS))
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = compare(read_records(args.before), read_records(args.after),
                   tuple(m.strip() for m in args.metrics.split(",") if m.strip()))
    print(json.dumps(rows) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
