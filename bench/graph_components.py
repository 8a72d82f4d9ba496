"""Which graph component should draw memrag's graphs? Three candidates measured side by side.

    python bench/graph_components.py [--repeat N] [--memory DIR ...] [--json] [--site DIR]

Each candidate draws the same graph in a small throwaway app (bench/component_apps/*_app.py) under
a real `streamlit run`, driven by Debian chromium (headless, Playwright):

- plotly   Streamlit's own `st.plotly_chart(..., on_select="rerun", selection_mode="points")`
           (plotly.js ships inside Streamlit; SVG traces for small graphs, WebGL above 2,000 nodes)
- sigma    streamlit-sigmajs (Sigma.js, WebGL, a Streamlit v2 component)
- cytoscape streamlit-cytoscape (Cytoscape.js, canvas, a Streamlit v1 component in an iframe)

The graphs: each memory's whole knowledge graph (memrag.viz.memory_map: positions precomputed, as
the explorer does), plus four nodes whose labels are hostile HTML. Default memories: the sample
(265 entities) and the MuSiQue memory bench/app_bench.py builds (data/musique-memory) when it is
there; --memory names others. Per candidate and graph:

- interactive_s  fresh browser tab → the renderer holds every node (read from its own state) and
                 a node can be clicked; median of N tabs on a warm server (layout already cached)
- click_s        click on a node (its position read from the renderer) → the text Python wrote
                 for that click ("clicked: <id>"); median of N clicks on different nodes
- labels         can a test read each written label's position and size from the renderer, and
                 how many are written at the first view
- remote         requests that left this machine (none allowed)
- hostile        dialogs opened (none allowed), and whether hostile labels read back as the
                 literal text they are

The candidates' own packages need not be installed in the project: --site names a folder with them
(`pip install --no-deps --target DIR streamlit_sigmajs-0.3.0-….whl streamlit_cytoscape-0.2.1-….whl`).
Run it on a quiet machine, inside `cpu-slot test`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C

sys.path.insert(0, str(C.REPO / "tests" / "browser"))
from app_server import CHROMIUM, LAUNCH_ARGS, LOCAL_HOSTS, AppServerError, running_app  # noqa: E402

APPS = C.REPO / "bench" / "component_apps"
CANDIDATES = ("baseline", "plotly", "sigma", "cytoscape")
HOSTILE = ["<script>alert('s')</script>", "<img src=x onerror=alert('i')>",
           "<a href=\"javascript:alert('a')\">link</a>", "<b>bold</b> & <i>it</i>"]
TIMEOUT_S = 180.0
INDEX: dict[str, int] = {}
POLL_MS = 25
MUSIQUE_MEMORY = C.REPO / "data" / "musique-memory"  # where bench/app_bench.py builds it


def log(*a: Any) -> None:
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ the graph every app draws
def graph_json(memory_dir: Path, out: Path) -> dict[str, Any]:
    from memrag.index import store
    from memrag.viz.memory_map import memory_map

    memory = store.load(memory_dir)
    t0 = time.perf_counter()
    m = memory_map(memory, cache_dir=out.parent)  # a fresh cache: the first call lays out
    layout_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    memory_map(memory, cache_dir=out.parent)
    cached_s = time.perf_counter() - t0
    nodes = [{"id": f"n{i}", "label": m.names[i], "type": m.types[i], "x": float(m.x[i]), "y": float(m.y[i]),
              "deg": int(m.degree[i])} for i in range(len(m))]
    relation = {}
    for t in memory.triples:
        a, b = m.position.get(t.head_key), m.position.get(t.tail_key)
        if a is not None and b is not None and a != b:
            relation.setdefault((min(a, b), max(a, b)), t.relation)
    edges = [[f"n{a}", f"n{b}", relation.get((int(a), int(b)), "")] for a, b in m.links]
    for j, text in enumerate(HOSTILE):  # in a column right of the graph, each with its label written
        nodes.append({"id": f"h{j}", "label": text, "type": "hostile", "x": 1.15, "y": 0.6 - 0.4 * j,
                      "deg": 1000})
    g = {"nodes": nodes, "edges": edges}
    out.write_text(json.dumps(g))
    return {"nodes": len(nodes), "edges": len(edges), "layout_s": layout_s, "layout_cached_s": cached_s}


# ------------------------------------------------------------------ per-candidate probes, in the page
# Each returns {n: nodes the renderer holds, pts: [[id, x, y] viewport px of a few nodes], labels: …}
PROBES = {
    # no graph: how long Streamlit itself takes to show a page holding one line of text
    "baseline": """(want) => { const t = document.body.innerText.match(/ready: (\\d+) nodes/);
        return t ? {n: parseInt(t[1]), pts: want.map(id => [id, 0, 0]), labels: null, links: 0} : null; }""",
    "plotly": """(want, want_i) => {
        const gd = document.querySelector('.js-plotly-plot');
        if (!gd || !gd._fullData || !gd._fullLayout || !gd._fullLayout._plots) return null;
        const tr = gd._fullData[1]; if (!tr || !tr.customdata) return null;
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
        const px = (x, y) => [box.left + xa._offset + xa.l2p(x), box.top + ya._offset + ya.l2p(y)];
        const pts = want.map(id => { const i = Array.prototype.indexOf.call(tr.customdata, want_i[id]); return i < 0 ? null : [id, ...px(tr.x[i], tr.y[i])]; });
        const svgText = [...gd.querySelectorAll('.textpoint text')];
        const lab = gd._fullData[2];
        let labels;
        if (svgText.length) labels = svgText.map(t => { const r = t.getBoundingClientRect();
            return {text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height,
                    size: parseFloat(getComputedStyle(t).fontSize)}; });
        else labels = (lab && lab.text || []).map((s, i) => { const [x, y] = px(lab.x[i], lab.y[i]);
            return {text: s, x: x, y: y, w: null, h: null, size: lab.textfont.size}; });
        return {n: tr.customdata.length, pts: pts, labels: labels,
                links: gd.querySelectorAll('a').length, gl: !!gd.querySelector('canvas.gl-canvas, canvas')};
    }""",
    # Sigma's instance is not exported: found through React's fiber on its container (the only way in)
    "sigma": """(want) => {
        const host = [...document.querySelectorAll('*')].find(e => e.shadowRoot && e.shadowRoot.querySelector('canvas.sigma-nodes'));
        if (!host) return null;
        const c = host.shadowRoot.querySelector('canvas.sigma-nodes').parentElement;
        let s = null;
        for (let el = c; el && !s; el = el.parentElement) {
            const key = Object.keys(el).find(k => k.startsWith('__reactFiber$'));
            for (let f = key ? el[key] : null; f && !s; f = f.return) {
                for (let h = f.memoizedState; h && typeof h === 'object' && !s; h = h.next) {
                    for (const v of [h.memoizedState, h.memoizedState && h.memoizedState.current])
                        if (v && typeof v.graphToViewport === 'function' && v.getGraph) s = v;
                }
            }
        }
        if (!s) return {n: -1, pts: [], labels: null};
        const g = s.getGraph(), box = c.getBoundingClientRect();
        const at = id => { const v = s.framedGraphToViewport(s.getNodeDisplayData(id)); return [box.left + v.x, box.top + v.y]; };
        const pts = want.map(id => g.hasNode(id) ? [id, ...at(id)] : null);
        const size = s.getSetting('labelSize'), ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${s.getSetting('labelWeight')} ${size}px ${s.getSetting('labelFont')}`;
        const labels = [...(s.displayedNodeLabels || [])].map(id => { const d = s.getNodeDisplayData(id); const [x, y] = at(id);
            // sigma writes a label right of its node, vertically centred (its default label renderer)
            return {text: d.label, x: x + d.size + 3, y: y - size / 2, w: ctx.measureText(d.label).width, h: size, size: size}; });
        return {n: g.order, pts: pts, labels: labels, links: 0};
    }""",
    "cytoscape": """(want) => {
        const f = [...document.querySelectorAll('iframe')].find(i => i.contentDocument && i.contentDocument.getElementById('cy'));
        if (!f) return null;
        const el = f.contentDocument.getElementById('cy'); const cy = el && el._cyreg && el._cyreg.cy;
        if (!cy || cy.nodes().length === 0) return null;
        const fb = f.getBoundingClientRect(), eb = el.getBoundingClientRect();
        const pts = want.map(id => { const n = cy.getElementById(id); if (!n.length) return null;
            const p = n.renderedPosition(); return [id, fb.left + eb.left + p.x, fb.top + eb.top + p.y]; });
        const labels = cy.nodes().filter(n => n.style('label')).map(n => {
            const b = n.renderedBoundingBox({includeNodes: false, includeEdges: false, includeLabels: true});
            return {text: n.style('label'), x: fb.left + eb.left + b.x1, y: fb.top + eb.top + b.y1, w: b.w, h: b.h,
                    size: parseFloat(n.renderedStyle('font-size'))}; });
        return {n: cy.nodes().length, pts: pts, labels: labels, links: 0};
    }""",
}


def probe(page, cand: str, want: list[str]) -> dict[str, Any] | None:
    try:
        return page.evaluate(f"(w) => ({PROBES[cand]})(w[0], w[1])", [want, INDEX])
    except Exception:  # the page is being replaced under us
        return None


def ready_probe(page, cand: str, n: int, want: list[str], t0: float) -> tuple[float, dict[str, Any]]:
    """Poll until the renderer holds all `n` nodes and the wanted nodes have on-screen positions."""
    while True:
        got = probe(page, cand, want)
        if got and got["n"] in (n, -1) and all(got["pts"]):
            return time.perf_counter() - t0, got
        if time.perf_counter() - t0 > TIMEOUT_S:
            raise SystemExit(f"{cand}: not interactive after {TIMEOUT_S:.0f} s (last probe: {str(got)[:300]})")
        page.wait_for_timeout(POLL_MS)


def clicked_text(page) -> str:
    got = page.get_by_text(re.compile(r"^clicked: ")).all_inner_texts()
    return got[0] if got else ""


def click_once(page, node_id: str, xy: tuple[float, float]) -> tuple[float, bool]:
    """Click at a node's position; seconds until Python's "clicked: …" line changes, and whether it
    names that node (in a dense picture a neighbour's marker may be the one under the cursor)."""
    before = clicked_text(page)
    t0 = time.perf_counter()
    page.mouse.click(*xy)
    while (now := clicked_text(page)) in ("", before):
        if time.perf_counter() - t0 > TIMEOUT_S / 6:
            raise TimeoutError(f"no click reached Python in {TIMEOUT_S / 6:.0f} s")
        page.wait_for_timeout(POLL_MS)
    return time.perf_counter() - t0, now == f"clicked: {node_id}"


def overlap_pairs(labels: list[dict[str, Any]]) -> int | None:
    boxes = [b for b in labels if b.get("w")]
    if not boxes or len(boxes) != len(labels):
        return None  # sizes not known for every label
    hits = 0
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] \
                    and b["y"] < a["y"] + a["h"]:
                hits += 1
    return hits


def measure(cand: str, graph_file: Path, info: dict[str, Any], repeat: int, site: str | None,
            shot: Path | None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    g = json.loads(graph_file.read_text())
    INDEX.clear()
    INDEX.update({x["id"]: i for i, x in enumerate(g["nodes"])})  # the plotly app's customdata
    ranked = sorted(g["nodes"], key=lambda x: -x["deg"])
    targets = [x["id"] for x in ranked if not x["id"].startswith("h")][:repeat + 1]
    want = targets + [f"h{j}" for j in range(len(HOSTILE))]
    env = {"GC_GRAPH": str(graph_file)}
    if site:
        env["PYTHONPATH"] = site + os.pathsep + os.environ.get("PYTHONPATH", "")
    out: dict[str, Any] = {"candidate": cand, **info}
    home = graph_file.parent / f"home-{cand}"
    try:
        with running_app(home, env, script=str(APPS / f"{cand}_app.py"), cwd=APPS) as base, sync_playwright() as p:
            url = base + "/"
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            requests: list[str] = []
            dialogs: list[str] = []
            errors: list[str] = []

            def tab():
                ctx = browser.new_context(viewport={"width": 1440, "height": 900})
                page = ctx.new_page()
                page.on("request", lambda r: requests.append(r.url))
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                page.on("pageerror", lambda e: errors.append(str(e)))
                return ctx, page

            tti = []
            for i in range(repeat + 1):  # the first load warms the server (its data cache): not counted
                ctx, page = tab()
                t0 = time.perf_counter()
                page.goto(url)
                seconds, got = ready_probe(page, cand, len(g["nodes"]), want, t0)
                (tti.append(seconds) if i else out.__setitem__("first_load_s", seconds))
                if i < repeat:
                    ctx.close()
            out["interactive_s"] = statistics.median(tti)
            out["interactive_runs"] = tti
            page.wait_for_timeout(1500)  # let the renderer settle (labels, fit) before clicking
            got = probe(page, cand, want)
            out["held_nodes"] = got["n"]
            labels = got.get("labels")
            out["labels_read"] = labels is not None
            out["labels_written"] = len(labels or [])
            out["label_sizes"] = sorted({round(x["size"], 1) for x in labels or [] if x.get("size")})
            out["label_boxes_known"] = bool(labels) and all(x.get("w") for x in labels)
            out["label_overlaps"] = overlap_pairs(labels or [])
            texts = {x["text"] for x in labels or []}
            out["hostile_literal"] = [t in texts for t in HOSTILE]
            out["anchors_in_graph"] = got.get("links", 0)
            if shot is not None:
                page.screenshot(path=str(shot))
            clicks, exact = [], []
            pts = {p_[0]: p_[1:] for p_ in got["pts"] if p_}
            for node_id in (targets[:repeat] if cand != "baseline" else []):
                try:
                    seconds, hit = click_once(page, node_id, pts[node_id])
                    clicks.append(seconds)
                    exact.append(hit)
                except Exception as e:  # noqa: BLE001 — a click that never reaches Python is the finding
                    out.setdefault("click_errors", []).append(f"{node_id}: {type(e).__name__}")
                    break
                page.wait_for_timeout(600)
                got = probe(page, cand, want)  # a click may move the view (selection, zoom)
                pts = {p_[0]: p_[1:] for p_ in got["pts"] if p_}
            out["click_s"] = statistics.median(clicks) if clicks else None
            out["click_runs"] = clicks
            out["click_named_the_node"] = exact
            for j in range(len(HOSTILE) if cand != "baseline" else 0):  # clicking a hostile node opens the component's own panel, if any
                try:
                    click_once(page, f"h{j}", pts[f"h{j}"])
                except Exception:  # noqa: BLE001
                    pass
                got = probe(page, cand, want) or got
                pts = {p_[0]: p_[1:] for p_ in got["pts"] if p_}
            page.wait_for_timeout(500)
            body = page.inner_text("body")
            out["hostile_text_in_page"] = [t in body for t in HOSTILE]
            ctx.close()
            browser.close()
            out["remote_requests"] = sorted({u for u in requests if not _local(u)})
            out["dialogs"] = dialogs
            out["page_errors"] = errors[:5]
    except AppServerError as e:
        raise SystemExit(f"{cand}: {e}")
    return out


def _local(u: str) -> bool:
    from urllib.parse import urlparse
    p = urlparse(u)
    return p.scheme in ("about", "data", "blob") or p.hostname in LOCAL_HOSTS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--memory", action="append", type=Path, help="memory folders (default: sample + MuSiQue)")
    ap.add_argument("--candidates", default=",".join(CANDIDATES))
    ap.add_argument("--site", help="folder holding the candidate packages (pip install --target)")
    ap.add_argument("--shots", type=Path, help="folder for one screenshot per candidate and graph")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from memrag import demo

    memories = args.memory or [demo.sample_memory_dir()] + ([MUSIQUE_MEMORY] if MUSIQUE_MEMORY.exists() else [])
    cands = [c for c in args.candidates.split(",") if c]
    result: dict[str, Any] = {"load_before": " ".join(f"{v:.2f}" for v in os.getloadavg()), "runs": []}
    with tempfile.TemporaryDirectory(prefix="memrag-gc-") as tmp:
        for mem in memories:
            gfile = Path(tmp) / f"{mem.name}.json"
            info = graph_json(mem, gfile)
            info["memory"] = mem.name
            log(f"{mem.name}: {info['nodes']} nodes, {info['edges']} links; layout {info['layout_s']:.2f} s, "
                f"cached {info['layout_cached_s']:.3f} s")
            for cand in cands:
                shot = args.shots / f"{cand}-{mem.name}.png" if args.shots else None
                if shot:
                    shot.parent.mkdir(parents=True, exist_ok=True)
                r = measure(cand, gfile, info, args.repeat, args.site, shot)
                log(f"  {cand}: interactive {r['interactive_s']:.2f} s, click {r['click_s']}, "
                    f"labels {r['labels_written']} (sizes {r['label_sizes']}), remote {len(r['remote_requests'])}, "
                    f"dialogs {len(r['dialogs'])}")
                result["runs"].append(r)
    result["load_after"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    t = C.Table("Graph components side by side (headless chromium, 1,440 × 900; medians)",
                ["graph", "component", "interactive (s)", "click → Python (s)", "labels read", "remote", "dialogs"])
    for r in result["runs"]:
        t.add(f"{r['memory']} ({r['nodes']:,} nodes)", r["candidate"], r["interactive_s"], r["click_s"],
              f"{r['labels_written']} ({'boxes' if r['label_boxes_known'] else 'anchor+size'})" if r["labels_read"]
              else "no", len(r["remote_requests"]), len(r["dialogs"]))
    C.emit(args, result, [t], [f"Load average before {result['load_before']}, after {result['load_after']}."])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
