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
from memrag.methods.neuropath.detail import NeuroPathDetail
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
    assert before.detail(NeuroPathDetail).dp_chunk_ids and not after.detail(NeuroPathDetail).dp_chunk_ids
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


def test_a_broken_reply_is_recorded_and_a_replay_fails_that_chunk_the_same_way(tmp_path):
    """A reply cut at the token limit raised LLMReplyError live; it was not recorded, so replaying
    the run stopped at that chunk ("no recorded response") instead of failing it as the run did."""
    from memrag.llm.base import Completion, LLMReplyError
    from memrag.llm.recordings import RecordingLLM

    def cut(messages, stage):
        c = Completion(text='{"entities": [["Port Alder", "place", 5, "a town', prompt_tokens=40,
                       prompt_tokens_cached=0, completion_tokens=800, seconds=1.5, cached=False,
                       model="scripted-1", backend="scripted", stage=stage)
        return LLMReplyError("the reply broke off at the index.extract token limit (800 tokens)", completion=c)

    replies = [EXTRACT[0], cut, cut, EXTRACT[2]]  # the second chunk: its call and its retry break off

    def extract(messages, stage):
        reply = replies.pop(0)
        return reply(messages, stage) if callable(reply) else reply

    live = RecordingLLM(ScriptedLLM({"index.extract": extract}))
    emb = HashEmbedder()
    built = run_build(build_memory(tmp_path / "live", DOCS, live, emb, IndexParams()))
    live.write(tmp_path, [], "replies.jsonl")

    rec = Recordings.load(tmp_path / "replies.jsonl")
    broken = [r for r in rec.responses.values() if r.error]
    assert len(broken) == 2 and all("broke off" in r.error and r.completion_tokens == 800 for r in broken)
    replayed = run_build(build_memory(tmp_path / "replay", DOCS, rec.replay_llm(), emb, IndexParams()))

    def log(m):
        return {cid: (x.status, x.error, x.raw_reply) for cid, x in m.extraction_log.items()}
    assert log(replayed) == log(built)
    assert [x.status for x in built.extraction_log.values()].count("failed") == 1
    assert [t.relation for t in replayed.triples] == [t.relation for t in built.triples]
    # a whole reply is still written without the field: old recordings files read as they were
    assert all("error" not in json.loads(line) for line in (tmp_path / "replies.jsonl").read_text().splitlines()[1:]
               if json.loads(line)["text"].endswith("}"))


def test_rerecording_after_a_prompt_change_asks_only_the_changed_calls(recorded, monkeypatch):
    """`demo record` reuses the replies the memory already holds for unchanged calls: after the
    answer prompt changes, only answers reach the model, and every other reply stays as recorded."""
    from memrag.llm.recordings import ReuseRecordedLLM

    memory, emb, mdir = recorded
    before = {r.key: r for r in Recordings.open(mdir).responses.values()}
    monkeypatch.setattr(prompts, "ANSWER_SYSTEM", prompts.ANSWER_SYSTEM + " Be brief.")
    # a different tracker reply from the live model: it must not be asked
    live = live_llm(valid_first=2)
    record(memory, live, emb, mdir, questions=QUESTIONS, reuse=Recordings.open(mdir))
    assert {c["stage"] for c in live.calls} == {"answer"}
    after = {r.key: r for r in Recordings.open(mdir).responses.values()}
    kept = {k for k in after if k in before}
    assert {after[k].stage for k in set(after) - kept} == {"answer"}
    assert {before[k].stage for k in set(before) - kept} == {"answer"}  # the stale answers left the file
    assert all(after[k].text == before[k].text and after[k].seconds == before[k].seconds for k in kept)
    # recordings from another engine are not mixed in
    with pytest.raises(ValueError, match="nothing in it can be reused"):
        ReuseRecordedLLM(Recordings.open(mdir), _other_model())


def _other_model():
    llm = live_llm()
    llm.model = "scripted-2"
    return llm
