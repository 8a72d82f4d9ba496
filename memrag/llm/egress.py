"""Where documents go, and which key goes to which server.

Documents leave this machine through two doors: the LLM (every chunk and question) and a served
embedder (every chunk and question, as text to embed). `egress_notice` names every host behind
either door that is not this computer; the CLI, the sidebar and `memrag doctor` all show it
through `BackendChoice.warning`.

A key belongs to the one base URL it was given for: OPENAI_API_KEY to MEMRAG_OPENAI_BASE_URL,
MEMRAG_OPENAI_EMBED_API_KEY to MEMRAG_OPENAI_EMBED_BASE_URL. An embeddings server elsewhere never
receives the LLM's key (`embed_server`).
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any
from urllib.parse import urlsplit

EGRESS_WARNING = ("your documents leave this machine: every chunk and question is sent to {host}, "
                  "which is not this computer")

_OPENAI_EMBEDDER = "openai:"
_OLLAMA_EMBEDDER = "ollama:"


def is_loopback(url: str) -> bool:
    try:
        host = (urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host(url: str) -> str:
    try:
        return urlsplit(url if "://" in url else f"http://{url}").hostname or url
    except ValueError:
        return "an unparsable address"


def egress_warning(url: str) -> str:
    """The notice for one server ('' when it is this machine)."""
    return "" if is_loopback(url) else EGRESS_WARNING.format(host=_host(url))


def embed_server(settings: Any) -> tuple[str, str, str]:
    """(base URL, API key, the key's setting name) for an `openai:` embedder.

    MEMRAG_OPENAI_EMBED_BASE_URL when set, else the LLM's server. The LLM's key goes only to the
    LLM's own base URL; another embeddings server gets MEMRAG_OPENAI_EMBED_API_KEY or no key."""
    from memrag.llm.openai_backend import EMBED_KEY_NAME, LLM_KEY_NAME, normalise_base_url

    llm_url = (settings.openai_base_url or "").strip()
    url = (settings.openai_embed_base_url or "").strip() or llm_url
    try:
        same = bool(llm_url) and normalise_base_url(url) == normalise_base_url(llm_url)
    except Exception:  # noqa: BLE001 - a malformed URL is reported when the backend is built
        same = False
    if same and not settings.openai_embed_api_key:
        return url, settings.openai_api_key, LLM_KEY_NAME
    return url, settings.openai_embed_api_key, EMBED_KEY_NAME


def key_for_server(base_url: str, key: str) -> tuple[str, str]:
    """(the key that may go to `base_url`, why a key was withheld or '').

    OPENAI_API_KEY from the environment belongs to MEMRAG_OPENAI_BASE_URL when that is set: a base
    URL named elsewhere (--base-url, the sidebar) does not receive it. A key that is not the
    environment's (typed into the sidebar beside its URL) is the user's for that URL, and with no
    MEMRAG_OPENAI_BASE_URL the environment's key goes with the base URL named in the same command."""
    from memrag.llm.openai_backend import LLM_KEY_NAME, normalise_base_url

    env_key = os.environ.get(LLM_KEY_NAME, "").strip()
    env_url = os.environ.get("MEMRAG_OPENAI_BASE_URL", "").strip()
    if not key or key.strip() != env_key or not env_url or not (base_url or "").strip():
        return key, ""
    try:
        same = normalise_base_url(base_url) == normalise_base_url(env_url)
    except Exception:  # noqa: BLE001 - a malformed URL is reported when the backend is built
        same = False
    if same:
        return key, ""
    return "", (f"{LLM_KEY_NAME} belongs to MEMRAG_OPENAI_BASE_URL ({_host(env_url)}); it is not sent to "
                f"{_host(base_url)}. Give that server its own key (the sidebar's key box), or set "
                f"MEMRAG_OPENAI_BASE_URL to it.")


def document_servers(settings: Any, llm_backend: str) -> list[tuple[str, str]]:
    """(role, URL) of every server documents are sent to with `llm_backend` and the settings' embedder."""
    servers: list[tuple[str, str]] = []
    if llm_backend == "openai":
        servers.append(("the LLM", settings.openai_base_url))
    elif llm_backend == "ollama":
        servers.append(("the LLM", settings.ollama_host))
    embedder = settings.embedder or ""
    if embedder.startswith(_OPENAI_EMBEDDER):
        servers.append(("the embedder", embed_server(settings)[0]))
    elif embedder.startswith(_OLLAMA_EMBEDDER):
        servers.append(("the embedder", settings.ollama_host))
    return servers


def egress_notice(settings: Any, llm_backend: str) -> str:
    """One notice naming every host, not this computer, that documents go to ('' when none)."""
    hosts: dict[str, list[str]] = {}
    for role, url in document_servers(settings, llm_backend):
        if url and not is_loopback(url):
            hosts.setdefault(_host(url), []).append(role)
    if not hosts:
        return ""
    named = " and ".join(f"{host} ({' and '.join(roles)})" for host, roles in hosts.items())
    notice = EGRESS_WARNING.format(host=named)
    return notice if len(hosts) == 1 else notice.replace("which is not", "none of which is")
