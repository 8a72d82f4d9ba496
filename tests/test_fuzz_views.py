"""Property-based fuzzing (Hypothesis) of the views' parsers and encoders (issue 15): uploaded bytes
through the ingest reader, file names, and the words the picture renderer gives plotly.

Each upload either becomes a Document or is refused with IngestError, within a time bound; every
word of a drawn picture holds no raw '<' or '>' and gives back its text.
"""

from __future__ import annotations

import html
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from memrag.config import IndexParams
from memrag.index.readers import Document, SUPPORTED_SUFFIXES, read_bytes
from memrag.index.text import IngestError, safe_file_name
from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.viz import figure
from memrag.viz.look import Look

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


# ================================================================== typed pictures
@settings(max_examples=25, deadline=timedelta(seconds=10), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(LABELS, LABELS), min_size=1, max_size=5), LABELS)
def test_any_labels_and_tooltips_are_drawn_as_text_that_shows_them(texts, relation):
    """Every word the renderer gives plotly (written names, relations, hover text, legend) has its
    <, > and & escaped, so plotly reads no tag in it, and unescapes to what it stands for."""
    nodes = tuple(PictureNode(f"n{i}", label or "x", labelled=True, tooltip=tip, layer=i % 2)
                  for i, (label, tip) in enumerate(texts))
    edges = (PictureEdge("e0", nodes[0].id, nodes[-1].id, relation=relation, bold=True, tooltip=relation),)
    fig = figure.picture_figure(Picture("fuzz", nodes, edges, (LegendEntry("node:seed", relation or "x", 1),)),
                                Look(label_all=True), height=300)
    hover = [h for t in fig.data if t.hovertext is not None for h in t.hovertext]
    words = [a.text for a in fig.layout.annotations] + [t.name for t in fig.data if t.name] + hover
    assert not any("<" in w or ">" in w for w in words), words
    assert {html.unescape(h) for h in hover} >= {tip or label or "x" for label, tip in texts}
