"""Valid text: the one gate every string from a model or a document passes before it is
stored, shown or embedded (issue 15, item 14).

A length-capped model reply can end in half of a surrogate pair (`…amalgam\\ud83d`), and
documents carry control characters; tokenizers and SQLite refuse the first, terminals and
tables garble the second. Lone surrogates become U+FFFD and are then dropped, C0/C1 control
characters (other than tab and newline) are dropped, and the caller learns how many characters
were repaired so a build summary can count them.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# C0 controls except \t \n \r, DEL, C1 controls; lone surrogates (a str can hold them); the
# bidirectional controls (marks, embeddings, overrides, isolates), with which a title can show its
# characters in another order than they are stored ("txt.exe" written as "exe.txt"); a stray BOM.
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff"
                  "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def repair_text(s: str) -> tuple[str, int]:
    """(valid text, number of characters dropped). Line breaks are kept; \\r\\n becomes \\n."""
    if not isinstance(s, str):
        s = str(s)
    fixed, n = _BAD.subn("", s)
    return fixed.replace("\r\n", "\n"), n


def valid_text(s: str) -> str:
    """`repair_text` without the count."""
    return repair_text(s)[0]


def slug(text: str, *, keep: str = "a-z0-9", sep: str = "-", trim: str = "-", limit: int | None = None,
         ascii_fold: bool = True, lower: bool = True) -> str:
    """The one way a name becomes part of a path: runs of characters outside `keep` (a regex
    character class body) become `sep`, the ends are trimmed of `trim`; with `limit`, cut and
    trimmed again. `ascii_fold` turns accented letters into plain ones first (é → e)."""
    if ascii_fold:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    if lower:
        text = text.lower()
    out = re.sub(f"[^{keep}]+", sep, text).strip(trim)
    return out if limit is None else out[:limit].strip(trim)


def with_hash(safe: str, original: str, fallback: str) -> str:
    """`safe` (or `fallback` when empty) with 8 hex of `original`: the one way a name that lost
    characters on its way to a path stays distinct from every other."""
    digest = hashlib.sha1(original.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe or fallback}-{digest}"


def distinct_slug(text: str, fallback: str, *, limit: int = 60, **kwargs) -> str:
    """`slug(text)`, with a hash of `text` where the slug lost letters or digits — a name in another
    script (研究ノート, Мои документы), one of symbols only, or one cut at `limit` — so two such names
    never become the same folder. Accents folded to plain letters (Café → cafe) lose nothing."""
    safe = slug(text, limit=limit, **kwargs)
    if not text.strip():
        return fallback  # nothing to tell apart
    letters = sum(c.isalnum() for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    if safe and sum(c.isalnum() for c in safe) >= letters:
        return safe
    trim = kwargs.get("trim", "-")
    return with_hash(safe[:max(0, limit - 9)].strip(trim), text, fallback)


def download_name(*parts: str | None, ext: str, day: str | None = None) -> str:
    """A download's file name from what it holds: 'memrag-q01-neuropath-ecphory-2026-12-01.json'.
    Empty parts are left out; each part is slugged and cut so the name stays short."""
    import datetime as _dt

    day = day or _dt.date.today().isoformat()
    words = [slug(p, limit=40) for p in parts if p] + [day]
    return "-".join(["memrag"] + [w for w in words if w]) + "." + ext.lstrip(".")
