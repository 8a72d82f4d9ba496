"""Hand-made vectors for tests that work retrieval figures out by hand: named axes, unit rows."""

from __future__ import annotations

import numpy as np

DIM = 8


def vec(**parts: float) -> list[float]:
    """A vector from named axes: vec(d0=.8, d1=.6)."""
    v = [0.0] * DIM
    for name, x in parts.items():
        v[int(name[1:])] = x
    return v


def unit(rows) -> np.ndarray:
    a = np.asarray(rows, np.float32)
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
