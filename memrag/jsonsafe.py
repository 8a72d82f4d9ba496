"""JSON from outside (model replies, trace files, benchmark files, server bodies), parsed safely.

`json.loads` recurses once per nesting level, so `[[[[…` 100,000 deep raises RecursionError
(not ValueError) and escapes every caller's `except ValueError` (issue 15, item 7). `loads`
measures the nesting first — brackets outside strings, counted with numpy — and refuses
anything deeper than `MAX_DEPTH` with a ValueError, so what it returns is also shallow enough
for every recursive walk after it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

# Far deeper than any memrag file or reply (traces nest about 6 levels) and far below the
# interpreter's recursion limit, whatever the caller's own stack depth.
MAX_DEPTH = 128

# A JSON string, or an unterminated one running to the end: matching to the end keeps the scan
# linear when quotes never close (every later quote is inside that one match).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_OPEN = np.frombuffer(b"[{", np.uint8)


class JSONTooDeep(ValueError):
    """The text nests arrays/objects deeper than `MAX_DEPTH`."""


def nesting_depth(text: str) -> int:
    """How deep brackets outside strings nest (exact for valid JSON; a bound for the rest)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    codes = np.frombuffer(brackets.encode("ascii"), np.uint8)
    steps = np.where(np.isin(codes, _OPEN), 1, -1)
    return int(np.cumsum(steps).max(initial=0))


def loads(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads`, but only ValueError for bad input (bad UTF-8, bad JSON, too deep)."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data  # UnicodeDecodeError is a ValueError
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JSONTooDeep(f"the JSON is nested {depth} levels deep; at most {max_depth} are read")
    try:
        return json.loads(text)
    except RecursionError as e:  # only if the caller's own stack was already nearly full
        raise JSONTooDeep(f"the JSON is nested too deeply to read ({e})") from e
