"""memrag.viz: offline, injection-proof graph pages; trace and memory views; tables; charts.

Traces are built by hand (so every expected node, fate and count is worked out here),
memories with the real build pipeline driven by a scripted LLM and hand-made name vectors.
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest

from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import benchmark_document
from memrag.trace import AnswerResult, ChunkRef, CorefMember, GraphEdge, GraphNode, LLMCallRecord, RankedChunk, Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, NeuroPathSeed, PathCandidate, PathTriple
from memrag.viz import charts, graph_html, memory_graphs, palette, tables, trace_graphs
from memrag.viz.graph_html import render
from graph_page import graph_data
from memrag.plain_text import escape_markdown
from scripted import HashEmbedder, ScriptedLLM


HOSTILE = ["<script>alert(1)</script>", "</script><script>alert(2)</script>", "<img src=x onerror=alert(3)>"]


def nodes_by_id(page: str) -> dict[str, dict]:
    return {n["id"]: n for n in graph_data(page)[0]}


def edges_by_id(page: str) -> dict[str, dict]:
    return {e["id"]: e for e in graph_data(page)[1]}


# ================================================================== safe_text
@pytest.mark.parametrize("raw, expected", [
    ("![x](http://example.invalid/leak)", r"\!\[x\]\(http\:\/\/example\.invalid\/leak\)"),
    ("<script>alert(1)</script>", r"\<script\>alert\(1\)\<\/script\>"),
    ("# title", r"\# title"),
    ("1. item", r"1\. item"),
    ("- a\n+ b", "\\- a  \n\\+ b"),
    ("> quote", r"\> quote"),
    ("a | b", r"a \| b"),
    ("$x$ ~~s~~ **b** _i_ `c`", r"\$x\$ \~\~s\~\~ \*\*b\*\* \_i\_ \`c\`"),
    ("&amp; {x}", r"\&amp\; \{x\}"),
    ("back\\slash", r"back\\slash"),
    ("    code", "&#160;&#160;&#160;&#160;code"),
    ("one\ntwo\n\nthree", "one  \ntwo\n\nthree"),
])
def test_escape_markdown_exact(raw, expected):
    assert escape_markdown(raw) == expected


def _render_markdown():
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return md.render


def _visible_text(rendered: str) -> str:
    import html
    return html.unescape(re.sub(r"<br />\n|</p>\n<p>", "\n", rendered).removeprefix("<p>").removesuffix("</p>\n"))


HOSTILE_MARKDOWN = [
    "![x](http://example.invalid/leak)", "[click](javascript:alert(1))", "<script>alert(1)</script>",
    "<img src=x onerror=alert(3)>", "<http://example.invalid>", "[ref]: http://example.invalid\n[ref]",
    "# heading\n## two", "- item\n* item\n1. item", "```\ncode\n```", "| a | b |\n|---|---|\n| 1 | 2 |",
    "**bold** _it_ ~~gone~~ `code`", "&lt;b&gt; &amp; &#60;", "***\n---", "text\n===", "\\*not\\*",
]


@pytest.mark.parametrize("raw", HOSTILE_MARKDOWN)
def test_escaped_markdown_renders_as_the_literal_text(raw):
    rendered = _render_markdown()(escape_markdown(raw))
    tags = set(re.findall(r"<(/?\w+)", rendered))
    assert tags <= {"p", "/p", "br"}, rendered  # no img, a, script, h1, ul, code, table, em …
    assert _visible_text(rendered) == raw


def test_escaped_markdown_survives_random_punctuation():
    render_md = _render_markdown()
    rng = random.Random(7)
    alphabet = string.punctuation + "ab "
    for _ in range(300):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))).strip()
        if not raw:
            continue
        rendered = render_md(escape_markdown(raw))
        assert set(re.findall(r"<(/?\w+)", rendered)) <= {"p", "/p", "br"}, (raw, rendered)
        assert _visible_text(rendered) == raw, (raw, rendered)


# ================================================================== graph_html
def small_graph(labels=("Ada", "Port Alder", "Vell River")):
    nodes = [GraphNode(f"n{i}", lab, "entity", group="person" if i == 0 else "place", tooltip=f"tip {lab}")
             for i, lab in enumerate(labels)]
    edges = [GraphEdge("e0", "n0", "n1", "triple", "born in"), GraphEdge("e1", "n1", "n2", "triple", "lies on")]
    return nodes, edges


def test_render_embeds_nodes_with_fixed_positions_and_physics_off():
    nodes, edges = small_graph()
    page = render(nodes, edges, height=400)
    got = nodes_by_id(page)
    assert list(got) == ["n0", "n1", "n2"]
    assert [got[k]["label"] for k in got] == ["Ada", "Port Alder", "Vell River"]
    assert all(n["physics"] is False and isinstance(n["x"], float) and isinstance(n["y"], float)
               for n in got.values())
    assert len({(n["x"], n["y"]) for n in got.values()}) == 3  # spread out, not stacked
    assert max(abs(v) for n in got.values() for v in (n["x"], n["y"])) <= 1100
    options = json.loads(re.search(r"var options = (\{.*?\});\n", page).group(1))
    assert options["physics"]["enabled"] is False
    assert {(e["from"], e["to"], e["label"]) for e in graph_data(page)[1]} == {("n0", "n1", "born in"),
                                                                             ("n1", "n2", "lies on")}
    assert "height: 400px" in page


def test_render_is_deterministic_and_layout_depends_on_the_graph():
    nodes, edges = small_graph()
    assert render(nodes, edges) == render(nodes, edges)
    many = [GraphNode(f"n{i}", f"node {i}", "entity") for i in range(60)]
    ring = [GraphEdge(f"e{i}", f"n{i}", f"n{(i + 1) % 60}", "triple") for i in range(60)]
    a, b = render(many, ring), render(many, ring)
    assert a == b
    star = [GraphEdge(f"s{i}", "n0", f"n{i}", "triple") for i in range(1, 60)]
    assert graph_data(render(many, star))[0] != graph_data(a)[0]


def test_render_loads_nothing_remote():
    page = render(*small_graph())
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "cdn.jsdelivr.net" not in page and "bootstrap" not in page.lower()
    assert "vis.Network" in page and len(page) > 400_000  # vis-network is inline


def test_pages_style_tooltips_themselves_instead_of_inlining_vis_networks_stylesheet():
    page = render(*small_graph())
    assert graph_html._PAGE_CSS in page and "data:image" not in page  # the stylesheet's widget images
    assert graph_html._inline_tag("style") not in page and graph_html._inline_tag("script") in page


def test_shared_vis_script_replaces_the_inline_copy_with_a_local_file(tmp_path, monkeypatch):
    inline = render(*small_graph())
    assert graph_html.share_vis_assets(tmp_path / "static")
    script, overlay = sorted((tmp_path / "static").iterdir(), key=lambda f: not f.name.startswith("vis-network-"))
    assert script.name.startswith("vis-network-") and script.name.endswith(".min.js")
    assert overlay.name.startswith("memrag-overlay-") and overlay.read_text(encoding="utf-8") == graph_html._OVERLAY_JS
    body = script.read_text(encoding="utf-8")
    assert body.strip() in inline  # the very script pyvis inlines
    shared = render(*small_graph())
    assert len(shared) < 30_000 < 400_000 < len(inline)
    assert f'<script src="app/static/{script.name}"></script>' in shared
    assert f'<script src="app/static/{overlay.name}"></script>' in shared and graph_html._OVERLAY_JS not in shared
    assert body.strip() not in shared and graph_data(shared) == graph_data(inline)
    assert graph_html.share_vis_assets(tmp_path / "elsewhere")  # already on: nothing rewritten
    assert not (tmp_path / "elsewhere").exists()


def test_shared_vis_script_falls_back_to_inline_when_the_folder_cannot_be_written(tmp_path, monkeypatch):
    blocker = tmp_path / "static"
    blocker.write_text("a file where the folder should be")
    assert not graph_html.share_vis_assets(blocker)
    assert len(render(*small_graph())) > 400_000


def test_strip_remote_loads_removes_pyvis_bootstrap_tags_and_check_safe_catches_leftovers():
    from pyvis.network import Network

    net = Network(cdn_resources="in_line")
    net.add_node("a", label="a")
    raw = net.generate_html()
    assert "cdn.jsdelivr.net" in raw  # what pyvis does on its own
    stripped = graph_html.strip_remote_loads(raw)
    assert "cdn.jsdelivr.net" not in stripped
    graph_html.check_safe(stripped)
    with pytest.raises(graph_html.UnsafeGraphHTML, match="remote"):
        graph_html.check_safe(stripped.replace("<body>", '<body><img src="https://example.invalid/x.png">'))
    with pytest.raises(graph_html.UnsafeGraphHTML, match="remote"):
        graph_html.check_safe(stripped.replace("<body>", "<body><script src='//example.invalid/x.js'></script>"))


def test_hostile_labels_stay_plain_text_inside_the_json_data():
    benign = render(*small_graph())
    nodes, edges = small_graph(HOSTILE)
    edges[0].label = HOSTILE[1]
    nodes[2].tooltip = "see <a href='http://example.invalid'>this</a>"
    nodes[0].group = HOSTILE[2]  # a group name is legend text
    page = render(nodes, edges, colours={"place": "red;background:url(//x)"})
    # the page has exactly the script tags of a benign page: nothing in the data opened or closed one
    for tag in ("<script", "</script", "<img"):
        assert page.lower().count(tag) == benign.lower().count(tag), tag
    data_lines = [line for line in page.splitlines() if "new vis.DataSet(" in line]
    assert len(data_lines) == 2 and not any("<" in line or ">" in line for line in data_lines)
    got = nodes_by_id(page)
    assert [got[f"n{i}"]["label"] for i in range(3)] == HOSTILE  # literal text, not &lt;-escaped
    assert got["n0"]["title"] == HOSTILE[0] + "\ntip " + HOSTILE[0]  # hover names the node first
    edge = edges_by_id(page)["e0"]
    assert edge["title"] == HOSTILE[1] and edge["label"] == HOSTILE[1][:29] + "…"  # long labels are clipped
    # a title containing "href" would switch pyvis to its innerHTML popup: it must stay off
    assert "popup.innerHTML" not in page
    assert got["n2"]["title"].replace("\u200b", "") == nodes[2].label + "\n" + nodes[2].tooltip
    # the legend is HTML we write: its text is escaped, and a colour that is not #rrggbb is never used
    legend_div = re.search(r'<div id="memrag-legend".*?</div>', page, re.DOTALL).group(0)
    assert "&lt;img src=x onerror=alert(3)&gt;" in legend_div and "url(//x)" not in page


def test_render_refuses_too_many_nodes_and_dangling_edges():
    too_many = [GraphNode(f"n{i}", str(i), "entity") for i in range(graph_html.MAX_NODES + 1)]
    with pytest.raises(ValueError, match="at most 600"):
        render(too_many, [])
    nodes, _ = small_graph()
    with pytest.raises(ValueError, match="'ghost'"):
        render(nodes, [GraphEdge("bad", "n0", "ghost", "triple")])


def test_render_styles_roles_gold_highlight_and_parallel_edges():
    nodes = [GraphNode("a", "A", "entity", group="person", role="seed"),
             GraphNode("b", "B", "entity", group="place", gold=True),
             GraphNode("c", "C", "chunk", role="pruned"),
             GraphNode("q", "question", "query")]
    edges = [GraphEdge("e1", "a", "b", "triple", "r1", role="valid"),
             GraphEdge("e2", "a", "b", "triple", "r2", role="pruned"),
             GraphEdge("e3", "q", "a", "activation")]
    got = render(nodes, edges, highlight={"b", "e3"})
    n, e = nodes_by_id(got), edges_by_id(got)
    assert n["a"]["shape"] == "star" and n["q"]["shape"] == "diamond" and n["c"]["shape"] == "square"
    assert n["b"]["label"] == f"{palette.GOLD_MARK} B" and n["b"]["color"]["border"] == graph_html.GOLD
    assert n["b"]["borderWidth"] > 4  # gold border, thickened by the highlight
    assert n["c"]["color"]["background"] == graph_html.DIM
    assert n["a"]["color"]["background"] == palette.TYPE_COLOURS["person"]
    assert e["e1"]["color"]["color"] == "#1a7f37" and e["e1"]["width"] > e["e2"]["width"]
    assert e["e2"]["dashes"] is True and "smooth" not in e["e1"] and e["e2"]["smooth"]["enabled"] is True
    assert e["e3"]["width"] > graph_html.EDGE_KINDS["activation"]["width"]


# ================================================================== trace fixtures
def _triple(tid, head, rel, tail, chunk):
    return PathTriple(tid, head, rel, tail, chunk)


def neuropath_trace() -> Trace:
    born = _triple(0, "Ada Brennick", "born in", "Port Alder", 0)
    knows = _triple(1, "Ada Brennick", "knows", "Miro Tann", 2)
    lure = _triple(2, "Ada Brennick", "likes", HOSTILE[0], 3)
    river = _triple(3, "Port Alder", "lies on", "Vell River", 1)
    hop1 = NeuroPathHop(1, "q", new_count=3, pruned_count=1, valid_ids=[1], expand_ids=[1], continue_=1, candidates=[
        PathCandidate("p1", 1, [born], "port alder", "Port Alder", [0], "Ada Brennick → born in → Port Alder",
                      score=0.9, rank=1, fate="valid", listed_as=1),
        PathCandidate("p2", 1, [knows], "miro tann", "Miro Tann", [2], "Ada Brennick → knows → Miro Tann",
                      score=0.5, rank=2, fate="dropped", listed_as=2),
        PathCandidate("p3", 1, [lure], "script alert 1 script", HOSTILE[0], [3], "lure", score=0.1, rank=3,
                      fate="pruned"),
    ])
    hop2 = NeuroPathHop(2, "river", new_count=1, valid_ids=[2], candidates=[
        PathCandidate("p1@h2", 1, [born], "port alder", "Port Alder", [0], "Ada Brennick → born in → Port Alder",
                      fate="dropped", listed_as=1, parent="p1", kept_from=1),
        PathCandidate("p4", 2, [born, river], "vell river", "Vell River", [0, 1], "… → lies on → Vell River",
                      score=0.8, rank=1, fate="valid", listed_as=2, parent="p1"),
    ])
    seed = NeuroPathSeed("Ada Brennick", "ada brennick", "Ada Brennick", 0.97,
                         coref=[CorefMember("ada b", "Ada B.", 0.86)])
    t = Trace("neuropath", "Which river flows by Ada Brennick's birthplace?")
    t.details["neuropath"] = NeuroPathDetail(query_entities=["Ada Brennick"], seeds=[seed], hops=[hop1, hop2],
                                  dp_chunk_ids=[0, 1])
    t.chunks = [ChunkRef(i, f"d{i}", title, "text " + title) for i, title in
                enumerate(["Ada", "Port Alder", "Miro", "Lure"])]
    t.ranked = [RankedChunk(0, 0, None, "path", "path 2"), RankedChunk(1, 1, None, "path", "path 2"),
                RankedChunk(2, 2, 0.4, "completion", "dense"), RankedChunk(3, 3, 0.1, "completion", "dense")]
    t.answer = AnswerResult("Vell River", "Vell River", context_chunk_ids=[0, 1])
    return t


def test_neuropath_hop_graph_shows_fates_seeds_and_gold():
    t = neuropath_trace()
    page, note = trace_graphs.neuropath_hop_graph(t, 1, gold_chunk_ids=[0])
    n, e = nodes_by_id(page), edges_by_id(page)
    assert set(n) == {"q", "e:ada brennick", "e:ada b", "e:port alder", "e:miro tann", "e:script alert 1 script"}
    # a coreference candidate is an entity (a dot) with its ring; the square means a passage only
    assert n["e:ada brennick"]["shape"] == "star" and n["e:ada b"]["shape"] == "dot"
    assert n["e:ada b"]["color"]["border"] == graph_html.NODE_ROLES["coref"]["border"]
    assert n["e:port alder"]["color"]["background"] == palette.FATE_COLOURS["valid"]
    assert n["e:miro tann"]["color"]["background"] == palette.FATE_COLOURS["dropped"]
    assert n["e:script alert 1 script"]["label"] == HOSTILE[0]
    assert e["t:0"]["width"] > e["t:1"]["width"] and e["t:2"]["dashes"] is True
    # gold: the triple from chunk 0 and the entities it touches are marked
    gold = palette.GOLD_MARK
    assert e["t:0"]["label"] == f"{gold} born in" and n["e:port alder"]["label"] == f"{gold} Port Alder"
    assert not n["e:miro tann"]["label"].startswith(gold)
    assert "Ada Brennick born in Port Alder" in e["t:0"]["title"] and "chunk 0 (Ada)" in e["t:0"]["title"]
    assert "#1 (valid)" in n["e:port alder"]["title"]
    assert note.startswith("Hop 1: 3 candidate paths") and "1 valid" in note and "1 pruned" in note
    assert "Showing" not in note


def test_neuropath_hop_graph_cap_keeps_the_best_paths_and_says_so():
    page, note = trace_graphs.neuropath_hop_graph(neuropath_trace(), 1, max_nodes=4)
    n = nodes_by_id(page)
    assert "e:port alder" in n and "e:script alert 1 script" not in n and "e:miro tann" not in n
    assert "Showing 1 of 3 paths" in note


def test_neuropath_overview_uses_the_relisted_copy_and_omits_pruned():
    page, note = trace_graphs.neuropath_overview(neuropath_trace())
    n, e = nodes_by_id(page), edges_by_id(page)
    assert "e:vell river" in n and "e:script alert 1 script" not in n
    # born-in is on p4 (valid) and its hop-2 copy (dropped): the best fate wins
    assert e["t:0"]["color"]["color"] == "#1a7f37"
    assert e["t:0"]["title"].endswith("on paths: #2 (valid), #1 (listed, not kept)")  # p1 itself is superseded
    assert "1 pruned paths not drawn" in note and "3 candidate paths" in note


def test_neuropath_views_reject_wrong_traces_and_hops():
    with pytest.raises(ValueError, match="no hop 3"):
        trace_graphs.neuropath_hop_graph(neuropath_trace(), 3)
    with pytest.raises(ValueError, match="not a NeuroPath trace"):
        trace_graphs.neuropath_hop_graph(Trace("dense", "q"), 1)




def step_trace(hop1: str = "dropped", hop2: str = "valid") -> Trace:
    """Seeds, hop 1 (A→B judged `hop1`), hop 2 (A→B→C judged `hop2`): the step picture reads the hops."""
    ab = PathTriple(1, "A", "r1", "B", 3)
    p1 = PathCandidate("p1", 1, [ab], "b", "B", [3], "A r1 B", fate=hop1, listed_as=1)
    p2 = PathCandidate("p2", 2, [ab, PathTriple(2, "B", "r2", "C", 4)], "c", "C", [3, 4], "A r1 B; B r2 C",
                       fate=hop2, listed_as=1, parent="p1")
    t = Trace("neuropath", "q", details={"neuropath": NeuroPathDetail(
        seeds=[NeuroPathSeed("a", "a", "A", 1.0)], hops=[NeuroPathHop(1, "q", [p1]), NeuroPathHop(2, "q", [p2])])})
    for kind in ("seeds", "hop", "hop"):
        t.add_step(kind, kind.title())
    t.nodes = [GraphNode("e:a", "A", "entity", step=0, role="seed"), GraphNode("e:b", "B", "entity", step=1),
               GraphNode("e:c", "C", "entity", step=2), GraphNode("e:d", "D", "entity", step=1, chunk_ids=[7])]
    t.edges = [GraphEdge("t:1", "e:a", "e:b", "triple", "r1", step=1, chunk_id=3, role="valid"),
               GraphEdge("t:2", "e:b", "e:c", "triple", "r2", step=2, chunk_id=4, role="valid")]
    t.steps[0].node_ids = ["e:a"]
    t.steps[1].node_ids = ["e:b", "e:d"]
    t.steps[2].node_ids = ["e:c"]
    return t


def test_step_graph_draws_only_what_each_step_knew():
    t = step_trace()
    assert trace_graphs.highlighted_nodes(t, 0) == ["e:a"]
    assert trace_graphs.highlighted_nodes(t, 1) == ["e:a", "e:b", "e:d"]
    p0, note0 = trace_graphs.step_graph(t, 0)
    p1, note1 = trace_graphs.step_graph(t, 1, gold_chunk_ids=[7])  # a gold passage known for D: starred now
    n0, n1 = nodes_by_id(p0), nodes_by_id(p1)
    assert set(n0) == {"e:a"} and set(n1) == {"e:a", "e:b", "e:d"}  # no ghosts of later steps
    assert n1["e:b"]["label"] == "B" and n1["e:d"]["label"] == f"{palette.GOLD_MARK} D"
    assert n1["e:b"]["borderWidth"] > n1["e:a"]["borderWidth"]  # the newest step is outlined
    # hop 1 listed A→B and did not keep it: drawn so at hop 1, though the trace's edge says "valid" (hop 2's)
    assert n1["e:b"]["color"]["background"] == palette.FATE_COLOURS["dropped"]
    assert edges_by_id(p1)["t:1"]["dashes"] is True and "t:2" not in edges_by_id(p1)
    n2, e2 = nodes_by_id(trace_graphs.step_graph(t, 2)[0]), edges_by_id(trace_graphs.step_graph(t, 2)[0])
    assert n2["e:b"]["color"]["background"] == palette.FATE_COLOURS["valid"] and e2["t:1"]["dashes"] is False
    assert note0 == "Step 1: Seeds. 1 node added so far: 1 entity."
    assert note1 == "Step 2: Hop. 3 nodes added so far: 3 entities. This hop's paths: 1 listed, not kept."
    with pytest.raises(ValueError, match="between 0 and 2"):
        trace_graphs.step_graph(t, 3)


def test_step_graph_cap_chooses_among_the_nodes_known_so_far():
    t = step_trace()
    pages = [trace_graphs.step_graph(t, i, max_nodes=2) for i in range(3)]
    assert set(nodes_by_id(pages[0][0])) == {"e:a"} and "Drawing" not in pages[0][1]
    assert set(nodes_by_id(pages[2][0])) == {"e:a", "e:b"}  # the seed, then the valid hub
    assert "Drawing 2 of the 4 nodes known so far" in pages[2][1]
    full = nodes_by_id(trace_graphs.step_graph(t, 2)[0])
    # coloured by fate, as on the Ask page: B and C by their valid triple, A a seed, D on no drawn path
    assert full["e:c"]["color"]["background"] == palette.FATE_COLOURS["valid"]
    assert full["e:d"]["color"]["background"] == palette.FATE_COLOURS["untouched"]


# ================================================================== memory views
NAME_VECTORS = {  # A lists B, B and C list each other: sets are not symmetric
    "Alpha": [1, 0, 0, 0, 0], "Alfa": [0.85, 0.5268, 0, 0, 0], "Alphonse": [0.6, 0.8, 0, 0, 0],
    "Zed Vell": [0, 0, 1, 0, 0], HOSTILE[0]: [0, 0, 0, 1, 0],
}


def ent(name, typ="person"):
    return {"name": name, "type": typ, "description": f"{name} in the notes", "importance": 3}


@pytest.fixture(scope="module")
def memory():
    docs = [benchmark_document("d1", "Alpha notes", "Alpha met Alfa.", "t"),
            benchmark_document("d2", "Alfa report", "Alfa mentored Alphonse and visited Zed Vell.", "t"),
            benchmark_document("d3", "Zed file", "Zed Vell wrote a script; Alfa admired Zed Vell.", "t")]
    replies = [
        {"entities": [ent("Alpha"), ent("Alfa")], "triples": [["Alpha", "met", "Alfa"]]},
        {"entities": [ent("Alfa"), ent("Alphonse"), ent("Zed Vell", "place")],
         "triples": [["Alfa", "mentored", "Alphonse"], ["Alfa", "visited", "Zed Vell"]]},
        {"entities": [ent("Zed Vell", "place"), ent(HOSTILE[0], "work")],
         "triples": [["Zed Vell", "wrote", HOSTILE[0]], ["Alfa", "admired", "Zed Vell"]]},
    ]
    return run_build(build_memory(None, docs, ScriptedLLM({"index.extract": replies}),
                                  HashEmbedder(overrides=NAME_VECTORS), IndexParams()))


def test_coref_table_lists_per_node_sets_and_asymmetry(memory):
    df = memory_graphs.coref_table(memory, top=1, threshold=0.8)
    rows = {(r["entity"], r["candidate"]): r for r in df.to_dict("records")}
    assert set(rows) == {("Alpha", "Alfa"), ("Alfa", "Alphonse"), ("Alphonse", "Alfa")}
    assert not rows[("Alpha", "Alfa")]["lists it back"]  # Alfa's own set holds Alphonse, not Alpha
    assert rows[("Alfa", "Alphonse")]["lists it back"]
    assert rows[("Alpha", "Alfa")]["similarity"] == pytest.approx(0.85, abs=1e-3)


def test_coref_threshold_preview_counts_links_per_threshold(memory):
    df = memory_graphs.coref_threshold_preview(memory, thresholds=(0.7, 0.9), top=5)
    r7, r9 = df.to_dict("records")
    assert (r7["links"], r7["nodes with candidates"], r7["mutual pairs"]) == (4, 3, 2)
    assert (r9["links"], r9["mutual pairs"]) == (2, 1)
    assert r7["weakest links"].split("; ")[0] in ("Alpha → Alfa (0.85)", "Alfa → Alpha (0.85)")
    assert "Alphonse" in r9["weakest links"] and "Alpha →" not in r9["weakest links"]


def test_coref_picture_links_each_pair_once_says_who_lists_whom_and_that_it_is_an_approximation(memory):
    pic = memory_graphs.coref_picture(memory, top=1, threshold=0.8)
    assert {n.id for n in pic.nodes} == {"e:alpha", "e:alfa", "e:alphonse"}
    assert all(n.ref == n.id[2:] and n.fate == memory.entity(n.ref).type for n in pic.nodes)
    pairs = {frozenset((e.source, e.target)): e for e in pic.edges}
    assert set(pairs) == {frozenset(("e:alpha", "e:alfa")), frozenset(("e:alfa", "e:alphonse"))}
    # alpha lists alfa; alfa and alphonse list each other: one link each, its hover says which
    assert pairs[frozenset(("e:alpha", "e:alfa"))].tooltip.startswith("Alfa is in Alpha's candidate set")
    assert len(pairs[frozenset(("e:alfa", "e:alphonse"))].tooltip.splitlines()) == 2
    assert "3 candidate links among 3 entities" in pic.note and "1 of them listing each other" in pic.note
    assert "approximation" in pic.note and "not symmetric" in pic.note
    counts = {entry.mark: entry.count for entry in pic.legend}
    assert counts["edge:coreference"] == 2 and sum(c for m, c in counts.items() if m.startswith("node:")) == 3


def test_memory_tables(memory):
    eng = tables.engrams_table(memory)
    assert len(eng) == len(memory.engrams) and set(eng["document"]) == {"Alpha notes", "Alfa report", "Zed file"}
    ch = tables.chunks_table(memory)
    assert ch["triples"].tolist() == [1, 2, 2] and ch["extraction"].tolist() == ["ok", "ok", "ok"]
    assert ch["engrams"].sum() == len(memory.engrams)


# ================================================================== tables and charts
def call(stage, p, c, seconds, *, cached=False, shared=False, key="", cached_prefix=0):
    return LLMCallRecord(stage, [{"role": "user", "content": stage}], "{}", prompt_tokens=p,
                         prompt_tokens_cached=cached_prefix, completion_tokens=c, seconds=seconds,
                         cached=cached, shared=shared, key=key)


def test_candidates_and_ranked_tables():
    t = neuropath_trace()
    df = tables.candidates_table(t.detail(NeuroPathDetail).hops[0])
    assert df["#"].tolist()[:2] == [1, 2] and df["fate"].tolist() == ["valid", "listed, not kept", "pruned"]
    assert df["score"].tolist() == [0.9, 0.5, 0.1] and df["expandable at"].tolist()[0] == "Port Alder"
    df2 = tables.candidates_table(t.detail(NeuroPathDetail).hops[1])
    assert df2.loc[0, "kept from hop"] == 1 and df2.loc[0, "expandable at"] == ""
    r = tables.ranked_table(t, gold_chunk_ids=[1], limit=3)
    assert r["position"].tolist() == [1, 2, 3] and r["gold"].tolist() == [False, True, False]
    assert r["in answer context"].tolist() == [True, True, False] and r.loc[1, "title"] == "Port Alder"


def test_tokens_by_stage_keeps_recorded_calls_with_their_counts():
    t = Trace("neuropath", "q")
    t.llm_calls = [call("query.entities", 100, 10, 1.0, shared=True, key="k1"),
                   call("neuropath.track.hop1", 200, 50, 2.0, cached_prefix=120),
                   call("neuropath.track.hop1", 210, 40, 3.0, cached=True),
                   call("answer", None, 5, 0.5)]
    df = tables.tokens_by_stage(t)
    rows = {(r["stage"], r["origin"]): r for r in df.to_dict("records")}
    track = "NeuroPath path tracking, hop 1"  # stages in words (memrag.words.stage_name)
    assert list(rows) == [("entities in the question", "fresh"), (track, "fresh"), (track, "recorded"),
                          ("answer", "fresh")]
    rec = rows[(track, "recorded")]
    assert (rec["calls"], rec["prompt tokens"], rec["completion tokens"], rec[tables.ORIGINAL_S]) == (1, 210, 40, 3.0)
    assert rows[(track, "fresh")]["cached-prefix tokens"] == 120
    assert rows[("entities in the question", "fresh")]["shared"] is True
    import pandas as pd
    assert pd.isna(rows[("answer", "fresh")]["prompt tokens"]) and pd.isna(rows[("answer", "fresh")]["total tokens"])
    calls = tables.llm_calls_table(t)
    assert calls["origin"].tolist() == ["fresh", "fresh", "recorded", "fresh"] and len(calls) == 4
    assert calls["stage"].tolist() == ["entities in the question", track, track, "answer"]


def test_totals_across_counts_shared_calls_once():
    np_t, ec_t = Trace("neuropath", "q"), Trace("ecphory", "q")
    shared = call("query.entities", 100, 10, 1.0, shared=True, key="k1")
    np_t.llm_calls = [shared, call("neuropath.track.hop1", 200, 50, 2.0), call("answer", 300, 20, 1.0)]
    ec_t.llm_calls = [LLMCallRecord(**shared.__dict__), call("answer", 300, 20, 1.0)]  # same answer text, not shared
    df = tables.totals_across([np_t, ec_t])
    rows = {r["method"]: r for r in df.to_dict("records")}  # methods by their display names
    assert (rows["NeuroPath"]["calls"], rows["NeuroPath"]["prompt tokens"]) == (3, 600)
    assert (rows["EcphoryRAG"]["calls"], rows["EcphoryRAG"]["prompt tokens"]) == (2, 400)
    everything = rows[tables.ALL_METHODS]
    assert (everything["calls"], everything["prompt tokens"], everything["completion tokens"]) == (4, 900, 100)
    assert everything[tables.ORIGINAL_S] == 5.0 and everything[tables.MADE_NOW] == 5.0
    # without a cache key, identical shared records are still recognised as one call
    np_t.llm_calls[0].key = ec_t.llm_calls[0].key = ""
    assert tables.totals_across([np_t, ec_t]).iloc[-1]["calls"] == 4


def test_tokens_chart_stacks_stages_and_hatches_recorded():
    a, b = Trace("neuropath", "q"), Trace("dense", "q")
    a.llm_calls = [call("query.entities", 100, 10, 1.0), call("answer", 300, 20, 1.0, cached=True)]
    b.llm_calls = [call("answer", 50, 5, 0.5), call("index.extract", None, 3, 0.1)]
    fig = charts.tokens_chart([a, b, a])
    assert fig.layout.barmode == "stack"
    bars = {bar.name: bar for bar in fig.data}
    assert set(bars) == {"entities in the question (fresh)", "answer (fresh)", "answer (recorded)"}
    assert list(bars["answer (recorded)"].y) == [640, None]  # two neuropath traces summed
    assert list(bars["answer (fresh)"].y) == [None, 55]
    assert list(bars["answer (fresh)"].x) == ["NeuroPath", "Dense"]  # display names, as on the cards
    assert bars["answer (recorded)"].marker.pattern.shape == "/" and bars["answer (fresh)"].marker.pattern.shape == ""
    assert bars["answer (recorded)"].marker.color == bars["answer (fresh)"].marker.color
    assert "extraction (indexing)" in fig.layout.annotations[0].text


# ================================================================== real method traces
def test_every_view_renders_real_traces_from_ask(memory):
    """The views against traces made by the methods themselves (scripted LLM), not by hand."""
    from memrag.ask import ask

    llm = ScriptedLLM({
        "query.entities": [{"entities": ["Alpha"]}],
        "neuropath.track.hop1": [{"reasoning_chain": "Alpha met Alfa.", "valid_ids": [1],
                                  "expansion_requirement": "whom Alfa visited", "expand_ids": [1], "continue": 1}],
        "neuropath.track.hop2": [{"reasoning_chain": "Alfa visited Zed Vell.", "valid_ids": [2],
                                  "expansion_requirement": "", "expand_ids": [], "continue": 0}],
        "answer": lambda messages, stage: {"reasoning": "r", "answer": "Zed Vell", "cited": [1]},
    })
    traces = ask(memory, "Whom did the person Alpha met visit?", llm=llm, embedder=HashEmbedder(overrides=NAME_VECTORS),
                 methods=["dense", "neuropath", "ecphory"])
    dense_t, np_t, ec_t = traces
    pages = [trace_graphs.neuropath_overview(np_t)[0]]
    pages += [trace_graphs.neuropath_hop_graph(np_t, h.hop)[0] for h in np_t.detail(NeuroPathDetail).hops]
    pages += [trace_graphs.step_graph(t, i)[0] for t in traces for i in range(len(t.steps))]
    for page in pages:
        graph_html.check_safe(page)
        assert graph_data(page)[0]
    hop1 = nodes_by_id(trace_graphs.neuropath_hop_graph(np_t, 1)[0])
    assert hop1["e:alpha"]["shape"] == "star" and hop1["e:alfa"]["color"]["background"] == "#1a7f37"
    assert set(trace_graphs.highlighted_nodes(np_t, len(np_t.steps) - 1)) == {n.id for n in np_t.nodes}
    # the query-entity call is billed to NeuroPath and EcphoryRAG and counted once overall
    totals = {r["method"]: r for r in tables.totals_across(traces).to_dict("records")}
    per_method = sum(totals[m]["calls"] for m in ("Dense", "NeuroPath", "EcphoryRAG"))
    assert totals[tables.ALL_METHODS]["calls"] == per_method - 1
    hop2 = np_t.detail(NeuroPathDetail).hops[1]
    assert len(tables.candidates_table(hop2)) == len(hop2.candidates)
    assert tables.ranked_table(np_t, limit=3)["position"].tolist() == [1, 2, 3]
    assert len(charts.tokens_chart(traces).data) == len({c.stage for t in traces for c in t.llm_calls})


# ================================================================== one encoder for graph data (issue 15 #1)
ORDINARY_URL_TEXT = ["Which page loads <script src=//cdn.example.org/x.js>?", "img src=//cdn.example.org/a.png",
                     "see href=//example.org/p", "line\u2028sep\u2029end", "it's \"quoted\" & <b>bold</b>",
                     "onerror=alert(1)"]


def test_ordinary_text_with_protocol_relative_urls_renders_and_stays_literal():
    nodes, edges = small_graph(ORDINARY_URL_TEXT[:3])
    nodes[0].tooltip = ORDINARY_URL_TEXT[3]
    nodes[1].tooltip = ORDINARY_URL_TEXT[4]
    edges[0].label = ORDINARY_URL_TEXT[5]
    page = render(nodes, edges, edge_titles={"e1": ORDINARY_URL_TEXT[1]})
    graph_html.check_safe(page)
    got = nodes_by_id(page)
    assert [got[f"n{i}"]["label"] for i in range(3)] == [graph_html.clip(t, graph_html.LABEL_CHARS)
                                                         for t in ORDINARY_URL_TEXT[:3]]
    assert got["n0"]["title"] == graph_html._plain(ORDINARY_URL_TEXT[0] + "\n" + ORDINARY_URL_TEXT[3]) and got["n1"]["title"] == ORDINARY_URL_TEXT[1] + "\n" + ORDINARY_URL_TEXT[4]
    assert edges_by_id(page)["e1"]["title"] == ORDINARY_URL_TEXT[1]
    data = "".join(line for line in page.splitlines() if "new vis.DataSet(" in line)
    for raw in ("src=//", "href=", "<", ">", "&", "'", "\u2028", "\u2029", "onerror="):
        assert raw not in data, raw  # the data can never look like a tag or an attribute


def test_script_json_round_trips_and_writes_no_markup_characters():
    value = {"label": "</script><script>alert(1)</script>", "t": ORDINARY_URL_TEXT, "n": [1, 2.5, None, True]}
    text = graph_html.script_json(value)
    assert json.loads(text) == value
    assert not set(text) & set("<>&'=\u2028\u2029")


def test_check_safe_looks_at_the_pages_own_tags_not_at_text():
    page = render(*small_graph())
    quoted = page.replace("<body>", "<body><p>write src=//cdn.example.org/x.js or href=//x in a note</p>", 1)
    graph_html.check_safe(quoted)  # text that mentions an address loads nothing
    for tag in ('<img src="//cdn.example.org/a.png">', "<iframe src='https://x.example'></iframe>",
                '<link rel="stylesheet" href="HTTP://x.example/a.css">', "<video poster=//x.example/p.png>",
                "<style>@import url(//x.example/a.css);</style>", '<div style="background:url(//x.example/b)">'):
        with pytest.raises(graph_html.UnsafeGraphHTML, match="remote"):
            graph_html.check_safe(page.replace("<body>", "<body>" + tag, 1))
