"""The embedded engine's streamed calls: the same reply as the unstreamed call that was recorded,
the engine's own counters on the way, and a stop part-way that leaves the engine usable.

The model tests run the real Qwen 1.5B (marked `model`); the others feed `_streamed` the pieces
the engine sends (their shape copied from a real stream) to pin how they are put together.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memrag import prompts
from memrag.config import Settings
from memrag.index import store
from memrag.llm import watch
from memrag.llm.cache import cache_key, call_params
from memrag.llm.embedded import EmbeddedLLM, _streamed
from memrag.llm.recordings import Recordings

SAMPLE = Path(__file__).resolve().parents[1] / "sample_corpus" / "memory"


def _piece(content=None, finish=None, **extra):
    return {"choices": [{"index": 0, "finish_reason": finish, "delta": {} if content is None else {"content": content}}],
            "object": "chat.completion.chunk", **extra}


class PieceServer:
    """Sends the pieces given, stopping where the callback says so (as the engine does)."""

    def __init__(self, pieces):
        self.pieces = pieces
        self.sent = 0
        self.request = None

    def handle_chat_completions(self, request, callback):
        self.request = request
        for p in self.pieces:
            self.sent += 1
            if callback(p):
                return


STREAM = [
    _piece(prompt_progress={"total": 700, "cache": 100, "processed": 612, "time_ms": 5.0},
           timings={"predicted_n": 0}),
    _piece(prompt_progress={"total": 700, "cache": 100, "processed": 700, "time_ms": 9.0},
           timings={"predicted_n": 0}),
    _piece("{\"a\": ", timings={"predicted_n": 3, "predicted_per_second": 12.5}),
    _piece("\"é\"}", timings={"predicted_n": 6, "predicted_per_second": 11.0}),
    _piece(finish="stop"),
    {"choices": [], "usage": {"prompt_tokens": 700, "completion_tokens": 6,
                              "prompt_tokens_details": {"cached_tokens": 100}},
     "timings": {"cache_n": 100, "predicted_n": 6}},
]


def test_pieces_make_the_unstreamed_envelope_and_report_the_engine_counters():
    seen: list[watch.CallState] = []

    class Recording(watch.CallWatch):
        def update(self, **changes):
            super().update(**changes)
            seen.append(self.state())

    w = Recording()
    server = PieceServer(STREAM)
    with watch.watching(w, "index.extract"):
        reply = _streamed(server, {"messages": [], "max_tokens": 9})
    assert server.request["stream"] is True and server.request["return_progress"] is True
    assert reply["choices"][0]["message"]["content"] == "{\"a\": \"é\"}"
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert reply["usage"]["completion_tokens"] == 6 and reply["timings"]["cache_n"] == 100
    texts = [s.text() for s in seen]
    assert texts[0] == "reading 600 prompt tokens: 512 read (100 more reused from the last call)"
    assert texts[-1] == "writing token 6 at 11.0 tokens/s"


def test_a_cancel_stops_at_the_next_piece_and_raises():
    stop = threading.Event()
    server = PieceServer(STREAM)

    class StopAfterPrompt(watch.CallWatch):
        def update(self, **changes):
            super().update(**changes)
            if changes.get("phase") == watch.WRITING:
                stop.set()

    with watch.watching(StopAfterPrompt(stop.is_set), "index.extract"):
        with pytest.raises(watch.CallCancelled):
            _streamed(server, {"messages": [], "max_tokens": 9})
    assert server.sent == 3  # the first written piece asked to stop; nothing after it was read


def test_an_error_in_place_of_the_reply_is_returned_as_one():
    server = PieceServer([{"error": {"code": 400, "message": "the prompt is too long"}}, _piece("x")])
    assert _streamed(server, {"messages": []}) == {"error": {"code": 400, "message": "the prompt is too long"}}
    assert server.sent == 1


# ------------------------------------------------------------------ the real model
def _recorded_extraction():
    """The sample chunk whose recorded extraction reply is shortest, its messages and the reply."""
    rec = Recordings.load(SAMPLE / "extraction.jsonl")
    memory = store.load(SAMPLE)
    params = call_params(prompts.max_tokens_for("index.extract"), "index.extract")
    best = None
    for c in memory.chunks:
        messages = prompts.extract_messages(c.title, c.text)
        r = rec.responses.get(cache_key(rec.identity, messages, prompts.EXTRACT_SCHEMA, params))
        if r is not None and (best is None or r.completion_tokens < best[1].completion_tokens):
            best = (messages, r)
    assert best is not None, "no sample chunk matches a recorded extraction"
    return best


@pytest.mark.model
def test_streamed_reply_is_the_recorded_unstreamed_one_bit_for_bit():
    messages, recorded = _recorded_extraction()
    llm = EmbeddedLLM(cache_dir=Settings().cache_dir)
    w = watch.CallWatch()
    phases: list[str] = []
    done = threading.Event()

    def poll():  # what a page sees while the call runs
        while not done.is_set():
            s = w.state()
            if s is not None and (not phases or phases[-1] != s.phase):
                phases.append(s.phase)
            time.sleep(0.05)

    t = threading.Thread(target=poll)
    t.start()
    try:
        with watch.watching(w, "index.extract"):
            c = llm.complete(messages, schema=prompts.EXTRACT_SCHEMA,
                             max_tokens=prompts.max_tokens_for("index.extract"), stage="index.extract")
    finally:
        done.set()
        t.join()
    assert c.text == recorded.text
    assert (c.prompt_tokens, c.completion_tokens) == (recorded.prompt_tokens, recorded.completion_tokens)
    assert watch.WRITING in phases and phases.index(watch.WRITING) > 0  # it read the prompt, then wrote


@pytest.mark.model
def test_a_cancel_stops_the_real_engine_within_a_second_and_the_next_call_answers():
    llm = EmbeddedLLM(cache_dir=Settings().cache_dir)
    stop = threading.Event()
    w = watch.CallWatch(stop.is_set)
    box: dict = {}

    def call():
        with watch.watching(w, "test"):
            try:
                llm.complete([{"role": "user", "content": "Count from 1 to 400, one number a line."}],
                             max_tokens=1500, stage="test")
            except watch.CallCancelled as e:
                box["cancelled"] = e
                box["at"] = time.monotonic()

    t = threading.Thread(target=call)
    t.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        s = w.state()
        if s is not None and s.phase == watch.WRITING and s.tokens >= 5:
            break
        time.sleep(0.05)
    asked = time.monotonic()
    stop.set()
    t.join(30)
    assert "cancelled" in box and box["at"] - asked < 1.0
    c = llm.complete([{"role": "user", "content": "Reply with the word yes."}], max_tokens=8, stage="test")
    assert "yes" in c.text.lower()
