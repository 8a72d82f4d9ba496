"""One exit path for secrets: every text a backend shows or stores passes `scrub` first.

Backends register their API keys when they are built (`register_secret`); `scrub` removes those,
anything shaped like a key or a credential (`Bearer …`, `Authorization: …`, `sk-…`), the
`user:password@` part of URLs and URL queries (a tenant token often rides there). `LLMError`
scrubs its message and raw text when it is made, so no error can carry a secret past this point.
`shown_url` is how a base URL appears in messages; `key_problem` is the check a key passes when
a backend is built.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from urllib.parse import urlsplit

_MASK = "***"
_known: set[str] = set()
_known_lock = threading.Lock()

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A header or field that carries a credential, quoted or not: keep the name, mask the value.
    (re.compile(r"""((?:proxy-)?authorization|api[-_]?key|x-api-key|access[-_]?token|password|secret)"""
                r"""(["']?\s*[:=]\s*["']?)[^"'\n\r,;&}]+""", re.IGNORECASE), r"\1\2" + _MASK),
    (re.compile(r"\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-*]+", re.IGNORECASE), r"\1 " + _MASK),
    # OpenAI-style keys inside a server's text ("Incorrect API key provided: sk-ab***yz").
    (re.compile(r"\b(?:sk|key)-[A-Za-z0-9_*.\-]{3,}"), _MASK),
    # user:password@ in any URL, then the URL's query.
    (re.compile(r"\b([a-z][a-z0-9+.\-]*://)[^/\s@\"'<>]*@", re.IGNORECASE), r"\1"),
    (re.compile(r"\b([a-z][a-z0-9+.\-]*://[^\s?#\"'<>]*)\?[^\s#\"'<>]*", re.IGNORECASE), r"\1"),
)


def register_secret(value: str) -> None:
    """Remember a secret for the life of the process, so `scrub` removes it wherever it shows up."""
    if value and len(value) >= 4:  # shorter is no secret worth guarding, and would mangle text
        with _known_lock:
            _known.add(value)


def scrub(text: str) -> str:
    """`text` without registered secrets, credentials, URL passwords or URL queries."""
    if not text:
        return text
    with _known_lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        text = text.replace(secret, _MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def shown_url(url: str) -> str:
    """A URL as messages show it: scheme, host, port and path; no user, password, query or fragment."""
    try:
        parts = urlsplit(url or "")
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return scrub(url or "")
    if not parts.scheme or not host:
        return scrub(url or "")
    return f"{parts.scheme}://{host}{parts.path}"


def key_problem(key: str) -> str:
    """'' for a usable API key, else what is wrong with it (never the key itself).

    A key travels in an HTTP header, which takes printable ASCII only: a pasted non-breaking hyphen
    fails deep inside the client, and a trailing space or newline breaks the request."""
    for i, ch in enumerate(key):
        if ch.isspace():
            where = "starts" if i == 0 else ("ends" if i == len(key) - 1 else "has")
            name = {" ": "a space", "\n": "a line break", "\r": "a line break", "\t": "a tab"}.get(ch, "a space")
            return (f"{where} with {name}" if where != "has" else f"has {name} at character {i + 1}") + \
                " (copied with the key?)"
        if not " " < ch <= "~":
            label = unicodedata.name(ch, "a control character") if ch.isprintable() else "a control character"
            return (f"has a character that is not plain ASCII at character {i + 1} "
                    f"(U+{ord(ch):04X} {label}); retype it, or copy it from a plain-text source")
    return ""
