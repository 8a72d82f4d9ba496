"""Read documents (txt, md, pdf, html, benchmark passages), normalise their text, chunk them.

Every refusal is an `IngestError` whose message is meant for the user; the batch readers
(`read_paths`, `read_uploads`) turn refusals into `IngestProblem`s and keep reading the rest.
Document content is only ever treated as text: HTML is reduced to its visible text, and
nothing else (markdown, scripts) is interpreted.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import re
import stat
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from memrag.config import IndexParams
from memrag.textsafe import slug

SUPPORTED_SUFFIXES: dict[str, str] = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
}
_SUPPORTED_HINT = "use .txt, .md, .pdf or .html"
_TITLE_MAX_CHARS = 200


class IngestError(ValueError):
    """A file was refused; the message says why, in words meant for the user."""


@dataclass
class Document:
    doc_id: str
    title: str
    text: str
    source: str
    kind: str  # "file" | "benchmark" | "sample"
    meta: dict = field(default_factory=dict)


@dataclass
class ChunkText:
    doc_id: str
    index: int
    title: str
    text: str


@dataclass
class IngestProblem:
    name: str
    reason: str
    fatal: bool


@dataclass
class IngestReport:
    documents: list[Document] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Text normalisation and word counting

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufeff]")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")

# CJK ideographs and kana carry no spaces between words, so each counts as one word; CJK
# punctuation is its own token so that sentence ends always fall between tokens. A run of
# non-space longer than 50 characters counts as several words, so that a chunk bounded in
# words is also bounded in characters (base64 blobs, minified code).
_WORD = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
    r"|[\u3000-\u303f\uff00-\uffef]"
    r"|[^\s\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]{1,50}"
)


def normalise_text(text: str) -> str:
    """NFC, \\n line ends, no control characters but \\n and \\t, no trailing spaces,
    at most one blank line in a row, no blank lines at either end."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Page breaks and Unicode separators are line structure, not junk: keep them as breaks.
    text = re.sub(r"[\f\v\u2028\u2029\x85]", "\n", text)
    text = _CONTROL_CHARS.sub("", text)
    text = _TRAILING_SPACE.sub("\n", text + "\n")
    text = re.sub(r"\n[ \t]+\n", "\n\n", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n").rstrip()


def count_words(text: str) -> int:
    """Words as chunk sizes count them: runs of non-space, each CJK character on its own."""
    return sum(1 for _ in _WORD.finditer(text))


def _clean_line(text: str) -> str:
    """One-line form of a title: controls removed, whitespace collapsed, length capped."""
    text = _CONTROL_CHARS.sub("", unicodedata.normalize("NFC", text))
    text = " ".join(text.split())
    return text[:_TITLE_MAX_CHARS].rstrip()


# ---------------------------------------------------------------------------
# Names and ids


def base_name(name: str) -> str:
    """The last path part of a name, whichever separator it uses."""
    return re.split(r"[\\/]", name)[-1]


def safe_file_name(name: str) -> str:
    """The base name with only letters, digits, '-', '_' and '.' kept, and no leading dots."""
    base = _CONTROL_CHARS.sub("", unicodedata.normalize("NFC", base_name(name)))
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in base)
    safe = re.sub(r"_{2,}", "_", safe)
    # The suffix as Python's Path reads it, before leading dots go: "....txt" is a .txt file,
    # ".txt" a dot file with no suffix.
    suffix = Path(safe).suffix if safe not in ("", ".", "..") else ""
    stem = safe[: len(safe) - len(suffix)].lstrip(".")
    if not stem.strip("._-"):
        # "....txt" or "..." leave nothing usable as a name; "file.txt" keeps the type visible.
        return "file" + suffix
    return stem[: 120 - len(suffix)] + suffix


def doc_id_for(name: str) -> str:
    """A lower-case ASCII slug of the file stem; non-Latin names get a stable hash id."""
    stem = Path(safe_file_name(name)).stem
    return slug(stem, limit=60) or "doc-" + hashlib.sha1(stem.encode()).hexdigest()[:8]


def _title_from_name(name: str) -> str:
    stem = base_name(name)
    if "." in stem.lstrip("."):
        stem = stem[: stem.rfind(".")]
    title = _clean_line(stem.replace("_", " "))
    return title or Path(safe_file_name(name)).stem


# ---------------------------------------------------------------------------
# Decoding bytes to text

_MAGIC: list[tuple[bytes, int, str]] = [
    (b"%PDF-", 0, "PDF document; rename it to .pdf"),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image"),
    (b"\xff\xd8\xff", 0, "JPEG image"),
    (b"GIF87a", 0, "GIF image"),
    (b"GIF89a", 0, "GIF image"),
    (b"PK\x03\x04", 0, "ZIP archive or Office document"),
    (b"PK\x05\x06", 0, "ZIP archive"),
    (b"\x7fELF", 0, "ELF executable"),
    (b"\x1f\x8b", 0, "GZIP archive"),
    (b"\xfd7zXZ\x00", 0, "XZ archive"),
    (b"\x28\xb5\x2f\xfd", 0, "Zstandard archive"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7-Zip archive"),
    (b"Rar!\x1a\x07", 0, "RAR archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 0, "old Office document"),
    (b"SQLite format 3\x00", 0, "SQLite database"),
    (b"\xca\xfe\xba\xbe", 0, "Java class or Mach-O binary"),
    (b"\xcf\xfa\xed\xfe", 0, "Mach-O binary"),
    (b"\x00asm", 0, "WebAssembly module"),
    (b"II*\x00", 0, "TIFF image"),
    (b"MM\x00*", 0, "TIFF image"),
    (b"OggS", 0, "Ogg audio/video"),
    (b"fLaC", 0, "FLAC audio"),
    (b"ftyp", 4, "MP4/MOV video"),
    (b"\x93NUMPY", 0, "NumPy array"),
]


def _looks_like(data: bytes) -> str | None:
    """Name of the binary format the bytes start with, if a known one."""
    for magic, offset, what in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return what
    if data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "WebP image", b"WAVE": "WAV audio", b"AVI ": "AVI video"}[data[8:12]]
    if data[:3] == b"ID3" and len(data) > 3 and data[3] < 10:
        return "MP3 audio"
    if data[:2] == b"BZ" and re.match(rb"BZh[1-9]1AY&SY", data[:10]):
        return "BZIP2 archive"
    return None


def _control_share(sample: str) -> float:
    """Share of characters that are control codes no text file would contain."""
    if not sample:
        return 0.0
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or ch == "\x7f")
    return bad / len(sample)


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding name) for bytes that hold text, else IngestError.

    Order: a byte-order mark decides (UTF-32/UTF-16/UTF-8); then strict UTF-8; then
    cp1252 (latin-1 for its five undefined bytes) when the bytes look like Western text.
    """
    what = _looks_like(data)
    if what:
        raise IngestError(f"binary file (looks like {what})")
    for bom, enc in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                text = data.decode(enc)
            except UnicodeDecodeError:
                label = enc.upper().replace("-SIG", "")
                raise IngestError(f"could not decode text (starts like {label} but is not valid {label})") from None
            if "\x00" in text or _control_share(text[:20000]) > 0.05:
                raise IngestError("binary file (many control bytes)")
            return text, enc
    if b"\x00" in data:
        raise IngestError("binary file (contains NUL bytes)")
    head = data[:65536]
    if _control_share(head.decode("latin-1")) > 0.05:
        raise IngestError("binary file (many control bytes)")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    # Not UTF-8. Western single-byte text has few high bytes among mostly ASCII; a high share
    # means another script's code page, which cp1252 would turn into unreadable mojibake.
    high = sum(1 for b in head if b >= 0x80)
    if high / len(head) > 0.3:
        raise IngestError(
            "could not decode text (not UTF-8 and not Western-European text; save it as UTF-8)"
        )
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


# ---------------------------------------------------------------------------
# Format readers: each returns (title or "", text, extra meta)

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ATX_OPENING = re.compile(r" {0,3}#{1,6}(?=[ \t]|$)")
_SETEXT_RULE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _heading_text(rest: str) -> str:
    """An ATX heading's text without its optional closing '#' run (plain string ops: a
    backtracking regex here would be quadratic on long runs of spaces)."""
    rest = rest.strip(" \t")
    bare = rest.rstrip("#")
    if bare != rest and (not bare or bare[-1] in " \t"):
        rest = bare.rstrip(" \t")
    return rest


def _read_markdown(text: str) -> tuple[str, str, dict]:
    """Keep every line; ATX headings lose their '#' marks (outside code fences)."""
    out: list[str] = []
    title = ""
    in_fence = False
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _ATX_OPENING.match(line)
            if m:
                line = _heading_text(line[m.end() :])
                title = title or _clean_line(line)
            elif (
                not title
                and line.strip()
                and i + 1 < len(lines)
                and _SETEXT_RULE.match(lines[i + 1])
                and (i == 0 or not lines[i - 1].strip())
            ):
                title = _clean_line(line)
        out.append(line)
    return title, "\n".join(out), {}


_HTML_DROP = {"script", "style", "noscript", "template", "head", "title", "iframe", "object", "embed", "canvas"}
_HTML_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
    "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "table",
    "thead", "tbody", "tfoot", "tr", "caption", "figure", "figcaption", "address", "form",
    "fieldset", "legend", "details", "summary", "hr", "body",
}
_PARAGRAPH_TAGS = {"p", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "dl", "figure", "hr"}
# Private-use marks stand for line and paragraph breaks while HTML whitespace is collapsed.
_LINE, _PARA = "\ue000", "\ue001"


def _is_hidden(tag) -> bool:
    style = str(tag.get("style", ""))
    return tag.has_attr("hidden") or bool(_HIDDEN_STYLE.search(style))


_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def _read_html(text: str) -> tuple[str, str, dict]:
    """Visible text only, block elements as line breaks, <title> as the title.

    The tree is walked with an explicit stack and never modified: bs4's insert/decompose cost
    grows with nesting depth, and hostile pages nest thousands of levels deep.
    """
    from bs4 import BeautifulSoup
    from bs4.element import (
        Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Script,
        Stylesheet, Tag, TemplateString,
    )

    invisible = (Comment, Declaration, Doctype, ProcessingInstruction, Script, Stylesheet, TemplateString)
    text = text.replace(_LINE, " ").replace(_PARA, " ")
    soup = BeautifulSoup(text, "html.parser")
    title = _clean_line(soup.title.get_text(" ")) if soup.title else ""
    pieces: list[str] = []
    pre_depth = 0
    # Stack items: a node to visit, or ("mark", text) / ("pre", +-1) to apply on the way out.
    stack: list = [soup]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            if node[0] == "pre":
                pre_depth += node[1]
            else:
                pieces.append(node[1])
        elif isinstance(node, NavigableString):
            if isinstance(node, invisible):
                continue
            if pre_depth:
                pieces.append(str(node).replace("\n", _LINE).replace(" ", "\u00a0"))
            else:
                pieces.append(str(node))
        elif isinstance(node, Tag):
            if node.name in _HTML_DROP or _is_hidden(node):
                continue
            if node.name == "br":
                pieces.append(_LINE)
                continue
            if node.name in ("td", "th"):
                stack.append(("mark", " "))
            if node.name in _HTML_BLOCKS:
                mark = _PARA if node.name in _PARAGRAPH_TAGS else _LINE
                pieces.append(mark)
                stack.append(("mark", mark))
            if node.name == "pre":
                pre_depth += 1
                stack.append(("pre", -1))
            stack.extend(reversed(node.contents))
    flat = re.sub(r"[ \t\n\r\f\v]+", " ", "".join(pieces))
    flat = flat.replace(_PARA, "\n\n").replace(_LINE, "\n")
    lines = [line.strip(" ") for line in flat.split("\n")]
    body = "\n".join(lines).replace("\u00a0", " ")
    return title, body, {}


def _read_pdf(data: bytes, params: IndexParams) -> tuple[str, str, dict]:
    """Text layer of at most `pdf_max_pages` pages within about `pdf_max_seconds`."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    if b"%PDF-" not in data[:1024]:
        what = _looks_like(data)
        raise IngestError(f"not a PDF file (looks like {what})" if what else "not a PDF file (no PDF header)")
    started = time.monotonic()
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            # Many PDFs are encrypted only to set permissions, with an empty open password.
            try:
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError) as exc:
                raise IngestError(f"encrypted PDF that cannot be opened here ({exc})") from None
            if not opened:
                raise IngestError("PDF is password-protected; remove the password and try again")
        total = len(reader.pages)
        title = ""
        try:
            if reader.metadata and reader.metadata.title:
                title = _clean_line(str(reader.metadata.title))
        except Exception:  # broken metadata must not cost the text
            title = ""
        texts: list[str] = []
        meta: dict = {"pages": total}
        failed_pages = 0
        for number in range(min(total, params.pdf_max_pages)):
            if time.monotonic() - started > params.pdf_max_seconds:
                meta["truncated"] = (
                    f"read only the first {number} of {total} pages "
                    f"(time limit {params.pdf_max_seconds:g} s)"
                )
                break
            try:
                texts.append(reader.pages[number].extract_text() or "")
            except (FileNotDecryptedError, DependencyError):
                raise
            except Exception:  # one damaged page should not lose the others
                failed_pages += 1
        else:
            if total > params.pdf_max_pages:
                meta["truncated"] = (
                    f"read only the first {params.pdf_max_pages} of {total} pages (page limit)"
                )
        meta["pages_read"] = len(texts)
        if failed_pages:
            meta["failed_pages"] = failed_pages
    except IngestError:
        raise
    except (FileNotDecryptedError, DependencyError) as exc:
        raise IngestError(f"encrypted PDF that cannot be opened here ({exc})") from None
    except Exception as exc:  # a parser of untrusted bytes can fail in many ways; refuse, never crash
        raise IngestError(f"could not read PDF (damaged file? {type(exc).__name__}: {exc})"[:300]) from None
    body = "\n\n".join(t.strip() for t in texts)
    if not body.strip():
        if "truncated" in meta and meta["pages_read"] == 0:
            raise IngestError(f"PDF took too long to read (over {params.pdf_max_seconds:g} s)")
        if failed_pages:
            raise IngestError(f"could not read the text of {failed_pages} PDF page(s) (damaged file?)")
        raise IngestError("PDF has no text layer (scanned?)")
    return title, body, meta


# ---------------------------------------------------------------------------
# Reading one file


def _size_text(n: int, exact: bool = False) -> str:
    """'7.2 MB', '12.5 KB', '300 bytes'; `exact` drops the fixed decimal (for limits)."""
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:g} {unit}" if exact else f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _check_size(size: int, params: IndexParams) -> None:
    limit = params.max_file_bytes
    if size > limit:
        shown = _size_text(size)
        if shown == _size_text(limit):
            shown = f"{size:,} bytes"  # rounded, it would look equal to the limit
        raise IngestError(f"over the {_size_text(limit, exact=True)} limit ({shown})")


def _format_of(name: str) -> str:
    suffix = Path(name).suffix.lower()
    if suffix in SUPPORTED_SUFFIXES:
        return SUPPORTED_SUFFIXES[suffix]
    if not suffix:
        raise IngestError(f"unsupported type (no file extension); {_SUPPORTED_HINT}")
    raise IngestError(f"unsupported type {suffix}; {_SUPPORTED_HINT}")


def read_bytes(name: str, data: bytes, params: IndexParams) -> Document:
    """One file's bytes → Document (kind "file"); raises IngestError when refused.

    `name` is used only as a label: its base name, sanitised, becomes `source`.
    """
    source = safe_file_name(name)
    fmt = _format_of(source)
    _check_size(len(data), params)
    if not data.strip():
        raise IngestError("empty file")
    meta: dict = {"bytes": len(data), "format": fmt}
    if fmt == "pdf":
        title, raw, extra = _read_pdf(data, params)
    else:
        decoded, meta["encoding"] = decode_text(data)
        if not decoded.strip():
            raise IngestError("empty file")
        reader = {"txt": lambda t: ("", t, {}), "md": _read_markdown, "html": _read_html}[fmt]
        title, raw, extra = reader(decoded)
    meta.update(extra)
    text = normalise_text(raw)
    if not text:
        raise IngestError("no visible text" if fmt == "html" else "empty file")
    if source != name:
        meta["original_name"] = name
    return Document(
        doc_id=doc_id_for(source),
        title=title or _title_from_name(name),
        text=text,
        source=source,
        kind="file",
        meta=meta,
    )


def benchmark_document(doc_id: str, title: str, text: str, dataset: str) -> Document:
    """A benchmark passage; it is never split (one passage = one chunk = one recall unit)."""
    return Document(
        doc_id=str(doc_id),
        title=_clean_line(title),
        text=normalise_text(text),
        source=f"benchmark:{dataset}",
        kind="benchmark",
        meta={"format": "benchmark", "dataset": dataset},
    )


# ---------------------------------------------------------------------------
# Reading batches


class _Batch:
    """Collects documents for one report: unique ids, duplicates skipped, problems kept."""

    def __init__(self, existing: Iterable[tuple[str, str]] = ()) -> None:
        self.report = IngestReport()
        self._seen: set[tuple[str, str]] = set(existing)
        self._ids: set[str] = set()

    def refuse(self, name: str, reason: str) -> None:
        self.report.problems.append(IngestProblem(name=name, reason=reason, fatal=True))

    def warn(self, name: str, reason: str) -> None:
        self.report.problems.append(IngestProblem(name=name, reason=reason, fatal=False))

    def add(self, name: str, doc: Document) -> bool:
        """Keep the document unless it repeats an earlier one; True when kept."""
        key = (doc.title, doc.text)
        if key in self._seen:
            self.report.duplicates.append(name)
            return False
        self._seen.add(key)
        doc.doc_id = self._unique_id(doc.doc_id)
        if doc.meta.get("truncated"):
            self.warn(name, str(doc.meta["truncated"]))
        self.report.documents.append(doc)
        return True

    def _unique_id(self, wanted: str) -> str:
        candidate, n = wanted, 1
        while candidate in self._ids:
            n += 1
            candidate = f"{wanted}-{n}"
        self._ids.add(candidate)
        return candidate


def read_uploads(
    files: list[tuple[str, bytes]],
    params: IndexParams,
    existing: set[tuple[str, str]] = frozenset(),
) -> IngestReport:
    """Uploaded (name, bytes) pairs → report. Names are labels only, never paths.

    `existing` holds the (title, text) pairs already in the memory; equal ones are skipped.
    """
    batch = _Batch(existing)
    for name, data in files:
        try:
            doc = read_bytes(name, data, params)
        except IngestError as exc:
            batch.refuse(name, str(exc))
            continue
        if batch.add(name, doc) and base_name(name) != name:
            batch.warn(name, f"name has path parts; stored as '{doc.source}'")
    return batch.report


_LINK_SKIPPED = "skipped: a link (links inside a folder are not followed)"


def _walk_files(folder: Path, batch: _Batch) -> list[Path]:
    """Files under a folder, sorted, without following links (each link is reported as skipped,
    so nothing outside the folder is read); hidden entries are counted."""
    found: list[Path] = []
    hidden = 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        hidden += sum(1 for d in dirs if d.startswith("."))
        visible = sorted(d for d in dirs if not d.startswith("."))
        for d in visible:
            if (Path(root) / d).is_symlink():
                batch.refuse(str((Path(root) / d).relative_to(folder.parent)), _LINK_SKIPPED)
        dirs[:] = [d for d in visible if not (Path(root) / d).is_symlink()]
        for f in sorted(files):
            if f.startswith("."):
                hidden += 1
            elif (Path(root) / f).is_symlink():
                batch.refuse(str((Path(root) / f).relative_to(folder.parent)), _LINK_SKIPPED)
            else:
                found.append(Path(root) / f)
    if hidden:
        batch.warn(str(folder), f"skipped {hidden} hidden file(s) or folder(s)")
    return found


def read_paths(paths: list[Path], params: IndexParams, *, kind: str = "file") -> IngestReport:
    """Files and folders (recursive; supported types only, the others reported as skipped)."""
    batch = _Batch()
    for given in paths:
        given = Path(given)
        if given.is_dir():
            for path in _walk_files(given, batch):
                label = str(path.relative_to(given.parent))
                if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                    batch.refuse(label, f"skipped: unsupported type {path.suffix or '(no file extension)'}")
                    continue
                _read_one_path(path, label, params, kind, batch, follow_links=False)
        elif given.exists() or given.is_symlink():
            _read_one_path(given, str(given), params, kind, batch, follow_links=True)
        else:
            batch.refuse(str(given), "not found")
    return batch.report


def _open_regular(path: Path, follow_links: bool) -> int:
    """A read-only descriptor of a regular file. Without `follow_links` a link is refused at
    open time (O_NOFOLLOW), so one swapped in after the folder walk is not followed either."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow_links and path.is_symlink():
            raise IngestError(_LINK_SKIPPED) from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IngestError("not a regular file")
    return fd


def _read_one_path(path: Path, label: str, params: IndexParams, kind: str, batch: _Batch, *,
                   follow_links: bool) -> None:
    try:
        _format_of(safe_file_name(path.name))
        fd = _open_regular(path, follow_links)
        with os.fdopen(fd, "rb") as f:
            _check_size(os.fstat(f.fileno()).st_size, params)  # before reading: never load a huge file
            data = f.read(params.max_file_bytes + 1)
        doc = read_bytes(path.name, data, params)
    except IngestError as exc:
        batch.refuse(label, str(exc))
        return
    except OSError as exc:
        batch.refuse(label, f"could not read file ({exc.strerror or exc})")
        return
    doc.kind = kind
    batch.add(label, doc)


# ---------------------------------------------------------------------------
# Chunking

_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt", "gen", "col", "capt", "lt", "sgt",
    "rev", "hon", "fig", "figs", "no", "nos", "vol", "vols", "vs", "etc", "e.g", "i.e", "cf",
    "approx", "inc", "ltd", "co", "corp", "dept", "est", "ca", "al", "pp", "p", "ed", "eds",
}
_TOKEN_BEFORE_DOT = re.compile(r"(\S+)\.$")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|[。！？]+[」』”’）]*")


@dataclass
class _Unit:
    """A sentence (or a piece of an over-long one) as a span of the document text."""

    start: int
    end: int
    words: int
    paragraph: int


def _is_abbreviation(line: str, dot_at: int) -> bool:
    """True when the '.' at `dot_at` ends an abbreviation or an initial, not a sentence."""
    # Short windows on both sides keep this linear on very long lines.
    m = _TOKEN_BEFORE_DOT.search(line, max(0, dot_at - 30), dot_at + 1)
    if not m:
        return False
    token = m.group(1).lstrip("(\"'“‘[").lower()
    if token in _ABBREVIATIONS or (len(token) == 1 and m.group(1)[-1].isupper()):
        return True
    following = line[dot_at + 1 : dot_at + 12].lstrip(" \t\"'”’)]")
    return bool(following) and following[0].islower()


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans of one line text[start:end], trimmed of surrounding spaces."""
    line = text[start:end]
    cuts = [0]
    for m in _SENTENCE_END.finditer(line):
        if m.group(0)[0] == "." and len(m.group(0).rstrip("\"'”’)]")) == 1 and _is_abbreviation(line, m.start()):
            continue
        cuts.append(m.end())
    cuts.append(len(line))
    spans = []
    for a, b in zip(cuts, cuts[1:]):
        piece = line[a:b]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + a + lead, start + a + len(piece.rstrip())))
    return spans


def _units(text: str, max_words: int) -> list[_Unit]:
    """Sentences in order, each tagged with its paragraph; longer ones cut to max_words."""
    units: list[_Unit] = []
    paragraph = 0
    pos = 0
    for block in re.split(r"(\n[ \t]*\n)", text):
        if block.strip():
            line_start = pos
            for line in block.split("\n"):
                for a, b in _sentence_spans(text, line_start, line_start + len(line)):
                    words = list(_WORD.finditer(text, a, b))
                    for i in range(0, len(words), max_words):
                        piece = words[i : i + max_words]
                        units.append(_Unit(piece[0].start(), piece[-1].end(), len(piece), paragraph))
                line_start += len(line) + 1
            paragraph += 1
        pos += len(block)
    return units


def _overlap_start(text: str, units: list[_Unit], last: int, budget: int) -> int:
    """Where the next chunk starts so that it repeats at most `budget` words of the last one:
    whole sentences from the end when they fit, else the last `budget` words."""
    if budget <= 0:
        return units[last].end
    first, words = last + 1, 0
    while first > 0 and words + units[first - 1].words <= budget:
        first -= 1
        words += units[first].words
    if first <= last:
        return units[first].start
    tail = list(_WORD.finditer(text, units[last].start, units[last].end))[-budget:]
    return tail[0].start()


def chunk_document(doc: Document, params: IndexParams) -> list[ChunkText]:
    """Chunks of at most `chunk_words` words, neighbours sharing up to `chunk_overlap_words`.

    Benchmark documents are never split. Uploaded ones are cut at a paragraph boundary once a
    chunk is at least half full, else at a sentence boundary; only a sentence longer than a
    chunk's fresh room is cut between words. Empty documents have no chunks.
    """
    text = doc.text
    if not text.strip():
        return []
    size = max(1, params.chunk_words)
    overlap = min(max(0, params.chunk_overlap_words), size - 1)
    if doc.kind == "benchmark" or count_words(text) <= size:
        return [ChunkText(doc.doc_id, 0, doc.title, text)]
    # Every unit fits beside a full overlap, so a chunk never exceeds `size`.
    units = _units(text, size - overlap)
    paragraph_words: dict[int, int] = {}
    for unit in units:
        paragraph_words[unit.paragraph] = paragraph_words.get(unit.paragraph, 0) + unit.words
    spans: list[tuple[int, int]] = []
    start = units[0].start
    carried = 0  # words repeated from the previous chunk
    fresh = 0  # words new to this chunk
    first_fresh = 0  # index of the first unit new to this chunk
    for i, unit in enumerate(units):
        full = carried + fresh + unit.words > size
        new_paragraph = i > first_fresh and unit.paragraph != units[i - 1].paragraph
        early_break = (
            new_paragraph
            and fresh >= size // 2
            and carried + fresh + paragraph_words[unit.paragraph] > size
        )
        if fresh and (full or early_break):
            spans.append((start, units[i - 1].end))
            start = _overlap_start(text, units, i - 1, overlap)
            if start >= units[i - 1].end:  # nothing carried over
                start = unit.start
            carried = count_words(text[start : units[i - 1].end])
            fresh, first_fresh = 0, i
        fresh += unit.words
    spans.append((start, units[-1].end))
    return [ChunkText(doc.doc_id, n, doc.title, text[a:b]) for n, (a, b) in enumerate(spans)]


def estimate_chunks(docs: list[Document], params: IndexParams) -> int:
    """How many chunks these documents make (exact: chunking is cheap, extraction is not)."""
    return sum(len(chunk_document(doc, params)) for doc in docs)
