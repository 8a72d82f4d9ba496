""""show where" in one click: the row a gold passage's fate points at, highlighted and scrolled into view.

The answer card's button stores the row (a NeuroPath path id in a hop's table, or a position in the
ranked list) under the detail view's key and asks for one scroll; the view that draws the row
calls `focus_row` to highlight it and, that once, bring it into view. The scroll is a few lines of
our own script in a zero-height component frame (same origin as the app, so it may scroll the page);
it carries no document or model text, only the element key we made.
"""

from __future__ import annotations

import json
from collections.abc import Hashable

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from memrag.methods import registry

HIGHLIGHT = "background-color: #fff3b0; font-weight: 600"
SCROLL_WAIT_MS = 6000  # the row's element appears after the script runs: look for it this long


def _row_key(detail_key: str) -> str:
    return f"{detail_key}_focus"


def _scroll_key(detail_key: str) -> str:
    return f"{detail_key}_focus_scroll"


def set_focus(detail_key: str, row: Hashable | None) -> None:
    """Called by the "show where" button: highlight `row` in that view and scroll to it once."""
    st.session_state[_row_key(detail_key)] = row
    st.session_state[_scroll_key(detail_key)] = row is not None


def focused(detail_key: str) -> Hashable | None:
    return st.session_state.get(_row_key(detail_key))


def anchor_key(detail_key: str) -> str:
    """The key of the container holding the focused row (Streamlit gives it the class st-key-<key>)."""
    return f"{detail_key}_focus_row"


def highlighted(df: pd.DataFrame, column: str, value: Hashable) -> "pd.io.formats.style.Styler":
    """The table with the rows whose `column` equals `value` highlighted (cell text stays plain text)."""
    hit = df[column] == value
    return (df.style.apply(lambda row: [HIGHLIGHT if hit.loc[row.name] else "" for _ in row], axis=1)
            .format(precision=4, na_rep=""))  # as the plain table shows its figures


def scroll_once(detail_key: str) -> None:
    """Bring the focused row's container into view, once per "show where" click."""
    if not st.session_state.pop(_scroll_key(detail_key), False):
        return
    scroll_to(anchor_key(detail_key), "center")


def scroll_to(container_key: str, block: str = "start") -> None:
    """Bring the container made with `key=container_key` into view (`block`: where in the view)."""
    target = json.dumps(".st-key-" + container_key)
    components.html(
        "<script>(function(){var t=Date.now();var go=function(){var d=window.parent.document;"
        f"var el=d.querySelector({target});"
        # the margin: Streamlit's header bar lies over the top of the view
        f"if(el){{el.style.scrollMarginTop='4.5rem';el.scrollIntoView({{block:{json.dumps(block)}}});return;}}"
        f"if(Date.now()-t<{SCROLL_WAIT_MS})setTimeout(go,100);}};go();}})();</script>",
        height=0)


def open_view(results_key: str, method: str, tab: str, step: str | int | None, row: Hashable | None) -> None:
    """Open `method`'s details at `tab` (and the Retrieval tab's `step`), with `row` highlighted and
    scrolled to once: what a "show where" button does, from an answer card or a graph's panel."""
    st.session_state[f"{results_key}_pick"] = method
    st.session_state[f"{results_key}_{method}_tabs"] = tab
    step_key = registry.get(method).views.step_key
    if step is not None and step_key:
        st.session_state[f"{results_key}_{method}_{step_key}_step"] = step
    set_focus(f"{results_key}_{method}", row)
