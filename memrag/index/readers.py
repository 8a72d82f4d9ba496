"""Read documents (txt, md, pdf, html, benchmark passages) into `Document`s, one by one and
in batches.

Every refusal is an `IngestError` whose message is meant for the user; the batch readers
(`read_paths`, `read_uploads`) turn refusals into `IngestProblem`s and keep reading the rest.
Document content is only ever treated as text: HTML is reduced to its visible text, and
nothing else (markdown, scripts) is interpreted.
"""

from __future__ import annotations

import io
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from memrag.config import IndexParams
from memrag.filesafe import LinkRefused, NotRegularFile, UnreadableFile, open_regular
from memrag.index.text import (
    IngestError,
    base_name,
    binary_format_of,
    clean_line,
    decode_text,
    doc_id_for,
    normalise_text,
    safe_file_name,
)

SUPPORTED_SUFFIXES: dict[str, str] = {
    ".txt": "txt",
    ".md": "md",
    ".markdown": "md",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
}
_SUPPORTED_HINT = "use .txt, .md, .pdf or .html"


@dataclass
class Document:
    doc_id: str
    title: str
    text: str
    source: str
    kind: str  # "file" | "benchmark" | "sample"
    meta: dict = field(default_factory=dict)


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


def _title_from_name(name: str) -> str:
    stem = base_name(name)
    if "." in stem.lstrip("."):
        stem = stem[: stem.rfind(".")]
    title = clean_line(stem.replace("_", " "))
    return title or Path(safe_file_name(name)).stem


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
                title = title or clean_line(line)
            elif (
                not title
                and line.strip()
                and i + 1 < len(lines)
                and _SETEXT_RULE.match(lines[i + 1])
                and (i == 0 or not lines[i - 1].strip())
            ):
                title = clean_line(line)
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
    title = clean_line(soup.title.get_text(" ")) if soup.title else ""
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
        what = binary_format_of(data)
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
                title = clean_line(str(reader.metadata.title))
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


# <meta charset="…"> or <meta http-equiv="Content-Type" content="text/html; charset=…">, in the head.
_META_CHARSET = re.compile(rb"<meta\b[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]{1,40})", re.I)


def declared_charset(data: bytes) -> str:
    """The charset an HTML page declares in its first 4 KB ('' when none)."""
    m = _META_CHARSET.search(data[:4096])
    return m.group(1).decode("ascii") if m else ""


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
        decoded, meta["encoding"], note = decode_text(data, declared_charset(data) if fmt == "html" else "")
        if note:
            meta["encoding_note"] = note
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
        title=clean_line(title),
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
        for said in ("truncated", "encoding_note"):
            if doc.meta.get(said):
                self.warn(name, str(doc.meta[said]))
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
    """A read-only descriptor of a regular file (memrag.filesafe: a pipe never holds the open).
    Without `follow_links` a link is refused at open time (O_NOFOLLOW), so one swapped in after the
    folder walk is not followed either."""
    try:
        return open_regular(path, follow_links=follow_links)
    except LinkRefused:
        raise IngestError(_LINK_SKIPPED) from None
    except NotRegularFile as e:
        raise IngestError(f"{e.kind}, not a regular file") from None
    except UnreadableFile as e:
        raise IngestError(f"could not read file ({str(e).rpartition(': ')[2]})") from None


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
