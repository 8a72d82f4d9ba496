"""The shared settings (backend, model, folders) and the index parameters; each field carries its
own help text. Each method's parameters live in its wing (memrag/methods/<name>/params.py); config
sits below the methods and never imports them.

Use `help_of(SomeParams, "field")` to show it in the app or CLI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal
from urllib.parse import urlsplit

from memrag.fields import from_dict, help_of, helped as _f, params_dict

__all__ = ["Settings", "IndexParams", "help_of", "params_dict", "from_dict", "default_data_dir",
           "default_cache_dir", "default_backend"]


def default_data_dir() -> Path:
    """Where memrag keeps its memories, response cache and assembled model."""
    env = os.environ.get("MEMRAG_HOME")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / "memrag"


def default_cache_dir() -> Path:
    env = os.environ.get("MEMRAG_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "memrag"


def _env_f(name: str, default: str, help: str, **kwargs: Any) -> Any:
    """A field read from the environment when the object is made (so tests can set it)."""
    return field(default_factory=lambda: os.environ.get(name, default), metadata={"help": help}, **kwargs)


def default_backend() -> str:
    """A typed MEMRAG_OPENAI_BASE_URL chooses the OpenAI-compatible server; nothing else in the
    environment does (an OPENAI_API_KEY alone never sends documents anywhere)."""
    return "openai" if os.environ.get("MEMRAG_OPENAI_BASE_URL", "").strip() else "auto"


# ------------------------------------------------------------------ the one parser for settings
class SettingsError(ValueError):
    """A setting that cannot be used; the message names the variable (or field) and says why."""


BACKENDS = ("auto", "ollama", "embedded", "openai")


def _plain_text(name: str, value: str) -> str:
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise SettingsError(f"{name} holds a control character (a pasted newline or tab?)")
    return value


def _shown(value: str) -> str:
    """A value quoted in a message, with any `user:password@` part of an address left out."""
    scheme, sep, rest = value.rpartition("://")
    return repr(f"{scheme}{sep}…@{rest.rpartition('@')[2]}" if "@" in rest else value)


def parse_url(name: str, value: str, *, bare_host: bool = False) -> str:
    """A server address: http(s), a host, a port in 1-65535. `bare_host` takes Ollama's short
    forms too ('host', 'host:port', ':port')."""
    text = _plain_text(name, value.strip())
    value = _shown(value)
    if " " in text:
        raise SettingsError(f"{name}={value} is not a server address (it holds a space)")
    full = text if "://" in text or not bare_host else "http://" + text
    try:
        parts = urlsplit(full)
        port = parts.port
    except ValueError as e:  # a port that is not a number or out of range
        raise SettingsError(f"{name}={value} is not a server address: {e}") from None
    if parts.scheme not in ("http", "https"):
        raise SettingsError(f"{name}={value} is not a server address: it must start with http:// or https://")
    if not parts.hostname and not (bare_host and parts.netloc.startswith(":")):
        raise SettingsError(f"{name}={value} is not a server address: it names no host")
    if port == 0:
        raise SettingsError(f"{name}={value} is not a server address: port 0")
    return text


def parse_int(name: str, value: str | int, low: int, high: int) -> int:
    """An integer in [low, high] (written as digits in the environment)."""
    if isinstance(value, bool):
        raise SettingsError(f"{name} must be a whole number, got {value!r}")
    try:
        number = value if isinstance(value, int) else int(str(value).strip(), 10)
    except ValueError:
        raise SettingsError(f"{name} must be a whole number, got {value!r}") from None
    if not low <= number <= high:
        raise SettingsError(f"{name} must be between {low} and {high}, got {number}")
    return number


_FLAG_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False,
               "off": False, "": False}


def parse_flag(name: str, value: str) -> bool:
    word = value.strip().lower()
    if word not in _FLAG_WORDS:
        raise SettingsError(f"{name} must be 1 or 0 (or true/false, yes/no, on/off), got {value!r}")
    return _FLAG_WORDS[word]


def _name(name: str, value: str) -> str:
    if not value.strip():
        raise SettingsError(f"{name} is empty")
    return _plain_text(name, value)


def _backend(name: str, value: str) -> str:
    if value not in BACKENDS:
        raise SettingsError(f"{name} must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value


# ------------------------------------------------------------------ room mode (read by memrag.app.room)
ROOM_LIVE_WORK = ("builds", "cancels", "removals", "asks", "evals")
RoomSettingsError = SettingsError  # the room's variables are checked by the one parser


@dataclass(frozen=True)
class RoomSettings:
    on: bool = False  # MEMRAG_ROOM_MODE
    base_urls: tuple[str, ...] = ()  # MEMRAG_ROOM_ALLOW_BASE_URLS, each normalised by `room_base_url`
    live: frozenset[str] = frozenset()  # MEMRAG_ROOM_ALLOW_LIVE: the live work visitors may start


def room_base_url(name: str, text: str) -> str:
    """A base URL in one comparable form (scheme and host lower-case, the port written out, no
    trailing '/'); SettingsError naming `name` for anything else than a plain http(s) address."""
    text = text.strip()
    try:
        parts = urlsplit(text)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError as e:
        raise SettingsError(f"{name}: {text!r} is not an address ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"{name}: {text!r} is not an http:// or https:// address with a host")
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment \
            or any(c.isspace() or ord(c) < 32 for c in text):
        raise SettingsError(f"{name}: an address here holds no user, password, query (?…), fragment (#…) "
                            f"or spaces")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port}{parts.path.rstrip('/')}"


def _room_base_urls(name: str, value: str) -> tuple[str, ...]:
    return tuple(room_base_url(name, u) for u in value.split(",") if u.strip())


def _room_live(name: str, value: str) -> frozenset[str]:
    words = {w.strip().lower() for w in value.split(",") if w.strip()}
    unknown = sorted(words - set(ROOM_LIVE_WORK) - {"all", "none"})
    if unknown:
        raise SettingsError(f"{name}: {', '.join(map(repr, unknown))} is not one of "
                            f"{', '.join(ROOM_LIVE_WORK)}, all or none")
    return frozenset(ROOM_LIVE_WORK) if "all" in words else frozenset(words - {"none"})


def room_settings(env: dict[str, str] | None = None) -> RoomSettings:
    """The room-mode variables, checked; SettingsError names the first that cannot be used."""
    env = dict(os.environ) if env is None else env

    def read(name: str, default: Any) -> Any:
        raw = env.get(name, "")
        return default if not raw.strip() else _CHECKS[name](name, raw)

    return RoomSettings(read("MEMRAG_ROOM_MODE", False), read("MEMRAG_ROOM_ALLOW_BASE_URLS", ()),
                        read("MEMRAG_ROOM_ALLOW_LIVE", frozenset()))


# Every variable memrag reads, with its check; `env_setting` is how code reads one. A variable set
# to an empty string counts as unset (the shell's `VAR= cmd` idiom).
_CHECKS: dict[str, Callable[[str, str], Any]] = {
    "MEMRAG_HOME": _plain_text,
    "MEMRAG_CACHE_DIR": _plain_text,
    "OLLAMA_HOST": lambda n, v: parse_url(n, v, bare_host=True),
    "MEMRAG_OLLAMA_MODEL": _name,
    "MEMRAG_OPENAI_BASE_URL": parse_url,
    "MEMRAG_OPENAI_EMBED_BASE_URL": parse_url,
    "MEMRAG_OPENAI_MODEL": _plain_text,
    "MEMRAG_EMBEDDER": _name,
    "MEMRAG_THREADS": lambda n, v: parse_int(n, v, 1, 1024),
    "MEMRAG_PRELOAD": lambda n, v: parse_int(n, v, 0, 1),
    "MEMRAG_ALLOW_RUN_PATHS": parse_flag,
    "MEMRAG_BENCH": _plain_text,
    "MEMRAG_ROOM_MODE": parse_flag,
    "MEMRAG_ROOM_ALLOW_BASE_URLS": _room_base_urls,
    "MEMRAG_ROOM_ALLOW_LIVE": _room_live,
}


def env_setting(name: str, default: Any = None) -> Any:
    """The parsed value of one environment variable, or `default` when it is unset or empty.
    Raises SettingsError naming the variable when its value cannot be used."""
    raw = os.environ.get(name, "")
    return default if not raw.strip() else _CHECKS[name](name, raw)


def env_problems() -> list[str]:
    """One message per environment variable memrag reads whose value cannot be used."""
    problems = []
    for name in _CHECKS:
        try:
            env_setting(name)
        except SettingsError as e:
            problems.append(str(e))
    return problems


def threads_setting() -> int | None:
    """MEMRAG_THREADS: the embedded model's CPU threads (None = all cores)."""
    return env_setting("MEMRAG_THREADS")


@dataclass
class Settings:
    backend: Literal["auto", "ollama", "embedded", "openai"] = field(default_factory=default_backend, metadata={
        "help": "auto = Ollama when it answers and has the model, else the embedded model; openai = the "
                "OpenAI-compatible server at the base URL (auto never picks it)."})
    # Read when the object is made, not when the module is imported, like every other variable.
    ollama_host: str = _env_f("OLLAMA_HOST", "http://127.0.0.1:11434", "Ollama server (OLLAMA_HOST).")
    ollama_model: str = _env_f("MEMRAG_OLLAMA_MODEL", "phi4", "Ollama model name.")
    seed: int = _f(42, "Sampling seed sent to the engine (temperature is always 0).")
    response_cache: bool = _f(True, "Reuse recorded replies for identical calls (SQLite).")
    data_dir: Path = _f(None, "Memories, cache and model live here (MEMRAG_HOME).")
    cache_dir: Path = _f(None, "Assembled model file lives here (MEMRAG_CACHE_DIR).")
    extract_parallel: int = _f(
        4, "Extraction requests kept in flight with Ollama or an OpenAI-compatible server "
           "(the embedded model runs one at a time)."
    )
    openai_base_url: str = _env_f("MEMRAG_OPENAI_BASE_URL", "", "OpenAI-compatible server, e.g. "
                                  "http://127.0.0.1:8000/v1 (MEMRAG_OPENAI_BASE_URL).")
    openai_model: str = _env_f("MEMRAG_OPENAI_MODEL", "", "Model id on that server (MEMRAG_OPENAI_MODEL); "
                               "empty = the one model a single-model server lists.")
    # repr=False: a Settings printed in a log or an error never shows the key.
    openai_api_key: str = _env_f("OPENAI_API_KEY", "", "API key for that server (OPENAI_API_KEY); never "
                                 "stored in traces, stamps, recordings or cache keys.", repr=False)
    # The embeddings server and its own key (issue 27): the LLM's key never goes to another host.
    openai_embed_base_url: str = _env_f("MEMRAG_OPENAI_EMBED_BASE_URL", "", "OpenAI-compatible server for "
                                        "openai:MODEL embeddings (MEMRAG_OPENAI_EMBED_BASE_URL); empty = the "
                                        "LLM's server.")
    openai_embed_api_key: str = _env_f("MEMRAG_OPENAI_EMBED_API_KEY", "", "API key for the embeddings server "
                                       "(MEMRAG_OPENAI_EMBED_API_KEY); OPENAI_API_KEY is sent only to "
                                       "MEMRAG_OPENAI_BASE_URL.", repr=False)
    embedder: str = _env_f("MEMRAG_EMBEDDER", "all-MiniLM-L6-v2", "Embedder: all-MiniLM-L6-v2 (shipped), "
                           "ollama:MODEL (e.g. ollama:bge-m3) or openai:MODEL (the server's /v1/embeddings).")

    def __post_init__(self) -> None:
        # Making a Settings never raises (pages build one on every rerun); `problems` says what is wrong.
        if self.data_dir is None:
            self.data_dir = default_data_dir()
        if self.cache_dir is None:
            self.cache_dir = default_cache_dir()
        self.data_dir = Path(self.data_dir)
        self.cache_dir = Path(self.cache_dir)

    def problems(self) -> list[str]:
        """Every value, from the environment or set on this object, that cannot be used (one message
        each, naming the variable), checked as they are now."""
        found = env_problems()
        checks: list[Callable[[], Any]] = [
            lambda: _backend("backend", self.backend),
            lambda: parse_url("OLLAMA_HOST", self.ollama_host, bare_host=True),
            lambda: _name("MEMRAG_OLLAMA_MODEL", self.ollama_model),
            lambda: self.openai_base_url.strip() and parse_url("MEMRAG_OPENAI_BASE_URL", self.openai_base_url),
            lambda: _plain_text("MEMRAG_OPENAI_MODEL", self.openai_model),
            lambda: _name("MEMRAG_EMBEDDER", self.embedder),
            lambda: parse_int("seed", self.seed, 0, 2**32 - 1),
            lambda: parse_int("extract_parallel", self.extract_parallel, 1, 256),
        ]
        for check in checks:
            try:
                check()
            except SettingsError as e:
                if str(e) not in found:
                    found.append(str(e))
        return found

    def check(self) -> None:
        """Raise one SettingsError listing every problem (the CLI's refusal)."""
        problems = self.problems()
        if problems:
            raise SettingsError("; ".join(problems))


@dataclass
class IndexParams:
    chunk_words: int = _f(180, "Target chunk size in words (uploaded documents only).")
    chunk_overlap_words: int = _f(30, "Words shared by neighbouring chunks.")
    max_file_bytes: int = _f(5_000_000, "Files larger than this are refused.")
    pdf_max_pages: int = _f(200, "PDF pages read at most.")
    pdf_max_seconds: float = _f(30.0, "Seconds spent parsing one PDF at most.")
    coref_top: int = _f(5, "Coreference candidates per entity (others only; official code: 4).")
    coref_threshold: float = _f(0.8, "Minimum cosine of entity-name vectors for a candidate.")
