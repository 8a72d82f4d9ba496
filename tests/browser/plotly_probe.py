"""Reading the Memory page's map (a plotly chart) from plotly's own state in the page: how many
entities it holds, where an entity is on screen, and every word it writes with its box and size.

Shared by the explorer's browser tests and bench/app_bench.py (which puts this folder on sys.path).
"""

from __future__ import annotations

import time
from typing import Any

# the chart whose node traces carry customdata (the map); `want`: map positions to locate
MAP_STATE = """(want) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g._fullData &&
      g._fullData.some(t => t.customdata && t.mode === 'markers'));
  if (!gd || !gd._fullLayout || !gd._fullLayout._plots || !gd._fullLayout._plots.xy) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const at = {}; let drawn = 0, lit = 0;
  for (const tr of gd._fullData) {
    if (tr.mode !== 'markers' || !tr.customdata) continue;
    if (tr.name === 'lit') lit += tr.customdata.length; else drawn += tr.customdata.length;
    for (let i = 0; i < tr.customdata.length; i++) {
      const c = Number(tr.customdata[i]);
      if (want.includes(c) && !(c in at && tr.name !== 'lit'))
        at[c] = [box.left + xa._offset + xa.l2p(tr.x[i]), box.top + ya._offset + ya.l2p(tr.y[i])];
    }
  }
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
            size: parseFloat(getComputedStyle(t).fontSize)}; });
  const canvas = !!gd.querySelector('canvas');
  return {drawn, lit, at, words, canvas};
}"""


def map_state(page, want: list[int] | None = None) -> dict[str, Any] | None:
    """The map's state, or None while it is not drawn (or being replaced)."""
    try:
        return page.evaluate(MAP_STATE, want or [])
    except Exception:  # the chart is being replaced under us
        return None


def overlapping(words: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of written words whose boxes overlap."""
    out = []
    for i, a in enumerate(words):
        for b in words[i + 1:]:
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] \
                    and b["y"] < a["y"] + a["h"]:
                out.append((a["text"], b["text"]))
    return out


def wait_for_map(page, drawn: int | None = None, want: list[int] = (), lit: int | None = None,
                 timeout_s: float = 180) -> dict[str, Any]:
    """Poll until the map is drawn holding `drawn` entities (any number when None), `lit` of them
    lit, with on-screen places for `want`; AssertionError with the last state after `timeout_s`."""
    deadline = time.time() + timeout_s
    while True:
        state = map_state(page, list(want))
        if state and state["canvas"] and state["drawn"] > 0 and (drawn is None or state["drawn"] == drawn) \
                and (lit is None or state["lit"] == lit) and all(str(w) in state["at"] for w in want):
            return state
        if time.time() > deadline:
            raise AssertionError(f"the map did not hold {drawn} entities ({lit} lit): {str(state)[:400]}")
        page.wait_for_timeout(100)
