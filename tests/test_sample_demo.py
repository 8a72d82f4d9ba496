"""The shipped demo: the sample corpus, its prebuilt memory and its recordings."""

from __future__ import annotations

import json
import shutil

import pytest

from memrag import prompts
from memrag.index import store
from memrag.ask import METHODS, ask
from memrag.demo import gold_chunk_ids, sample_docs_dir, sample_memory_dir, sample_questions
from memrag.embed import get_embedder
from memrag.eval.datasets import load_sample
from memrag.llm.recordings import FILE_NAME, RERECORD_COMMAND, Recordings, StaleRecording
from memrag.methods.neuropath.detail import NeuroPathDetail

QUESTION_KEYS = {"id", "question", "answer", "answer_aliases", "gold_docs", "hops", "kind"}


def test_the_corpus_loads_and_every_gold_document_exists():
    qs = sample_questions()
    docs = {p.stem for p in sample_docs_dir().glob("*.md")}
    assert 30 <= len(docs) <= 50 and len(qs) >= 15
    for q in qs:
        assert set(q) == QUESTION_KEYS, q["id"]
        assert set(q["gold_docs"]) <= docs, q["id"]
        assert 2 <= q["hops"] <= 4 and q["kind"] in {"bridge", "comparison", "composition"}
    ds = load_sample(sample_docs_dir().parent / "questions.json", sample_docs_dir())
    assert len(ds.questions) == len(qs) and len(ds.passages) == len(docs)


@pytest.fixture(scope="module")
def sample():
    emb = get_embedder()
    return store.load(sample_memory_dir(), emb.model_id), emb, Recordings.open(sample_memory_dir())


def test_the_prebuilt_memory_opens_with_the_current_embedder_and_format(sample):
    m, emb, rec = sample
    assert m.embedder_id == emb.model_id and len(m.documents) == len(list(sample_docs_dir().glob("*.md")))
    for q in sample_questions():
        assert len(gold_chunk_ids(m, q["gold_docs"])) == len(q["gold_docs"])
    assert m.llm["backend"] == "embedded" and len(m.triples) > 100


def test_every_demo_question_and_method_answers_from_recordings_with_no_fresh_tokens(sample):
    m, emb, rec = sample
    assert rec is not None and rec.backend == "embedded"
    missing = [q["id"] for q in sample_questions() if not rec.has_question(q["question"])]
    assert not missing, f"not recorded: {missing}; run `{RERECORD_COMMAND}`"
    for q in sample_questions():
        traces = ask(m, q["question"], llm=rec.replay_llm(), embedder=emb, methods=METHODS)
        for t in traces:
            assert t.answer is not None and t.answer.error is None, (q["id"], t.method)
            assert t.llm_calls and all(c.cached for c in t.llm_calls), (q["id"], t.method)
            assert t.stamp.llm_model == rec.model


def test_a_stale_recording_fails_with_the_rerecord_command(sample, monkeypatch):
    m, emb, rec = sample
    monkeypatch.setattr(prompts, "TRACK_SYSTEM", prompts.TRACK_SYSTEM + " Think hard.")
    with pytest.raises(StaleRecording, match=RERECORD_COMMAND):
        ask(m, sample_questions()[0]["question"], llm=rec.replay_llm(), embedder=emb, methods=["neuropath"])


def test_changing_one_recorded_tracking_response_changes_the_result(sample, tmp_path):
    m, emb, rec = sample
    copy = tmp_path / "mem"
    shutil.copytree(sample_memory_dir(), copy, ignore=shutil.ignore_patterns("journal.sqlite*"))
    q = next(q for q in sample_questions() if rec.has_question(q["question"])
             and any(r.stage.startswith("neuropath.track") and r.question == q["question"]
                    and json.loads(r.text)["valid_ids"] for r in rec.responses.values()))
    before = ask(m, q["question"], llm=rec.replay_llm(), embedder=emb, methods=["neuropath"], answer=False)[0]
    lines = (copy / FILE_NAME).read_text().splitlines()
    for i, line in enumerate(lines[1:], start=1):
        r = json.loads(line)
        if r["question"] == q["question"] and r["stage"].startswith("neuropath.track"):
            reply = json.loads(r["text"])
            reply["valid_ids"], reply["expand_ids"], reply["continue"] = [], [], 0
            r["text"] = json.dumps(reply)
            lines[i] = json.dumps(r)
            break
    (copy / FILE_NAME).write_text("\n".join(lines) + "\n")
    after = ask(m, q["question"], llm=Recordings.open(copy).replay_llm(), embedder=emb, methods=["neuropath"],
                answer=False)[0]
    assert before.detail(NeuroPathDetail).dp_chunk_ids and not after.detail(NeuroPathDetail).dp_chunk_ids
    assert after.ranked_ids() != before.ranked_ids()


@pytest.mark.model
def test_re_extracting_one_document_gives_schema_valid_output():
    from memrag.config import IndexParams, Settings
    from memrag.index.extract import extract_chunk
    from memrag.index.readers import read_paths
    from memrag.llm.factory import make_llm

    llm, _ = make_llm(Settings(backend="embedded", response_cache=False))
    doc = read_paths([sample_docs_dir() / "tobias-renn.md"], IndexParams()).documents[0]
    out = extract_chunk(llm, doc.title, doc.text)
    assert out.error is None, out.raw_reply
    assert out.extraction.triples and all(len(t) == 3 for t in out.extraction.triples)
    assert all(1 <= e.importance <= 5 and e.name for e in out.extraction.entities)
    assert any("renn" in e.name.lower() for e in out.extraction.entities)


def test_a_sample_memory_of_another_llm_lives_beside_the_shipped_one(monkeypatch, capsys):
    import memrag.llm.factory
    from memrag.cli.main import main
    from memrag.llm.factory import BackendChoice
    from scripted import ScriptedLLM

    other = sample_memory_dir("ollama", "phi4:latest")
    assert other.parent == sample_memory_dir().parent and other.name == "memory-ollama-phi4-latest"
    assert sample_memory_dir("embedded") == sample_memory_dir()
    # recording with another LLM before its memory exists: refused with the command that builds it,
    # and the shipped recordings are untouched
    before = (sample_memory_dir() / FILE_NAME).read_bytes()
    monkeypatch.setattr(memrag.llm.factory, "make_llm",
                        lambda s: (ScriptedLLM({}), BackendChoice("ollama", "phi4:latest", "test")))
    assert main(["demo", "record", "--backend", "ollama", "--model", "phi4:latest"]) == 2
    assert "demo extract --backend ollama --model phi4:latest" in capsys.readouterr().err
    assert (sample_memory_dir() / FILE_NAME).read_bytes() == before and not other.exists()


def test_the_memory_rebuilds_from_its_recorded_extraction_replies(sample, tmp_path):
    """extraction.jsonl holds every reply the memory was built from: a post-processing change
    re-runs without the model, and a memory out of step with its replies fails here."""
    from memrag.demo import extract
    from memrag.llm.recordings import EXTRACTION_FILE

    m, emb, _ = sample
    copy = tmp_path / "mem"
    copy.mkdir()
    shutil.copy(sample_memory_dir() / EXTRACTION_FILE, copy / EXTRACTION_FILE)
    summary = extract(None, emb, copy, recorded=True)
    rebuilt = store.load(copy, emb.model_id)
    assert summary["failures"] == 0 and summary["cleanup"]
    assert rebuilt.fingerprint() == m.fingerprint(), (
        "the shipped sample memory differs from a rebuild from its extraction replies: "
        "run `python -m memrag demo extract --recorded`, then re-record")


def test_the_sample_memory_names_are_clean(sample):
    """Issue 14's bar for the shipped memory's entity names and descriptions."""
    from memrag.index.cleanup import name_quality

    m, _, _ = sample
    q = name_quality([n.name for n in m.entities])
    assert q["led by an article or preposition %"] <= 3.0, q
    assert q["over five words %"] <= 5.0, q
    assert q["'the X' / 'X' pairs"] == 0, q
    cap = prompts.DESCRIPTION_MAX_CHARS
    cut = [e.description for e in m.engrams if len(e.description) >= cap and not e.description.endswith("…")]
    assert not cut, cut[:3]
    assert all(n.name.isprintable() for n in m.entities)
