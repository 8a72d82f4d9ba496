"""Embedders served by a model server, beside the shipped MiniLM: an Ollama embedding model
(`ollama:bge-m3`, the EcphoryRAG paper's embedder) or an OpenAI-compatible `/v1/embeddings`
endpoint (`openai:MODEL`).

Each is named by an id the memory records (`store.load` refuses a memory built with another):
`ollama:MODEL`, and `openai:MODEL@<hash of the base URL>`, because two servers may give different
models the same name. Calls go through the LLM backends' `embed`, so they share their deadlines,
size bounds and error messages.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np

from memrag.textsafe import valid_text

OLLAMA_PREFIX = "ollama:"
OPENAI_PREFIX = "openai:"


class _EmbeddingServer(Protocol):
    def embed(self, texts: list[str]) -> list[list[float]]: ...


def normalise_rows(v: np.ndarray) -> np.ndarray:
    """Unit-length rows (a zero row stays zero): the cosine the memory's indexes expect."""
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    n[n == 0] = 1.0
    return (v / n).astype(np.float32)


def is_served(spec: str) -> bool:
    return spec.startswith((OLLAMA_PREFIX, OPENAI_PREFIX))


class ServedEmbedder:
    """The `Embedder` protocol over a server's embedding model: normalised float32 rows."""

    def __init__(self, model_id: str, server: _EmbeddingServer, batch_size: int = 32) -> None:
        self.model_id = model_id
        self._server = server
        self._batch_size = batch_size
        self._dim: int | None = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        """Learnt from the server with one short text (a memory records it before any encode)."""
        if self._dim is None:
            self.encode(["dimension probe"])
        return self._dim  # type: ignore[return-value]

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        texts = [valid_text(t) or " " for t in texts]  # a server may refuse an empty input
        step = batch_size or self._batch_size
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), step):
            batch = np.asarray(self._server.embed(texts[start:start + step]), dtype=np.float32)
            self._note_dim(batch.shape[-1] if batch.ndim == 2 else -1)
            rows.append(batch)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.ascontiguousarray(normalise_rows(np.vstack(rows)))

    def _note_dim(self, dim: int) -> None:
        with self._lock:
            if dim <= 0 or (self._dim is not None and dim != self._dim):
                raise ValueError(f"embedder {self.model_id} returned vectors of {dim} dimensions "
                                 f"where {self._dim} were expected")
            self._dim = dim


def served_embedder(spec: str, settings: Any | None = None) -> ServedEmbedder:
    """`ollama:MODEL` or `openai:MODEL` as an embedder (servers from `settings`, else the environment)."""
    from memrag.config import Settings

    cfg = settings or Settings()
    if spec.startswith(OLLAMA_PREFIX):
        from memrag.llm.ollama_backend import OllamaLLM

        model = spec[len(OLLAMA_PREFIX):]
        return ServedEmbedder(spec, OllamaLLM(host=cfg.ollama_host, model=model))
    if spec.startswith(OPENAI_PREFIX):
        from memrag.llm.egress import embed_server
        from memrag.llm.openai_backend import OpenAICompatibleLLM, base_url_hash

        model = spec[len(OPENAI_PREFIX):].strip()
        if not model:
            raise ValueError("name the embedding model: openai:MODEL (e.g. openai:text-embedding-3-small)")
        # Embeddings may come from another server than the LLM, with its own key (egress.embed_server).
        base_url, key, key_name = embed_server(cfg)
        server = OpenAICompatibleLLM(base_url=base_url, model=model, api_key=key or None, key_name=key_name)
        return ServedEmbedder(f"{OPENAI_PREFIX}{model}@{base_url_hash(base_url)}", server)
    raise ValueError(f"unknown embedder {spec!r}: use all-MiniLM-L6-v2, ollama:MODEL or openai:MODEL")
