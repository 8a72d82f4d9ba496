"""Retrieval recall and answer scores.

Recall works on recall units (see `datasets.unit_of`): the ranked list is deduplicated by
unit before it is cut at k, so two ids of one passage never take two slots.
EM / F1 follow the SQuAD normalisation and nothing more; any other clean-up of a model's
answer belongs to the answer module, where it is listed and reported.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Sequence

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def dedupe_units(ranked_units: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each unit, in rank order."""
    return list(dict.fromkeys(ranked_units))


def recall_at_k(ranked_units: Sequence[str], gold_units: Iterable[str], k: int) -> float:
    """|gold ∩ top-k distinct units| / |gold|."""
    gold = set(gold_units)
    if not gold:
        raise ValueError("recall is undefined for a question without gold passages")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    top = set(dedupe_units(ranked_units)[:k])
    return len(gold & top) / len(gold)


def normalize_answer(s: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and a/an/the, collapse spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCTUATION)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _check_answers(answers: Sequence[str]) -> None:
    if not answers:
        raise ValueError("no reference answers to score against")


def exact_match(pred: str, answers: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised reference."""
    _check_answers(answers)
    p = normalize_answer(pred)
    return float(any(p == normalize_answer(a) for a in answers))


def raw_exact_match(pred: str, answers: Sequence[str]) -> float:
    """Exact match after trimming surrounding white space only (shows what normalising buys)."""
    _check_answers(answers)
    p = pred.strip()
    return float(any(p == a.strip() for a in answers))


def _token_f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    if not pred_tokens or not gold_tokens:
        # Both empty is agreement (as EM says); one empty shares nothing.
        return float(pred_tokens == gold_tokens)
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_score(pred: str, answers: Sequence[str]) -> float:
    """SQuAD token F1 (bag of normalised tokens), best over the references."""
    _check_answers(answers)
    p = normalize_answer(pred).split()
    return max(_token_f1(p, normalize_answer(a).split()) for a in answers)
