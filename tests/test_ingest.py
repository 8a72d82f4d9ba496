"""Tests for memrag.index.text, .readers and .chunk: reading each format, refusing bad files, duplicates, ids, chunking."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from pathlib import Path

import pytest

from memrag.index import readers
from memrag.config import IndexParams
from memrag.index.chunk import chunk_document, estimate_chunks
from memrag.index.readers import Document, benchmark_document, read_bytes, read_paths, read_uploads
from memrag.index.text import IngestError, count_words, normalise_text, safe_file_name

PARAMS = IndexParams()


# ---------------------------------------------------------------------------
# Fixture builders


def make_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal valid PDF: one Helvetica text line per string; a page with no strings has
    only a filled rectangle (no text layer)."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    objects: list[bytes] = []  # object n is objects[n-1]
    n_pages = len(pages)
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        if lines:
            ops = ["BT /F1 12 Tf 14 TL 72 720 Td"] + [f"({esc(line)}) Tj T*" for line in lines] + ["ET"]
        else:
            ops = ["0.5 g 72 72 200 200 re f"]
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_ids[i] + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_ref = ""
    if title is not None:
        objects.append(f"<< /Title ({esc(title)}) >>".encode("latin-1"))
        info_ref = f" /Info {len(objects)} 0 R"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for off in offsets:
        out.write(f"{off:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info_ref} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def encrypt_pdf(data: bytes, password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def prose(paragraphs: int, sentences: int, words: int = 9, tag: str = "") -> str:
    """Paragraphs of numbered, distinct sentences, each `words` words long."""
    out = []
    k = 0
    for p in range(paragraphs):
        sents = []
        for _ in range(sentences):
            k += 1
            filler = " ".join(f"w{tag}{k}x{j}" for j in range(words - 2))
            sents.append(f"Sentence{tag} {k} {filler}.")
        out.append(" ".join(sents))
    return "\n\n".join(out)


def file_doc(text: str, doc_id: str = "d") -> Document:
    return Document(doc_id=doc_id, title="T", text=text, source=f"{doc_id}.txt", kind="file", meta={})


# ---------------------------------------------------------------------------
# Formats


def test_txt_is_normalised_and_titled_from_stem():
    raw = "Cafe\u0301 line  \r\nsecond\x07 line\t\r\n\r\n\r\n\r\nlast\x1bx\n\n\n".encode("utf-8")
    doc = read_bytes("alice_notes.txt", raw, PARAMS)
    assert doc.text == "Café line\nsecond line\n\nlastx"
    assert doc.title == "alice notes"
    assert doc.doc_id == "alice-notes"
    assert (doc.source, doc.kind, doc.meta["format"]) == ("alice_notes.txt", "file", "txt")
    assert doc.meta["bytes"] == len(raw)


def test_markdown_headings_lose_hashes_but_code_comments_stay():
    md = "Intro line\n\n## Getting *started* ##\n\nBody text.\n\n```python\n# a comment\nx = 1\n```\n\n# Second\n"
    doc = read_bytes("guide.markdown", md.encode(), PARAMS)
    assert doc.title == "Getting *started*"
    lines = doc.text.split("\n")
    assert "Getting *started*" in lines and "Second" in lines
    assert "# a comment" in lines  # inside a fence: not a heading
    assert not any(line.startswith("##") for line in lines)
    assert "#hashtag" in read_bytes("t.md", b"#hashtag is no heading", PARAMS).text


def test_markdown_without_heading_uses_stem_and_keeps_hostile_text():
    md = "<script>alert('x')</script> and [link](javascript:evil) and <img onerror=x>"
    doc = read_bytes("raw-notes.md", md.encode(), PARAMS)
    assert doc.title == "raw-notes"
    assert doc.text == md  # kept as text, not interpreted


def test_html_visible_text_only_with_title_and_block_breaks():
    html = """<!DOCTYPE html><html><head><title>  The   Page </title>
    <style>.x { color: red }</style><script>var secret = "HEADSCRIPT";</script>
    <meta name="description" content="METACONTENT"></head>
    <body><h1>Heading</h1><p>First <b>bold</b>
    paragraph.</p><p>Second<br>line two</p>
    <script>document.write("BODYSCRIPT")</script><noscript>NOSCRIPT</noscript>
    <template>TEMPLATE</template><div hidden>HIDDEN</div><span style="display: none">GONE</span>
    <!-- COMMENT --><ul><li>one</li><li>two</li></ul>
    <p>&lt;script&gt;alert(1)&lt;/script&gt; shown as text</p>
    <pre>def f():
    return 1</pre></body></html>"""
    doc = read_bytes("page.html", html.encode(), PARAMS)
    assert doc.title == "The Page"
    for absent in ("HEADSCRIPT", "BODYSCRIPT", "color", "NOSCRIPT", "TEMPLATE", "HIDDEN", "GONE", "COMMENT", "METACONTENT", "The Page"):
        assert absent not in doc.text, absent
    lines = doc.text.split("\n")
    assert lines[0] == "Heading"
    assert "First bold paragraph." in lines
    assert "Second" in lines and "line two" in lines
    assert "one" in lines and "two" in lines
    assert "<script>alert(1)</script> shown as text" in lines
    assert "def f():\n    return 1" in doc.text  # <pre> keeps its line structure
    assert doc.meta["format"] == "html"


def test_htm_without_title_uses_stem_and_no_visible_text_is_refused():
    doc = read_bytes("my_page.htm", b"<p>Just this.</p>", PARAMS)
    assert (doc.title, doc.text) == ("my page", "Just this.")
    with pytest.raises(IngestError, match="no visible text"):
        read_bytes("s.html", b"<script>only()</script><style>p{}</style>", PARAMS)


def test_pdf_text_layer_and_metadata_title():
    data = make_pdf([["Alpha page one says hello."], ["Beta (page two) says bye."]], title="Quarterly Report")
    doc = read_bytes("report.pdf", data, PARAMS)
    assert doc.title == "Quarterly Report"
    assert "Alpha page one says hello." in doc.text
    assert "Beta (page two) says bye." in doc.text
    assert doc.text.index("Alpha") < doc.text.index("Beta")
    assert doc.meta["pages"] == 2 and doc.meta["pages_read"] == 2 and doc.meta["format"] == "pdf"
    assert "truncated" not in doc.meta
    assert read_bytes("no_title.pdf", make_pdf([["x y z"]]), PARAMS).title == "no title"


def test_pdf_without_text_layer_is_refused():
    with pytest.raises(IngestError, match=r"PDF has no text layer \(scanned\?\)"):
        read_bytes("scan.pdf", make_pdf([[], []]), PARAMS)


def test_pdf_page_limit_reads_first_pages_and_batch_warns():
    data = make_pdf([["First page text."], ["Second page text."], ["Third page text."]])
    params = replace(PARAMS, pdf_max_pages=2)
    report = read_uploads([("long.pdf", data)], params)
    (doc,) = report.documents
    assert "Second page text." in doc.text and "Third" not in doc.text
    assert doc.meta["pages_read"] == 2
    (warning,) = report.problems
    assert not warning.fatal and "first 2 of 3 pages" in warning.reason


def test_pdf_time_limit_checked_between_pages(monkeypatch):
    clock = iter(range(1000))  # every reading of the clock is one second later
    monkeypatch.setattr(readers.time, "monotonic", lambda: float(next(clock)))
    data = make_pdf([["Page one."], ["Page two."], ["Page three."]])
    doc = read_bytes("slow.pdf", data, replace(PARAMS, pdf_max_seconds=1.5))
    assert "Page one." in doc.text and "Page two." not in doc.text
    assert "time limit" in doc.meta["truncated"]
    with pytest.raises(IngestError, match="took too long"):
        read_bytes("slow.pdf", data, replace(PARAMS, pdf_max_seconds=0.5))


def test_encrypted_pdfs():
    plain = make_pdf([["Secret text inside."]])
    with pytest.raises(IngestError, match="password-protected"):
        read_bytes("locked.pdf", encrypt_pdf(plain, "hunter2"), PARAMS)
    # An empty open password only restricts permissions: the text is readable.
    assert "Secret text inside." in read_bytes("perm.pdf", encrypt_pdf(plain, ""), PARAMS).text


def test_damaged_and_fake_pdfs_are_refused():
    with pytest.raises(IngestError, match="could not read PDF"):
        read_bytes("broken.pdf", b"%PDF-1.4\n" + b"garbage \x01\x02 " * 50, PARAMS)
    with pytest.raises(IngestError, match=r"not a PDF file \(looks like PNG image\)"):
        read_bytes("image.pdf", PNG, PARAMS)


# ---------------------------------------------------------------------------
# Decoding


@pytest.mark.parametrize(
    "data, encoding",
    [
        ("\ufeffhéllo wörld".encode("utf-8"), "utf-8-sig"),
        ("\ufeffhéllo wörld".encode("utf-16-le"), "utf-16"),
        ("\ufeffhéllo wörld".encode("utf-16-be"), "utf-16"),
        ("héllo wörld".encode("cp1252"), "cp1252"),
    ],
)
def test_decodings(data, encoding):
    doc = read_bytes("t.txt", data, PARAMS)
    assert doc.text == "héllo wörld"
    assert doc.meta["encoding"] == encoding


def test_cp1252_smart_quotes():
    assert read_bytes("q.txt", b"\x93quoted\x94 \x96 dash", PARAMS).text == "\u201cquoted\u201d \u2013 dash"


def test_undecodable_texts():
    cyrillic = "Привет, как дела? Это текст в другой кодировке.".encode("cp1251")
    with pytest.raises(IngestError, match="could not decode text"):
        read_bytes("ru.txt", cyrillic, PARAMS)
    with pytest.raises(IngestError, match="could not decode text"):
        read_bytes("bad16.txt", b"\xff\xfeh\x00\x00\xd8", PARAMS)  # lone surrogate after a UTF-16 BOM


# ---------------------------------------------------------------------------
# A batch of bad files: each its own message, the good ones still read


def test_bad_files_each_get_their_own_message_and_good_ones_are_read(tmp_path):
    params = replace(PARAMS, max_file_bytes=7_200)
    outside = tmp_path / "victim.txt"
    outside.write_text("ON DISK")
    uploads = [
        ("good.txt", b"A perfectly good file."),
        ("picture.txt", PNG),
        ("nul.txt", b"text with a \x00 NUL inside"),
        ("controls.md", bytes(range(1, 9)) * 40),
        ("empty.txt", b""),
        ("blank.md", b"  \n\t\r\n  "),
        ("ru.txt", "Полностью кириллический текст без латиницы.".encode("cp1251")),
        ("huge.txt", b"word " * 2000),
        ("scan.pdf", make_pdf([[]])),
        ("../../etc/evil.txt", b"Came with path parts."),
        (str(outside), b"Bytes win over the disk."),
        ("letter.docx", b"PK\x03\x04 whatever"),
        ("disguised.txt", make_pdf([["Hidden pdf"]])),
        ("good.md", b"# Notes\n\nStill read."),
    ]
    report = read_uploads(uploads, params)
    reasons = {p.name: p for p in report.problems}
    expected = {
        "picture.txt": "binary file (looks like PNG image)",
        "nul.txt": "binary file (contains NUL bytes)",
        "controls.md": "binary file (many control bytes)",
        "empty.txt": "empty file",
        "blank.md": "empty file",
        "huge.txt": "over the 7.2 KB limit (10.0 KB)",
        "scan.pdf": "PDF has no text layer (scanned?)",
        "letter.docx": "unsupported type .docx; use .txt, .md, .pdf or .html",
        "disguised.txt": "binary file (looks like PDF document; rename it to .pdf)",
    }
    for name, reason in expected.items():
        assert reasons[name].reason == reason and reasons[name].fatal, name
    assert reasons["ru.txt"].reason.startswith("could not decode text") and reasons["ru.txt"].fatal
    path_warning = reasons["../../etc/evil.txt"]
    assert not path_warning.fatal and path_warning.reason == "name has path parts; stored as 'evil.txt'"
    assert not reasons[str(outside)].fatal

    docs = {d.source: d for d in report.documents}
    assert set(docs) == {"good.txt", "evil.txt", "victim.txt", "good.md"}
    assert docs["evil.txt"].text == "Came with path parts."
    assert docs["victim.txt"].text == "Bytes win over the disk."  # the name never opened a file
    assert outside.read_text() == "ON DISK"
    assert docs["good.md"].title == "Notes"
    assert report.duplicates == []


def test_size_message_never_rounds_to_the_limit():
    with pytest.raises(IngestError, match=r"over the 5 MB limit \(7\.2 MB\)"):
        read_bytes("big.txt", b"a" * 7_200_000, PARAMS)
    with pytest.raises(IngestError, match=r"over the 5 MB limit \(5,000,001 bytes\)"):
        read_bytes("edge.txt", b"a" * 5_000_001, PARAMS)


def test_unsupported_and_suffixless_names():
    with pytest.raises(IngestError, match=r"unsupported type \.exe"):
        read_bytes("tool.EXE", b"MZ", PARAMS)
    with pytest.raises(IngestError, match="no file extension"):
        read_bytes("/etc/passwd", b"root:x:0:0", PARAMS)
    assert read_bytes("NOTES.TXT", b"upper case suffix", PARAMS).meta["format"] == "txt"


@pytest.mark.parametrize(
    "given, safe",
    [
        ("../x.txt", "x.txt"),
        ("/etc/passwd", "passwd"),
        ("a\\b.txt", "b.txt"),
        ("..hidden.md", "hidden.md"),
        ("my <b>notes?.txt", "my_b_notes_.txt"),
        ("x/<b>y</b>.txt", "b_.txt"),
        ("..", "file"),
        (".txt", "txt"),  # a dot file has no suffix
        ("._.md", "file.md"),
        ("....txt", "file.txt"),  # dots, then a suffix: the suffix counts (as Python's Path reads it)
        ("...notes.md", "notes.md"),
        ("Übersicht 2024.md", "Übersicht_2024.md"),
    ],
)
def test_safe_file_names(given, safe):
    assert safe_file_name(given) == safe


# ---------------------------------------------------------------------------
# Duplicates and ids


def test_duplicates_skipped_in_batch_and_against_existing():
    uploads = [
        ("a.txt", b"Same words here."),
        ("b.txt", b"Different words."),
        ("a.txt", b"Same words here."),  # same name, same title and text
        ("copy/a.txt", b"Same words here."),  # same title after the path is dropped
        ("c.txt", b"Old content."),
    ]
    report = read_uploads(uploads, PARAMS, existing={("c", "Old content.")})
    assert [d.source for d in report.documents] == ["a.txt", "b.txt"]
    assert report.duplicates == ["a.txt", "copy/a.txt", "c.txt"]
    assert report.problems == []  # a skipped duplicate gets no "stored as" warning
    # Same text under another title is not a duplicate.
    again = read_uploads([("a.txt", b"Same words here."), ("z.txt", b"Same words here.")], PARAMS)
    assert len(again.documents) == 2 and again.duplicates == []


def test_doc_ids_unique_and_safe():
    uploads = [
        ("x.txt", b"one"),
        ("x.md", b"two"),
        ("X.txt", b"three"),
        ("x-2.txt", b"four"),
        ("дневник.txt", b"five"),
        ("<script>alert(1)</script>.txt", b"six"),
        ("...", b"seven"),
    ]
    report = read_uploads(uploads, PARAMS)
    ids = [d.doc_id for d in report.documents]
    fatal = [p.name for p in report.problems if p.fatal]
    assert fatal == ["..."]  # no suffix: refused
    assert len(ids) == 6 and len(set(ids)) == 6
    assert ids[:4] == ["x", "x-2", "x-3", "x-2-2"]
    for doc_id in ids:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc_id), doc_id
    # A non-Latin name gets a stable id, the same on every read.
    assert ids[4] == read_bytes("дневник.txt", b"five", PARAMS).doc_id


def test_a_name_of_dots_with_a_suffix_is_read_as_that_type():
    doc = read_bytes("....txt", b"Dots before the suffix.", PARAMS)
    assert doc.meta["format"] == "txt" and doc.source == "file.txt"


def test_read_paths_never_follows_links_out_of_a_folder(folder_with_links):
    root = folder_with_links
    report = read_paths([root], PARAMS)
    assert [d.text for d in report.documents] == ["The folder's own words."]
    problems = {p.name: p.reason for p in report.problems}
    for name in ("link.txt", "dir-link", "dangling.txt"):
        assert problems[str(Path("corpus") / name)].startswith("skipped: a link"), problems
    # a link named on its own is the user's explicit choice and is read
    assert [d.text for d in read_paths([root / "link.txt"], PARAMS).documents] == ["Secret words outside the folder."]


def test_read_paths_walks_folders_and_reports_skips(tmp_path):
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config.txt").write_text("not me")
    (root / "a.txt").write_text("Alpha text.")
    (root / "sub" / "a.txt").write_text("Another alpha.")
    (root / "sub" / "b.md").write_text("# Bee\n\nBee text.")
    (root / "sub" / "page.html").write_bytes(b"<title>Web</title><p>Web text.</p>")
    (root / "sub" / "doc.pdf").write_bytes(make_pdf([["Pdf text."]]))
    (root / "c.docx").write_bytes(b"PK\x03\x04")
    (root / ".secret.txt").write_text("hidden")
    (root / "big.txt").write_text("x" * 1001)
    (root / "dup.txt").write_text("Alpha text.")  # differs in title: kept
    single = tmp_path / "single.md"
    single.write_text("Single file.")
    params = replace(PARAMS, max_file_bytes=1000)

    report = read_paths([root, single, tmp_path / "missing.txt"], params)
    got = {d.source: d for d in report.documents}
    assert set(got) == {"a.txt", "b.md", "page.html", "doc.pdf", "dup.txt", "single.md"} and len(report.documents) == 7
    assert got["b.md"].title == "Bee" and got["page.html"].title == "Web" and got["doc.pdf"].text == "Pdf text."
    assert len({d.doc_id for d in report.documents}) == 7
    assert all(d.kind == "file" for d in report.documents)
    problems = {p.name: p for p in report.problems}
    assert problems[str(Path("corpus") / "c.docx")].reason.startswith("skipped: unsupported type .docx")
    assert problems[str(Path("corpus") / "big.txt")].reason == "over the 1 KB limit (1,001 bytes)"
    assert problems[str(tmp_path / "missing.txt")].reason == "not found"
    hidden = problems[str(root)]
    assert not hidden.fatal and "skipped 2 hidden" in hidden.reason
    assert not any("config" in p.name or "secret" in p.name for p in report.problems)
    assert all(d.kind == "sample" for d in read_paths([single], PARAMS, kind="sample").documents)


# ---------------------------------------------------------------------------
# Chunking


def _overlap_words(prev: str, nxt: str, limit: int) -> int:
    """Largest k ≤ limit with the first k words of `nxt` equal to the last k of `prev`."""
    a, b = prev.split(), nxt.split()
    return max((k for k in range(1, limit + 1) if a[-k:] == b[:k]), default=0)


def test_chunks_respect_bounds_overlap_and_sentences():
    params = replace(PARAMS, chunk_words=60, chunk_overlap_words=15)
    doc = file_doc(prose(paragraphs=12, sentences=5, words=9))
    chunks = chunk_document(doc, params)
    assert len(chunks) > 5
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.doc_id == "d" and c.title == "T" and c.text.strip() for c in chunks)
    for c in chunks:
        assert count_words(c.text) <= 60
        assert c.text.startswith("Sentence ") and c.text.endswith(".")  # whole sentences only
    for prev, nxt in zip(chunks, chunks[1:]):
        k = _overlap_words(prev.text, nxt.text, 15)
        assert k >= 9, (prev.text, nxt.text)  # at least one whole 9-word sentence repeated
    assert estimate_chunks([doc, doc], params) == 2 * len(chunks)


def test_no_sentence_is_lost():
    params = replace(PARAMS, chunk_words=50, chunk_overlap_words=10)
    text = prose(paragraphs=7, sentences=6, words=7) + "\n\nA list:\n- item one\n- item two\n" + prose(3, 4, 13, tag="b")
    doc = file_doc(normalise_text(text))
    chunks = chunk_document(doc, params)
    sentences = re.findall(r"Sentence\w* \d+ [^.]*\.", doc.text)
    assert len(sentences) == 7 * 6 + 3 * 4
    for s in sentences + ["- item one", "- item two", "A list:"]:
        assert any(s in c.text for c in chunks), s
    assert all(count_words(c.text) <= 50 for c in chunks)


def test_paragraph_boundaries_preferred_over_filling():
    params = replace(PARAMS, chunk_words=100, chunk_overlap_words=0)
    # Paragraphs of 60 words: two never fit, so each chunk should be exactly one paragraph.
    text = prose(paragraphs=5, sentences=6, words=10)
    paragraphs = text.split("\n\n")
    chunks = chunk_document(file_doc(text), params)
    assert [c.text for c in chunks] == paragraphs


def test_sentence_boundary_used_within_long_paragraph():
    params = replace(PARAMS, chunk_words=40, chunk_overlap_words=0)
    text = prose(paragraphs=1, sentences=12, words=10)
    chunks = chunk_document(file_doc(text), params)
    assert [count_words(c.text) for c in chunks] == [40, 40, 40]
    assert all(c.text.endswith(".") and c.text.startswith("Sentence") for c in chunks)


def test_abbreviations_do_not_end_sentences():
    params = replace(PARAMS, chunk_words=12, chunk_overlap_words=0)
    # A wrong cut after "Prof." would let that one word join the first chunk.
    text = "Dr. Smith met Mr. J. R. Jones at St. Paul. Prof. Lee said it was very late then."
    chunks = [c.text for c in chunk_document(file_doc(text), params)]
    assert chunks == ["Dr. Smith met Mr. J. R. Jones at St. Paul.", "Prof. Lee said it was very late then."]


def test_overlong_sentence_split_by_words_with_overlap():
    params = replace(PARAMS, chunk_words=50, chunk_overlap_words=10)
    words = [f"tok{i}" for i in range(500)]
    chunks = chunk_document(file_doc(" ".join(words)), params)
    assert len(chunks) > 1 and all(count_words(c.text) <= 50 for c in chunks)
    covered = {w for c in chunks for w in c.text.split()}
    assert covered == set(words)
    for prev, nxt in zip(chunks, chunks[1:]):
        assert _overlap_words(prev.text, nxt.text, 10) == 10


def test_cjk_text_without_spaces_is_bounded():
    params = replace(PARAMS, chunk_words=30, chunk_overlap_words=5)
    text = "".join(f"今日は天気が良いです{i}。" for i in range(40))
    chunks = chunk_document(file_doc(text), params)
    assert len(chunks) > 3 and all(count_words(c.text) <= 30 for c in chunks)
    assert all(f"良いです{i}。" in "".join(c.text for c in chunks) for i in range(40))


def test_short_document_is_one_chunk():
    doc = file_doc("Just a short note.\n\nTwo paragraphs.")
    assert [c.text for c in chunk_document(doc, PARAMS)] == [doc.text]
    assert estimate_chunks([doc], PARAMS) == 1


def test_benchmark_passage_never_split():
    text = " ".join(f"word{i}" for i in range(950)) + ". " + prose(3, 5)
    doc = benchmark_document("2wiki-17", "  Some   Title ", text, "2wikimultihopqa")
    assert (doc.kind, doc.source, doc.title, doc.doc_id) == ("benchmark", "benchmark:2wikimultihopqa", "Some Title", "2wiki-17")
    params = replace(PARAMS, chunk_words=50, chunk_overlap_words=10)
    chunks = chunk_document(doc, params)
    assert len(chunks) == 1 and chunks[0].text == doc.text and count_words(doc.text) > 900
    # The same text as an uploaded file is split: the rule depends on the kind.
    assert len(chunk_document(replace(doc, kind="file"), params)) > 1
    assert estimate_chunks([doc], params) == 1


def test_normalise_text_rules():
    raw = "\ufeffA\u0301\r\nb \t \r\n\r\n\r\n \t \nc\x0c\u2028d\x1b[0m\n\n"
    assert normalise_text(raw) == "Á\nb\n\nc\n\nd[0m"


def test_text_without_spaces_is_still_bounded():
    params = replace(PARAMS, chunk_words=40, chunk_overlap_words=5)
    blob = "A" * 10_000  # e.g. base64 pasted into a note: one "word" by whitespace alone
    chunks = chunk_document(file_doc(f"Intro sentence here. {blob} Outro."), params)
    assert len(chunks) > 1
    assert all(count_words(c.text) <= 40 and len(c.text) <= 40 * 51 for c in chunks)
    assert "".join(c.text for c in chunks).count("A") >= 10_000
