"""The Evaluate page's per-question part: which questions a method missed (memrag.eval.misses), a
filter over them, a compact table that fits 1,440 px (one column per method, wrapped text), and
the question picker's labels, which mark the methods that missed a gold passage.

Text from a run (questions, answers, passage titles) goes into dataframes and selectbox options
only, never into markdown.
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd
import streamlit as st

from memrag.app import table_fit
from memrag.app.widgets import CELL_PAD_PX, LINE_PX
from memrag.eval import misses
from memrag.eval.misses import MethodOutcome
from memrag.methods import registry

ALL = "every question"
Outcomes = dict[str, dict[str, MethodOutcome]]  # qid → method → outcome
SELECT_PX = 35  # the row-selection column the table adds


def fate_k(summary_stamp: dict[str, Any]) -> int:
    return int(summary_stamp.get("fate_k") or 5)


def outcomes_of(records: Sequence[dict[str, Any]], methods: Sequence[str], k: int) -> Outcomes:
    return {r["qid"]: misses.question_outcomes(r, methods, k) for r in records}


def compact_table(records: Sequence[dict[str, Any]], methods: Sequence[str], outcomes: Outcomes,
                  qids: Sequence[str]) -> pd.DataFrame:
    """One row per question in `qids`: id, question, gold answer, and per method its gold passages
    in the top k, EM, and each missed passage with its fate."""
    by_qid = {r["qid"]: r for r in records}
    rows = []
    for q in qids:
        r = by_qid[q]
        row: dict[str, Any] = {"id": q, "question": r["question"], "gold answer": " / ".join(r["answers"])}
        row.update({registry.label_of(m): outcomes[q][m].text() if m in outcomes[q] else None for m in methods})
        rows.append(row)
    return pd.DataFrame(rows, columns=["id", "question", "gold answer", *(registry.label_of(m) for m in methods)])


def compact_config(df: pd.DataFrame, methods: Sequence[str], k: int) -> tuple[dict[str, Any], int | None]:
    """(column config, row height): the id fits its values, the question, gold answer and method
    columns share the rest of the page's column at 1,440 px and wrap (memrag.app.table_fit's rule)."""
    help_ = (f"gold passages in the top {k} of all gold passages · EM ✓ right / ✗ wrong (none: no answer step) · "
             "each missed passage with its fate")
    labels = [registry.label_of(m) for m in methods]
    wrap = ["question", "gold answer", *labels]
    px = table_fit.widths(df, wrap, table_fit.CONTENT_PX - SELECT_PX)
    config = {c: st.column_config.TextColumn(c, width=px[c], help=help_ if c in labels else None) for c in df.columns}
    lines = table_fit.lines_needed(df, {c: px[c] for c in wrap})
    return config, (max(lines, 3) * LINE_PX + CELL_PAD_PX if lines > 1 else None)


def pick_label(record: dict[str, Any], outcomes: Outcomes) -> str:
    """'q14 · missed by NeuroPath, Dense — By what nickname…': the picker's option for a question."""
    missed = [registry.label_of(m) for m, o in outcomes.get(record["qid"], {}).items() if o.missed]
    mark = f" · missed by {', '.join(missed)}" if missed else " · all gold found"
    return f"{record['qid']}{mark} — {record['question']}"


def filter_controls(records: Sequence[dict[str, Any]], methods: Sequence[str], outcomes: Outcomes,
                    key: str) -> list[str]:
    """The filter's widgets ('questions where [method] [missed a gold passage / answered wrong /
    differs from] [method]') and the qids it keeps, in run order."""
    rules = [ALL, *misses.RULES]
    c1, c2, c3, c4 = st.columns([2, 2, 2, 2])
    method = c1.selectbox("questions where", methods, format_func=registry.label_of, key=f"{key}_filter_method")
    rule = c2.selectbox("outcome", rules, key=f"{key}_filter_rule",
                        format_func=lambda r: "(any outcome)" if r == ALL else r)
    others = [m for m in methods if m != method]
    other = None
    if rule == misses.DIFFERS:
        if not others:
            c3.caption("one method only: nothing to differ from")
            return [r["qid"] for r in records]
        other = c3.selectbox("than", others, format_func=registry.label_of, key=f"{key}_filter_other")
    if rule == ALL:
        kept = [r["qid"] for r in records]
    else:
        kept = [r["qid"] for r in records if misses.matches(outcomes[r["qid"]], rule, method, other)]
    c4.caption(f"{len(kept)} of {len(records)} question(s)")
    return kept
