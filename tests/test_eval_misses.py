"""Each method's misses on each question of a run (memrag.eval.misses): missed gold passages named
with their fates, wrong answers, and the Evaluate page's filters, on results lines built by hand."""

from __future__ import annotations

import pytest

from memrag.eval import misses


def entry(fates: list[tuple[str, int | None, str]], em: float | None, titles: dict[str, str] | None = None) -> dict:
    """A method's results entry: (unit, rank, fate sentence) per gold chunk, its EM, the trace's passages."""
    return {"metrics": {"recall@5": 0.0, "em": em},
            "gold_fate": [{"unit": u, "chunk_id": i, "fate": f, "detail": "", "rank": r}
                          for i, (u, r, f) in enumerate(fates)],
            "trace": {"chunks": [{"chunk_id": 0, "doc_id": d, "title": t, "text": ""}
                                 for d, t in (titles or {}).items()]}}


TITLES = {"corwin": "Corwin Penhallow", "osric": "Osric Penhallow", "vcl": "Varrow Coast Lines"}
RECORDS = [
    {"qid": "q14", "methods": {
        "neuropath": entry([("vcl", 1, "found by a path"), ("corwin", None, "shown but not judged valid"),
                            ("osric", 9, "shown but not judged valid")], 0.0, TITLES),
        "dense": entry([("vcl", 1, "in the top k"), ("corwin", 3, "in the top k"), ("osric", 7, "beyond k")], 0.0)}},
    {"qid": "q15", "methods": {
        "neuropath": entry([("a", 2, "found by a path"), ("b", 4, "recovered only by completion")], 1.0),
        "dense": entry([("a", 1, "in the top k"), ("b", 2, "in the top k")], 0.0)}},
    {"qid": "q16", "methods": {
        "neuropath": entry([("a", 1, "found by a path"), ("a", 8, "valid but beyond k")], None),
        "dense": entry([("a", 2, "in the top k")], None)}},
]
METHODS = ["neuropath", "dense"]


def test_each_missed_passage_is_named_with_its_fate_and_rank():
    out = misses.question_outcomes(RECORDS[0], METHODS, k=5)
    np_ = out["neuropath"]
    assert [(m.unit, m.title, m.rank) for m in np_.missed] == [("corwin", "Corwin Penhallow", None),
                                                                ("osric", "Osric Penhallow", 9)]
    assert np_.missed[0].fate == "shown to the model, not kept"  # the answer card's words
    assert np_.wrong is True and np_.gold == 3
    assert np_.text() == ("1/3 · EM ✗ — Corwin Penhallow: shown to the model, not kept; "
                          "Osric Penhallow: shown to the model, not kept")
    # dense's own trace names no passage: NeuroPath's trace gives the title
    assert [(m.unit, m.title) for m in out["dense"].missed] == [("osric", "Osric Penhallow")]
    # k decides: with k = 10 NeuroPath ranked Osric's passage inside
    assert [m.unit for m in misses.question_outcomes(RECORDS[0], METHODS, k=10)["neuropath"].missed] == ["corwin"]


def test_a_passage_counts_once_by_its_best_chunk_and_no_answer_is_not_wrong():
    np_ = misses.question_outcomes(RECORDS[2], METHODS, k=5)["neuropath"]
    assert np_.missed == () and np_.gold == 1 and np_.wrong is None
    assert np_.text() == "1/1"


def test_the_filters():
    k = 5
    assert misses.filter_questions(RECORDS, METHODS, k, misses.MISSED, "neuropath") == ["q14"]
    assert misses.filter_questions(RECORDS, METHODS, k, misses.WRONG, "neuropath") == ["q14"]
    assert misses.filter_questions(RECORDS, METHODS, k, misses.WRONG, "dense") == ["q14", "q15"]
    # q14: different passages missed; q15: NeuroPath right, dense wrong; q16: the same
    assert misses.filter_questions(RECORDS, METHODS, k, misses.DIFFERS, "neuropath", "dense") == ["q14", "q15"]
    assert misses.missed_by(RECORDS[0], METHODS, k) == ["neuropath", "dense"]
    assert misses.missed_by(RECORDS[1], METHODS, k) == []
    with pytest.raises(ValueError, match="second, different method"):
        misses.filter_questions(RECORDS, METHODS, k, misses.DIFFERS, "dense", "dense")
    with pytest.raises(ValueError, match="unknown filter"):
        misses.filter_questions(RECORDS, METHODS, k, "lost", "dense")


def test_a_method_the_record_lacks_matches_nothing():
    assert misses.filter_questions(RECORDS, ["hipporag2"], 5, misses.MISSED, "hipporag2") == []
