"""The app in a real browser, with the sample memory and its recordings: how long each click takes.

    python bench/app_bench.py [--repeat N] [--quick] [--json] [--parts ask,learn,eval,explorer]
                              [--data-dir ../shared/bench/musique]

Starts its own `streamlit run app.py` (a free loopback port, MEMRAG_HOME in a temporary folder,
the same start as the browser tests: tests/browser/app_server.py) and drives Debian chromium
(/usr/bin/chromium, headless) with Playwright. Each figure is measured N times (default 3;
--quick: 1), each time in a fresh browser session, after one unmeasured warm-up that loads the
embedder and opens the memory in the server:

1. Ask: seconds from clicking Ask (the demo question the page shows first, every registered method,
   replayed from the recordings) to every method's answer shown and every overview graph drawn
   with nodes in its frame (how many graphs that is, is counted once after the warm-up ask, so a
   method added to the registry is timed without editing this script). Target ≤ 1.5 s.
2. A tab switch: seconds from clicking the first method's "Gold" detail tab to its text shown.
3. "show where": seconds from clicking the first gold line's first "show where" button (the view
   it names: the ranked list, a hop's table) to that view showing the highlighted row.
4. A Learn step: on the Learn page (the demo question it shows first), seconds from pressing → on
   the step slider to "Step N+1 of" shown and the new step's graph drawn.
5. One Evaluate question: after a 2-question recorded evaluation of the sample, seconds from
   picking a question in "open the traces of" to its answers shown and every graph drawn
   (alternating between the two questions).
6. The whole MuSiQue memory in the explorer: on the Memory page, seconds from clicking "Open this
   memory" (the MuSiQue memory, saved) to its map interactive: plotly holds every entity with its
   place on screen (read from plotly's state in the page). Target ≤ 3 s. The memory is built once
   into data/musique-memory from --data-dir (`python -m memrag index --import-openie … --corpus …`,
   no LLM calls); without that folder this part is skipped with a message.
7. Click → panel: on that map, seconds from a click on an entity (one of the most linked, a
   different one each time) to the panel Python renders for it (its heading). Target ≤ 0.5 s.
8. The size of NeuroPath's overview graph: its iframe's srcdoc, or its plotly chart's data and words.

A method graph is either an iframe holding a vis-network graph or a plotly chart whose points are the
graph's nodes (customdata "node|<id>"); Ask, Learn and Evaluate count and wait for both kinds.

Times are wall clock as a user sees them (server rerun + transfer + drawing), polled every ~50 ms.
The targets are #28's acceptance: Ask ≤ 1.5 s; a tab switch, a Learn step, "show where" ≤ 0.5 s;
one Evaluate question ≤ 1 s; and #34's: the MuSiQue explorer interactive ≤ 3 s, click → panel ≤ 0.5 s.
Needs the sample memory (sample_corpus/memory) and its recordings, chromium and playwright.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import _common as C

sys.path.insert(0, str(C.REPO / "tests" / "browser"))
from app_server import CHROMIUM, LAUNCH_ARGS, AppServerError, running_app, settle  # noqa: E402
from plotly_probe import map_state, wait_for_map  # noqa: E402

ASK_TARGET_S = 1.5
EXPLORER_TARGET_S = 3.0
CLICK_TARGET_S = 0.5  # a tab switch, a Learn step, "show where", a click on the map → its panel
EVAL_Q_TARGET_S = 1.0
MUSIQUE_MEMORY = C.REPO / "data" / "musique-memory"  # built once from --data-dir (git-ignored data/)
MUSIQUE_FOLDER = "musique"  # its name among the bench app's saved memories
PANEL = ".st-key-mem_kg_panel"  # the entity panel's container (memory_views.py: key f"{key}_kg_panel")
GOLD_TAB, GOLD_TEXT = "Gold", "Where each gold passage was found or lost"
FATE_GO_CLASS = "_fate_go"  # the "show where" buttons' containers (ask_views.fate_line: st-key-…_fate_go…)
FOCUS_ROW_CLASS = "_focus_row"  # the highlighted row's container (app/focus.py anchor_key → st-key-…_focus_row)
LEARN_SLIDER = "replay the trace step by step"
EVAL_QUESTIONS = 2
POLL_MS = 50
TIMEOUT_S = 600.0  # a busy machine can be very slow; a figure past this is not a figure


def log(*a: Any) -> None:
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ what the page's graphs hold
# A trace's graph is drawn either in an iframe (vis-network, pyvis's HTML: `nodes` in the frame) or as
# a plotly chart on the page (memrag.viz.figure: each node's customdata is "node|<id>"); both are
# counted, so the bench measures the Ask page before and after its graphs move to plotly. Plotly
# charts without such nodes (the token bars, the Memory page's map) are not trace graphs.
PLOTLY_GRAPHS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  if (!gd._fullData || !gd._fullLayout || !gd.data) return null;
  const ids = [];
  for (const t of gd.data) for (const c of (Array.isArray(t.customdata) ? t.customdata : []))
    if (typeof c === 'string' && c.startsWith('node|')) ids.push(c.slice(5));
  if (!ids.length) return null;
  // a WebGL trace has drawn once its canvas has a size; SVG traces once plotly has laid them out
  const gl = !gd._fullData.some(t => t.type === 'scattergl') ||
      [...gd.querySelectorAll('canvas')].some(c => c.width > 0);
  const spec = JSON.stringify({data: gd.data, annotations: gd.layout.annotations || []});
  let h = 0;
  for (let i = 0; i < spec.length; i++) h = (h * 31 + spec.charCodeAt(i)) | 0;
  return {ids, complete: gl && !!gd._fullLayout._plots, sig: `plotly:${h}:${spec.length}`,
          bytes: new TextEncoder().encode(spec).length, load_ms: null};
}).filter(Boolean)"""


def graph_frames(page) -> list[dict[str, Any]]:
    """Every drawn trace graph of the page: the iframes holding a vis-network graph (in document
    order), then the plotly charts whose points are graph nodes. Each with its node ids, `sig` (what
    tells one drawing from another: the iframe's srcdoc, the chart's data and words), its size in
    bytes (srcdoc; the chart's data and words as JSON) and, for a frame, its own load time (ms from
    the frame's start to the end of its load event; None where the browser keeps no timing)."""
    out = []
    for handle in page.locator("iframe").element_handles():
        try:
            frame = handle.content_frame()
            if frame is None:
                continue
            info = frame.evaluate(
                "(() => { if (typeof nodes === 'undefined' || !nodes.getIds) return null;"
                " const nav = performance.getEntriesByType('navigation')[0];"
                " return {ids: nodes.getIds(), complete: document.readyState === 'complete',"
                " load_ms: nav && nav.loadEventEnd > 0 ? nav.loadEventEnd : null}; })()")
            if info is not None:
                srcdoc = handle.get_attribute("srcdoc") or ""
                info.update(sig=srcdoc, bytes=len(srcdoc.encode()))
        except Exception:  # a frame being replaced while we look
            continue
        if info is not None:
            out.append(info)
    try:
        out += page.evaluate(PLOTLY_GRAPHS)
    except Exception:  # a chart being replaced while we look
        pass
    return out


def kind(ids: list[str]) -> str:
    if any(i.startswith(("centroid:", "cue:")) for i in ids):
        return "ecphory"
    if any(i.startswith("e:") for i in ids):
        return "neuropath"
    return "other"


def wait_until(page, ready: Callable[[list[dict[str, Any]]], Any], what: str, timeout_s: float = TIMEOUT_S) -> Any:
    deadline = time.perf_counter() + timeout_s
    while True:
        got = ready(graph_frames(page))
        if got:
            return got
        if time.perf_counter() > deadline:
            raise SystemExit(f"gave up after {timeout_s:.0f} s waiting for {what}")
        page.wait_for_timeout(POLL_MS)


def graphs_with_nodes(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in frames if f["ids"] and f["complete"]]


def new_page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_S * 1000)
    return context, page


def open_app(page, url: str, page_name: str = "Memory") -> None:
    page.goto(url + "/")  # the start page
    if page_name:
        page.get_by_role("link", name=page_name, exact=True).click()
        page.get_by_role("heading", name=page_name, level=1).wait_for()


# ------------------------------------------------------------------ the measurements
def ask_once(browser, url: str, methods: int, graphs: int | None) -> dict[str, Any]:
    """Ask the demo question the page shows first (the demo guide's pick), from the recordings;
    `graphs` None = the warm-up, which counts the overview graphs the page draws once settled."""
    context, page = new_page(browser)
    try:
        open_app(page, url, "Ask")
        page.get_by_text("Replays the replies recorded with").wait_for()
        settle(page, timeout_s=TIMEOUT_S)
        button = page.get_by_role("button", name="Ask", exact=True)
        answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
        answered: list[float] = []

        def ready(frames: list[dict[str, Any]]) -> Any:
            if not answered and answers.count() >= methods:
                answered.append(time.perf_counter() - t0)
            drawn = graphs_with_nodes(frames)
            enough = drawn if graphs is None else (drawn if len(drawn) >= graphs else None)
            return enough if answered and enough else None

        t0 = time.perf_counter()
        button.click()
        drawn = wait_until(page, ready, f"{methods} answers and {graphs or 'the'} method graphs")
        seconds = time.perf_counter() - t0
        if graphs is None:  # the warm-up: let every frame arrive, then count them
            settle(page, timeout_s=TIMEOUT_S)
            drawn = graphs_with_nodes(graph_frames(page))
        neuropath = next((f for f in drawn if kind(f["ids"]) == "neuropath"), drawn[0])
        result = {"seconds": seconds, "answers_s": answered[0], "graphs": len(drawn),
                  "plotly_graphs": sum(f["sig"].startswith("plotly:") for f in drawn),
                  "nodes": [len(f["ids"]) for f in drawn],
                  "neuropath_nodes": len(neuropath["ids"]), "neuropath_bytes": neuropath["bytes"],
                  "neuropath_drawn_by": "plotly" if neuropath["sig"].startswith("plotly:") else "iframe"}
        settle(page, timeout_s=TIMEOUT_S)
        tab = page.get_by_role("tab", name=GOLD_TAB, exact=True).first
        t1 = time.perf_counter()
        tab.click()
        page.get_by_text(GOLD_TEXT).first.wait_for()
        result["tab_s"] = time.perf_counter() - t1
        settle(page, timeout_s=TIMEOUT_S)
        result["where_s"] = show_where(page)
        return result
    finally:
        context.close()


def show_where(page) -> float:
    """Click the first gold line's "show where" button (whichever view it names: the ranked list, a
    hop's table, a round); seconds until that view shows the highlighted row's container."""
    # by key (ask_views.fate_line: f"{key}_{method}_fate_go…"): the label names the view, or the passage
    button = page.locator(f"[class*='{FATE_GO_CLASS}'] button").first
    row = page.locator(f"[class*='{FOCUS_ROW_CLASS}']")
    t0 = time.perf_counter()
    button.click()
    deadline = t0 + TIMEOUT_S
    while not (row.count() and row.first.is_visible()):
        if time.perf_counter() > deadline:
            raise SystemExit(f"gave up after {TIMEOUT_S:.0f} s waiting for the highlighted row after 'show where'")
        page.wait_for_timeout(POLL_MS)
    return time.perf_counter() - t0


def frame_docs(page) -> set[str]:
    return {f["sig"] for f in graphs_with_nodes(graph_frames(page))}


def new_graphs(before: set[str], count: int) -> Callable[[list[dict[str, Any]]], Any]:
    """Ready when `count` drawn frames hold a graph none of `before` held."""
    def ready(frames: list[dict[str, Any]]) -> Any:
        fresh = [f for f in graphs_with_nodes(frames) if f["sig"] not in before]
        return fresh if len(fresh) >= count else None
    return ready


def learn_runs(browser, url: str, repeat: int) -> list[float]:
    """Step the Learn page's slider forward `repeat` times; seconds per step to its text and graph."""
    context, page = new_page(browser)
    runs = []
    try:
        open_app(page, url, "Learn")
        page.get_by_text("Step 1 of").first.wait_for()
        wait_until(page, graphs_with_nodes, "the Learn page's graph")
        settle(page, timeout_s=TIMEOUT_S)
        for step in range(2, repeat + 2):
            before = frame_docs(page)
            page.get_by_role("slider", name=LEARN_SLIDER).focus()
            t0 = time.perf_counter()
            page.keyboard.press("ArrowRight")
            page.get_by_text(f"Step {step} of").first.wait_for()
            wait_until(page, new_graphs(before, 1), f"step {step}'s graph")
            runs.append(time.perf_counter() - t0)
            settle(page, timeout_s=TIMEOUT_S)
    finally:
        context.close()
    return runs


def open_dropdown(page, label: str, tries: int = 20) -> None:
    """Open a selectbox's list; a rerun that lands just after the click closes it again, so retry."""
    for _ in range(tries):
        page.get_by_role("combobox", name=label).click()
        try:
            page.get_by_role("option").first.wait_for(timeout=5000)
            return
        except Exception:  # closed by a rerun: press Escape and open it again
            page.keyboard.press("Escape")
            settle(page, timeout_s=TIMEOUT_S)
    raise SystemExit(f"the list of {label!r} did not open")


def question_of(option: str) -> str:
    """The question in a picker option: 'q14 · missed by NeuroPath — By what…' (or 'q14: By what…')."""
    return option.split(" — ", 1)[1] if " — " in option else option.split(": ", 1)[1]


def eval_runs(browser, url: str, repeat: int, methods: int, graphs: int) -> list[float]:
    """A recorded evaluation of the sample's first EVAL_QUESTIONS questions, then open one question's
    traces `repeat` times (alternating): seconds to its answers and every graph drawn."""
    context, page = new_page(browser)
    runs = []
    try:
        open_app(page, url, "Evaluate")
        page.get_by_text("no LLM time", exact=False).wait_for()
        settle(page, timeout_s=TIMEOUT_S)
        n = page.get_by_role("spinbutton", name="questions (the first N)")
        n.fill(str(EVAL_QUESTIONS))
        n.press("Enter")
        settle(page, timeout_s=TIMEOUT_S)
        page.get_by_role("button", name="Run evaluation").click()
        page.get_by_text("finished in").first.wait_for()
        settle(page, timeout_s=TIMEOUT_S)
        answers = page.locator("strong").filter(has_text=re.compile(r"^Answer:$"))
        for i in range(repeat):
            before = frame_docs(page)
            open_dropdown(page, "open the traces of")
            option = page.get_by_role("option").nth(i % EVAL_QUESTIONS)
            question = question_of(option.inner_text())
            t0 = time.perf_counter()
            option.click()
            page.locator("p").filter(has_text=f"Question: {question}").first.wait_for()
            while answers.count() < methods:
                page.wait_for_timeout(POLL_MS)
            wait_until(page, new_graphs(before, graphs), f"the graphs of {question!r}")
            runs.append(time.perf_counter() - t0)
            settle(page, timeout_s=TIMEOUT_S)
    finally:
        context.close()
    return runs


# ------------------------------------------------------------------ the whole MuSiQue memory in the explorer
def musique_memory(data_dir: Path) -> Path | None:
    """data/musique-memory, built from the shared MuSiQue files the first time (a few minutes: the
    embeddings; no LLM calls); None with a message when they are not there."""
    from memrag.index import store

    if store.is_memory_dir(MUSIQUE_MEMORY):
        return MUSIQUE_MEMORY
    openie, corpus = data_dir / C.OPENIE_FILE, data_dir / C.CORPUS_FILE
    if not (openie.is_file() and corpus.is_file()):
        log(f"skipping the MuSiQue explorer: {data_dir} does not hold {C.OPENIE_FILE} and {C.CORPUS_FILE}")
        return None
    log(f"building {MUSIQUE_MEMORY} from {data_dir} (once) …")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memrag", "index", "--memory", str(MUSIQUE_MEMORY), "--import-openie",
                    str(openie), "--corpus", str(corpus)], cwd=C.REPO, check=True)
    log(f"  built in {time.perf_counter() - t0:.0f} s")
    return MUSIQUE_MEMORY


def open_saved(page, url: str) -> None:
    """The Memory page with "Saved memory" chosen and the MuSiQue memory picked, ready to open."""
    open_app(page, url)
    settle(page, timeout_s=TIMEOUT_S)
    page.get_by_text("Saved memory", exact=True).click()
    page.get_by_role("button", name="Open this memory").wait_for()
    settle(page, timeout_s=TIMEOUT_S)


def panel_heading(page) -> str:
    heading = page.locator(PANEL).get_by_role("heading")
    return heading.first.inner_text() if heading.count() else ""


def explorer_runs(browser, url: str, repeat: int, entities: int, hubs: list[int]) -> list[dict[str, Any]]:
    """Each run in a fresh session: open the MuSiQue memory, seconds to its map interactive; then
    click one of the most linked entities, seconds to its panel."""
    runs = []
    for i in range(repeat):
        context, page = new_page(browser)
        try:
            open_saved(page, url)
            t0 = time.perf_counter()
            page.get_by_role("button", name="Open this memory").click()
            state = wait_for_map(page, entities, [hubs[i % len(hubs)]], timeout_s=TIMEOUT_S)
            run = {"explorer_s": time.perf_counter() - t0}
            settle(page, timeout_s=TIMEOUT_S)
            state = map_state(page, [hubs[i % len(hubs)]])
            before = panel_heading(page)
            t1 = time.perf_counter()
            page.mouse.click(*state["at"][str(hubs[i % len(hubs)])])
            while (now := panel_heading(page)) in ("", before):
                if time.perf_counter() - t1 > TIMEOUT_S:
                    raise SystemExit("gave up waiting for the panel after a click on the map")
                page.wait_for_timeout(POLL_MS // 5)
            run["panel_s"] = time.perf_counter() - t1
            run["clicked"] = now
            runs.append(run)
            settle(page, timeout_s=TIMEOUT_S)
        finally:
            context.close()
    return runs


PARTS = ("ask", "learn", "eval", "explorer")


def measure(url: str, repeat: int, methods: int, result: dict[str, Any], parts: tuple[str, ...] = PARTS,
            musique: tuple[int, list[int]] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            log("warm-up ask (loads the embedder and opens the memory in the server) …")
            result["ask_cold"] = ask_once(browser, url, methods, None)
            graphs = result["ask_cold"]["graphs"]
            log(f"  {result['ask_cold']['seconds']:.2f} s; {methods} answers, {graphs} graphs drawn")
            result["ask"] = []
            for i in range(repeat if "ask" in parts else 0):
                result["ask"].append(ask_once(browser, url, methods, graphs))
                log(f"ask {i + 1}/{repeat}: {result['ask'][-1]['seconds']:.2f} s, "
                    f"tab switch {result['ask'][-1]['tab_s']:.2f} s, show where {result['ask'][-1]['where_s']:.2f} s")
            log("Learn steps …")
            result["learn_s"] = learn_runs(browser, url, repeat) if "learn" in parts else []
            log("  " + ", ".join(f"{v:.2f} s" for v in result["learn_s"]))
            log("Evaluate: one question's traces …")
            result["eval_q_s"] = eval_runs(browser, url, repeat, methods, graphs) if "eval" in parts else []
            log("  " + ", ".join(f"{v:.2f} s" for v in result["eval_q_s"]))
            result["explorer"] = []
            if "explorer" in parts and musique is not None:
                log("the MuSiQue memory in the explorer (one unmeasured open first: it loads the memory) …")
                explorer_runs(browser, url, 1, *musique)
                result["explorer"] = explorer_runs(browser, url, repeat, *musique)
                for i, r in enumerate(result["explorer"]):
                    log(f"explorer {i + 1}/{repeat}: interactive {r['explorer_s']:.2f} s, "
                        f"click → panel {r['panel_s']:.2f} s ({r['clicked']})")
        finally:
            browser.close()


def summary(values: list[float]) -> dict[str, float]:
    values = [v for v in values if v == v]  # NaN: not measured
    return {"median": C.median(values), "min": min(values) if values else float("nan")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="measurements of each figure (default 3)")
    ap.add_argument("--quick", action="store_true", help="one measurement of each figure")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--parts", default=",".join(PARTS),
                    help="which figures to measure, comma-separated (default all; the warm-up ask always runs)")
    ap.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR,
                    help="the MuSiQue files the explorer's memory is built from once (default ../shared/bench/musique)")
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    if not parts or set(parts) - set(PARTS):
        raise SystemExit(f"--parts takes some of {', '.join(PARTS)} (got {args.parts!r})")
    if repeat < 1:
        raise SystemExit(f"--repeat must be at least 1 (got {repeat})")

    from memrag import demo
    from memrag.index import store
    from memrag.llm.recordings import FILE_NAME
    from memrag.methods.registry import NAMES

    sample = demo.sample_memory_dir()
    if not store.is_memory_dir(sample) or not (sample / FILE_NAME).is_file():
        raise SystemExit(f"the sample memory and its recordings are needed: {sample} (see sample_corpus/README.md)")
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        raise SystemExit("playwright is missing: pip install playwright")
    entities = int(store.read_manifest(sample).get("counts", {}).get("entities", 0))
    built = musique_memory(args.data_dir) if "explorer" in parts else None
    musique = None
    if built is not None:
        m = store.load(built)
        links = [len(m.triples_of.get(e.key, [])) for e in m.entities]
        hubs = sorted(range(len(links)), key=lambda i: -links[i])[:max(repeat, 1)]
        musique = (len(m.entities), hubs)

    result: dict[str, Any] = {"repeat": repeat, "sample_entities": entities,
                              "musique_entities": musique[0] if musique else None,
                              "load_before": " ".join(f"{v:.2f}" for v in os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="memrag-app-bench-") as home:
        if built is not None:  # a saved memory of the bench's app (a copy: the app may write beside it)
            shutil.copytree(built, Path(home) / "memories" / MUSIQUE_FOLDER)
        t0 = time.perf_counter()
        try:
            with running_app(Path(home)) as url:
                result["server_start_s"] = time.perf_counter() - t0
                log(f"app at {url} (started in {result['server_start_s']:.1f} s)")
                measure(url, repeat, len(NAMES), result, parts, musique)
        except AppServerError as e:
            raise SystemExit(str(e))

    ask_s = summary([r["seconds"] for r in result["ask"]])
    result["summary"] = {"ask_s": ask_s, "ask_ok": ask_s["median"] <= ASK_TARGET_S}
    t = C.Table(f"The app in headless chromium, sample memory + recordings ({repeat} run(s) each, after a warm-up)",
                ["figure", "median", "min", "target", ""])
    if result["ask"]:  # left out with --parts
        cold = result["ask_cold"]
        t.add(f"Ask → {len(NAMES)} answers + {cold['graphs']} method graphs drawn ({cold['plotly_graphs']} plotly, "
              f"{cold['graphs'] - cold['plotly_graphs']} iframes) (s)", ask_s["median"],
              ask_s["min"], f"≤ {ASK_TARGET_S:g}", C.verdict(result["summary"]["ask_ok"]))
        answers_s = summary([r["answers_s"] for r in result["ask"]])
        result["summary"]["answers_s"] = answers_s
        t.add("  of which Ask → the answers shown (s)", answers_s["median"], answers_s["min"], None, None)
        tab_s = summary([r["tab_s"] for r in result["ask"]])
        result["summary"]["tab_s"] = tab_s
        t.add(f"a detail tab switch ({GOLD_TAB}) (s)", tab_s["median"], tab_s["min"], f"≤ {CLICK_TARGET_S:g}",
              C.verdict(tab_s["median"] <= CLICK_TARGET_S))
    for name, label, values, target in (
            ("where_s", "'show where' → its row highlighted (s)", [r["where_s"] for r in result["ask"]], CLICK_TARGET_S),
            ("learn_s", "a Learn step (s)", result["learn_s"], CLICK_TARGET_S),
            ("eval_q_s", "one Evaluate question's traces (s)", result["eval_q_s"], EVAL_Q_TARGET_S)):
        if not values:
            continue  # a part left out with --parts
        fig = summary(values)
        result["summary"][name] = fig
        t.add(label, fig["median"], fig["min"], f"≤ {target:g}", C.verdict(fig["median"] <= target))
    for name, label, key, target in (
            ("explorer_s", f"MuSiQue explorer, {result['musique_entities'] or 0:,} entities → interactive (s)",
             "explorer_s", EXPLORER_TARGET_S),
            ("panel_s", "a click on the MuSiQue map → its panel (s)", "panel_s", CLICK_TARGET_S)):
        if result["explorer"]:
            fig = summary([r[key] for r in result["explorer"]])
            result["summary"][name] = fig
            t.add(label, fig["median"], fig["min"], f"≤ {target:g}", C.verdict(fig["median"] <= target))
    t.add("warm-up ask, cold server (s)", result["ask_cold"]["seconds"], None, None, None)
    sizes = C.Table("A graph's size (an iframe's srcdoc; a plotly chart's data and words as JSON)",
                    ["graph", "drawn by", "nodes", "bytes"])
    np_run = (result["ask"] or [result["ask_cold"]])[0]
    sizes.add("NeuroPath overview (the demo question shown)", np_run["neuropath_drawn_by"], np_run["neuropath_nodes"],
              f"{np_run['neuropath_bytes']:,}")
    notes = [f"Load average before the run: {result['load_before']}.",
             f"The sample memory has {entities} entities."
             + ("" if result["explorer"] or "explorer" not in parts else
                f" The MuSiQue explorer was skipped: no {MUSIQUE_MEMORY} and no MuSiQue files in {args.data_dir}."),
             "Wall-clock figures include the server's script run; compare figures from one run on a quiet machine."]
    C.emit(args, result, [t, sizes], notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
