"""One traces file format: the CLI writes it (--json, --out), the Ask page and `ask --open` read it,
and the older forms (the CLI's {"results": ...}, an evaluation results line, a bare trace) still open."""

from __future__ import annotations

import json

import pytest

from memrag.cli.main import main
from memrag.demo import sample_memory_dir, sample_questions
from memrag.trace import AnswerResult, Trace
from memrag.tracefile import read_traces, record_traces, traces_json


def _traces() -> list[Trace]:
    return [Trace(method=m, question="Who?", answer=AnswerResult(answer=f"{m} says Alder", raw_answer=""))
            for m in ("dense", "neuropath")]


def test_a_written_file_reads_back_with_its_meta():
    data = traces_json(_traces(), {"question": "Who?", "mode": "live", "model": "m1"},
                       summaries=[{"method": "dense"}]).encode()
    traces, meta = read_traces(data)
    assert [t.method for t in traces] == ["dense", "neuropath"]
    assert [t.answer.answer for t in traces] == ["dense says Alder", "neuropath says Alder"]
    assert meta == {"question": "Who?", "mode": "live", "model": "m1"}


def test_the_older_forms_still_open():
    old_cli = {"results": [{"method": t.method, "answer": t.answer.answer, "trace": t.to_dict()} for t in _traces()]}
    traces, meta = read_traces(json.dumps(old_cli).encode())
    assert [t.answer.answer for t in traces] == ["dense says Alder", "neuropath says Alder"] and meta == {}
    line = {"qid": "q7", "question": "Who?", "methods": {t.method: {"trace": t.to_dict()} for t in _traces()}}
    traces, meta = read_traces(json.dumps(line).encode())
    assert [t.method for t in traces] == ["dense", "neuropath"] and meta["qid"] == "q7"
    assert [t.method for t in record_traces(line)] == ["dense", "neuropath"]
    with pytest.raises(ValueError, match="non-empty"):
        read_traces(json.dumps({"results": []}).encode())
    with pytest.raises(ValueError, match="unknown method"):
        read_traces(json.dumps({"results": [{"trace": Trace(method="bm25", question="q").to_dict()}]}).encode())


def test_a_cli_trace_opens_again(tmp_path, capsys):
    """Replayed from the sample memory's recordings: no model runs."""
    question = sample_questions()[0]["question"]
    out = tmp_path / "t.json"
    assert main(["ask", "--memory", str(sample_memory_dir()), question, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["memrag"] == "traces" and printed["meta"]["mode"] == "recorded"
    assert json.loads(out.read_text()) == printed  # the file and stdout are the same document
    traces, meta = read_traces(out.read_bytes())
    assert meta["question"] == question and [t.method for t in traces] == ["dense", "neuropath", "ecphory", "hipporag2"]
    assert [s["answer"] for s in printed["summaries"]] == [t.answer.answer for t in traces]
    assert main(["ask", "--open", str(out)]) == 0
    shown = capsys.readouterr().out
    assert all(f"== {t.method}: {t.answer.answer!r}" in shown for t in traces)
    assert main(["ask", "--open", str(out), "--memory", str(tmp_path)]) == 2
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert main(["ask", "--open", str(tmp_path / "bad.json")]) == 1
