"""The schema of run files (memrag.eval.records): every committed summary loads, a malformed or
hostile file is refused with the file and the field named, and token totals come from the traces."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from memrag.eval import report
from memrag.eval.compare_runs import read_records
from memrag.eval.records import CallTotals, QuestionRecord, RunFormatError, RunSummary
from memrag.eval.scoring import call_totals

RUNS = Path(__file__).resolve().parents[1] / "docs" / "runs"
COMMITTED = sorted(p.parent for p in RUNS.glob("*/summary.json"))


def test_there_are_committed_runs_to_check():
    assert len(COMMITTED) >= 20


@pytest.mark.parametrize("run", COMMITTED, ids=lambda p: p.name)
def test_every_committed_summary_loads_and_reads_back_the_same(run):
    raw = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert report.load_summary(run) == raw
    typed = RunSummary.from_json(raw, str(run))
    assert RunSummary.from_json(typed.to_json(), "again") == typed
    # what the record writes is the file, but for fields older summaries did not have yet (None then)
    written = typed.to_json()
    assert {m: {k: v for k, v in e.items() if k in raw["methods"][m]} for m, e in written["methods"].items()} \
        == raw["methods"]
    assert {k: v for k, v in written.items() if k != "methods" and k in raw} == \
        {k: v for k, v in raw.items() if k != "methods"}


def test_a_summary_of_the_current_format_is_written_back_byte_for_byte():
    raw = json.loads((RUNS / "2wiki-per-question-5-four-methods" / "summary.json").read_text(encoding="utf-8"))
    assert json.dumps(RunSummary.from_json(raw, "s").to_json()) == json.dumps(raw)


def _broken(good: dict) -> list[tuple[dict, str]]:
    """(a damaged summary, what its error must name)."""
    def with_(path: list, value):
        bad = copy.deepcopy(good)
        target = bad
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        return bad

    return [
        (with_(["methods", "dense", "recall@2"], "high"), r"methods\['dense'\]: 'recall@2' is not a number"),
        (with_(["methods", "dense", "n"], True), r"methods\['dense'\]: 'n' is not a count"),
        (with_(["methods", "dense", "ci95", "em"], [0.1]), r"methods\['dense'\]: 'ci95' 'em' is not a \[low, high\]"),
        (with_(["methods", "dense", "gold_fate"], {"in the top k": "many"}), r"'gold_fate' is not a set of counts"),
        (with_(["methods", "dense"], "fine"), r"methods\['dense'\]: a method's summary is a JSON string"),
        (with_(["methods"], {}), r"'methods' names no method"),
        (with_(["paired", "dense vs neuropath", "em", "wins"], -0.5),
         r"paired\['dense vs neuropath'\]\['em'\]: 'wins'"),
        (with_(["paired", "dense vs neuropath", "<script>"], {}), r"'<script>' is not a score"),
        (with_(["stamp", "questions"], [2]), r"stamp: 'questions' is not a count"),
        (with_(["stamp", "llm_model"], {"a": 1}), r"stamp: 'llm_model' is not text"),
        (with_(["indexing"], {"path": 3}), r"'indexing' is not an object with a text 'path'"),
        (with_(["deviations"], [{"method": 1}]), r"'deviations' is not a list of text rows"),
        ({k: v for k, v in good.items() if k != "scope"}, r"no 'scope'"),
    ]


def test_a_malformed_summary_names_its_file_and_field(tmp_path):
    good = json.loads((RUNS / "sample-pooled-20" / "summary.json").read_text(encoding="utf-8"))
    for bad, said in _broken(good):
        (tmp_path / "summary.json").write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(RunFormatError, match=said) as caught:
            report.load_summary(tmp_path)
        assert str(tmp_path / "summary.json") in str(caught.value) and "not an evaluation summary" in str(caught.value)
    for hostile in ([1, 2], "text", None):
        with pytest.raises(RunFormatError, match="a JSON (array|string|null), not an object"):
            RunSummary.from_json(hostile, "x")


def _record() -> dict:
    tokens = {"prompt_tokens": 10, "completion_tokens": 2, "llm_calls": 1, "cached_calls": 1, "llm_seconds": 1.5}
    fate = {"unit": "u1", "chunk_id": 3, "fate": "in the top k", "detail": "rank 1", "rank": 1}
    return {"qid": "q1", "question": "Who?", "answers": ["Ada"], "gold_units": ["u1"], "hops": 2,
            "methods": {"dense": {"metrics": {"recall@2": 1.0, "em": None}, "gold_fate": [fate], "tokens": tokens,
                                  "seconds": 0.2, "retrieval_seconds": 0.1, "answer": "Ada", "answer_capped": [],
                                  "top_passages": ["u1"], "ranked_total": 4, "trace": {"method": "dense"}}},
            "all_methods": tokens, "memory": "f00", "seconds": 0.3}


def test_a_question_record_reads_back_and_a_bad_field_is_named(tmp_path):
    good = _record()
    assert QuestionRecord.from_json(good, "r").to_json() == good
    cases = [(["methods", "dense", "metrics", "em"], "1.0", r"'metrics.em' is not a number"),
             (["methods", "dense", "tokens", "prompt_tokens"], 1.5, r"tokens: 'prompt_tokens' is not a count"),
             (["methods", "dense", "gold_fate"], [{"fate": 3}], r"gold_fate\[0\]: 'fate' is not text"),
             (["methods", "dense", "trace"], [], r"'trace' is not an object"),
             (["answers"], "Ada", r"'answers' is not a list of texts")]
    for path, value, said in cases:
        bad = copy.deepcopy(good)
        target = bad
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value
        (tmp_path / "results.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
        with pytest.raises(RunFormatError, match=said) as caught:
            read_records(tmp_path)
        assert "results.jsonl, record 2" in str(caught.value)
    with pytest.raises(RunFormatError, match="no complete result for method 'neuropath'"):
        QuestionRecord.from_json(good, "r", ["dense", "neuropath"])


@pytest.fixture(scope="module")
def sample_traces():
    from memrag.ask import METHODS, ask
    from memrag.demo import sample_memory_dir, sample_questions
    from memrag.embed import get_embedder
    from memrag.index import store
    from memrag.llm.recordings import Recordings

    emb = get_embedder()
    memory = store.load(sample_memory_dir(), emb.model_id)
    llm = Recordings.open(sample_memory_dir()).replay_llm()
    return ask(memory, sample_questions()[0]["question"], llm=llm, embedder=emb, methods=METHODS)


def test_token_totals_are_summed_from_the_traces_calls(sample_traces):
    per_method, across = call_totals(sample_traces)
    for t in sample_traces:
        calls = t.llm_calls
        assert per_method[t.method] == CallTotals(sum(c.prompt_tokens for c in calls),
                                                  sum(c.completion_tokens for c in calls), len(calls), len(calls),
                                                  round(sum(c.seconds for c in calls), 3))
    # the query-entity call is billed to each method that made it, but counted once across them
    shared = [c for t in sample_traces for c in t.llm_calls if c.shared]
    assert len(shared) >= 2 and len({c.key for c in shared}) == 1
    assert across.llm_calls == sum(len(t.llm_calls) for t in sample_traces) - (len(shared) - 1)
    assert across.prompt_tokens == sum(v.prompt_tokens for v in per_method.values()) \
        - (len(shared) - 1) * shared[0].prompt_tokens


def test_an_unknown_token_count_stays_unknown(sample_traces):
    traces = copy.deepcopy(sample_traces)
    traces[-1].llm_calls[-1].completion_tokens = None  # an engine that does not count
    per_method, across = call_totals(traces)
    assert per_method[traces[-1].method].completion_tokens is None and across.completion_tokens is None
    assert per_method[traces[0].method].completion_tokens is not None
