"""The shared settings (backend, model, folders) and the index parameters; each field carries its
own help text. Each method's parameters live in its wing (memrag/methods/<name>/params.py) and are
re-exported here for older imports.

Use `help_of(SomeParams, "field")` to show it in the app or CLI.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memrag.fields import from_dict, help_of, helped as _f, params_dict
from memrag.methods.dense.params import DenseParams
from memrag.methods.ecphory.params import EcphoryParams
from memrag.methods.hipporag2.params import HippoRAG2Params
from memrag.methods.neuropath.params import DpPosition, NeuroPathParams

__all__ = ["Settings", "IndexParams", "help_of", "params_dict", "from_dict", "default_data_dir",
           "default_cache_dir", "default_backend", "DenseParams", "EcphoryParams", "HippoRAG2Params",
           "NeuroPathParams", "DpPosition"]


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


@dataclass
class Settings:
    backend: Literal["auto", "ollama", "embedded", "openai"] = field(default_factory=default_backend, metadata={
        "help": "auto = Ollama when it answers and has the model, else the embedded model; openai = the "
                "OpenAI-compatible server at the base URL (auto never picks it)."})
    ollama_host: str = _f(
        os.environ.get("OLLAMA_HOST", "http://127.0.0.1:11434"), "Ollama server (OLLAMA_HOST)."
    )
    ollama_model: str = _f(os.environ.get("MEMRAG_OLLAMA_MODEL", "phi4"), "Ollama model name.")
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
    embedder: str = _env_f("MEMRAG_EMBEDDER", "all-MiniLM-L6-v2", "Embedder: all-MiniLM-L6-v2 (shipped), "
                           "ollama:MODEL (e.g. ollama:bge-m3) or openai:MODEL (the server's /v1/embeddings).")

    def __post_init__(self) -> None:
        if self.data_dir is None:
            self.data_dir = default_data_dir()
        if self.cache_dir is None:
            self.cache_dir = default_cache_dir()
        self.data_dir = Path(self.data_dir)
        self.cache_dir = Path(self.cache_dir)


@dataclass
class IndexParams:
    chunk_words: int = _f(180, "Target chunk size in words (uploaded documents only).")
    chunk_overlap_words: int = _f(30, "Words shared by neighbouring chunks.")
    max_file_bytes: int = _f(5_000_000, "Files larger than this are refused.")
    pdf_max_pages: int = _f(200, "PDF pages read at most.")
    pdf_max_seconds: float = _f(30.0, "Seconds spent parsing one PDF at most.")
    coref_top: int = _f(5, "Coreference candidates per entity (others only; official code: 4).")
    coref_threshold: float = _f(0.8, "Minimum cosine of entity-name vectors for a candidate.")
