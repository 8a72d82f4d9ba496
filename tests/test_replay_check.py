"""bench/replay_check.py remakes each committed run with that run's own settings, read from its stamp."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _replay_check():
    spec = importlib.util.spec_from_file_location("replay_check_under_test", BENCH / "replay_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RC = _replay_check()


def test_every_run_is_checked_or_said_why_it_cannot_be():
    every = RC.every_run()
    assert set(every) == {d for d in RC.RUNS.iterdir() if d.is_dir()}
    names = {r.name for r in RC.committed_runs()}
    kept = {p.parent.name for p in RC.RUNS.glob("*/replies.jsonl")}
    assert kept and kept <= names
    # without replies of its own: a sample run (the shipped memory's recordings), a run replayed from
    # another committed run's replies (its command names them), or one that needs no model
    for run in (RC.RUNS / n for n in names - kept):
        assert every[run] in ("sample recordings", "no model") or RC.replies_of(run).parent != run, run.name
    cannot = {d.name: how for d, how in every.items() if how.startswith("cannot")}
    assert all("missing:" in how for how in cannot.values())
    assert not set(cannot) & names


def test_a_run_replayed_from_another_runs_replies_replays_from_them_and_dense_alone_needs_no_model():
    run = RC.RUNS / "2wiki-per-question-5-hipporag2-retrieval"
    assert RC.replies_of(run) == (RC.RUNS / "2wiki-per-question-5-four-methods" / "replies.jsonl").resolve()
    assert RC.how_it_replays(RC.RUNS / "musique-pooled-dense") == "no model"
    # made live before runs kept their raw replies, then made again with its stamped settings: replays
    assert RC.how_it_replays(RC.RUNS / "musique-pooled-30") == "replies"


def test_a_live_run_without_its_replies_cannot_replay_and_says_what_is_missing(tmp_path):
    first = RC.RUNS / "musique-pooled-30" / "summary-as-first-made.json"
    (tmp_path / "summary.json").write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    how = RC.how_it_replays(tmp_path)
    assert how.startswith("cannot replay") and "missing: the replies of its about 165 model calls" in how


def test_a_parameter_added_later_replays_with_the_value_in_effect_before_it(tmp_path):
    run = RC.RUNS / "musique-pooled-1-30-four-methods-seed-floor"
    assert "seed_top" not in json.loads((run / "summary.json").read_text())["stamp"]["params"]["neuropath"]
    cmd = RC.replay_command(run, tmp_path, tmp_path, tmp_path / "mem")
    assert json.loads(Path(cmd[cmd.index("--params") + 1]).read_text())["neuropath"]["seed_top"] == 1
    # made before skip_class_words and hop_prompt existed: no skip, and the prompt that carries the chain
    old = RC.RUNS / "musique-pooled-1-5-live-seconds-previous-default"
    stamped = json.loads((old / "summary.json").read_text())["stamp"]["params"]["neuropath"]
    assert "skip_class_words" not in stamped and "hop_prompt" not in stamped
    cmd = RC.replay_command(old, tmp_path, tmp_path, tmp_path / "mem")
    asked = json.loads(Path(cmd[cmd.index("--params") + 1]).read_text())["neuropath"]
    assert (asked["skip_class_words"], asked["hop_prompt"], asked["seed_top"]) == (False, "carry", 1)
    assert asked["dp_floor"] is False  # made before the fused merge's floor (it came with hop_prompt)
    assert "dp_floor" not in RC.replay_params("neuropath", {"hop_prompt": "paths"})  # after: today's default
    # a stamp that names a parameter keeps its own value
    cmd = RC.replay_command(RC.RUNS / "musique-pooled-1-30-reach", tmp_path, tmp_path, tmp_path / "mem")
    assert json.loads(Path(cmd[cmd.index("--params") + 1]).read_text())["neuropath"]["seed_top"] == 3


def test_a_redefined_figure_is_listed_apart_and_not_counted():
    diff = ["summary/methods/neuropath/tracker_precision[1]/precision: 0.69 → 0.31",
            "summary/methods/neuropath/recall@2: 0.5 → 0.6"]
    counted, redefined = RC.split_redefined(diff)
    assert counted == diff[1:] and redefined == {"tracker_precision": diff[:1]}


@pytest.mark.parametrize("run", RC.committed_runs(), ids=lambda p: p.name)
def test_the_replay_command_asks_for_the_runs_own_settings(run, tmp_path):
    from memrag.cli.eval import config_from_args, register

    bench = tmp_path / "bench"
    (bench / "musique").mkdir(parents=True)
    (bench / "musique" / "musique_train.json").write_text(json.dumps([{"id": i} for i in range(60)]))
    cmd = RC.replay_command(run, bench, tmp_path, tmp_path / "mem")
    assert cmd[1:4] == ["-m", "memrag", "eval"] and "--recorded" in cmd
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    config = config_from_args(parser.parse_args(cmd[3:]))
    stamp = json.loads((run / "summary.json").read_text(encoding="utf-8"))["stamp"]
    assert (config.dataset, config.scope, config.limit, config.answer, config.fate_k) == \
        (stamp["dataset"], stamp["scope"], stamp["limit"], stamp["answers"], stamp["fate_k"])
    assert list(config.methods) == list(stamp["params"])
    assert config.params == {m: RC.replay_params(m, p) for m, p in stamp["params"].items()}
    assert config.out == tmp_path / run.name
    assert ("--replies" in cmd) == (RC.replies_of(run) is not None)
    if stamp.get("import_openie"):
        assert config.import_openie.name == Path(stamp["import_openie"]).name
        # the pooled memory is imported once and opened; a slice imports its own into the replay's folder
        assert config.memory == (tmp_path / "mem" if stamp["scope"] == "pooled" else None)
    if Path(stamp["data"]).name == "musique_31_60.json":  # the shared file's entries 31-60
        assert [q["id"] for q in json.loads(config.data.read_text())] == list(range(30, 60))


def test_figures_a_summary_predates_are_listed_not_compared():
    added: list[str] = []
    kept = RC._keys_of({"m": {"a": 1}}, {"m": {"a": 2, "new": 3}, "x": 4}, "s", added)
    assert kept == {"m": {"a": 2}} and sorted(added) == ["new", "x"]


def test_a_replay_without_a_method_asks_for_the_others_and_compares_their_figures_only(tmp_path):
    run = RC.RUNS / "musique-pooled-1-30-four-methods"
    cmd = RC.replay_command(run, tmp_path, tmp_path, tmp_path / "mem", ("neuropath",))
    assert cmd[cmd.index("--methods") + 1] == "dense,ecphory,hipporag2"
    params = json.loads(Path(cmd[cmd.index("--params") + 1]).read_text())
    assert list(params) == ["dense", "ecphory", "hipporag2"]
    figures = RC.summary_figures(json.loads((run / "summary.json").read_text()))
    kept = RC.only_methods(figures, ["dense", "ecphory", "hipporag2"])
    assert list(kept["methods"]) == ["dense", "ecphory", "hipporag2"] and "all_methods" not in kept
    assert sorted(kept["paired"]) == ["dense vs ecphory", "dense vs hipporag2", "ecphory vs hipporag2"]
    assert set(kept["same_top5_as_dense"]) == {"ecphory", "hipporag2"}
    assert kept["indexing"] == figures["indexing"]


def test_a_count_split_after_a_run_was_made_is_compared_with_its_parts_added_back():
    part, (whole, _) = next(iter(RC.SPLIT.items()))
    committed = {"m": {"gold_fate": {"found": 4, whole: 2}}}
    replayed = {"m": {"gold_fate": {"found": 4, part: 1, whole: 1}}}
    folded: list[str] = []
    assert RC.fold_split(committed, replayed, folded) == committed and folded == [part]
    # a summary that has the split keeps both parts apart; a wrong total still differs
    both = {"m": {"gold_fate": {"found": 4, part: 1, whole: 1}}}
    assert RC.fold_split(both, replayed, []) == replayed
    assert RC.differences(committed, RC.fold_split(committed, {"m": {"gold_fate": {"found": 4, part: 2, whole: 1}}},
                                                   []))


def test_the_table_names_every_run_with_what_it_replays_from_and_its_verdict():
    text = RC.table({"sample-pooled-20": "identical", "2wiki-per-question-5-hipporag2-retrieval": "differs (1 figures: a|b)"})
    rows = text.splitlines()[2:]
    assert [r.split(" | ")[0].lstrip("| ") for r in rows] == [d.name for d in RC.every_run()]
    assert "| sample-pooled-20 | the sample memory's recordings | identical |" in rows
    assert ("| 2wiki-per-question-5-hipporag2-retrieval | 2wiki-per-question-5-four-methods's replies | "
            "differs (1 figures: a/b) |") in rows  # a cell never breaks the table
    assert "| musique-pooled-dense | nothing (no model call) | not checked |" in rows
    cannot = [r for r in rows if "| – | cannot replay" in r]
    assert all("missing:" in r for r in cannot)


def test_a_known_difference_is_excused_only_for_its_exact_line():
    for run, lines in RC.KNOWN.items():
        assert (RC.RUNS / run).is_dir() and lines
        for line, why in lines.items():
            assert line.startswith("summary/") and " → " in line and why
            path, values = line.split(": ", 1)
            other = f"{path}: {values.split(' → ')[0]} → 0"  # the same figure, another value
            counted, known = RC.split_known(run, [line, other, "summary/methods/dense/recall@2: 0.5 → 0.6"])
            assert counted == [other, "summary/methods/dense/recall@2: 0.5 → 0.6"] and known == {line: why}
            assert RC.split_known("another-run", [line]) == ([line], {})
