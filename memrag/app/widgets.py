"""Small Streamlit widgets every view uses: untrusted text shown literally, a typed picture with its
downloads, a time figure, a table from rows.

Every piece of document or model text goes through `text()` (escaped markdown),
`st.text`, `st.code` or a dataframe — never raw into `st.markdown`, a label or HTML.
Graphs are typed pictures drawn with plotly by `memrag.viz.figure` (`picture`; with clicks that open
a panel: memrag.app.graph_view).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from memrag.app.estimates import seconds_text  # noqa: F401 (pages format times through widgets)
from memrag.textsafe import download_name
from memrag.picture import Picture, PictureEdge, PictureNode
from memrag.viz import export, figure
from memrag.viz import look as looks
from memrag.viz.drawing import Drawing, of_picture
from memrag.plain_text import clip, escape_markdown


# ------------------------------------------------------------------ text and graphs
def text(body: str, *, limit: int | None = None, prefix: str = "") -> None:
    """Untrusted text as markdown that shows it literally; `prefix` is our own markdown."""
    body = clip(body, limit, keep_lines=True) if limit else body
    st.markdown(prefix + escape_markdown(body))


def picture(pic: Picture, height: int, key: str, *, clickable: bool = False) -> PictureNode | PictureEdge | None:
    """A typed picture drawn by `memrag.viz.figure` (plotly: names on hover, a legend of what each mark
    means), its note as a caption, and its downloads (the files are named after the picture).
    `clickable`: a click on a node or an edge's middle reruns the page and returns what was clicked
    (plotly keeps the choice while the picture stays the same); None when nothing is chosen."""
    look = looks.current()
    drawn = figure.draw(pic, look, height=height)
    event = st.plotly_chart(drawn.figure, key=key, on_select="rerun" if clickable else "ignore",
                            selection_mode="points", config={"displayModeBar": False, "scrollZoom": False})
    if pic.note:
        st.caption(escape_markdown(pic.note))
    downloads(of_picture(pic, drawn, look), pic.name, ident=key)
    points = event.selection.points if clickable and event else []
    target = figure.target_of(points[0].get("customdata")) if points else None
    if target is None:
        return None
    kind, ident = target
    return pic.node(ident) if kind == "node" else pic.edge(ident)


def downloads(drawn: Drawing, name: str, ident: str) -> None:
    """Buttons that download a drawn graph as PNG and GraphML, made on the server only when clicked
    from the Drawing its renderer kept (`name` names the files, `ident` keys the buttons)."""
    # a row that wraps and buttons sized to their words: fixed columns cut "GraphML" in narrow ones
    row = st.container(horizontal=True, gap="small")
    row.download_button("PNG", lambda: export.png_bytes(drawn), file_name=download_name(name, ext="png"),
                        mime="image/png", key=f"png_{ident}", on_click="ignore", icon=":material/image:",
                        width="content", help="The graph as a picture, drawn on the server.")
    row.download_button("GraphML", lambda: export.graphml_bytes(drawn), file_name=download_name(name, ext="graphml"),
                        mime="application/graphml+xml", key=f"graphml_{ident}", on_click="ignore",
                        icon=":material/share:", width="content",
                        help="The nodes and edges drawn, for Gephi, yEd or networkx.")


def frame(rows: list[dict], columns: list[str] | None = None) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)




LINE_PX = 21  # one line of text in a dataframe cell
CELL_PAD_PX = 12
CHARS_PER_LINE = 56  # what a "large" (400 px) text column holds per line of 14 px text
MAX_LINES = 8


def fitted_lines(df: pd.DataFrame, wrap: list[str]) -> int:
    """Row height, in lines, that shows nine in ten of the wrapped cells whole: one height serves
    every row, so the longest outlier does not make all rows tall (its text stays in the trace)."""
    lengths = sorted(len(str(v)) for c in wrap if c in df.columns for v in df[c])
    if not lengths:
        return 3
    typical = lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))]
    return min(MAX_LINES, max(3, -(-typical // CHARS_PER_LINE)))


def wrapped_table(df: pd.DataFrame, wrap: list[str], *, lines: int | None = None, help: dict[str, str] | None = None,
                  height: int | None = None, key: str | None = None) -> None:
    """A dataframe whose long text columns wrap instead of being cut: Streamlit wraps cell text
    once the row height passes 4rem, so rows get `lines` lines (default: fitted to the text) and
    the wrapped columns a wide, fixed width. Still a dataframe, so document text stays plain text."""
    lines = fitted_lines(df, wrap) if lines is None else lines
    config: dict = {c: st.column_config.TextColumn(width="large", help=(help or {}).get(c)) for c in wrap}
    config.update({c: st.column_config.Column(help=h) for c, h in (help or {}).items() if c not in wrap})
    st.dataframe(df, hide_index=df.index.name is None, column_config=config,
                 row_height=max(lines, 3) * LINE_PX + CELL_PAD_PX, height=height or "auto", key=key)


# ------------------------------------------------------------------ live or recorded
def live_switch(recorded: bool) -> tuple[bool, str | None]:
    """(live, refusal): whether a question runs on the live model — always when no recording holds
    it, else when the "run live" toggle is on — and, in room mode without live asks, the sentence
    saying why it may not (shown here; the caller keeps its button off)."""
    from memrag.app import room

    refusal = room.live_refusal("asks", room.current())
    live = not recorded or st.toggle("run live", key="ask_live", disabled=bool(refusal),
                                     help=refusal or "Ask the current backend instead of replaying the recorded "
                                                     "replies.")
    if live and refusal:
        st.warning(escape_markdown(refusal))
    return live, (refusal if live else None)
