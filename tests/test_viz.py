"""memrag.viz: escaped text, trace and memory views (typed pictures), tables and charts.

Traces are built by hand (so every expected node, fate and count is worked out here),
memories with the real build pipeline driven by a scripted LLM and hand-made name vectors.
"""

from __future__ import annotations

import random
import re
import string

import pytest

from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.index.readers import benchmark_document
from memrag.trace import AnswerResult, ChunkRef, CorefMember, LLMCallRecord, RankedChunk, Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, NeuroPathSeed, PathCandidate, PathTriple
from memrag.viz import charts, figure, memory_graphs, tables
from memrag.viz.look import Look
from memrag.plain_text import escape_markdown
from scripted import HashEmbedder, ScriptedLLM


HOSTILE = ["<script>alert(1)</script>", "</script><script>alert(2)</script>", "<img src=x onerror=alert(3)>"]


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
    # NeuroPath's route, and every method's replay steps, as the pages draw them
    from memrag.explain.learn_picture import learn_pictures
    from memrag.methods.neuropath import picture as np_picture

    route = np_picture.picture(np_t)
    assert {"alpha", "alfa"} <= {n.ref for n in route.nodes}  # entity keys: the seed and its path's end
    assert next(n for n in route.nodes if n.ref == "alpha").role == "seed"
    for t in traces:
        steps = learn_pictures(t)
        assert len(steps) == len(t.steps)
        for i, p in enumerate(steps):
            nodes = next(tr for tr in figure.picture_figure(p, Look(), step=i).data if tr.name == "nodes")
            assert len(nodes.customdata) > 0
    assert {n.id for n in learn_pictures(np_t)[-1].nodes} >= {n.id for n in np_t.nodes}
    # the query-entity call is billed to NeuroPath and EcphoryRAG and counted once overall
    totals = {r["method"]: r for r in tables.totals_across(traces).to_dict("records")}
    per_method = sum(totals[m]["calls"] for m in ("Dense", "NeuroPath", "EcphoryRAG"))
    assert totals[tables.ALL_METHODS]["calls"] == per_method - 1
    hop2 = np_t.detail(NeuroPathDetail).hops[1]
    assert len(tables.candidates_table(hop2)) == len(hop2.candidates)
    assert tables.ranked_table(np_t, limit=3)["position"].tolist() == [1, 2, 3]
    assert len(charts.tokens_chart(traces).data) == len({c.stage for t in traces for c in t.llm_calls})


