"""Property-based fuzzing (Hypothesis) of the views' parsers and encoders (issue 15): uploaded bytes
through the ingest reader, file names, and the graph page's data encoder and safety check.

Each upload either becomes a Document or is refused with IngestError, within a time bound; every
graph page passes its own safety check, holds no raw '<' in its data, and gives back its text.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from memrag.config import IndexParams
from memrag.index.readers import Document, SUPPORTED_SUFFIXES, read_bytes
from memrag.index.text import IngestError, safe_file_name
from memrag.trace import GraphEdge, GraphNode
from memrag.viz import graph_html
from memrag.viz.graph_html import render, script_json
from graph_page import graph_data

PARAMS = replace(IndexParams(), max_file_bytes=200_000, pdf_max_seconds=2.0)
SUFFIXES = sorted(SUPPORTED_SUFFIXES)
FAST = settings(max_examples=60, deadline=timedelta(seconds=5), suppress_health_check=[HealthCheck.too_slow])
# Any character a string can hold, lone surrogates and controls included.
ANY_TEXT = st.text(st.characters(codec=None, blacklist_categories=()), max_size=80)
MARKUP_TEXT = st.lists(st.sampled_from(list("<>/&'\"=` \n\u2028\u2029x") + [
    "<script>", "</script>", "src=//", "href=//", "onerror=", "<!--"]), max_size=12).map("".join)
LABELS = st.one_of(ANY_TEXT, MARKUP_TEXT)


def _read(name: str, data: bytes) -> None:
    try:
        doc = read_bytes(name, data, PARAMS)
    except IngestError as e:
        assert str(e), "a refusal must say why"
        return
    assert isinstance(doc, Document) and doc.text.strip() and doc.source == safe_file_name(name)


# ================================================================== uploads
@FAST
@given(st.sampled_from(SUFFIXES), st.binary(max_size=4000))
def test_arbitrary_bytes_with_any_supported_suffix_read_or_refuse(suffix, data):
    _read("upload" + suffix, data)


@FAST
@given(st.sampled_from(SUFFIXES), st.text(max_size=400), st.sampled_from(["utf-8", "utf-16", "cp1252", "latin-1"]))
def test_arbitrary_text_in_any_encoding_reads_or_refuses(suffix, text, encoding):
    _read("notes" + suffix, text.encode(encoding, errors="replace"))


@FAST
@given(st.binary(max_size=3000), st.sampled_from([b"%PDF-1.4\n", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"]))
def test_pdf_looking_garbage_reads_or_refuses(body, header):
    _read("doc.pdf", header + body + b"\n%%EOF\n")


@FAST
@given(st.lists(st.sampled_from(["<html>", "<body>", "<p>", "</p>", "<script>", "</script>", "<style>", "<!--",
                                 "-->", "<![CDATA[", "<template>", "<div hidden>", "text", "&amp;", "&#0;", "&#xd800;",
                                 "# h", "```", "\n"]), max_size=300))
def test_markup_soup_reads_or_refuses(parts):
    data = "".join(parts).encode()
    _read("page.html", data)
    _read("page.md", data)


@FAST
@given(st.text(max_size=200))
def test_any_file_name_becomes_a_plain_base_name(name):
    safe = safe_file_name(name)
    assert safe and len(safe) <= 120
    assert "/" not in safe and "\\" not in safe and not safe.startswith(".")
    assert all(ch.isalnum() or ch in "-_." for ch in safe)
    suffix = Path(name.replace("\\", "/").split("/")[-1]).suffix
    if suffix.lower() in SUPPORTED_SUFFIXES and suffix[1:].isascii() and suffix[1:].isalnum():
        assert safe.lower().endswith(suffix.lower())  # a supported type is never lost to the clean-up


# ================================================================== graph pages
@settings(max_examples=100, deadline=timedelta(seconds=2))
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                    | LABELS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(LABELS, inner, max_size=4),
                    max_leaves=20))
def test_script_json_round_trips_and_writes_no_markup_or_surrogates(value):
    text = script_json(value)
    assert json.loads(text) == value
    assert not set(text) & set("<>&'=\u2028\u2029")
    text.encode("utf-8")  # strict: no lone surrogate reaches the page


@settings(max_examples=25, deadline=timedelta(seconds=10), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(LABELS, LABELS), min_size=1, max_size=5), LABELS)
def test_any_labels_and_tooltips_make_a_safe_page_that_shows_them(texts, edge_label):
    nodes = [GraphNode(f"n{i}:{label}", label, "entity", group=tip[:10], tooltip=tip)
             for i, (label, tip) in enumerate(texts)]
    edges = [GraphEdge("e0", nodes[0].id, nodes[-1].id, "triple", edge_label)]
    page = render(nodes, edges)
    graph_html.check_safe(page)
    data = "".join(line for line in page.splitlines() if "new vis.DataSet(" in line)
    assert "<" not in data and ">" not in data
    got, got_edges = graph_data(page)
    assert [n["id"] for n in got] == [n.id for n in nodes]
    assert got_edges[0]["title"].replace("h\u200bref", "href") == graph_html._plain(edge_label).replace(
        "h\u200bref", "href")
