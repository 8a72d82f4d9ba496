"""Entity keys: the one rule that decides when two mentions are the same node."""

from __future__ import annotations

import unicodedata

# Letters that NFKD does not decompose into a base letter plus a mark.
_LIGATURES = str.maketrans({"æ": "ae", "ø": "o", "œ": "oe", "ß": "ss", "ł": "l", "đ": "d",
                            "þ": "th", "ð": "d", "ı": "i"})


def entity_key(name: str) -> str:
    """Accents folded first (NFKD, combining marks dropped), then lower-case,
    non-alphanumerics to spaces, spaces collapsed: "Tekezé River" → "tekeze river".
    Letters of any script count as alphanumeric, so non-Latin names keep a key.
    A leading "the" is not part of the key: "the Varrow Coast", "The Varrow Coast" and
    "Varrow Coast" are one node (the display name keeps the article as written)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    lowered = folded.lower().translate(_LIGATURES)
    key = " ".join("".join(ch if ch.isalnum() else " " for ch in lowered).split())
    return key[4:] if key.startswith("the ") else key
