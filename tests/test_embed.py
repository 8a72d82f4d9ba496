"""The real MiniLM embedder: the traced small-batch path gives sentence-transformers' own vectors."""

from __future__ import annotations

import numpy as np
import pytest

from memrag.embed import SMALL_BATCH, get_embedder

TEXTS = [
    "Who is the mother of the director of film Polish-Russian War?",
    "Gannet",
    "",
    "excursion steamers",
    "word " * 400,  # longer than the model's 256 tokens: truncated the same way on both paths
    "Ștefan I. Nenițescu — “quoted” <b>markup</b> & émoji 🚢",
]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()


def reference(embedder, texts: list[str]) -> np.ndarray:
    return embedder._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                                  show_progress_bar=False)


def test_small_batches_match_sentence_transformers_one_by_one_and_padded(embedder):
    together = embedder.encode(TEXTS)  # padded to the longest text
    assert embedder._traced is not None, "the traced path was not taken"
    np.testing.assert_allclose(together, reference(embedder, TEXTS), atol=1e-5)
    for text in TEXTS:
        np.testing.assert_allclose(embedder.encode([text])[0], reference(embedder, [text])[0], atol=1e-5)
    assert together.dtype == np.float32 and together.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_large_batches_and_empty_input(embedder):
    texts = [f"passage number {i} about {TEXTS[i % len(TEXTS)][:40]}" for i in range(SMALL_BATCH + 3)]
    np.testing.assert_allclose(embedder.encode(texts), reference(embedder, texts), atol=1e-5)
    assert embedder.encode([]).shape == (0, embedder.dim)
