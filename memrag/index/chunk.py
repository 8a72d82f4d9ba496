"""Chunking: documents cut into chunks of bounded words at paragraph and sentence boundaries,
neighbours sharing an overlap."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memrag.config import IndexParams
from memrag.index.readers import Document
from memrag.index.text import WORD, count_words


@dataclass
class ChunkText:
    doc_id: str
    index: int
    title: str
    text: str


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
                    words = list(WORD.finditer(text, a, b))
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
    tail = list(WORD.finditer(text, units[last].start, units[last].end))[-budget:]
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
