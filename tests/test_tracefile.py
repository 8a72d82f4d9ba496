"""One traces file format: the CLI writes it (--json, --out), the Ask page and `ask --open` read it,
and the older forms (the CLI's {"results": ...}, an evaluation results line, a bare trace) still open."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

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


# Written by `python -m memrag ask --memory sample_corpus/memory --method all --out …` at e4c4f27, when
# each method's detail had a field of its own in the trace (neuropath, ecphory, hipporag2).
OLD_FILE = Path(__file__).parent / "fixtures" / "traces_e4c4f27.json.gz"


def _with_fields_added_since(trace: dict) -> dict:
    """The fields added to a trace after the old file was written, at the value an old file reads as:
    a NeuroPath seed's `link` (seed_top, 2026-12-07) is 1, the nearest node."""
    for seed in trace.get("details", {}).get("neuropath", {}).get("seeds", []):
        seed.setdefault("link", 1)
    return trace


def test_a_file_from_before_the_detail_slot_reads_each_methods_detail():
    from memrag import trace_legacy
    from memrag.methods.ecphory.detail import EcphoryDetail
    from memrag.methods.hipporag2.detail import HippoRAG2Detail
    from memrag.methods.neuropath.detail import NeuroPathDetail

    data = gzip.decompress(OLD_FILE.read_bytes())
    traces, _ = read_traces(data)
    kinds = {t.method: [type(d) for d in t.details.values()] for t in traces}
    assert kinds == {"dense": [], "neuropath": [NeuroPathDetail], "ecphory": [EcphoryDetail],
                     "hipporag2": [HippoRAG2Detail]}
    assert traces[1].detail(NeuroPathDetail).hops and traces[1].detail(EcphoryDetail) is None
    # nothing lost: today's form of each trace is the old one with its detail moved into the slot
    old = json.loads(data)["traces"]
    assert [t.to_dict() for t in traces] == [_with_fields_added_since(trace_legacy.details_in_slot(o)) for o in old]
    assert all(set(trace_legacy.OLD_DETAIL_FIELDS).isdisjoint(t.to_dict()) for t in traces)


def test_a_detail_no_registered_method_reads_is_refused():
    data = traces_json(_traces(), {}).encode()
    obj = json.loads(data)
    obj["traces"][0]["details"] = {"nobody": {"x": 1}}
    with pytest.raises(ValueError, match="'nobody', which no loaded method reads"):
        read_traces(json.dumps(obj).encode())
    obj["traces"][0]["details"] = {"neuropath": {"hops": "many"}}  # a registered method's, misshapen
    with pytest.raises(ValueError, match="trace 1 is not a valid memrag trace: expected a list"):
        read_traces(json.dumps(obj).encode())
