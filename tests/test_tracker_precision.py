"""Tracker precision (memrag.eval.tracker_precision) on hand-worked NeuroPath traces: new paths only,
the same number taken from the top of the list and at random, recall, the flag, and the figure in
the run summary, its tables and docs/results.md's form."""

from __future__ import annotations

import json

import pytest

from memrag.eval import report
from memrag.eval.records import MethodResult, RunSummary, TrackerHop
from memrag.eval.tracker_precision import ALL_HOPS, aggregate, question_counts
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate, PathTriple

GOLD = {7, 8}  # chunk ids of the question's gold passages


def path(pid: str, chunks: list[int], listed_as: int | None, kept_from: int | None = None) -> PathCandidate:
    return PathCandidate(pid=pid, hop=1, triples=[], frontier="x", frontier_name="x", chunk_ids=chunks,
                         text=pid, listed_as=listed_as, kept_from=kept_from)


def hop(n: int, paths: list[PathCandidate], valid: list[int], failed: bool = False) -> NeuroPathHop:
    return NeuroPathHop(hop=n, goal="g", candidates=paths, valid_ids=valid, failed=failed)


def trace(*hops: NeuroPathHop) -> Trace:
    return Trace(method="neuropath", question="q", details={"neuropath": NeuroPathDetail(hops=list(hops))})


def five_listed() -> list[PathCandidate]:
    """Five new paths in listing order; the 2nd and the 5th touch gold; a pruned one (not listed) too."""
    return [path("a", [1], 1), path("b", [7, 2], 2), path("c", [3], 3), path("d", [4], 4), path("e", [8], 5),
            path("pruned", [7], None)]


def test_a_tracker_keeping_the_top_of_the_list_is_level_with_it_and_flagged():
    counts = question_counts(trace(hop(1, five_listed(), valid=[1, 2])), GOLD)
    assert counts == [TrackerHop(hop=1, listed_new=5, kept_new=2, gold_listed=2, gold_kept=1, gold_top=1)]
    rows = aggregate([counts] * 4)
    assert [r.hop for r in rows] == ["1", ALL_HOPS]
    r = rows[0]
    assert (r.precision, r.top_precision, r.diff) == (0.5, 0.5, 0.0)
    assert r.random_precision == pytest.approx(2 / 5)  # exact expectation: k·g/n over k
    assert r.recall == 0.5
    assert r.not_better_than_list_order


def test_keeping_the_gold_path_listed_last_beats_the_list_order():
    per_q = [question_counts(trace(hop(1, five_listed(), valid=[5, 2])), GOLD)] * 6
    assert per_q[0] == [TrackerHop(1, listed_new=5, kept_new=2, gold_listed=2, gold_kept=2, gold_top=1)]
    r = aggregate(per_q)[0]
    assert (r.precision, r.top_precision, r.recall) == (1.0, 0.5, 1.0)
    assert r.diff == 0.5 and r.diff_ci95 == (0.5, 0.5)
    assert not r.not_better_than_list_order


def test_carried_paths_are_left_out_and_the_top_of_the_list_starts_after_them():
    # hop 2 lists two paths carried from hop 1 first (both gold, both kept), then three new ones
    carried = [path("b@h2", [7], 1, kept_from=1), path("e@h2", [8], 2, kept_from=1)]
    new = [path("f", [5], 3), path("g", [6], 4), path("h", [7], 5)]
    counts = question_counts(trace(hop(1, five_listed(), valid=[2]), hop(2, carried + new, valid=[1, 2, 5])), GOLD)
    assert counts[1] == TrackerHop(2, listed_new=3, kept_new=1, gold_listed=1, gold_kept=1, gold_top=0)
    rows = {r.hop: r for r in aggregate([counts])}
    assert rows["2"].precision == 1.0 and rows["2"].top_precision == 0.0
    # over all hops: hop 1 kept b (gold; the top of the list, a, is not), hop 2 kept h
    assert (rows[ALL_HOPS].kept_new, rows[ALL_HOPS].precision, rows[ALL_HOPS].top_precision) == (2, 1.0, 0.0)


def test_at_hop_two_only_the_passage_of_the_new_triple_counts():
    # two hop-2 paths grown from hop-1 paths: "inherits" reaches gold only through its hop-1 prefix
    # (chunk 7), "finds" adds a triple from gold chunk 8 to a non-gold prefix
    def grown(pid: str, chunks: list[int], listed_as: int) -> PathCandidate:
        p = path(pid, chunks, listed_as)
        p.hop, p.triples = 2, [PathTriple(i, "h", "r", "t", c) for i, c in enumerate(chunks)]
        return p
    inherits, finds = grown("inherits", [7, 3], 1), grown("finds", [4, 8], 2)
    counts = question_counts(trace(hop(1, five_listed(), valid=[2]), hop(2, [inherits, finds], valid=[1])), GOLD)
    assert counts[1] == TrackerHop(2, listed_new=2, kept_new=1, gold_listed=1, gold_kept=0, gold_top=0)
    assert aggregate([counts])[1].random_precision == pytest.approx(1 / 2)


def test_a_hop_with_no_new_paths_counts_nothing_and_a_failed_hop_is_left_out():
    carried = [path("b@h2", [7], 1, kept_from=1)]
    t = trace(hop(1, five_listed(), valid=[2]), hop(2, carried, valid=[1]), hop(3, five_listed(), [], failed=True))
    counts = question_counts(t, GOLD)
    assert [h.hop for h in counts] == [1, 2]
    assert counts[1] == TrackerHop(2, 0, 0, 0, 0, 0)
    row2 = aggregate([counts])[1]
    assert row2.hop == "2" and row2.questions == 1
    assert (row2.precision, row2.top_precision, row2.random_precision, row2.recall, row2.diff, row2.diff_ci95) \
        == (None, None, None, None, None, None)
    assert row2.not_better_than_list_order


def test_keeping_fewer_paths_cannot_buy_recall():
    # the same question judged twice: keeping only the gold path listed 2nd is precise but misses
    # the other gold path; keeping both gold paths (and one more) is less precise but finds both
    narrow = aggregate([question_counts(trace(hop(1, five_listed(), valid=[2])), GOLD)])[0]
    wide = aggregate([question_counts(trace(hop(1, five_listed(), valid=[2, 3, 5])), GOLD)])[0]
    assert (narrow.precision, narrow.recall) == (1.0, 0.5)
    assert wide.precision == pytest.approx(2 / 3) and wide.recall == 1.0


def test_counts_are_summed_over_questions_before_dividing():
    q1 = [TrackerHop(1, listed_new=10, kept_new=1, gold_listed=1, gold_kept=1, gold_top=0)]
    q2 = [TrackerHop(1, listed_new=10, kept_new=9, gold_listed=5, gold_kept=0, gold_top=5)]
    r = aggregate([q1, q2])[0]
    assert r.precision == pytest.approx(1 / 10)  # micro; the mean of per-question shares would be 0.5
    assert r.top_precision == pytest.approx(5 / 10)
    assert r.random_precision == pytest.approx((1 * 1 / 10 + 9 * 5 / 10) / 10)
    assert r.recall == pytest.approx(1 / 6)


def test_a_method_without_a_tracker_has_no_counts():
    assert question_counts(Trace(method="dense", question="q"), GOLD) is None


# ------------------------------------------------------------------ in the run files and tables
def _result(tracker: list[TrackerHop] | None) -> dict:
    out = {"metrics": {"recall@2": 1.0}, "gold_fate": [], "tokens": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                       "llm_calls": 1}, "seconds": 1.0, "trace": {}}
    if tracker is not None:
        out["tracker"] = [h.to_json() for h in tracker]
    return out


def _run() -> dict:
    return {"stamp": {"dataset": "sample", "questions": 3}, "identity": {"methods": ["dense", "neuropath"],
                                                                          "scope": "pooled"}}


def test_the_summary_carries_the_figure_and_the_tables_flag_a_tracker_level_with_the_list():
    level = [TrackerHop(1, 5, 2, 2, 1, 1)]
    records = [{"methods": {"dense": _result(None), "neuropath": _result(level)}, "all_methods": None} for _ in range(3)]
    for r in records:
        r["all_methods"] = r["methods"]["dense"]["tokens"]
    summary = report.summarise(records, _run())
    s = RunSummary.from_json(json.loads(json.dumps(summary)), "s")
    assert s.methods["dense"].tracker_precision is None and "tracker_precision" not in summary["methods"]["dense"]
    rows = s.methods["neuropath"].tracker_precision
    assert [r.hop for r in rows] == ["1", "all"] and rows[0].kept_new == 6
    assert RunSummary.from_json(s.to_json(), "again") == s
    header, table, _ = report.tracker_rows(s)
    assert [t[:2] for t in table] == [["NeuroPath", "1"], ["NeuroPath", "all"]]
    assert table[0][header.index("flag")] == report.NOT_BETTER
    md = report.summary_markdown(s)
    assert "## Tracker precision (new paths)" in md and report.NOT_BETTER in md


def test_a_summary_made_before_the_figure_says_not_recorded():
    records = [{"methods": {"dense": _result(None), "neuropath": _result(None)},
                "all_methods": {"prompt_tokens": 1, "completion_tokens": 1, "llm_calls": 1}}]
    s = RunSummary.of(report.summarise(records, _run()))
    assert s.methods["neuropath"].tracker_precision is None
    _, table, _ = report.tracker_rows(s)
    assert table == [["NeuroPath", "–", "–", "–", "not recorded", "–", "–", "–", "–", ""]]
    md = report.summary_markdown(s)
    assert "Tracker precision (new paths): not recorded" in md and "| NeuroPath | – |" not in md


def test_a_record_with_tracker_counts_reads_back_and_damaged_counts_are_refused():
    raw = _result([TrackerHop(1, 5, 2, 2, 1, 1)])
    assert MethodResult.from_json(raw, "r").to_json()["tracker"] == raw["tracker"]
    assert MethodResult.from_json(_result(None), "r").tracker is None
    raw["tracker"][0]["gold_kept"] = -1
    with pytest.raises(ValueError, match=r"tracker\[0\]: 'gold_kept' is not a count"):
        MethodResult.from_json(raw, "r")


def test_a_hostile_hop_label_is_shown_as_text():
    s = RunSummary.of(report.summarise(
        [{"methods": {"dense": _result(None), "neuropath": _result([TrackerHop(1, 5, 2, 2, 1, 1)])},
          "all_methods": {"prompt_tokens": 1, "completion_tokens": 1, "llm_calls": 1}}], _run()))
    raw = s.to_json()
    raw["methods"]["neuropath"]["tracker_precision"][0]["hop"] = "[x](javascript:alert(1))"
    md = report.summary_markdown(RunSummary.from_json(raw, "s"))
    assert "\\[x\\](javascript:alert(1))" in md and "| [x](" not in md
