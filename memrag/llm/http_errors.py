"""Failures both HTTP backends name the same way: a redirect they do not follow, and a TLS
handshake that failed (a self-signed certificate is not "nobody answers")."""

from __future__ import annotations

import ssl
from collections.abc import Callable

from memrag.llm.base import LLMUnavailable
from memrag.llm.redact import scrub, shown_url

_MAX_CHAIN = 16  # exception chains are short; a cycle must not hold us


def never_raising(check: Callable[[], tuple[bool, str]], server: str) -> tuple[bool, str]:
    """A backend's `check()` as documented: (ok, why), scrubbed; an unforeseen failure is a failed check."""
    try:
        ok, why = check()
    except Exception as e:  # noqa: BLE001 - check() never raises: whatever went wrong is its answer
        ok, why = False, f"Checking the server at {server} failed ({type(e).__name__}: {e})."
    return ok, scrub(why)


def redirect_error(server: str, status: int, location: str, setting: str) -> LLMUnavailable:
    """A 3xx: memrag never follows one (a redirect could carry the key and documents elsewhere)."""
    to = f" to {shown_url(location)}" if location else ""
    return LLMUnavailable(
        f"The server at {server} answered with a redirect (HTTP {status}{to}), which memrag does not "
        f"follow. Set {setting} to the address it points to, if that is the server you mean.")


def tls_error(server: str, error: BaseException) -> LLMUnavailable | None:
    """The TLS problem behind a failed connection, named; None when it was not one."""
    cause = _ssl_cause(error)
    if cause is None:
        return None
    if isinstance(cause, ssl.SSLCertVerificationError):
        reason = cause.verify_message or cause.reason or "not trusted"
        return LLMUnavailable(
            f"The server at {server} answered, but its TLS certificate could not be verified ({reason}: "
            "for example self-signed, expired, or made out for another name). memrag does not skip the "
            "check; give the server a certificate this machine trusts, or use its trusted address.")
    return LLMUnavailable(
        f"The TLS handshake with {server} failed ({cause.reason or type(cause).__name__}); is it an "
        "https:// server (an http:// one needs http:// in the address)?")


def _ssl_cause(error: BaseException | None) -> ssl.SSLError | None:
    for _ in range(_MAX_CHAIN):
        if error is None:
            return None
        if isinstance(error, ssl.SSLError):
            return error
        error = error.__cause__ or error.__context__
    return None
