"""Next-token probabilities through the LLM layer: each backend's request and parsing (loopback
fakes of OpenAI and Ollama, the embedded engine's reply shape), malformed lists refused with a
bounded message, the response cache (a new column, old files migrated, its own key), recordings
(an optional field; round trip and replay) and the ledger."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from fake_openai import Reply, running_fake_openai
from memrag.llm.base import Completion, LLMReplyError, TokenLogprob
from memrag.llm.cache import CachedLLM, ResponseCache
from memrag.llm.embedded import _to_completion
from memrag.llm.ledger import Ledger
from memrag.llm.logprobs import (MalformedLogprobs, label_probabilities, logprobs_missing, parse_positions,
                                 read_labels)
from memrag.llm.ollama_backend import OllamaLLM
from memrag.llm.openai_backend import OpenAICompatibleLLM
from memrag.llm.recordings import BrokenRecording, Recordings, RecordingLLM
import scripted
from scripted import ScriptedLLM

MSGS = [{"role": "user", "content": "Is Port Alder on the Vell River? Answer yes or no."}]


def alt(token: str, p: float) -> dict:
    return {"token": token, "logprob": math.log(p), "bytes": list(token.encode())}


# What llama.cpp, vLLM and OpenAI send as `choices[0].logprobs.content` (Ollama: top-level `logprobs`).
CONTENT = [{"token": "Yes", "logprob": math.log(0.6), "bytes": [89, 101, 115],
            "top_logprobs": [alt("Yes", 0.6), alt(" yes", 0.1), alt("No", 0.2), alt("YES", 0.05)]}]


# ------------------------------------------------------------------ parsing and folding
def test_positions_are_read_likeliest_first_and_labels_fold_case_and_spaces() -> None:
    shuffled = [{**CONTENT[0], "top_logprobs": list(reversed(CONTENT[0]["top_logprobs"]))}]
    [position] = parse_positions(shuffled, top=4, max_positions=1)
    assert [a.token for a in position] == ["Yes", "No", " yes", "YES"]
    got = label_probabilities(position, ["yes", "no"])
    assert got.probabilities["yes"] == pytest.approx(0.75) and got.probabilities["no"] == pytest.approx(0.2)
    assert got.listed_mass == pytest.approx(0.95) and got.unlisted_bound == pytest.approx(0.05)
    assert got.normalised()["yes"] == pytest.approx(0.75 / 0.95)
    assert label_probabilities(position, ["maybe", "yes"]).unlisted == ["maybe"]
    with pytest.raises(ValueError, match="distinct"):
        label_probabilities(position, ["Yes", " yes"])


@pytest.mark.parametrize("content, says", [
    ({"token": "x"}, "not a list"),
    (["Yes"], "position 0 is a JSON str"),
    ([{"token": "Yes", "logprob": -0.1}], "position 0 has no top_logprobs list"),
    ([{"top_logprobs": [{"logprob": -0.1}]}], "alternative 0 has no token text"),
    ([{"top_logprobs": [{"token": "a", "logprob": "-0.1"}]}], "no numeric logprob"),
    ([{"top_logprobs": [{"token": "a", "logprob": float("nan")}]}], "nan"),
    ([{"top_logprobs": [{"token": "a", "logprob": 2.5}]}], "2.5, which is no log-probability"),
    ([{"top_logprobs": [alt("a", 0.1)] * 5000}], "5000 alternatives where 4 were asked for"),
    ([{"top_logprobs": []}] * 3, "3 token positions, more than the 1 tokens asked for"),
])
def test_malformed_lists_are_refused_with_a_short_reason(content, says) -> None:
    with pytest.raises(MalformedLogprobs, match=says) as e:
        parse_positions(content, top=4, max_positions=1)
    assert len(str(e.value)) < 200


def test_no_list_at_all_is_none_not_an_error() -> None:
    assert parse_positions(None, top=4, max_positions=1) is None


# ------------------------------------------------------------------ OpenAI-compatible servers
@pytest.fixture
def openai_fake():
    with running_fake_openai(models=["default"]) as f:
        yield f


def test_openai_asks_without_a_schema_and_reads_the_first_token(openai_fake) -> None:
    openai_fake.script(Reply(content="Yes", prompt_tokens=20, completion_tokens=1, finish_reason="length",
                             logprobs={"content": CONTENT}))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    reading = read_labels(llm, MSGS, ["yes", "no"], stage="neuropath.score", top=4)
    body = openai_fake.chat_bodies()[0]
    assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 4, 1)
    assert "response_format" not in body
    assert reading.reason == "" and reading.labels.probabilities["yes"] == pytest.approx(0.75)
    c = reading.completion
    assert (c.stage, c.prompt_tokens, c.completion_tokens) == ("neuropath.score", 20, 1)


def test_openai_server_that_ignores_the_request_gives_a_reason(openai_fake) -> None:
    openai_fake.script(Reply(content="Yes", finish_reason="length"))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    reading = read_labels(llm, MSGS, ["yes", "no"], stage="s", top=4)
    assert reading.labels is None and "no token probabilities" in reading.reason
    assert reading.completion.top_logprobs is None


def test_openai_malformed_probabilities_are_a_broken_reply(openai_fake) -> None:
    openai_fake.script(Reply(content="Yes", logprobs={"content": [{"top_logprobs": [{"token": "Yes"}]}]}),
                       Reply(content="Yes", logprobs=["not", "an", "object"]))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    with pytest.raises(LLMReplyError, match="malformed: position 0, alternative 0 has no numeric logprob"):
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)
    with pytest.raises(LLMReplyError, match="logprobs is a JSON list"):
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)


def test_openai_huge_list_is_refused_bounded(openai_fake) -> None:
    huge = {"content": [{"token": "Yes", "logprob": -0.1, "top_logprobs": [alt(f"t{i}", 1e-6) for i in range(20_000)]}]}
    openai_fake.script(Reply(content="Yes", logprobs=huge))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    with pytest.raises(LLMReplyError, match="larger than 267,520 bytes") as e:
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)
    assert len(str(e.value)) < 400


def test_a_schema_with_probabilities_is_refused_before_any_call(openai_fake) -> None:
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default")
    with pytest.raises(ValueError, match="without a schema"):
        llm.complete(MSGS, schema={"type": "object"}, max_tokens=1, stage="s", top_logprobs=4)
    with pytest.raises(ValueError, match="top_logprobs must be"):
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=1000)
    assert openai_fake.chat_bodies() == []


# ------------------------------------------------------------------ Ollama
@pytest.fixture
def ollama_fake():
    with running_fake_ollama(models=["phi4"]) as f:
        yield f


def test_ollama_asks_and_reads_the_top_level_list(ollama_fake) -> None:
    ollama_fake.script(ChatReply(content="Yes", eval_count=1, done_reason="length", logprobs=CONTENT))
    llm = OllamaLLM(host=ollama_fake.host, model="phi4", timeout=10)
    assert logprobs_missing(llm) == ""  # the installed client passes them
    reading = read_labels(llm, MSGS, ["yes", "no"], stage="s", top=4)
    body = ollama_fake.chat_bodies()[0]
    assert (body["logprobs"], body["top_logprobs"], body["options"]["num_predict"]) == (True, 4, 1)
    assert "format" not in body or body["format"] is None
    assert reading.labels.probabilities["no"] == pytest.approx(0.2)


def test_ollama_before_0_12_11_sends_none_and_plain_calls_do_not_ask(ollama_fake) -> None:
    ollama_fake.script(ChatReply(content="Yes"), ChatReply(content="plain"))
    llm = OllamaLLM(host=ollama_fake.host, model="phi4", timeout=10)
    assert "no token probabilities" in read_labels(llm, MSGS, ["yes"], stage="s", top=4).reason
    llm.complete(MSGS, max_tokens=5, stage="s")
    assert "logprobs" not in ollama_fake.chat_bodies()[1]


def test_an_ollama_client_that_cannot_ask_says_so_and_no_call_is_made(ollama_fake, monkeypatch) -> None:
    import ollama

    def chat(self, model="", messages=None, *, format=None, options=None, stream=False):  # before 0.6.1
        raise AssertionError("no call should be made")
    monkeypatch.setattr(ollama.Client, "chat", chat)
    llm = OllamaLLM(host=ollama_fake.host, model="phi4", timeout=10)
    reading = read_labels(llm, MSGS, ["yes"], stage="s")
    assert reading.labels is None and reading.completion is None and "pip install -U ollama" in reading.reason


def test_ollama_nan_and_missing_fields_are_broken_replies(ollama_fake) -> None:
    nan = [{"token": "Yes", "logprob": -0.1, "top_logprobs": [{"token": "Yes", "logprob": float("nan")}]}]
    ollama_fake.script(ChatReply(content="Yes", logprobs=nan),
                       ChatReply(content="Yes", logprobs=[{"logprob": -0.1}]))
    llm = OllamaLLM(host=ollama_fake.host, model="phi4", timeout=10)
    with pytest.raises(LLMReplyError, match="malformed: position 0, alternative 0 has logprob nan"):
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)
    with pytest.raises(LLMReplyError, match="did not answer like Ollama"):
        llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)


# ------------------------------------------------------------------ the embedded engine's reply
def _engine_reply(logprobs) -> dict:
    return {"choices": [{"finish_reason": "length", "message": {"content": "Yes"}, "logprobs": logprobs}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1}, "timings": {"cache_n": 10}}


def test_embedded_reply_at_its_one_token_limit_is_a_reading_not_a_cut_reply() -> None:
    c = _to_completion(_engine_reply({"content": CONTENT}), 0.5, "m", "s", False, 4, 1)
    assert c.top_logprobs[0][0] == TokenLogprob("Yes", pytest.approx(math.log(0.6)))
    assert (c.prompt_tokens, c.prompt_tokens_cached, c.completion_tokens) == (30, 10, 1)
    with pytest.raises(LLMReplyError, match="broke off"):  # a plain call at its limit still is one
        _to_completion(_engine_reply(None), 0.5, "m", "s", False)
    with pytest.raises(LLMReplyError, match="malformed: position 0 has no top_logprobs list"):
        _to_completion(_engine_reply({"content": [{"token": "Yes"}]}), 0.5, "m", "s", False, 4, 1)


# ------------------------------------------------------------------ cache, recordings, ledger
class ProbScripted(scripted.ProbScripted):
    """A scripted engine that also answers probability calls (with CONTENT's first position)."""

    def __init__(self, script) -> None:
        super().__init__(script, lambda m, s: [(a["token"], math.exp(a["logprob"]))
                                               for a in CONTENT[0]["top_logprobs"]])


def test_cache_keeps_probabilities_under_their_own_key_and_the_ledger_counts_the_call(tmp_path) -> None:
    inner = ProbScripted(["Yes", "Yes", "Yes"])
    llm = CachedLLM(inner, ResponseCache(tmp_path / "c.sqlite"), Ledger(), "v1")
    plain = llm.complete(MSGS, max_tokens=1, stage="s")
    first = llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)
    assert not first.cached and plain.top_logprobs is None  # a plain reply never answers it
    again = CachedLLM(ProbScripted([]), ResponseCache(tmp_path / "c.sqlite"), Ledger(), "v1")
    hit = again.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4)
    assert hit.cached and hit.top_logprobs == first.top_logprobs
    assert again.complete(MSGS, max_tokens=1, stage="s").top_logprobs is None
    assert llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=3).cached is False  # N is in the key
    stage = again.ledger.by_stage()["s"]
    assert (stage.calls, stage.cached_calls, stage.prompt_tokens, stage.completion_tokens) == \
        (2, 2, 2 * first.prompt_tokens, 2 * first.completion_tokens)
    assert logprobs_missing(llm) == "" and "does not pass" in logprobs_missing(ScriptedLLM([]))


def test_a_probability_request_answered_without_them_is_not_cached(tmp_path) -> None:
    llm = CachedLLM(ScriptedLLM(["Yes", "Yes"]), ResponseCache(tmp_path / "c.sqlite"), Ledger(), "v1")
    llm.inner.complete = lambda m, **kw: ScriptedLLM.complete(llm.inner, m, **{k: v for k, v in kw.items()
                                                                                  if k != "top_logprobs"})
    assert llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4).top_logprobs is None
    assert not llm.complete(MSGS, max_tokens=1, stage="s", top_logprobs=4).cached


def test_an_old_cache_file_opens_its_rows_read_without_probabilities(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute("""CREATE TABLE responses (key TEXT PRIMARY KEY, stage TEXT NOT NULL, model TEXT NOT NULL,
        backend TEXT NOT NULL, text TEXT NOT NULL, prompt_tokens INTEGER, prompt_tokens_cached INTEGER,
        completion_tokens INTEGER, seconds REAL NOT NULL, created REAL NOT NULL DEFAULT (julianday('now')))""")
    con.execute("INSERT INTO responses (key, stage, model, backend, text, prompt_tokens, prompt_tokens_cached,"
                " completion_tokens, seconds) VALUES ('k', 's', 'm', 'b', 'old reply', 5, 0, 2, 0.5)")
    con.commit()
    con.close()
    cache = ResponseCache(path)
    old = cache.get("k")
    assert (old.text, old.prompt_tokens, old.top_logprobs) == ("old reply", 5, None) and not cache.notice
    assert list(tmp_path.glob("*.damaged-*")) == []  # migrated, not moved aside
    cache.put("p", Completion("Yes", "m", stage="s", top_logprobs=[[TokenLogprob("Yes", -0.5)]]))
    assert ResponseCache(path).get("p").top_logprobs == [[TokenLogprob("Yes", -0.5)]]


def test_recordings_carry_probabilities_and_old_lines_read_as_before(tmp_path) -> None:
    live = RecordingLLM(ProbScripted(["plain", "Yes"]))
    plain = live.complete(MSGS, max_tokens=5, stage="answer")
    probs = live.complete(MSGS, max_tokens=1, stage="neuropath.score", top_logprobs=4)
    live.write(tmp_path, ["q"], "replies.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "replies.jsonl").read_text().splitlines()[1:]]
    assert sorted("top_logprobs" in r for r in rows) == [False, True]  # written only where there are some
    replay = Recordings.load(tmp_path / "replies.jsonl").replay_llm()
    assert logprobs_missing(replay) == ""
    assert replay.complete(MSGS, max_tokens=5, stage="answer").text == plain.text
    again = replay.complete(MSGS, max_tokens=1, stage="neuropath.score", top_logprobs=4)
    assert again.top_logprobs == probs.top_logprobs and again.cached


def test_recordings_without_probabilities_say_so_and_bad_ones_name_the_line(tmp_path) -> None:
    live = RecordingLLM(ScriptedLLM(["plain"]))
    live.complete(MSGS, max_tokens=5, stage="answer")
    live.write(tmp_path, ["q"], "replies.jsonl")
    assert "hold no next-token probabilities" in logprobs_missing(Recordings.load(tmp_path / "replies.jsonl")
                                                                  .replay_llm())
    lines = (tmp_path / "replies.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row["top_logprobs"] = [[{"token": "Yes", "logprob": "high"}]]
    (tmp_path / "replies.jsonl").write_text("\n".join([lines[0], json.dumps(row)]) + "\n")
    replay = Recordings.load(tmp_path / "replies.jsonl").replay_llm()  # a bad line is a miss naming it
    with pytest.raises(BrokenRecording, match="replies.jsonl, line 2: 'top_logprobs': position 0, alternative 0"):
        replay.complete(MSGS, max_tokens=5, stage="answer")


def test_two_processes_migrating_one_old_file_both_open_it(tmp_path, monkeypatch) -> None:
    """The second to add the column finds it there (sqlite: duplicate column) and goes on."""
    import memrag.llm.cache as cache_mod

    ResponseCache(tmp_path / "c.sqlite").put("k", Completion("x", "m", stage="s"))
    real, seen = cache_mod._columns, []

    def stale_first(con):  # the first look predates the other process's ALTER TABLE
        seen.append(1)
        return cache_mod._OLD_COLUMNS if len(seen) == 1 else real(con)
    monkeypatch.setattr(cache_mod, "_columns", stale_first)
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert cache.get("k").text == "x" and not cache.notice and len(seen) == 2
