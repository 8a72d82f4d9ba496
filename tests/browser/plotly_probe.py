"""Reading the Memory page's map (a plotly chart) from plotly's own state in the page: how many
entities it holds, where an entity is on screen, and every word it writes with its box and size.

Shared by the explorer's browser tests and bench/app_bench.py (which puts this folder on sys.path).
"""

from __future__ import annotations

import time
from typing import Any

# a chart whose legend is titled `title` ("type (entities)": the map; "lit (entities)": the chosen
# entity's neighbourhood); `want`: map places (customdata) to locate on screen
CHART_STATE = """([title, want]) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g._fullLayout &&
      g._fullLayout.legend && g._fullLayout.legend.title && g._fullLayout.legend.title.text === title);
  if (!gd || !gd._fullData || !gd._fullLayout._plots || !gd._fullLayout._plots.xy) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const at = {}; let drawn = 0;
  for (const tr of gd._fullData) {
    if (tr.mode !== 'markers' || !tr.customdata) continue;
    drawn += tr.customdata.length;
    for (let i = 0; i < tr.customdata.length; i++) {
      const c = Number(tr.customdata[i]);
      if (want.includes(c))
        at[c] = [box.left + xa._offset + xa.l2p(tr.x[i]), box.top + ya._offset + ya.l2p(tr.y[i])];
    }
  }
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
            size: parseFloat(getComputedStyle(t).fontSize)}; });
  const legend = [...gd.querySelectorAll('.legendtext')].map(t => t.textContent);
  // a WebGL chart has drawn once its scene exists and its canvas has a size
  const gl = !gd._fullData.some(t => t.type === 'scattergl') || !!(gd._fullLayout._plots.xy._scene &&
      [...gd.querySelectorAll('canvas')].some(c => c.width > 0));
  const plot = [box.left + xa._offset, box.top + ya._offset, xa._length, ya._length];  // the plot area
  return {drawn: gl ? drawn : 0, at, words, legend, plot};
}"""
MAP, LIT = "type (entities)", "lit (entities)"


def chart_state(page, title: str = MAP, want: list[int] | None = None) -> dict[str, Any] | None:
    """A chart's state, or None while it is not drawn (or being replaced)."""
    try:
        return page.evaluate(CHART_STATE, [title, want or []])
    except Exception:  # the chart is being replaced under us
        return None


def map_state(page, want: list[int] | None = None) -> dict[str, Any] | None:
    return chart_state(page, MAP, want)


def overlapping(words: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of written words whose boxes overlap."""
    out = []
    for i, a in enumerate(words):
        for b in words[i + 1:]:
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] \
                    and b["y"] < a["y"] + a["h"]:
                out.append((a["text"], b["text"]))
    return out


def outside(words: list[dict[str, Any]], plot: list[float], slack_px: float = 1.0) -> list[str]:
    """The written words whose boxes pass the plot area's edges (clipped on screen)."""
    left, top, width, height = plot
    return [w["text"] for w in words if w["x"] < left - slack_px or w["y"] < top - slack_px
            or w["x"] + w["w"] > left + width + slack_px or w["y"] + w["h"] > top + height + slack_px]


def wait_for_map(page, drawn: int | None = None, want: list[int] = (), timeout_s: float = 180,
                 title: str = MAP) -> dict[str, Any]:
    """Poll until the chart (the map by default) is drawn holding `drawn` entities (any number when
    None), with on-screen places for `want`; AssertionError with the last state after `timeout_s`."""
    deadline = time.time() + timeout_s
    while True:
        state = chart_state(page, title, list(want))
        if state and state["drawn"] > 0 and (drawn is None or state["drawn"] == drawn) \
                and all(str(w) in state["at"] for w in want):
            return state
        if time.time() > deadline:
            raise AssertionError(f"the {title!r} chart did not hold {drawn} entities: {str(state)[:400]}")
        page.wait_for_timeout(100)


# A typed picture (memrag.viz.figure) whose legend has an entry starting with `legend`: its node
# points (customdata "node|<id>", on-screen place, hover text), written words and legend.
PICTURE_STATE = """(legend) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g._fullLayout && g._fullData &&
      g._fullData.some(t => t.name === 'nodes') &&
      [...g.querySelectorAll('.legendtext')].some(t => t.textContent.startsWith(legend)));
  if (!gd || !gd._fullLayout._plots || !gd._fullLayout._plots.xy) return null;
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  const nodes = [], handles = [];
  for (const tr of gd._fullData) {
    if (tr.name !== 'nodes' && tr.name !== 'edges') continue;
    for (let i = 0; i < tr.customdata.length; i++)
      (tr.name === 'nodes' ? nodes : handles).push({id: tr.customdata[i], text: tr.hovertext[i],
          x: box.left + xa._offset + xa.l2p(tr.x[i]), y: box.top + ya._offset + ya.l2p(tr.y[i])});
  }
  const words = [...gd.querySelectorAll('.annotation-text')].map(t => { const r = t.getBoundingClientRect();
    return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
            size: parseFloat(getComputedStyle(t).fontSize)}; });
  const legend_texts = [...gd.querySelectorAll('.legendtext')].map(t => t.textContent);
  // WebGL points (a large picture) have drawn once their scene's canvas has a size; SVG ones at once
  const gl = !gd._fullData.some(t => t.type === 'scattergl') || !!(gd._fullLayout._plots.xy._scene &&
      [...gd.querySelectorAll('canvas')].some(c => c.width > 0));
  return {nodes: gl ? nodes : [], handles, words, legend: legend_texts};
}"""


def wait_for_picture(page, legend: str, timeout_s: float = 60) -> dict[str, Any]:
    """Poll until the typed picture whose legend has an entry starting with `legend` is drawn."""
    deadline = time.time() + timeout_s
    while True:
        try:
            state = page.evaluate(PICTURE_STATE, legend)
        except Exception:  # the chart is being replaced under us
            state = None
        if state and state["nodes"]:
            return state
        if time.time() > deadline:
            raise AssertionError(f"no picture with a legend entry {legend!r} was drawn: {str(state)[:400]}")
        page.wait_for_timeout(100)


def clear_point(state: dict[str, Any]) -> dict[str, Any]:
    """The node of a picture state farthest from every other clickable point (a click there picks it)."""
    points = state["nodes"] + state["handles"]

    def room(n: dict[str, Any]) -> float:
        return min(((p["x"] - n["x"]) ** 2 + (p["y"] - n["y"]) ** 2 for p in points if p is not n), default=1e9)

    return max(state["nodes"], key=room)
