"""The real embedded model end to end on a tiny corpus: extract, save, load, ask with every method.

About ten real calls. Whether NeuroPath reaches the bridge passage is printed as a measured
outcome, not asserted: a 1.5B model's judgement is not a contract.
"""

from __future__ import annotations

import pytest

from memrag.index import store
from memrag.ask import ask
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams, Settings
from memrag.embed import get_embedder
from memrag.index.readers import benchmark_document
from memrag.llm.factory import make_llm
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail

pytestmark = pytest.mark.model

PASSAGES = [
    ("halvard", "Halvard Mossberg", "Halvard Mossberg founded the Kelpwater Trading House in 1861 after "
     "ten years as a ship's clerk."),
    ("kelpwater", "Kelpwater Trading House", "The Kelpwater Trading House built its first warehouse in "
     "Dunmere, beside the old ferry steps."),
    ("dunmere", "Dunmere", "Dunmere is a fishing town on the Sallow estuary, known for its salt works."),
    ("mossberg-family", "The Mossberg family", "The Mossberg family were farmers from the northern valleys. "
     "Several Mossbergs opened shops and trading houses in the 1860s."),
]
QUESTION = "On which estuary lies the town where the trading house founded by Halvard Mossberg built its first warehouse?"
GOLD = {"halvard", "kelpwater", "dunmere"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    path = tmp_path_factory.mktemp("real") / "mem"
    settings = Settings(backend="embedded", data_dir=path.parent / "data")
    llm, choice = make_llm(settings)
    docs = [benchmark_document(i, t, x, "fixture") for i, t, x in PASSAGES]
    events = list(build_memory(path, docs, llm, get_embedder(), IndexParams()))
    return path, llm, events


def test_extraction_gives_entities_and_triples_and_the_memory_saves_and_loads(built):
    path, llm, events = built
    done = [e for e in events if e.kind == "chunk_done"]
    assert len(done) == 4
    assert sum(e.data["ok"] for e in done) >= 3, [e.data["error"] for e in done]
    m = store.load(path, get_embedder().model_id)
    assert len(m.entities) >= 6 and len(m.triples) >= 3
    keys = {n.key for n in m.entities}
    assert "halvard mossberg" in keys and "dunmere" in keys
    assert m.llm["backend"] == "embedded"
    assert all(x.prompt_tokens and x.completion_tokens for x in m.extraction_log.values() if x.status == "ok")


def test_every_method_answers_with_a_complete_well_formed_trace(built, capsys):
    path, llm, _ = built
    m = store.load(path, get_embedder().model_id)
    traces = ask(m, QUESTION, llm=llm, embedder=get_embedder())
    assert [t.method for t in traces] == ["dense", "neuropath", "ecphory", "hipporag2"]
    for t in traces:
        assert Trace.from_json(t.to_json()) == t
        assert t.answer is not None and t.answer.error is None and t.answer.answer
        assert t.ranked and {r.chunk_id for r in t.ranked} <= set(range(len(m.chunks)))
        assert all(t.chunk(c) is not None for c in t.answer.context_chunk_ids)
        assert all(c.prompt_tokens and c.completion_tokens is not None for c in t.llm_calls)
        assert t.stamp.llm_backend == "embedded" and t.stamp.llm_file_sha256
    np_trace = traces[1]
    assert np_trace.detail(NeuroPathDetail).seeds or np_trace.detail(NeuroPathDetail).fallback_dense
    gold_ids = {c.chunk_id for c in m.chunks if c.doc_id in GOLD}
    with capsys.disabled():
        for t in traces:
            top5 = [m.chunks[i].doc_id for i in t.ranked_ids()[:5]]
            found = len(gold_ids & set(t.ranked_ids()[:2]))
            print(f"\n[measured] {t.method}: answer={t.answer.answer!r} top5={top5} gold in top2={found}/3")
