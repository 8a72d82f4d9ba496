"""Hostile-input probes of the views, uploads and paths (issue 15): graph pages, uploaded files and
their names, indexed folders, the Evaluate page's run folders.

Uploads go through `read_uploads` (what the Memory page calls); each bad file sits in a batch
with a good one, which must still be read. Graph pages are made by the real views from a memory
built with a scripted LLM and from real method traces.
"""

from __future__ import annotations

import html
import io
import json
import time
import zlib
from dataclasses import replace

import plotly.io as pio
import pytest

from memrag.app import eval_views as ev
from memrag.config import IndexParams
from memrag.index.readers import read_bytes, read_paths, read_uploads
from memrag.index.text import IngestError
from memrag.viz import figure, look, memory_graphs
from memrag.methods.dense.picture import ranking_picture
from memrag.methods.neuropath import picture as np_picture
from memrag.methods.hipporag2 import mass_picture
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.methods.ecphory import recall

PARAMS = IndexParams()
GOOD = ("good.txt", b"A perfectly good file about Port Alder.")
HOSTILE_TEXT = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "src=//cdn.example.org/x.js",
                "a href=//example.org/p", "</script><script>alert(3)</script>"]


def _batch(bad_name: str, bad: bytes, params: IndexParams = PARAMS):
    """(the bad file's problem, the documents read) for the bad file beside a good one."""
    report = read_uploads([(bad_name, bad), GOOD], params)
    problems = {p.name: p for p in report.problems}
    assert [d.source for d in report.documents] == ["good.txt"], "the good file of the batch was lost"
    return problems[bad_name], report


def _pdf(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _pdf_bomb(expanded_mb: int = 80) -> bytes:
    """A one-page PDF whose ~80 KB content stream inflates to `expanded_mb` MB."""
    z = zlib.compressobj(6)
    block = b" " * 1_000_000
    stream = b"".join(z.compress(block) for _ in range(expanded_mb)) + z.flush()
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
                 b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"])


# ================================================================== uploads
@pytest.mark.probe("upload: a binary file (PNG bytes) named .txt", "refused as a binary file, the rest of the batch kept",
                   group="uploads")
def test_binary_upload():
    problem, _ = _batch("photo.txt", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    assert problem.fatal and problem.reason == "binary file (looks like PNG image)"


@pytest.mark.probe("upload: an empty file and a whitespace-only file", "each refused as an empty file, the rest kept",
                   group="uploads")
def test_empty_upload():
    for data in (b"", b"  \n\t \r\n"):
        problem, _ = _batch("empty.md", data)
        assert problem.fatal and problem.reason == "empty file"


@pytest.mark.probe("upload: a 25 MB text file", "refused with the size limit and its size, the rest kept",
                   group="uploads")
def test_25_mb_upload():
    data = b"word " * 5_000_000
    started = time.monotonic()
    problem, _ = _batch("big.txt", data)
    assert problem.fatal and problem.reason == "over the 5 MB limit (25.0 MB)"
    assert time.monotonic() - started < 30  # refused by its size, never decoded (a loaded machine is slow)


@pytest.mark.probe("upload: text in a code page that is not UTF-8 or Western (cp1251)",
                   "refused with 'could not decode text … save it as UTF-8', the rest kept", group="uploads")
def test_undecodable_upload():
    problem, _ = _batch("ru.txt", "Полностью кириллический текст без латиницы.".encode("cp1251"))
    assert problem.fatal and problem.reason.startswith("could not decode text") and "UTF-8" in problem.reason


@pytest.mark.probe("upload: a text file renamed .pdf", "refused as 'not a PDF file', the rest kept", group="uploads")
def test_fake_pdf_upload():
    problem, _ = _batch("report.pdf", b"Just some text pretending to be a PDF.\n" * 20)
    assert problem.fatal and problem.reason == "not a PDF file (no PDF header)"


@pytest.mark.probe("upload: a PDF bomb (80 KB that inflates to 80 MB)",
                   "refused within seconds with its own message, memory stays bounded, the rest kept",
                   group="uploads")
def test_pdf_bomb_upload():
    started = time.monotonic()
    problem, _ = _batch("bomb.pdf", _pdf_bomb())
    assert problem.fatal and "PDF" in problem.reason
    assert time.monotonic() - started < 60


@pytest.mark.probe("upload: a PDF claiming 100,000 pages", "the first pdf_max_pages are read with a warning, or a clear "
                   "refusal; never a hang", group="uploads")
def test_pdf_page_count_bomb():
    kids = b" ".join(b"3 0 R" for _ in range(2000))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
    data = _pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count 100000 >>" % kids, page])
    started = time.monotonic()
    report = read_uploads([("pages.pdf", data), GOOD], replace(PARAMS, pdf_max_seconds=5))
    assert [d.source for d in report.documents] == ["good.txt"]
    assert any(p.name == "pages.pdf" and p.fatal for p in report.problems)
    assert time.monotonic() - started < 60


@pytest.mark.probe("upload: names with '../', a NUL byte and a newline",
                   "stored under a plain base name (no path, no control character), with a warning; the text kept",
                   group="uploads")
def test_hostile_upload_names():
    names = ["../../etc/cron.d/evil.txt", "nul\x00byte.txt", "line\nbreak.md", "..\\..\\win.txt"]
    report = read_uploads([(n, f"Text of {i}.".encode()) for i, n in enumerate(names)], PARAMS)
    assert len(report.documents) == 4
    for doc in report.documents:
        assert "/" not in doc.source and "\\" not in doc.source and ".." not in doc.source
        assert not any(ord(c) < 32 for c in doc.source + doc.title)
    assert [d.source for d in report.documents] == ["evil.txt", "nulbyte.txt", "line_break.md", "win.txt"]
    warned = {p.name for p in report.problems if not p.fatal}
    assert {"../../etc/cron.d/evil.txt", "..\\..\\win.txt"} <= warned


@pytest.mark.probe("upload: a file named '....txt'", "read as a .txt file (stored as file.txt), not refused for "
                   "'no file extension'", group="uploads")
def test_dots_then_suffix_name():
    doc = read_bytes("....txt", b"Dots before the suffix.", PARAMS)
    assert doc.meta["format"] == "txt" and doc.source == "file.txt"


@pytest.mark.probe("index DIR: file and folder links inside the folder point outside it",
                   "links are not followed: each is skipped with a message, the folder's own files read",
                   group="uploads")
def test_index_does_not_follow_links(folder_with_links):
    report = read_paths([folder_with_links], PARAMS)
    assert [d.text for d in report.documents] == ["The folder's own words."]
    skipped = sorted(p.name for p in report.problems if p.reason.startswith("skipped: a link"))
    assert skipped == ["corpus/dangling.txt", "corpus/dir-link", "corpus/link.txt"]


# ================================================================== graph pages
@pytest.fixture(scope="module")
def hostile_memory():
    from memrag.index.build import build_memory, run_build
    from memrag.index.readers import benchmark_document
    from scripted import HashEmbedder, ScriptedLLM

    names = ["Ada Brennick"] + HOSTILE_TEXT
    entities = [{"name": n, "type": "work", "description": f"about {n} and img src=//cdn.example.org/a.png",
                 "importance": 3} for n in names]
    triples = [[names[i], HOSTILE_TEXT[i], names[i + 1]] for i in range(len(names) - 1)]
    docs = [benchmark_document("d1", HOSTILE_TEXT[1], "Ada Brennick wrote <script>alert(1)</script>.", "t"),
            benchmark_document("d2", HOSTILE_TEXT[2], "The page loads src=//cdn.example.org/x.js today.", "t")]
    llm = ScriptedLLM({"index.extract": lambda m, s: {"entities": entities, "triples": triples}})
    # every name's vector points the same way: they are all coreference candidates of each other
    vectors = {n: [1.0, 0.01 * i] for i, n in enumerate(names)}
    return run_build(build_memory(None, docs, llm, HashEmbedder(overrides=vectors), IndexParams()))


def _figure_text(pic) -> str:
    """Every word plotly gets for a typed picture (written names, legend entries, hover texts), each
    checked escaped, read back as the text a reader sees."""
    spec = json.loads(pio.to_json(figure.draw(pic, look.Look(label_all=True)).figure))  # every name written
    words = [a["text"] for a in spec["layout"].get("annotations", [])] + [t.get("name") or "" for t in spec["data"]]
    words += [h for t in spec["data"] for h in (t.get("hovertext") or [])]
    for w in words:  # plotly reads <b>, <a href>, <br> and &lt; &gt; &amp; in its words: all escaped
        assert "<" not in w and ">" not in w, w
    return html.unescape("\n".join(words))


@pytest.mark.probe("coreference picture (plotly): <script>, onerror= and src=// in names as coreference candidates",
                   "every word the figure writes (names, hover, legend) escaped; read back as the literal text",
                   group="graph pages")
def test_coreference_graph_page(hostile_memory):
    pic = memory_graphs.coref_picture(hostile_memory, top=5, threshold=0.5)
    assert pic.edges, "no coreference links were drawn"
    shown = _figure_text(pic)
    for text in HOSTILE_TEXT[:3]:
        assert text in shown, text


@pytest.fixture(scope="module")
def hostile_traces(hostile_memory):
    from memrag.ask import ask
    from scripted import HashEmbedder, ScriptedLLM

    track = {"reasoning_chain": HOSTILE_TEXT[0], "valid_ids": [1], "expansion_requirement": HOSTILE_TEXT[2],
             "expand_ids": [1], "continue": 0}
    llm = ScriptedLLM({"query.entities": lambda m, s: {"entities": ["Ada Brennick", HOSTILE_TEXT[2]]},
                       "neuropath.track": lambda m, s: track,
                       "hipporag2.recognition": lambda m, s: {"keep": [1, 2, 3]},
                       "answer": lambda m, s: {"reasoning": HOSTILE_TEXT[1], "answer": HOSTILE_TEXT[0], "cited": [1]}})
    question = "Which page loads <script src=//cdn.example.org/x.js>?"
    # the hash embedder puts the query entities far from every node: no seed floor, so paths are tracked
    traces = ask(hostile_memory, question, llm=llm, embedder=HashEmbedder(),
                 methods=["neuropath", "ecphory", "hipporag2", "dense"], params={"neuropath": {"seed_floor": 0.0}})
    return {t.method: t for t in traces}, question


@pytest.mark.probe("NeuroPath's route (plotly): a trace over those names, asked <script src=//…>?",
                   "every hop's route and the whole route: every word escaped, names read back as the literal text",
                   group="graph pages")
def test_neuropath_graph_pages(hostile_traces):
    traces, question = hostile_traces
    t = traces["neuropath"]
    hops = [h.hop for h in t.detail(NeuroPathDetail).hops]
    assert hops
    for upto in hops:
        _figure_text(np_picture.picture(t, upto=upto))
    assert HOSTILE_TEXT[0] in _figure_text(np_picture.picture(t))


@pytest.mark.probe("EcphoryRAG's picture (plotly): a trace over those names, a cue and the question hostile",
                   "every step's words escaped; the cue and the question read back as the literal text",
                   group="graph pages")
def test_ecphory_graph_pages(hostile_traces):
    traces, question = hostile_traces
    t = traces["ecphory"]
    assert t.steps
    for i in range(len(t.steps)):
        shown = _figure_text(recall.picture(t, upto=i))
        assert HOSTILE_TEXT[2] in shown and question in shown, i


@pytest.mark.probe("graph page: a HippoRAG 2 trace over those names, asked <script src=//…>?",
                   "its PageRank picture (plotly) drawn with every name, relation and the question as literal text",
                   group="graph pages")
def test_hipporag2_graph_page(hostile_traces):
    traces, question = hostile_traces
    t = traces["hipporag2"]
    assert not t.detail(HippoRAG2Detail).fallback_dense, "recognition kept no fact: no walk to draw"
    pic = mass_picture.picture(t, gold_answers=[HOSTILE_TEXT[0]])
    shown = _figure_text(pic)
    named = [n.label for n in pic.nodes if n.kind == "entity"]
    assert any(x in name for name in named for x in HOSTILE_TEXT[:3]), named  # a hostile name is drawn
    for name in named:  # written whole, or its first words where it is long
        assert figure.short(name) in shown, name
    assert question in shown and f"{HOSTILE_TEXT[0]} (gold answer)" in named


@pytest.mark.probe("graph page: a dense trace of the question 'Which page loads <script src=//cdn.example.org/x.js>?'",
                   "drawn (plotly) with the question and passage names as literal text", group="graph pages")
def test_dense_graph_page(hostile_traces):
    traces, question = hostile_traces
    assert question in _figure_text(ranking_picture(traces["dense"]))


# ================================================================== the Evaluate page's run folders
@pytest.mark.probe("Evaluate page: 'Open a finished run' typed ~, /etc, /proc/self, ../.. and a link out",
                   f"refused as outside the app's run folders (unless {ev.RUN_PATHS_ENV}=1), saying nothing about "
                   "the path", group="app")
def test_typed_run_folders_stay_inside(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(ev.RUN_PATHS_ENV, raising=False)
    ev.runs_dir().mkdir(parents=True)
    (ev.runs_dir() / "link").symlink_to(tmp_path, target_is_directory=True)
    for typed in ("~", "~root", "/etc", "/proc/self", "../..", "link", str(tmp_path), "a\x00b"):
        with pytest.raises(ValueError, match="outside this app's run folders"):
            ev.typed_run_folder(typed)
    assert ev.typed_run_folder("mine") == (ev.runs_dir() / "mine").resolve()


@pytest.mark.probe("Evaluate page: a summary.json that is a list, has wrong types, lacks keys or nests 100,000 deep",
                   "a clear 'not an evaluation summary' / 'nested too deeply' message, never AttributeError",
                   group="app")
def test_malformed_summaries(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.jsonl").write_text("")
    for text in ("[1, 2]", "null", '{"stamp": [], "scope": 1, "methods": {}, "indexing": 3, "paired": {}}',
                 '{"stamp": {}, "scope": "pooled", "methods": {"dense": {"n": "x"}}, "indexing": {}, "paired": {}}',
                 "[" * 100_000 + "]" * 100_000):
        (folder / "summary.json").write_text(text)
        with pytest.raises(ValueError, match="summary"):
            ev.load_run(folder)
