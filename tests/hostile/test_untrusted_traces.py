"""Untrusted traces (issue 27, probe 8): a traces file or a run folder's result line that passes
the type checks but breaks the graph (an edge to a missing node, an id twice) or holds numbers no
run writes (ids of 10**18, token counts of 10**30) is refused at load with the reason, on the Ask
page and the Evaluate page alike; a view that still cannot draw a trace says so in a sentence."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from memrag.trace import GraphEdge, GraphNode, LLMCallRecord, Trace
from memrag.tracefile import read_traces, record_traces, traces_json

GROUP = "trace files"


def _trace(**change) -> Trace:
    t = Trace(method="neuropath", question="Who?",
              nodes=[GraphNode("q", "Who?", "query"), GraphNode("e:alder", "Alder", "entity", chunk_ids=[0])],
              edges=[GraphEdge("q-alder", "q", "e:alder", "activation")])
    for k, v in change.items():
        setattr(t, k, v)
    return t


def _file(trace: Trace) -> bytes:
    return traces_json([trace], {"question": "Who?"}).encode()


def _line(trace: Trace) -> dict:
    return json.loads(json.dumps({"qid": "q1", "question": "Who?", "methods": {"neuropath": {"trace": trace.to_dict()}}}))


BROKEN = {
    "edge-to-missing-node": (_trace(edges=[GraphEdge("q-x", "q", "q-missing", "activation")]), "q-missing"),
    "duplicate-node-ids": (_trace(nodes=[GraphNode("q", "Who?", "query")] * 2, edges=[]), "appears twice"),
    "duplicate-edge-ids": (_trace(edges=[GraphEdge("q-alder", "q", "e:alder", "activation")] * 2), "appears twice"),
    "id-10**18": (_trace(nodes=[GraphNode("q", "Who?", "query"),
                                GraphNode("e:alder", "Alder", "entity", chunk_ids=[10**18])]), "chunk_ids"),
    "tokens-10**30": (_trace(llm_calls=[LLMCallRecord(stage="answer", messages=[], raw_reply="",
                                                      prompt_tokens=10**30)]), "prompt_tokens"),
}


@pytest.mark.probe("a traces file whose graph is broken (an edge to a missing node, an id twice) or whose "
                   "numbers no run writes (an id of 10**18, a token count of 10**30)",
                   "refused at load with a reason naming the id or the field", group=GROUP)
@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_traces_file_is_refused_at_load(case):
    trace, reason = BROKEN[case]
    with pytest.raises(ValueError, match=reason.replace("*", r"\*")):
        read_traces(_file(trace))


@pytest.mark.probe("the same broken traces in a run folder's results line, opened on the Evaluate page",
                   "refused with the same reason (the run-folder reader is not trusted)", group=GROUP)
@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_result_line_is_refused(case):
    trace, reason = BROKEN[case]
    with pytest.raises(ValueError, match=reason):
        record_traces(_line(trace))


def test_a_whole_trace_still_loads():
    assert [t.method for t in read_traces(_file(_trace()))[0]] == ["neuropath"]
    assert [t.method for t in record_traces(_line(_trace()))] == ["neuropath"]


def _draw_broken_trace() -> None:
    """HippoRAG 2's picture draws the trace's own nodes and edges (the others rebuild theirs)."""
    from memrag.app.ask_views import overview_graph
    from memrag.trace import GraphEdge, GraphNode, Trace
    from memrag.methods.hipporag2.detail import HippoRAG2Detail

    broken = Trace(method="hipporag2", question="Who?", nodes=[GraphNode("q", "Who?", "query")],
                   edges=[GraphEdge("q-x", "q", "q-missing", "activation")], details={"hipporag2": HippoRAG2Detail()})
    overview_graph(broken, None)


@pytest.mark.probe("the Ask page's side-by-side picture given a trace its checks did not see (an edge to "
                   "a missing node)", "a sentence saying the picture cannot be drawn, no traceback", group=GROUP)
def test_a_picture_that_cannot_be_drawn_is_a_sentence():
    at = AppTest.from_function(_draw_broken_trace, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]  # markdown escapes removed
    assert any("cannot be drawn" in w and "q-missing" in w for w in said), said


@pytest.mark.probe("a run folder whose results line holds a token count of 10**30 outside its traces",
                   "the run-folder reader refuses the line with its place and field", group=GROUP)
def test_a_run_folder_line_with_numbers_out_of_range_is_refused(tmp_path):
    from memrag.eval.rundir import RESULTS, read_results

    line = _line(_trace())
    line["methods"]["neuropath"]["tokens"] = {"prompt_tokens": 10**30}
    (tmp_path / RESULTS).write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=r"results.jsonl:1: methods.neuropath.tokens.prompt_tokens"):
        read_results(tmp_path / RESULTS, repair=False)
