"""Text as memrag stores it: bytes decoded to text, text normalised, words counted, file
names made safe and turned into ids.

A refusal is an `IngestError` whose message is meant for the user.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import unicodedata
from pathlib import Path

from memrag.textsafe import slug, valid_text

_TITLE_MAX_CHARS = 200


class IngestError(ValueError):
    """A file was refused; the message says why, in words meant for the user."""


# ---------------------------------------------------------------------------
# Text normalisation and word counting

_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")

# CJK ideographs and kana carry no spaces between words, so each counts as one word; CJK
# punctuation is its own token so that sentence ends always fall between tokens. A run of
# non-space longer than 50 characters counts as several words, so that a chunk bounded in
# words is also bounded in characters (base64 blobs, minified code).
WORD = re.compile(
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
    text = valid_text(text)
    text = _TRAILING_SPACE.sub("\n", text + "\n")
    text = re.sub(r"\n[ \t]+\n", "\n\n", text)
    text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n").rstrip()


def count_words(text: str) -> int:
    """Words as chunk sizes count them: runs of non-space, each CJK character on its own."""
    return sum(1 for _ in WORD.finditer(text))


def clean_line(text: str) -> str:
    """One-line form of a title: controls removed, whitespace collapsed, length capped."""
    text = valid_text(unicodedata.normalize("NFC", text))
    text = " ".join(text.split())
    return text[:_TITLE_MAX_CHARS].rstrip()


# ---------------------------------------------------------------------------
# Names and ids


def base_name(name: str) -> str:
    """The last path part of a name, whichever separator it uses."""
    return re.split(r"[\\/]", name)[-1]


def safe_file_name(name: str) -> str:
    """The base name with only letters, digits, '-', '_' and '.' kept, and no leading dots."""
    base = valid_text(unicodedata.normalize("NFC", base_name(name)))
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


def binary_format_of(data: bytes) -> str | None:
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


# One valid UTF-8 sequence of two to four bytes (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
_UTF8_MULTIBYTE = re.compile(
    rb"[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}"
    rb"|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}|[\xF1-\xF3][\x80-\xBF]{3}"
    rb"|\xF4[\x80-\x8F][\x80-\xBF]{2}")
# What a page may declare that means Windows-1252 (as browsers read it: the HTML standard's labels).
_MEANS_CP1252 = {"iso8859-1", "latin-1", "ascii", "cp1252"}


def decode_text(data: bytes, declared: str = "") -> tuple[str, str, str]:
    """(text, encoding name, note for the build report — '' for clean UTF-8) for bytes that hold
    text, else IngestError. The rule, in order:

    1. a byte-order mark decides (UTF-32 / UTF-16 / UTF-8);
    2. a charset the file declares (`declared`: an HTML page's meta charset) decides, when Python
       knows it (bytes not valid in it replaced, and counted in the note);
    3. valid UTF-8 is UTF-8;
    4. a file holding at least one valid multi-byte UTF-8 sequence is UTF-8 whose other bytes are
       damaged: read as UTF-8 with those bytes replaced by U+FFFD, and the note says how many;
    5. only a file with no valid multi-byte UTF-8 sequence at all is read as Windows-1252 (cp1252;
       latin-1 for its five undefined bytes), and the note says so — when it looks like Western text.
    """
    what = binary_format_of(data)
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
            label = enc.upper().replace("-SIG", "")
            try:
                text = data.decode(enc)
            except UnicodeDecodeError:
                raise IngestError(f"could not decode text (starts like {label} but is not valid {label})") from None
            if "\x00" in text or _control_share(text[:20000]) > 0.05:
                raise IngestError("binary file (many control bytes)")
            return text, enc, "" if label == "UTF-8" else f"read as {label} (its byte-order mark says so)"
    if b"\x00" in data:
        raise IngestError("binary file (contains NUL bytes)")
    head = data[:65536]
    if _control_share(head.decode("latin-1")) > 0.05:
        raise IngestError("binary file (many control bytes)")
    codec, unknown = _codec(declared)
    if codec and codec != "utf-8":
        text = data.decode(codec, errors="replace")
        return text, codec, f"read as {codec}, the charset it declares{_replaced(text, data, 'in it')}"
    try:
        return data.decode("utf-8"), "utf-8", unknown
    except UnicodeDecodeError:
        pass
    if _UTF8_MULTIBYTE.search(data):
        text = data.decode("utf-8", errors="replace")
        return text, "utf-8", f"read as UTF-8{_replaced(text, data, 'UTF-8')}" + (f"; {unknown}" if unknown else "")
    # No UTF-8 at all. Western single-byte text has few high bytes among mostly ASCII; a high share
    # means another script's code page, which cp1252 would turn into unreadable mojibake.
    high = sum(1 for b in head if b >= 0x80)
    if high / len(head) > 0.3:
        raise IngestError(
            "could not decode text (not UTF-8 and not Western-European text; save it as UTF-8)"
        )
    note = "read as Windows-1252 (cp1252): it is not UTF-8 and holds no UTF-8 character"
    try:
        return data.decode("cp1252"), "cp1252", note
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1", note.replace("Windows-1252 (cp1252)", "Latin-1")


def _codec(declared: str) -> tuple[str, str]:
    """(Python's name for a declared charset, or ''; a note when it names none Python knows)."""
    label = declared.strip().strip("'\"").lower()
    if not label:
        return "", ""
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return "", f"its declared charset {label[:40]!r} is unknown, so the rule for undeclared text was used"
    return ("cp1252" if name in _MEANS_CP1252 else name), ""


def _replaced(text: str, data: bytes, valid_in: str) -> str:
    """'' or '; with N byte sequence(s) not valid {valid_in} replaced by �' (U+FFFD already in the file not counted)."""
    n = text.count("\ufffd") - data.count("\ufffd".encode())
    return f" with {n} byte sequence(s) not valid {valid_in} replaced by \ufffd" if n > 0 else ""
