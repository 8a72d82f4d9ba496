"""A table's columns sized to fit a width: at 1,440 px the Ask page's content column is about 980 px
wide, and Streamlit sizes each column to its header and cells, so a table of many columns ran past
the right edge and cut its last ones. Here short columns get what their header and values need,
long text columns share the rest and wrap, and long headers get a short label (the full name stays
in the column's help). Still a dataframe: document text stays plain text.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from memrag.app.widgets import CELL_PAD_PX, LINE_PX

CONTENT_PX = 960  # the main column at 1,440 px (sidebar open), less the table's border
CHAR_PX = 7.5  # an average character of the dataframe's 14 px font
COLUMN_PAD_PX = 26  # a cell's padding plus the header's sort icon
NARROW_MAX_PX = 260  # a short column never takes more than this
WRAP_MIN_PX = 110
# Long headers the tables share, as short labels (the full header becomes the column's help).
SHORT: dict[str, str] = {"prompt tokens": "prompt", "cached-prefix tokens": "cached prefix",
                         "completion tokens": "completion", "total tokens": "total", "recorded calls": "recorded",
                         "in answer context": "in context", "original run (s)": "original (s)",
                         "made now (s)": "now (s)", "this run (s)": "this run (s)"}


def _text_px(chars: int) -> int:
    return int(chars * CHAR_PX) + COLUMN_PAD_PX


def _cell_chars(df: pd.DataFrame, column: str) -> int:
    values = df[column].map(lambda v: len("" if v is None or (not isinstance(v, (list, tuple)) and pd.isna(v))
                                          else str(v)))
    return int(values.max()) if len(values) else 0


def widths(df: pd.DataFrame, wrap: list[str], budget_px: int = CONTENT_PX,
           labels: Mapping[str, str] | None = None) -> dict[str, int]:
    """Pixel width per shown column: short ones by their label and values, capped; `wrap` columns
    share what is left (at least WRAP_MIN_PX each). The sum stays within `budget_px` unless the short
    columns alone exceed it."""
    labels = labels or {}
    out = {c: min(NARROW_MAX_PX, max(_text_px(len(labels.get(c, c))), _text_px(_cell_chars(df, c))))
           for c in df.columns if c not in wrap}
    long = [c for c in wrap if c in df.columns]
    if long:
        share = max(WRAP_MIN_PX, (budget_px - sum(out.values())) // len(long))
        out.update({c: share for c in long})
    return out


def lines_needed(df: pd.DataFrame, wrap_px: Mapping[str, int], most: int = 6) -> int:
    """Row height in lines that shows nine in ten of the wrapped cells whole (one height serves every
    row: the longest outlier does not make all rows tall)."""
    needs = sorted(-(-len(str(v)) // max(1, int((px - COLUMN_PAD_PX) / CHAR_PX)))
                   for c, px in wrap_px.items() for v in df[c])
    if not needs:
        return 1
    return max(1, min(most, needs[min(len(needs) - 1, int(0.9 * len(needs)))]))


def empty(df: pd.DataFrame, columns: list[str]) -> list[str]:
    """Those of `columns` with no text in any row (a table need not spend width on them)."""
    return [c for c in columns if c in df.columns and not df[c].map(lambda v: bool(str(v or "").strip())).any()]


def fitted_table(df: "pd.DataFrame | Styler", *, wrap: list[str] | None = None, budget_px: int = CONTENT_PX,
                 hide: list[str] | None = None, help: Mapping[str, str] | None = None,
                 key: str | None = None) -> None:
    """`df` as a dataframe whose columns fit `budget_px`: long headers shortened (SHORT), `wrap`
    columns wrapped, `hide` columns left out. Rows grow to the wrapped text (Streamlit wraps cell
    text only in rows taller than about 4rem, so a wrapping table's rows are at least 3 lines)."""
    wrap, help = list(wrap or []), dict(help or {})
    data = df.data if isinstance(df, Styler) else df  # a highlighted table: measured by its data
    order = [c for c in data.columns if c not in set(hide or ())]
    shown = data[order]
    labels = {c: SHORT[c] for c in shown.columns if c in SHORT}
    px = widths(shown, wrap, budget_px, labels)
    config = {c: st.column_config.Column(labels.get(c, c), width=px[c],
                                         help=help.get(c) or (c if c in labels else None)) for c in shown.columns}
    lines = lines_needed(shown, {c: px[c] for c in wrap if c in px}) if wrap else 1
    height = max(lines, 3) * LINE_PX + CELL_PAD_PX if lines > 1 else None
    st.dataframe(df, hide_index=data.index.name is None, column_order=order, column_config=config, row_height=height,
                 key=key)


def ranked_passages(ranked: "pd.DataFrame | Styler", budget_px: int = CONTENT_PX) -> None:
    """A ranked list (memrag.viz.tables.ranked_table, maybe highlighted), as every view shows it: title
    and why wrap; the passage's text is read elsewhere ("read a passage", the answer's passages), not
    in a column."""
    fitted_table(ranked, wrap=["title", "why"], hide=["text"], budget_px=budget_px)
