"""Where memrag's the dense baseline departs from its paper (or released code), as data."""

from __future__ import annotations

from memrag.methods.paper_kit import Deviation

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("dense", "Dense reference",
              "the papers' dense baselines use their own retrievers",
              "chunks ranked by cosine to the question with MiniLM, passages embedded as 'title\\ntext'",
              "the same reference for every method; reproduces the figures in bench/dense_reference.py (the "
              "published dense recall@2/@5 of the three benchmark samples)"),
)
