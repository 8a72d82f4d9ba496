"""Room mode: the app shown to a room of people, any of whom may type into it.

An explicit setting (MEMRAG_ROOM_MODE), because detection alone fails: behind a proxy every
request comes from loopback, and an app started outside the repository root never reads
.streamlit/config.toml's loopback binding. In room mode

- the sidebar's base URL must be on MEMRAG_ROOM_ALLOW_BASE_URLS (or be the operator's own
  MEMRAG_OPENAI_BASE_URL), checked before any request goes out: the box is otherwise a
  server-side request to anywhere;
- no server's error text reaches the page (it may be an internal page's body), only its kind;
- Streamlit shows an uncaught exception's type, not its message or traceback;
- live work (builds, cancels, removals, asks, evals) runs only where MEMRAG_ROOM_ALLOW_LIVE lists
  it; recorded demos always work.

A room-mode variable that cannot be parsed puts the app in room mode with nothing live allowed
(the safe side), and `problem` says which variable is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from memrag.config import ROOM_LIVE_WORK, RoomSettings, RoomSettingsError, room_base_url, room_settings

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
PROXY_HEADERS = ("x-forwarded-for", "x-forwarded-host", "forwarded", "x-real-ip")
ENV_HINT = "MEMRAG_ROOM_MODE"
WHAT = {"builds": "building a memory", "cancels": "cancelling running work", "removals": "removing documents",
        "asks": "asking the live model", "evals": "running a live evaluation"}
assert set(WHAT) == set(ROOM_LIVE_WORK)  # one sentence per kind of live work


@dataclass(frozen=True)
class Room:
    settings: RoomSettings
    problem: str = ""  # why a room-mode variable was refused ('' when all parsed)

    @property
    def on(self) -> bool:
        return self.settings.on


def current(env: Mapping[str, str] | None = None) -> Room:
    """Room mode as the environment sets it (read on every call: tests and restarts change it)."""
    env = dict(os.environ if env is None else env)
    try:
        return Room(room_settings(env))
    except RoomSettingsError as e:
        return Room(RoomSettings(on=True), str(e))


def base_url_refusal(url: str, room: Room, env: Mapping[str, str] | None = None) -> str | None:
    """Why `url` may not be used as the LLM server's base URL here, or None when it may."""
    if not room.on:
        return None
    env = os.environ if env is None else env
    allowed = set(room.settings.base_urls)
    own = env.get("MEMRAG_OPENAI_BASE_URL", "").strip()
    if own:
        try:
            allowed.add(room_base_url("MEMRAG_OPENAI_BASE_URL", own))
        except RoomSettingsError:
            pass  # the operator's own URL is malformed: it allows nothing
    try:
        wanted = room_base_url("the base URL", url)
    except RoomSettingsError:
        wanted = None
    if wanted is not None and wanted in allowed:
        return None
    listed = ", ".join(sorted(allowed)) or "none"
    return (f"This app runs in room mode: the base URL must be one the person running it allowed "
            f"(MEMRAG_ROOM_ALLOW_BASE_URLS; allowed here: {listed}). Nothing was sent to the address typed.")


def live_refusal(work: str, room: Room) -> str | None:
    """Why live work of kind `work` may not start here, or None when it may."""
    if work not in WHAT:
        raise ValueError(f"unknown kind of live work {work!r}; known: {', '.join(WHAT)}")
    if not room.on or work in room.settings.live:
        return None
    return (f"This app runs in room mode, where {WHAT[work]} is off (MEMRAG_ROOM_ALLOW_LIVE does not list "
            f"'{work}'); the recorded demos still work.")


def shown_error(message: str, room: Room, what: str = "That", kind: str = "") -> str:
    """What the page says about a failure of `what`: the message, or in room mode only its kind
    (a server's message may carry the body of whatever answered)."""
    if not room.on:
        return message
    return (f"{what} failed{f' ({kind})' if kind else ''}. In room mode the page does not show what the server "
            f"or the work said; the person running the app sees it by starting it without {ENV_HINT}.")


def exposure_warning(address: str | None, headers: Mapping[str, str], room: Room) -> str | None:
    """A warning when the app is reachable beyond this machine (bound to a non-loopback address, or
    reached through a proxy) and room mode is off."""
    if room.on:
        return None
    via_proxy = any(h in {k.lower() for k in headers} for h in PROXY_HEADERS)
    if address in LOOPBACK and not via_proxy:
        return None
    where = "through a proxy" if via_proxy else f"on {address or 'every network interface'}"
    return (f"This app is served {where} without room mode: anyone who reaches it can point the LLM box at "
            f"any address and start live work. Set {ENV_HINT}=1 (README: Showing it in a demo room).")


def apply(room: Room) -> str | None:
    """At the top of every run: limit Streamlit's error details to the type in room mode, and
    return the warning to show when the app is served beyond loopback without it."""
    import streamlit as st
    from streamlit.runtime import Runtime

    if room.on:
        st.set_option("client.showErrorDetails", "type")
    if not Runtime.exists():  # AppTest: no server, nothing is served anywhere
        return None
    return exposure_warning(st.get_option("server.address"), dict(st.context.headers), room)
