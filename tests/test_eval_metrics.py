"""Recall@k, SQuAD answer scores and the small statistics, on hand-computed cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrag.eval.datasets import load_hotpotqa, load_musique
from memrag.eval.metrics import (
    dedupe_units,
    exact_match,
    f1_score,
    normalize_answer,
    raw_exact_match,
    recall_at_k,
)
from memrag.eval.stats import bootstrap_ci, mean, paired_win_loss

FIX = Path(__file__).parent / "fixtures" / "eval"


# ----------------------------------------------------------------------------- recall


def test_dedupe_keeps_first_occurrence_in_rank_order():
    assert dedupe_units(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_recall_dedupes_before_cutting_at_k():
    ranked = ["x", "x", "g1", "y", "g2"]
    # Distinct units: x, g1, y, g2 — the repeated x takes one slot, not two.
    assert recall_at_k(ranked, ["g1", "g2"], 2) == 0.5
    assert recall_at_k(ranked, ["g1", "g2"], 3) == 0.5
    assert recall_at_k(ranked, ["g1", "g2"], 4) == 1.0
    assert recall_at_k(["x", "y"], ["g1"], 5) == 0.0


def test_recall_counts_repeated_gold_once():
    assert recall_at_k(["g1", "z"], ["g1", "g1", "g2"], 2) == 0.5


def test_recall_rejects_empty_gold_and_bad_k():
    with pytest.raises(ValueError, match="gold"):
        recall_at_k(["a"], [], 2)
    with pytest.raises(ValueError, match="k"):
        recall_at_k(["a"], ["a"], 0)


def test_hotpotqa_ids_sharing_a_text_take_one_slot_and_one_gold():
    ds = load_hotpotqa(FIX / "hotpotqa.jsonl")
    q2 = ds.questions[1]

    def unit(source_id: str) -> str:
        return ds.passages[ds.aliases.get(source_id, source_id)].unit

    ranked = [unit(i) for i in ("hp2_ctxchunk_0", "hp2_ctxchunk_1", "hp1_ctxchunk_0", "hp2_ctxchunk_2")]
    # Three ids of the Arthur's Magazine text collapse into one unit; T. S. Arthur is second.
    assert len(q2.gold_units) == 2
    assert recall_at_k(ranked, q2.gold_units, 1) == 0.5
    assert recall_at_k(ranked, q2.gold_units, 2) == 1.0


def test_musique_namesake_paragraph_does_not_count_as_gold():
    ds = load_musique(FIX / "musique_questions.json")
    q1 = ds.questions[0]
    by_text = {p.text: p.unit for p in ds.passages.values()}
    letter = by_text["Alpha is also a letter of the Greek alphabet."]
    brand = by_text["Alpha is a brand owned by Beta Corp."]
    assert recall_at_k([letter], q1.gold_units, 1) == 0.0
    assert recall_at_k([letter, brand], q1.gold_units, 2) == 0.5


# ----------------------------------------------------------------------------- answers


def test_normalize_answer_is_squad_and_nothing_more():
    assert normalize_answer("  The Eiffel Tower, Paris. ") == "eiffel tower paris"
    assert normalize_answer("An apple a day") == "apple day"
    # Articles go only as whole words; punctuation is deleted, not replaced by a space.
    assert normalize_answer("Theatre anthem") == "theatre anthem"
    assert normalize_answer("U.S.-based") == "usbased"


def test_exact_match_uses_aliases_and_normalisation():
    answers = ["G. Stanley Hall", "Stanley Hall"]
    assert exact_match("stanley hall", answers) == 1.0
    assert exact_match("G Stanley Hall!", answers) == 1.0
    assert exact_match("The Stanley Hall", answers) == 1.0
    assert exact_match("Hall", answers) == 0.0


def test_exact_match_drops_no_other_words():
    # Each would pass if the normaliser also dropped "in", "and", "is" or a country name.
    assert exact_match("in 1846", ["1846"]) == 0.0
    assert exact_match("Paris and London", ["Paris London"]) == 0.0
    assert exact_match("The answer is Paris", ["Paris"]) == 0.0
    assert exact_match("Paris, France", ["Paris"]) == 0.0


def test_raw_exact_match_only_trims_white_space():
    assert exact_match("The Paris.", ["Paris"]) == 1.0
    assert raw_exact_match("The Paris.", ["Paris"]) == 0.0
    assert raw_exact_match("  Paris\n", ["London", "Paris"]) == 1.0
    assert raw_exact_match("paris", ["Paris"]) == 0.0


def test_f1_token_overlap_best_over_answers():
    # pred tokens: eiffel tower in paris (4); gold: eiffel tower (2); overlap 2.
    # precision 1/2, recall 1 -> F1 2/3.
    assert f1_score("the Eiffel Tower in Paris", ["Louvre", "Eiffel Tower"]) == pytest.approx(2 / 3)
    # Repeated tokens count only as often as the gold has them.
    assert f1_score("paris paris", ["Paris"]) == pytest.approx(2 / 3)
    assert f1_score("London", ["Paris"]) == 0.0
    assert f1_score("Paris.", ["The Paris"]) == 1.0


def test_f1_with_empty_normalised_strings():
    assert f1_score("", ["Paris"]) == 0.0
    # "the" and "a" both normalise to nothing: agreement, as exact match says too.
    assert f1_score("the", ["a"]) == 1.0 and exact_match("the", ["a"]) == 1.0


def test_scores_need_reference_answers():
    for score in (exact_match, raw_exact_match, f1_score):
        with pytest.raises(ValueError, match="reference"):
            score("Paris", [])


# ----------------------------------------------------------------------------- statistics


def test_mean_and_empty_input():
    assert mean([1, 2, 3, 4]) == 2.5
    with pytest.raises(ValueError):
        mean([])


def test_bootstrap_ci_is_deterministic_and_contains_the_mean():
    values = [0.0, 1.0, 0.5, 0.83, 0.0, 0.12, 1.0, 0.47, 0.91, 1.0, 0.05, 0.66]
    first = bootstrap_ci(values, seed=7)
    assert bootstrap_ci(values, seed=7) == first
    assert bootstrap_ci(values, seed=8) != first
    low, high = first
    assert 0.0 <= low < mean(values) < high <= 1.0


def test_bootstrap_ci_narrows_with_larger_alpha_and_collapses_on_constants():
    values = [0.2, 0.9, 0.4, 0.7, 0.1, 0.8, 0.6, 0.3]
    wide = bootstrap_ci(values, seed=3, alpha=0.05)
    narrow = bootstrap_ci(values, seed=3, alpha=0.5)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    assert bootstrap_ci([0.25] * 10) == (0.25, 0.25)
    with pytest.raises(ValueError):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_ci(values, alpha=1.5)


def test_paired_win_loss_counts_per_question():
    a = [1.0, 0.0, 0.5, 1.0, 0.0]
    b = [0.0, 0.0, 1.0, 1.0, 0.5]
    assert paired_win_loss(a, b) == {"wins": 1, "losses": 2, "ties": 2}
    assert paired_win_loss(b, a) == {"wins": 2, "losses": 1, "ties": 2}
    with pytest.raises(ValueError, match="equal lengths"):
        paired_win_loss([1.0], [1.0, 0.0])
