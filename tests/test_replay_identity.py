"""Every sample demo question, replayed with every method from the shipped recordings, gives the
rankings, answers, fates, tokens and summary figures of the committed snapshot.

The snapshot (tests/fixtures/replay_snapshot.json) was written by `python bench/replay_snapshot.py`
at e6ec4db, before the methods moved into wings. It is a regression fixture: regenerating it is
legitimate only for an intended change of behaviour (a new default, a re-recorded sample), said in
the commit that does it; a refactor that needs it regenerated has changed what the methods do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrag.eval.replay import differences, replay_sample, run_digest, summary_figures

SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "replay_snapshot.json"


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def replayed(snapshot, tmp_path_factory) -> dict:
    out = replay_sample(tmp_path_factory.mktemp("replay") / "run", methods=tuple(snapshot["methods"]))
    return run_digest(out)


def test_the_snapshot_covers_every_demo_question_and_method(snapshot):
    from memrag.demo import sample_questions

    assert list(snapshot["questions"]) == [q["id"] for q in sample_questions()]
    assert set(snapshot["methods"]) == {"dense", "neuropath", "ecphory", "hipporag2"}
    for qid, per in snapshot["questions"].items():
        assert list(per) == snapshot["methods"], qid
        assert all(len(d["ranked"]) == 20 and d["answer"] for d in per.values()), qid


def test_every_question_and_method_replays_as_in_the_snapshot(snapshot, replayed):
    for qid, per in snapshot["questions"].items():
        for method, expected in per.items():
            diff = differences(expected, replayed["questions"].get(qid, {}).get(method), f"{qid}/{method}")
            assert not diff, "replay differs from the snapshot:\n" + "\n".join(diff)
    assert list(replayed["questions"]) == list(snapshot["questions"])


def test_the_summary_figures_replay_as_in_the_snapshot(snapshot, replayed):
    diff = differences(snapshot["summary"], replayed["summary"], "summary")
    assert not diff, "summary differs from the snapshot:\n" + "\n".join(diff)


def test_a_moved_passage_or_a_changed_figure_is_a_difference(snapshot):
    """The comparison itself: one swapped pair in a ranking, or one figure a float step away, fails."""
    per = snapshot["questions"]["q01"]["hipporag2"]
    swapped = dict(per, ranked=[per["ranked"][1], per["ranked"][0], *per["ranked"][2:]])
    first, second = per["ranked"][:2]
    assert differences(per, swapped, "q01") == [f"q01/ranked[0]: {first} → {second}",
                                                f"q01/ranked[1]: {second} → {first}"]
    r2 = snapshot["summary"]["methods"]["dense"]["recall@2"]
    nudged = json.loads(json.dumps(snapshot["summary"]))
    nudged["methods"]["dense"]["recall@2"] = r2 + 1e-15
    assert differences(snapshot["summary"], nudged) == [f"/methods/dense/recall@2: {r2} → {r2 + 1e-15}"]
    assert differences(per, dict(per, ranked=per["ranked"][:19])) == [
        f"/ranked: {json.dumps(per['ranked'])} → {json.dumps(per['ranked'][:19])}"]


def test_figures_leave_out_what_measures_the_machine():
    summary = {"stamp": {"memrag_revision": "x"}, "deviations": [], "scope": "pooled",
               "methods": {"dense": {"recall@2": 0.5, "seconds_per_query": 0.07, "llm_seconds_per_query": 22.2}},
               "indexing": {"fingerprint": "f", "path": "/somewhere", "seconds": 0.01, "source": "opened"}}
    assert summary_figures(summary) == {"scope": "pooled",
                                        "methods": {"dense": {"recall@2": 0.5, "llm_seconds_per_query": 22.2}},
                                        "indexing": {"fingerprint": "f"}}
