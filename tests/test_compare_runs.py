"""Two runs paired per question (memrag.eval.compare_runs)."""

from __future__ import annotations

import json

import pytest

from memrag.eval.compare_runs import compare, main, read_records


def _record(qid: str, recall2: float) -> dict:
    """A results line as the runner writes it (memrag.eval.records.QuestionRecord), trace left empty."""
    tokens = {"prompt_tokens": 10, "completion_tokens": 2, "llm_calls": 1, "cached_calls": 0, "llm_seconds": 0.1}
    method = {"metrics": {"recall@2": recall2, "em": None}, "gold_fate": [], "tokens": tokens, "seconds": 0.1,
              "trace": {}}
    return {"qid": qid, "question": f"question {qid}?", "answers": ["a"], "gold_units": ["u"],
            "methods": {"neuropath": method}, "all_methods": tokens}


def _write(path, rows):
    path.mkdir()
    (path / "results.jsonl").write_text("\n".join(json.dumps(_record(q, v)) for q, v in rows) + "\n",
                                        encoding="utf-8")
    return path


def test_pairs_by_question_id_and_counts_wins(tmp_path, capsys):
    before = _write(tmp_path / "a", [("q1", 0.0), ("q2", 0.5), ("q3", 1.0)])
    after = _write(tmp_path / "b", [("q3", 1.0), ("q2", 1.0), ("q1", 1.0), ("q9", 0.0)])  # q9 only after
    (row,) = compare(read_records(before), read_records(after), ("recall@2", "em"))  # em is None: skipped
    assert row["n"] == 3 and row["before"] == pytest.approx(0.5) and row["after"] == pytest.approx(1.0)
    assert row["diff"] == pytest.approx(0.5)
    assert (row["wins"], row["losses"], row["ties"]) == (2, 0, 1)
    lo, hi = row["diff_ci95"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert main([str(before), str(after), "--metrics", "recall@2"]) == 0
    assert "| NeuroPath | recall@2 | 3 | 50.0 | 100.0 | +50.0" in capsys.readouterr().out


def test_a_damaged_results_file_names_its_line(tmp_path):
    (tmp_path / "results.jsonl").write_text('{"qid": "q1", "methods": {}}\n[1]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"results.jsonl:2: "):
        read_records(tmp_path)
