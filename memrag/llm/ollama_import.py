"""The `ollama` package, imported only when an Ollama client is made, and only after the address it
will read has been checked.

`import ollama` builds a client at module level from OLLAMA_HOST, so a value it cannot parse
('::garbage::', a port above 65535) raises ValueError inside the import statement, wherever that
import happens (a page importing a module that imports the backend). Nothing in memrag imports
`ollama` at module level; `ollama_module()` is the one door, and an address it cannot use is an
LLMUnavailable carrying the sentence the settings check (and so `memrag doctor`) gives for it.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

from memrag.config import SettingsError, parse_url
from memrag.llm.base import LLMUnavailable

HOST_VARIABLE = "OLLAMA_HOST"
_import_lock = threading.Lock()


def host_problem(host: str, name: str = HOST_VARIABLE) -> str:
    """'' when `host` is an address Ollama's client can use; else the settings check's sentence."""
    if not host.strip():
        return ""  # unset: the client's default address
    try:
        parse_url(name, host, bare_host=True)
    except SettingsError as e:
        return str(e)
    return ""


def checked_host(host: str, name: str = HOST_VARIABLE) -> str:
    """`host` when it is usable; LLMUnavailable with the settings sentence when it is not."""
    problem = host_problem(host, name)
    if problem:
        raise LLMUnavailable(f"settings: {problem}")
    return host


def ollama_module() -> ModuleType:
    """The imported `ollama` package. LLMUnavailable, naming OLLAMA_HOST, when the environment's
    address would break the import (checked first, so the message is the settings check's)."""
    checked_host(os.environ.get(HOST_VARIABLE, ""))
    with _import_lock:
        try:
            import ollama
        except ValueError as e:  # an address the check let through but the client's parser did not
            raise LLMUnavailable(f"settings: {HOST_VARIABLE}={os.environ.get(HOST_VARIABLE, '')!r} "
                                 f"is not a server address: {e}") from None
    return ollama
