"""GraphNode / GraphEdge lists → one offline pyvis HTML page: self-contained, or loading
vis-network from the app's own static folder once `share_vis_assets` is on (the app does that).

Safety: the page runs in an iframe with the app's origin, so no
document or model text may become markup. Labels and tooltips are passed as
plain text: every value pyvis puts into the page's script goes through one encoder,
`script_json` (JSON with `<`, `>`, `&`, `'`, `=`, U+2028 and U+2029 written as \\u escapes,
so no data can close the script tag or read as a tag or attribute to anything scanning the page);
vis-network draws labels on a canvas and sets string tooltips with `innerText`. We never
use pyvis's `heading`, select or filter menus (inserted raw), and we keep
pyvis's link-tooltip mode (which uses `innerHTML`) off. The finished page is
checked for all of this, and its own tags (parsed, not pattern-matched over the text) for
remote loads, before it is returned.

The page's own layer (assets/graph_overlay.js, after pyvis's script) writes node labels as text
elements placed without overlap and opens a details panel on a click. It reads one more JSON
block made by the same encoder (checked like the graph data) and sets every name, relation and
passage with `textContent`, never as markup.

Layout is computed here (networkx, fixed seed) and physics is off, so the same
input gives the same page and big graphs draw at once.
"""

from __future__ import annotations

import functools
import hashlib
import html.parser
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup
from pyvis.network import Network

from memrag.assets import asset_text
from memrag.trace import GraphEdge, GraphNode
from memrag.viz import look as looks
from memrag.viz.drawing import Drawing, drawing
from memrag.viz.fixed_layout import FixedLayout
from memrag.viz import palette
from memrag.viz.labels import label_order
from memrag.viz.legend import EDGE, FILL, RING, SHAPE, Legend, legend_html
from memrag.plain_text import clip

MAX_NODES = 600
DEFAULT_NODES = 40  # what a graph draws unless asked for more: a few dozen nodes can be read
LABEL_CHARS = 40
EDGE_LABEL_CHARS = 30
TOOLTIP_CHARS = 700
GOLD, DIM = palette.GOLD, palette.DIM
GOLD_MARK, PASSAGE_MARK = palette.GOLD_MARK, palette.PASSAGE_MARK
# The details panel's bounds (the frame's size is the speed goal's: a few KB per node at most).
PANEL_PASSAGES, PASSAGE_CHARS, PAGE_PASSAGES, PANEL_LINES = 2, 420, 60, 10
COREF_KINDS = frozenset({"coref", "synonymy"})  # edges the panel lists as coreference candidates, not relations
EMPHASIS = "#000000"

# Shape and size by node kind; a role may change them. Colour comes from the group. "means" is
# what the legend says about the shape, "ring" what it says about a border of the role's colour.
NODE_KINDS: dict[str, dict[str, Any]] = {
    "query": {"shape": "diamond", "size": 22, "means": "the question"},
    "cue": {"shape": "triangle", "size": 18, "means": "cue from the question"},
    "chunk": {"shape": "square", "size": 14, "means": f"passage (chunk; its label starts {palette.PASSAGE_MARK})"},
    "entity": {"shape": "dot", "size": 16, "means": "entity"},
}
# Roles the methods give entity nodes that name their origin, not a look of their own.
_ENTITY_ROLE_ALIASES = {"cue": "cue-hit", "query": "", "semantic": "", "path": ""}
NODE_ROLES: dict[str, dict[str, Any]] = {
    "seed": {"shape": "star", "size": 24, "means": "seed entity (where the search starts)"},
    # one shape, one meaning: the focus and a seed's coreference candidates are entities (dots)
    # told apart by a ring, never by a shape that means something else elsewhere
    "focus": {"size": 22, "borderWidth": 4, "border": EMPHASIS, "ring": "the entity you centred on"},
    "coref": {"borderWidth": 3, "border": "#8e44ad", "ring": "coreference candidate of a seed"},
    "centroid": {"shape": "hexagon", "size": 16, "means": "a round's centroid"},
    "graph": {"size": 13},  # an entity reached by co-occurrence: its edge says so
    "cue-hit": {"shape": "triangleDown", "size": 15, "means": "found near a cue"},
    "final": {"size": 22, "borderWidth": 4, "border": "#111111", "ring": "final engram"},
    "frontier": {"borderWidth": 3, "border": "#0b7285", "ring": "end of a path (frontier)"},
    "valid": {"borderWidth": 3, "border": "#1a7f37", "ring": "on a valid path"},
    "expanded": {"borderWidth": 3, "border": "#d9730d", "ring": "expanded"},
    "pruned": {"dim": "pruned"},
    "dropped": {"dim": "dropped"},
    "ghost": {"dim": "not reached yet at this step", "hide_label": True},
}
# How an edge role or kind looks, and what the legend says about it.
EDGE_ROLES: dict[str, dict[str, Any]] = {
    "valid": {"color": "#1a7f37", "width": 4, "means": "on a valid path"},
    "expanded": {"color": "#d9730d", "width": 3, "means": "on an expanded path"},
    "shown": {"color": "#6b6b6b", "width": 1.5, "means": "listed, not judged"},
    "dropped": {"color": "#b0b0b0", "width": 1, "dashes": True, "means": "listed, not kept"},
    "pruned": {"color": "#cfcfcf", "width": 1, "dashes": True, "means": "pruned"},
    "ghost": {"color": "#e6e6e6", "width": 1, "dashes": True, "hide_label": True,
              "means": "not reached yet at this step"},
}
EDGE_KINDS: dict[str, dict[str, Any]] = {
    "triple": {"color": "#7a7a7a", "width": 1.5, "means": "relation (a triple)"},
    "coref": {"color": "#8e44ad", "width": 1.5, "dashes": [6, 4], "means": "coreference candidate link"},
    # HippoRAG 2's edge between phrases whose name vectors are close (the coreference look, its own words)
    "synonymy": {"color": "#8e44ad", "width": 1.5, "dashes": [6, 4], "means": "synonymy edge (similar names)"},
    "activation": {"color": "#9aa7b8", "width": 1, "means": "activation"},
    "cooccur": {"color": "#b9b9b9", "width": 1, "arrows": False, "means": "co-occurs in a passage"},
    "provenance": {"color": "#c7c7c7", "width": 1, "dashes": [2, 4], "arrows": False,
                   "means": "passage from this node"},
}

_REMOTE_TAG = re.compile(
    r"<link\b[^>]*\bhref\s*=\s*[\"']?https?://[^>]*>"
    r"|<script\b[^>]*\bsrc\s*=\s*[\"']?https?://[^>]*>\s*</script\s*>",
    re.IGNORECASE | re.DOTALL,
)
# An address that leaves the page's origin: any scheme followed by //, or protocol-relative.
_REMOTE_URL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?[\\/]{2}", re.IGNORECASE)
# CSS that fetches: url(…) or @import "…" whose address is remote.
_REMOTE_CSS = re.compile(r"""(?:url\(|@import)\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?[\\/]{2}""", re.IGNORECASE)
# Attributes that make a browser fetch (or navigate to) their value.
_LOADING_ATTRS = frozenset({"src", "href", "srcset", "data", "action", "formaction", "poster", "background",
                            "xlink:href", "ping", "manifest", "codebase", "cite", "longdesc"})
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.IGNORECASE)
# pyvis's template keeps a commented-out pair of local vis tags; drop it so a reader of
# the page sees no loads at all.
_DEAD_COMMENT = re.compile(r"<!--\s*<link[^>]*node_modules.*?-->", re.DOTALL)
_DATASET = re.compile(r"(nodes|edges) = new vis\.DataSet\((.*?)\);\n")


_templates: Environment | None = None


def _template_env(template_dir: str) -> Environment:
    """One Jinja environment for every page: pyvis makes a new one per Network, which
    recompiles its template (with ~700 KB of inline vis-network) on every render."""
    global _templates
    if _templates is None:
        _templates = Environment(loader=FileSystemLoader(template_dir))  # the same settings pyvis uses
        # pyvis's template writes nodes and edges with `|tojson`: route that through our encoder
        _templates.filters["tojson"] = lambda value: Markup(script_json(value))
    return _templates


# Characters that could end the script or make data read as markup, and lone surrogates (which
# no UTF-8 page can carry), each as a JSON \\u escape. They only ever occur inside JSON strings,
# where the escape means the same character, so the replacement is exact: the browser's JSON/JS
# parser gives back the original text.
_SCRIPT_UNSAFE = re.compile("[<>&'=\u2028\u2029\ud800-\udfff]")


def script_json(value: Any) -> str:
    """`value` as JSON safe to place inside an HTML <script> element (the one encoder for graph
    data): it parses back to `value` in JavaScript, and contains no `<`, `>`, `&`, `'`, `=`,
    U+2028, U+2029 or lone surrogate, so it cannot close the script or look like a tag or an
    attribute, and the page always encodes as UTF-8."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return _SCRIPT_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


# vis-network's script as pyvis inlines it (~470 KB per page). An app that can serve static
# files loads it once per browser instead: see share_vis_assets.
_VIS_SCRIPT = "lib/vis-9.1.2/vis-network.min.js"
_VIS_STYLE = "lib/vis-9.1.2/vis-network.css"
# vis-network's own stylesheet is 220 KB, mostly images for widgets we keep off (navigation
# buttons, manipulation); the one element we use is the hover tooltip, styled in assets/, beside
# the page's layout (the graph fills the frame under the legend).
_PAGE_CSS = asset_text("graph_tooltip.css") + asset_text("graph_layout.css")
_inline_assets: dict[str, str] = {}  # what pyvis inlines: "script", "style" → the exact tag
_shared_script_tag = ""  # set by share_vis_assets
_shared_overlay_tag = ""  # set with it; used only while _shared_script_tag is set
_OVERLAY_JS = asset_text("graph_overlay.js")
log = logging.getLogger(__name__)


@functools.cache
def _vis_file(rel: str) -> str:
    """A file of pyvis's bundled vis-network, as pyvis ships it."""
    return (Path(Network().template_dir) / rel).read_text(encoding="utf-8")


def _inline_tag(kind: str) -> str:
    """The tag pyvis writes for vis-network's script or style (Jinja's include drops one trailing newline)."""
    if kind not in _inline_assets:
        body = _vis_file(_VIS_SCRIPT if kind == "script" else _VIS_STYLE)
        body = body[:-1] if body.endswith("\n") else body
        _inline_assets[kind] = f"<script>{body}</script>" if kind == "script" else f"<style>{body}</style>"
    return _inline_assets[kind]


def share_vis_assets(static_dir: Path, url_prefix: str = "app/static") -> bool:
    """From now on, pages load vis-network from `url_prefix` instead of inlining it.

    Writes the script (named by its content hash, so a new pyvis never meets a stale browser
    cache) into `static_dir`, which the caller serves at `url_prefix` (Streamlit:
    `server.enableStaticServing`, folder `static/` beside the app, URL `app/static/…`, relative so
    it works under any base path). A page is then a few KB instead of ~500 KB. Returns False, and
    leaves pages self-contained, when the file cannot be written.
    """
    global _shared_script_tag, _shared_overlay_tag
    if _shared_script_tag:
        return True
    body = _vis_file(_VIS_SCRIPT)
    name = f"vis-network-{hashlib.sha256(body.encode()).hexdigest()[:12]}.min.js"
    # the label layer's script too (~11 KB a frame): one copy per browser
    overlay = f"memrag-overlay-{hashlib.sha256(_OVERLAY_JS.encode()).hexdigest()[:12]}.js"
    try:
        static_dir.mkdir(parents=True, exist_ok=True)
        _write_once(static_dir / name, body)
        _write_once(static_dir / overlay, _OVERLAY_JS)
    except OSError as error:
        log.warning("graph pages stay self-contained: cannot write vis-network to %s (%s)", static_dir, error)
        return False
    _shared_script_tag = f'<script src="{url_prefix.rstrip("/")}/{name}"></script>'
    _shared_overlay_tag = f'<script src="{url_prefix.rstrip("/")}/{overlay}"></script>'
    return True


def _write_once(path: Path, body: str) -> None:
    if path.exists() and path.read_text(encoding="utf-8") == body:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(body)
    os.replace(tmp, path)  # another app process writing the same bytes at once is harmless


def _slim_assets(page: str) -> str:
    """Our tooltip and layout style instead of vis-network's stylesheet; the shared script where one is served."""
    swaps = [("style", f"<style>{_PAGE_CSS}</style>")]
    if _shared_script_tag:
        swaps.append(("script", _shared_script_tag))
    for kind, replacement in swaps:
        inline = _inline_tag(kind)
        if inline in page:
            page = page.replace(inline, replacement, 1)
        else:
            log.warning("graph page: pyvis's inline vis-network %s was not found; left as it is", kind)
    return page


class UnsafeGraphHTML(RuntimeError):
    """The generated page failed a safety check (a bug here or in pyvis, never user error)."""


# ------------------------------------------------------------------ colours and layout
def _component_layout(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """One connected piece, in a box about 70 px per sqrt(node) wide, centred on 0."""
    n = g.number_of_nodes()
    if n == 1:
        return {next(iter(g.nodes)): (0.0, 0.0)}
    scale = min(1100.0, max(60.0, 70.0 * math.sqrt(n)))
    if n <= 120:
        pos = nx.kamada_kawai_layout(g, scale=scale)
    else:
        # From 500 nodes networkx switches to a sparse solver ~3x slower per step: fewer steps there.
        pos = nx.spring_layout(g, seed=7, scale=scale, k=1.5 / math.sqrt(n), method="force",
                               iterations=60 if n < 500 else 25)
    return {k: (float(x), float(y)) for k, (x, y) in pos.items()}


def layout(node_ids: Sequence[str], pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[float, float]]:
    """Deterministic positions in pixels, roughly within ±1100: each connected piece laid out on
    its own (so a hub cluster is not squeezed by far-flung stragglers), the biggest first, packed
    in rows beside each other."""
    # Sorted, so the positions depend on the graph only, not on the order things were listed in
    # (a replay slider re-renders the same graph with its nodes in another order).
    g = nx.Graph()
    g.add_nodes_from(sorted(node_ids))
    g.add_edges_from(sorted({tuple(sorted((a, b))) for a, b in pairs if a != b and a in g and b in g}))
    if g.number_of_nodes() == 0:
        return {}
    pieces = sorted((sorted(c) for c in nx.connected_components(g)), key=lambda c: (-len(c), c[0]))
    placed = [_component_layout(g.subgraph(c)) for c in pieces]
    sizes = []
    for pos in placed:
        xs, ys = [x for x, _ in pos.values()], [y for _, y in pos.values()]
        sizes.append((max(xs) - min(xs) + 80, max(ys) - min(ys) + 80, min(xs), min(ys)))
    row_width = max(max(w for w, *_ in sizes), math.sqrt(sum(w * h for w, h, *_ in sizes)) * 1.3)
    out: dict[str, tuple[float, float]] = {}
    x0 = y0 = row_height = 0.0
    for pos, (w, h, left, top) in zip(placed, sizes):
        if x0 > 0 and x0 + w > row_width:
            x0, y0, row_height = 0.0, y0 + row_height, 0.0
        for k, (x, y) in pos.items():
            out[k] = (x - left + x0, y - top + y0)
        x0 += w
        row_height = max(row_height, h)
    xs, ys = [x for x, _ in out.values()], [y for _, y in out.values()]
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1.0)
    shrink = min(1.0, 2200.0 / span)  # keep within ±1100
    return {k: (round((x - cx) * shrink, 1), round((y - cy) * shrink, 1)) for k, (x, y) in out.items()}


# ------------------------------------------------------------------ node and edge options
def _plain(text: str) -> str:
    """Plain text for a tooltip. pyvis switches to its innerHTML popup when a title contains
    the substring "href"; a zero-width space keeps the text readable and the mode off."""
    return clip(text, TOOLTIP_CHARS, keep_lines=True).replace("href", "h\u200bref")


def _node_options(n: GraphNode, colour: str, emphasis: bool, legend: Legend, size: float | None = None,
                  scale: float = 1.0) -> dict[str, Any]:
    """vis-network options for one node; every mark it gets is added to `legend` with its meaning.
    `size` replaces the size of its kind and role (e.g. by PageRank mass); `scale` enlarges it.
    The label is kept in the data (exports, hover, the label layer read it) but drawn by the page's
    label layer, so vis-network's own copy is transparent."""
    role = _look_of(n)
    if size is not None:
        role["size"] = size
    dim = role.get("dim", "")
    fill = DIM if dim else colour
    border = GOLD if n.gold else role.get("border", fill)
    border_width = 4 if n.gold else role.get("borderWidth", 1)
    if emphasis:
        border_width += 3
        border = EMPHASIS if not n.gold else border
    legend.add(FILL, dim or (role["means"] if _own_colour(n, role) else palette.group_word(n.group or n.kind)),
               colour=fill)
    legend.add(SHAPE, role["means"], shape=role["shape"])
    if border.lower() != fill.lower():
        ring = (f"from a gold passage ({GOLD_MARK})" if n.gold else "highlighted (this step)" if emphasis
                else role.get("ring", ""))
        legend.add(RING, ring, colour=border)
    label = written_label(n)
    tooltip = n.tooltip or n.label
    if not tooltip.startswith(n.label):
        tooltip = f"{n.label}\n{tooltip}"  # the name is on hover when the label has no place
    return {
        # pyvis replaces an empty label by the node id; a space draws nothing
        "label": label if label and not role.get("hide_label") else " ",
        "title": _plain(tooltip),
        "shape": role["shape"],
        "size": round(role["size"] * scale, 1),
        "color": {"background": fill, "border": border,
                  "highlight": {"background": fill, "border": EMPHASIS},
                  "hover": {"background": fill, "border": EMPHASIS}},
        "borderWidth": border_width,
        "font": {"color": "rgba(0,0,0,0)", "size": 13, "strokeWidth": 0},
        "physics": False,
    }


# The groups that colour a node of a kind in that kind's own colour (the question, a cue, a passage).
_OWN_GROUPS = {"query": ("query", "question"), "cue": ("cue",), "chunk": ("chunk",)}


def _own_colour(n: GraphNode, role: Mapping[str, Any]) -> bool:
    """Whether the node's fill only repeats what its kind's shape says: its legend entry then says it
    in the shape's words, and the legend lists the two as one entry."""
    return (n.group or n.kind) in _OWN_GROUPS.get(n.kind, ()) and role["shape"] == NODE_KINDS[n.kind]["shape"]


def _look_of(n: GraphNode) -> dict[str, Any]:
    """A node's shape, size and marks: its kind's, with its role's on top."""
    role_name = _ENTITY_ROLE_ALIASES.get(n.role, n.role) if n.kind == "entity" else n.role
    return {**NODE_KINDS.get(n.kind, NODE_KINDS["entity"]), **NODE_ROLES.get(role_name, {})}


def written_label(n: GraphNode) -> str:
    """The label a node is written with: a passage is marked as one (a passage and an entity may share
    a name), a node from a gold passage carries the gold mark."""
    label = clip(n.label, LABEL_CHARS)
    if n.kind == "chunk":
        label = f"{PASSAGE_MARK} {label}"
    return f"{GOLD_MARK} {label}" if n.gold else label


def _edge_options(e: GraphEdge, emphasis: bool, curve: int, title: str, legend: Legend,
                  scale: float = 1.0) -> dict[str, Any]:
    kind = EDGE_KINDS.get(e.kind, EDGE_KINDS["triple"])
    role = EDGE_ROLES.get(e.role, {})
    style = {**kind, **role}
    colour = style["color"]
    legend.add(EDGE, kind["means"] + (f", {role['means']}" if role else ""), colour=colour,
               dashed=bool(style.get("dashes")))
    opts: dict[str, Any] = {
        "label": "" if style.get("hide_label") else clip(e.label, EDGE_LABEL_CHARS),
        "title": _plain(title or e.label),
        "color": {"color": colour, "highlight": "#000000", "hover": "#000000"},
        "width": style["width"] + (2 if emphasis else 0),
        "dashes": style.get("dashes", False),
        "font": {"size": round(10 * scale), "color": "#9a9a9a" if e.role == "ghost" else "#555555",
                 "strokeWidth": 3, "align": "middle"},
    }
    if style.get("arrows") is False:
        opts["arrows"] = {"to": {"enabled": False}}
    else:
        opts["arrows"] = {"to": {"enabled": True, "scaleFactor": 0.5}}
    if curve:
        # parallel edges between the same two nodes bend apart instead of overlapping
        opts["smooth"] = {"enabled": True, "type": "curvedCW" if curve % 2 else "curvedCCW",
                          "roundness": 0.15 * ((curve + 1) // 2)}
    return opts


# ------------------------------------------------------------------ the page
_OPTIONS = {
    "physics": {"enabled": False},
    "layout": {"improvedLayout": False},
    "edges": {"smooth": {"enabled": False}},
    "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False,
                    "keyboard": False, "multiselect": False},
}


def render(
    nodes: Sequence[GraphNode],
    edges: Sequence[GraphEdge],
    *,
    height: int = 520,
    highlight: Iterable[str] | None = None,
    legend: bool = True,
    colours: Mapping[str, str] | None = None,
    edge_titles: Mapping[str, str] | None = None,
    sizes: Mapping[str, float] | None = None,
    passages: Mapping[int, tuple[str, str]] | None = None,
    group_heading: str = "shown as",
    fixed: FixedLayout | None = None,
) -> str:
    """A self-contained HTML page drawing the graph, for `st.iframe(html, height=…)`.

    highlight: ids of nodes and edges to emphasise (thicker, darker outline). legend: a line above
    the graph listing every mark drawn (fills, shapes, rings, edge looks) with its meaning.
    colours: group → colour overrides. edge_titles: edge id → hover text (default: its label).
    sizes: node id → drawn size, replacing the size of its kind and role (e.g. by PageRank mass).
    passages: chunk id → (title, text) for the details panel a click on a node opens (its source
    passages); group_heading: what a node's colour says in the panel ("fate at this step"). fixed: positions shared with
    other pictures (`memrag.viz.fixed_layout`): every node is drawn at its place there, the page fits
    the layout's box and moves no node, and the legend keeps the lines the layout reserves.
    Labels are written by the page's label layer in `memrag.viz.labels` order, without overlap;
    the look (`memrag.viz.look`) sets their size and whether all must be written.
    Raises ValueError for more than MAX_NODES nodes or an edge to an unknown node.
    """
    seen: dict[str, GraphNode] = {}
    for n in nodes:
        seen.setdefault(n.id, n)
    if len(seen) > MAX_NODES:
        raise ValueError(f"graph has {len(seen)} nodes; at most {MAX_NODES} can be drawn "
                         "(cap the subgraph first)")
    for e in edges:
        for end in (e.source, e.target):
            if end not in seen:
                raise ValueError(f"edge {e.id!r} refers to node {end!r}, which is not in the graph")
    look = looks.current()
    marked = set() if highlight is None else set(highlight)
    if fixed is None:
        pos = layout(list(seen), [(e.source, e.target) for e in edges])
    else:
        missing = [nid for nid in seen if nid not in fixed.positions]
        if missing:
            raise ValueError(f"node {missing[0]!r} has no place in the fixed layout it is drawn with")
        pos = fixed.positions
    fills = palette.group_colours((n.group or n.kind for n in seen.values()), colours)
    node_opts, edge_opts, marks = _styled(list(seen.values()), edges, marked, fills, sizes or {}, edge_titles or {},
                                          look.scale)

    net = Network(height=f"{int(height)}px", width="100%", directed=True, cdn_resources="in_line",
                  heading="", select_menu=False, filter_menu=False, neighborhood_highlight=False)
    for nid, opts in node_opts.items():
        x, y = pos[nid]
        net.add_node(nid, **opts, x=x, y=y)
    for e, opts in zip(edges, edge_opts):
        net.add_edge(e.source, e.target, id=e.id, **opts)
    net.options = dict(_OPTIONS)  # a plain dict: pyvis dumps it with json.dumps
    net.templateEnv = _template_env(net.template_dir)

    page = net.generate_html(notebook=False)
    page = strip_remote_loads(page)
    page = _EMPTY_HEADING.sub("", page)
    page = _DEAD_COMMENT.sub("", page)
    page = _slim_assets(page)
    items = marks.items() if legend and seen else []
    if items:
        page = page.replace("<body>", "<body>" + legend_html(items, folded=look.compact,
                                                             rows=fixed.legend_rows if fixed else 0), 1)
    extra = _layer_data(list(seen.values()), list(edges), marked, look, passages or {}, group_heading)
    extra["fixed"] = fixed.box() if fixed else None
    layer = (_shared_overlay_tag if _shared_script_tag and _shared_overlay_tag else f"<script>{_OVERLAY_JS}</script>")
    page = page.replace("</body>", f'<script type="application/json" id="memrag-graph-extra">{script_json(extra)}'
                                   f"</script>{layer}</body>", 1)
    check_safe(page)
    return GraphPage(page, _drawing(node_opts, edges, edge_opts, pos, items, fixed.legend_rows if fixed else 0))


class GraphPage(str):
    """A page `render` made, carrying the Drawing it was made from: its downloads and its legend's
    height read that data, never the page (the page stays a plain string to every other reader)."""

    drawing: Drawing

    def __new__(cls, page: str, drawn: Drawing) -> GraphPage:
        made = super().__new__(cls, page)
        made.drawing = drawn
        return made


def _drawing(node_opts: Mapping[str, Mapping[str, Any]], edges: Sequence[GraphEdge],
             edge_opts: Sequence[Mapping[str, Any]], pos: Mapping[str, tuple[float, float]],
             items: Sequence[Mapping[str, Any]], legend_rows: int) -> Drawing:
    """The vis-network records a page draws, as a Drawing (the same words, looks and places)."""
    nodes = [{"id": nid, "label": o["label"].strip(), "title": o["title"], "shape": o["shape"],
              "colour": o["color"]["background"], "border": o["color"]["border"], "border_width": o["borderWidth"],
              "size": o["size"], "x": pos[nid][0], "y": pos[nid][1]} for nid, o in node_opts.items()]
    lines = [{"id": e.id, "source": e.source, "target": e.target, "label": o["label"], "title": o["title"],
              "colour": o["color"]["color"], "dashed": bool(o["dashes"]), "width": o["width"],
              "arrow": o["arrows"]["to"]["enabled"]} for e, o in zip(edges, edge_opts)]
    return drawing(nodes, lines, items, legend_rows)


def _styled(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge], marked: set[str], fills: Mapping[str, str],
            sizes: Mapping[str, float], edge_titles: Mapping[str, str], scale: float
            ) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], Legend]:
    """Every node's and edge's vis-network options, and the legend of the marks they carry."""
    marks = Legend()
    node_opts = {n.id: _node_options(n, fills[n.group or n.kind], n.id in marked, marks, sizes.get(n.id), scale)
                 for n in nodes}
    edge_opts = []
    pair_count: dict[tuple[str, str], int] = {}
    for e in edges:
        pair = tuple(sorted((e.source, e.target)))
        curve = pair_count.get(pair, 0)  # parallel edges bend apart
        pair_count[pair] = curve + 1
        edge_opts.append(_edge_options(e, e.id in marked, curve, edge_titles.get(e.id, ""), marks, scale))
    return node_opts, edge_opts, marks


def legend_of(nodes: Sequence[GraphNode], edges: Sequence[GraphEdge], *, highlight: Iterable[str] = (),
              colours: Mapping[str, str] | None = None, sizes: Mapping[str, float] | None = None
              ) -> list[dict[str, Any]]:
    """The legend items `render` would list for this graph, without drawing it."""
    fills = palette.group_colours((n.group or n.kind for n in nodes), colours)
    return _styled(nodes, edges, set(highlight), fills, sizes or {}, {}, looks.current().scale)[2].items()


def label_room(nodes: Sequence[GraphNode], sizes: Mapping[str, float] | None = None) -> dict[str, tuple[str, float]]:
    """Node id → (the label the page writes for it, its drawn radius in px): what a fixed layout
    keeps free around each node."""
    scale = looks.current().scale
    out = {}
    for n in nodes:
        role = _look_of(n)
        text = "" if role.get("hide_label") else written_label(n)
        out[n.id] = (text, float((sizes or {}).get(n.id, role["size"])) * scale)
    return out


_EXTRA = re.compile(r'<script type="application/json" id="memrag-graph-extra">(.*?)</script>', re.DOTALL)


def _layer_data(nodes: list[GraphNode], edges: list[GraphEdge], marked: set[str], look: looks.Look,
                passages: Mapping[int, tuple[str, str]], group_heading: str) -> dict[str, Any]:
    """What the page's label layer and details panel read: labels in their order, each node's
    details and the passages they cite (each once)."""
    names = {n.id: n.label for n in nodes}
    used: dict[int, list[str]] = {}
    details = {n.id: _details(n, edges, names, passages, used, group_heading) for n in nodes}
    texts, ghosts = {}, []
    if not look.compact:
        for n in nodes:
            role = _look_of(n)
            if role.get("hide_label"):
                ghosts.append(n.id)  # it keeps its place, so a replay does not move the nodes around it
            texts[n.id] = written_label(n)
    return {"px": look.label_px, "labelAll": look.label_all, "texts": texts, "ghost": ghosts,
            "dim": [n.id for n in nodes if _look_of(n).get("dim")],
            "order": label_order(nodes, edges, marked), "details": details,
            "coref": [e.id for e in edges if e.kind in COREF_KINDS],
            "passages": {str(cid): [clip(title, 200), clip(text, PASSAGE_CHARS, keep_lines=True)]
                         for cid, (title, text) in passages.items() if cid in used}}


def _details(n: GraphNode, edges: Sequence[GraphEdge], names: Mapping[str, str],
             passages: Mapping[int, tuple[str, str]], used: dict[int, list[str]], group_heading: str) -> dict[str, Any]:
    """One node's details panel: name, what it is, what its colour says, its hover text, its
    coreference candidates, its source passages (ids into the page's passages). Its relations are
    read in the page from the edges drawn at it (their hover text)."""
    role = _look_of(n)
    coref = []
    for e in edges:
        if n.id in (e.source, e.target) and e.kind in COREF_KINDS:
            other = e.target if e.source == n.id else e.source
            coref.append(f"{names.get(other, other)} ({e.label})" if e.label else names.get(other, other))
    about = [line for line in (n.tooltip or "").split("\n") if line.strip() and line != n.label]
    cited = []
    for cid in n.chunk_ids:
        if cid in passages and len(cited) < PANEL_PASSAGES and (cid in used or len(used) < PAGE_PASSAGES):
            used.setdefault(cid, []).append(n.id)
            cited.append(str(cid))
    return {"name": clip(n.label, 300), "kind": role.get("means") or role.get("ring") or n.kind,
            "group": palette.group_word(n.group or n.kind) if not role.get("dim") else role["dim"],
            "heading": group_heading, "about": [clip(x, 300) for x in about[:PANEL_LINES]],
            "coref": [clip(x, 200) for x in coref[:PANEL_LINES]], "passages": cited}


def strip_remote_loads(page: str) -> str:
    """Remove every <link href="http(s)://…"> and <script src="http(s)://…"></script> tag."""
    return _REMOTE_TAG.sub("", page)


class _TagScan(html.parser.HTMLParser):
    """Collects what the page's own markup would fetch: loading attributes of its tags and
    CSS in its style elements and style attributes. Script text is not markup (the parser
    keeps it as data up to `</script`), so data inside it is never mistaken for a tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.remote: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            value = value or ""
            if (name in _LOADING_ATTRS and _REMOTE_URL.search(value)) or (
                    name == "style" and _REMOTE_CSS.search(value)):
                self.remote.append(f"<{tag} {name}={value[:80]!r}>")
        self._in_style = tag == "style"

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and _REMOTE_CSS.search(data):
            self.remote.append("<style> " + _REMOTE_CSS.search(data).group(0))


def remote_loads(page: str) -> list[str]:
    """What the page's own tags would fetch from outside it (empty for a safe page)."""
    scan = _TagScan()
    scan.feed(page)
    scan.close()
    return scan.remote


def check_safe(page: str) -> None:
    """Raise UnsafeGraphHTML unless the page's tags load nothing remote and its data cannot
    break out of the script (no raw '<' in the data, no innerHTML popup mode)."""
    remote = remote_loads(page)
    if remote:
        raise UnsafeGraphHTML(f"graph page still loads a remote resource: {remote[0]}")
    found = _DATASET.findall(page)
    if [k for k, _ in found] != ["nodes", "edges"]:
        raise UnsafeGraphHTML("graph page does not have the expected data layout")
    for _, data in found:
        if "<" in data or ">" in data:
            raise UnsafeGraphHTML("graph data contains a raw angle bracket")
    for data in _EXTRA.findall(page):
        if "<" in data or ">" in data:
            raise UnsafeGraphHTML("the label layer's data contains a raw angle bracket")
    if "popup.innerHTML" in page:
        raise UnsafeGraphHTML("pyvis link-tooltip mode (innerHTML) is on")
