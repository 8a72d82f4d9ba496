"""Small statistics for comparing methods on the same questions."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def mean(values: Sequence[float]) -> float:
    if len(values) == 0:
        raise ValueError("mean of no values")
    return float(np.mean(np.asarray(values, dtype=float)))


def bootstrap_ci(
    values: Sequence[float], n_boot: int = 2000, seed: int = 0, alpha: float = 0.05
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean; the same seed gives the same interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("bootstrap of no values")
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie between 0 and 1, got {alpha}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(n_boot, data.size))
    means = data[picks].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_ratio_ci(
    numerators: Sequence[float], denominators: Sequence[float], n_boot: int = 2000, seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of sum(numerators) / sum(denominators), resampling the pairs
    (one per question) together: a micro-averaged share's interval. Resamples whose denominators
    sum to 0 are left out; None when every one does."""
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.size == 0 or num.size != den.size:
        raise ValueError(f"a ratio bootstrap needs equal, non-empty lists, got {num.size} and {den.size}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, num.size, size=(n_boot, num.size))
    tops, bottoms = num[picks].sum(axis=1), den[picks].sum(axis=1)
    ok = bottoms > 0
    if not ok.any():
        return None
    low, high = np.quantile(tops[ok] / bottoms[ok], [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def paired_win_loss(a: Sequence[float], b: Sequence[float]) -> dict[str, int]:
    """Per question: does method a score above, below or level with method b?"""
    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    wins = sum(1 for x, y in zip(a, b) if x > y)
    losses = sum(1 for x, y in zip(a, b) if x < y)
    return {"wins": wins, "losses": losses, "ties": len(a) - wins - losses}
