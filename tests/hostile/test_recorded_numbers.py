"""Probabilities and recorded numbers are checked where they are read (issue 35): a server's
log-probabilities, a response-cache row, a line of a memory's responses.jsonl. A value no run writes
is a broken reply or a miss whose message names where it was; never a traceback, never a number
shown as real, and never an answer lost for every method."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from fake_openai import Reply, running_fake_openai
from memrag.ask import ask
from memrag.demo import record
from memrag.index import store
from memrag.llm.base import Completion, LLMReplyError, TokenLogprob
from memrag.llm.cache import CachedLLM, ResponseCache
from memrag.llm.ledger import Ledger
from memrag.llm.ollama_backend import OllamaLLM
from memrag.llm.openai_backend import OpenAICompatibleLLM
from memrag.llm.recordings import FILE_NAME, BrokenRecording, Recordings
from scripted import ScriptedLLM
from test_app_pages import QUESTION, embedder, home, scripted, tiny  # noqa: F401  (fixtures)

probe = pytest.mark.probe
GROUP = "recorded numbers"
MSGS = [{"role": "user", "content": "Does this path help? Answer yes or no."}]
HUGE = int("9" * 400)  # a 400-digit integer: no float holds it


def _position(*alts: tuple[str, float]) -> dict:
    return {"content": [{"token": alts[0][0], "logprob": alts[0][1],
                         "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alts]}]}


BAD_POSITIONS = {
    "a 400-digit integer logprob": _position(("yes", -0.1), ("no", -HUGE)),
    "the same token twice (P(yes) = 3.0)": _position(("yes", 0.0), ("yes", 0.0), ("yes", 0.0)),
    "probabilities summing to 1.6": _position(("yes", math.log(0.8)), ("no", math.log(0.8))),
}


# ------------------------------------------------------------------ what a server sends
@probe("OpenAI-compatible server: a 400-digit integer logprob, one token listed three times, alternatives "
       "summing to 1.6", "a broken reply (LLMReplyError) saying why, no OverflowError", group=GROUP)
@pytest.mark.parametrize("case", list(BAD_POSITIONS))
def test_openai_probabilities_no_softmax_makes_are_a_broken_reply(case):
    with running_fake_openai(["m"]) as fake:
        fake.script(Reply(content="yes", logprobs=BAD_POSITIONS[case]))
        llm = OpenAICompatibleLLM(base_url=fake.base_url, model="m")
        with pytest.raises(LLMReplyError, match="no log-probability|sum to"):
            llm.complete(MSGS, max_tokens=1, stage="neuropath.judge.hop1", top_logprobs=5)


@probe("Ollama: one token listed four times (P(yes) = 4.0), or alternatives summing to 1.6",
       "a broken reply (LLMReplyError) saying the probabilities sum above 1", group=GROUP)
@pytest.mark.parametrize("case", ["the same token twice (P(yes) = 3.0)", "probabilities summing to 1.6"])
def test_ollama_probabilities_summing_above_one_are_a_broken_reply(case):
    with running_fake_ollama(["phi4"]) as fake:
        fake.script(ChatReply(content="yes", logprobs=BAD_POSITIONS[case]["content"]))
        llm = OllamaLLM(host=fake.host, model="phi4", timeout=10)
        with pytest.raises(LLMReplyError, match="sum to"):
            llm.complete(MSGS, max_tokens=1, stage="neuropath.judge.hop1", top_logprobs=5)


def _answering(body: dict) -> Reply:
    """The fake server as a small model: each stage's reply from the scripted one, and a probability
    call answered with a 400-digit logprob."""
    if body.get("logprobs"):
        return Reply(content="yes", logprobs=BAD_POSITIONS["a 400-digit integer logprob"])
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    fields = set(schema.get("properties", {}))
    stage = ("neuropath.track" if "reasoning_chain" in fields else "hipporag2.recognition" if "keep" in fields
             else "answer" if "answer" in fields else "query.entities")
    return Reply(content=json.dumps(scripted().script[stage]([], stage)))


@probe("ask, all four methods, NeuroPath's likelihood tracker, the server's judge reply carrying a 400-digit "
       "logprob", "every method answers; NeuroPath says its tracker fell back for that hop", group=GROUP)
def test_a_broken_probability_loses_no_methods_answer(tiny):
    with running_fake_openai(["m"]) as fake:
        fake.responder = _answering
        llm = OpenAICompatibleLLM(base_url=fake.base_url, model="m")
        traces = ask(store.load(tiny, embedder().model_id), QUESTION, llm=llm, embedder=embedder(),
                     params={"neuropath": {"tracker": "likelihood"}})
        assert any(b.get("logprobs") for b in fake.chat_bodies())  # the judge was asked
    assert [t.answer.answer for t in traces] == ["Vell River"] * len(traces) and len(traces) == 4
    neuropath = next(t for t in traces if t.method == "neuropath")
    assert any("no log-probability" in f or "judge call failed" in f for f in neuropath.flags), neuropath.flags


# ------------------------------------------------------------------ a response-cache row
def _row(cache_path: Path, key: str, **values) -> None:
    con = sqlite3.connect(cache_path)
    sets = ", ".join(f"{k} = ?" for k in values)
    con.execute(f"UPDATE responses SET {sets} WHERE key = ?", (*values.values(), key))
    con.commit()
    con.close()


BAD_ROWS = {
    "prompt_tokens is text": {"prompt_tokens": "twelve"},
    "completion_tokens is 2**63-1": {"completion_tokens": 2**63 - 1},
    "a 2 MB answer": {"text": "x" * 2_000_000},
    "seconds negative": {"seconds": -5.0},
    "seconds 1e300": {"seconds": 1e300},
    "seconds is text": {"seconds": "soon"},
    "a 400-digit logprob": {"top_logprobs": json.dumps([[{"token": "yes", "logprob": -HUGE}]])},
    "yes listed three times": {"top_logprobs": json.dumps([[{"token": "yes", "logprob": 0.0}] * 3])},
}


@probe("response-cache rows with text token counts, 2**63-1 tokens, a 2 MB answer, negative / 1e300 / text "
       "seconds, a 400-digit logprob, P(yes) = 3.0", "a miss: the call is asked again, the cache's notice names "
       "the file and the row; no value reaches a trace", group=GROUP)
@pytest.mark.parametrize("case", list(BAD_ROWS))
def test_a_bad_cache_row_is_a_miss_naming_the_row(tmp_path, case):
    path = tmp_path / "cache.sqlite"
    live = ScriptedLLM(["fresh"])
    key = CachedLLM(live, None).key_for(MSGS, None, 200, "answer")
    ResponseCache(path).put(key, Completion("yes", "m", stage="answer", prompt_tokens=12, completion_tokens=1,
                                            seconds=0.5, top_logprobs=[[TokenLogprob("yes", -0.1)]]))
    _row(path, key, **BAD_ROWS[case])
    cache = ResponseCache(path)
    assert cache.get(key, max_tokens=200) is None
    assert f"{path}, row 1:" in cache.notice, cache.notice
    c = CachedLLM(live, cache, Ledger()).complete(MSGS, max_tokens=200, stage="answer")
    assert (c.text, c.cached) == ("fresh", False)  # asked again


def test_a_good_cache_row_still_serves(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("k", Completion("yes", "m", stage="answer", prompt_tokens=12, completion_tokens=1, seconds=0.5))
    hit = cache.get("k", max_tokens=5)
    assert (hit.text, hit.prompt_tokens, hit.seconds, hit.cached) == ("yes", 12, 0.5, True) and not cache.notice


# ------------------------------------------------------------------ a line of a memory's recordings
BAD_LINES = {
    "seconds NaN": {"seconds": float("nan")},
    "seconds 1e300": {"seconds": 1e300},
    "seconds negative": {"seconds": -3},
    "prompt_tokens 2**63-1": {"prompt_tokens": 2**63 - 1},
    "a 2 MB answer": {"text": "x" * 2_000_000},
    "a 400-digit logprob": {"top_logprobs": [[{"token": "yes", "logprob": -HUGE}]]},
}


@pytest.fixture()
def recorded(tiny):
    record(store.load(tiny, embedder().model_id), scripted(), embedder(), tiny, questions=[{"question": QUESTION}])
    return tiny


def _damage_answer_line(memory_dir: Path, values: dict) -> int:
    """Put `values` into the recorded answer of the first method; returns its line number."""
    path = memory_dir / FILE_NAME
    lines = path.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if i and json.loads(line)["stage"] == "answer")
    row = {**json.loads(lines[n]), **values}
    lines[n] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    return n + 1


@probe("responses.jsonl lines with NaN / 1e300 / negative seconds, 2**63-1 tokens, a 2 MB answer, a 400-digit "
       "logprob", "the file opens; replaying that call is a miss naming the file and the line", group=GROUP)
@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_recordings_line_is_a_miss_naming_file_and_line(recorded, case):
    n = _damage_answer_line(recorded, BAD_LINES[case])
    rec = Recordings.open(recorded)
    assert any(p.startswith(f"{recorded / FILE_NAME}, line {n}:") for p in rec.problems()), rec.problems()
    with pytest.raises(BrokenRecording, match=rf"{FILE_NAME}, line {n}: "):
        ask(store.load(recorded, embedder().model_id), QUESTION, llm=rec.replay_llm(), embedder=embedder())


@probe("`ask --out F` replaying recordings with NaN seconds, then `ask --open F`",
       "the ask stops with an error naming the line and writes no file, or writes one `ask --open` reads",
       group=GROUP)
@pytest.mark.parametrize("case", ["seconds NaN", "seconds 1e300", "seconds negative", "none"])
def test_what_ask_out_writes_ask_open_reads(recorded, case, tmp_path, monkeypatch, capsys):
    from memrag import embed
    from memrag.cli import main as cli

    if case != "none":
        n = _damage_answer_line(recorded, BAD_LINES[case])
    monkeypatch.setattr(embed, "get_embedder", lambda *a, **k: embedder())
    out = tmp_path / "traces.json"
    code = cli.main(["ask", "--memory", str(recorded), QUESTION, "--out", str(out)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if case == "none":
        assert code == 0 and cli.main(["ask", "--open", str(out)]) == 0
        assert "Vell River" in capsys.readouterr().out
    else:
        assert code == 1 and f"{FILE_NAME}, line {n}: its seconds" in err and not out.exists(), err
