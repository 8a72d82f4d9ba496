"""The dense baseline's parameters."""

from __future__ import annotations

from dataclasses import dataclass

from memrag.fields import helped as _f


@dataclass
class DenseParams:
    answer_passages: int = _f(5, "Chunks from the head of the ranked list given to the answer step.", low=1, high=50)
