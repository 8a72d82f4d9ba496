"""Recordings are inputs: replay recomputes retrieval from them, misses say how to re-record,
and a changed reply changes the result."""

from __future__ import annotations

import json

import pytest

from memrag import prompts
from memrag.ask import ask
from memrag.index.build import build_memory, run_build
from memrag.config import IndexParams
from memrag.demo import record
from memrag.index.readers import benchmark_document
from memrag.llm.recordings import FILE_NAME, RERECORD_COMMAND, Recordings, StaleRecording
from scripted import HashEmbedder, ScriptedLLM

DOCS = [benchmark_document("d1", "Ada Brennick", "Ada Brennick was born in Port Alder.", "t"),
        benchmark_document("d2", "Port Alder", "Port Alder lies on the Vell River.", "t"),
        benchmark_document("d3", "Weather", "It rained on Tuesday.", "t")]
EXTRACT = [
    {"entities": [], "triples": [["Ada Brennick", "born in", "Port Alder"]]},
    {"entities": [], "triples": [["Port Alder", "lies on", "Vell River"]]},
    {"entities": [{"name": "Tuesday", "type": "date", "description": "rainy", "importance": 1}], "triples": []},
]
QUESTIONS = [{"id": "q1", "question": "Which river flows through Ada Brennick's birthplace?"}]


def live_llm(valid_first: int = 1):
    def track(messages, stage):
        return {"reasoning_chain": "Ada was born in Port Alder.", "valid_ids": [valid_first],
                "expansion_requirement": "", "expand_ids": [], "continue": 0}
    return ScriptedLLM({
        "query.entities": lambda m, s: {"entities": ["Ada Brennick"]},
        "neuropath.track": track,
        "hipporag2.recognition": lambda m, s: {"keep": [1]},
        "answer": lambda m, s: {"reasoning": "r", "answer": "Vell River", "cited": [1]},
    })


@pytest.fixture()
def recorded(tmp_path):
    emb = HashEmbedder()
    memory = run_build(build_memory(tmp_path / "mem", DOCS, ScriptedLLM({"index.extract": list(EXTRACT)}),
                                   emb, IndexParams()))
    record(memory, live_llm(), emb, tmp_path / "mem", questions=QUESTIONS)
    return memory, emb, tmp_path / "mem"


def test_replay_answers_every_method_with_no_fresh_tokens(recorded):
    memory, emb, mdir = recorded
    rec = Recordings.open(mdir)
    assert rec.has_question(QUESTIONS[0]["question"]) and rec.model == "scripted-1"
    live = ask(memory, QUESTIONS[0]["question"], llm=live_llm(), embedder=emb)
    replayed = ask(memory, QUESTIONS[0]["question"], llm=rec.replay_llm(), embedder=emb)
    for a, b in zip(live, replayed):
        assert b.answer.answer == a.answer.answer == "Vell River"
        assert b.ranked_ids() == a.ranked_ids()
        assert all(c.cached for c in b.llm_calls) and b.llm_calls  # recorded, not fresh
        assert [c.prompt_tokens for c in b.llm_calls] == [c.prompt_tokens for c in a.llm_calls]


def test_a_changed_prompt_misses_with_the_rerecord_command(recorded, monkeypatch):
    memory, emb, mdir = recorded
    monkeypatch.setattr(prompts, "ANSWER_SYSTEM", prompts.ANSWER_SYSTEM + " Be brief.")
    with pytest.raises(StaleRecording, match=RERECORD_COMMAND):
        ask(memory, QUESTIONS[0]["question"], llm=Recordings.open(mdir).replay_llm(), embedder=emb,
            methods=["dense"])


def test_changing_one_recorded_tracking_reply_changes_the_result(recorded):
    memory, emb, mdir = recorded
    q = QUESTIONS[0]["question"]
    before = ask(memory, q, llm=Recordings.open(mdir).replay_llm(), embedder=emb, methods=["neuropath"],
                 answer=False)[0]
    path = mdir / FILE_NAME
    lines = path.read_text().splitlines()
    edited = 0
    for i, line in enumerate(lines[1:], start=1):
        r = json.loads(line)
        if r["stage"].startswith("neuropath.track"):
            reply = json.loads(r["text"])
            reply["valid_ids"] = []  # the tracker now judges no path valid
            r["text"] = json.dumps(reply)
            lines[i] = json.dumps(r)
            edited += 1
    assert edited == 1
    path.write_text("\n".join(lines) + "\n")
    after = ask(memory, q, llm=Recordings.open(mdir).replay_llm(), embedder=emb, methods=["neuropath"],
                answer=False)[0]
    assert before.neuropath.dp_chunk_ids and not after.neuropath.dp_chunk_ids
    assert "path" in {r.source for r in before.ranked} and "path" not in {r.source for r in after.ranked}


def test_recordings_file_is_deterministic_and_holds_no_answers_or_traces(recorded, tmp_path):
    memory, emb, mdir = recorded
    first = (mdir / FILE_NAME).read_text()
    record(memory, live_llm(), emb, mdir, questions=QUESTIONS)
    assert (mdir / FILE_NAME).read_text() == first
    rows = [json.loads(x) for x in first.splitlines()[1:]]
    assert {r["stage"] for r in rows} == {"query.entities", "neuropath.track.hop1",
                                         "hipporag2.recognition", "answer"}
    assert all(set(r) == {"key", "stage", "text", "prompt_tokens", "prompt_tokens_cached", "completion_tokens",
                          "seconds", "question"} for r in rows)
