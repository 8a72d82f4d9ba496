"""The embedded engine's streamed calls: the same reply as an unstreamed call from the same engine
state, the engine's own counters on the way, and a stop part-way that leaves the engine usable.

The model tests run the real Qwen 1.5B (marked `model`); the others feed `_streamed` the pieces
the engine sends (their shape copied from a real stream) to pin how they are put together.
"""

from __future__ import annotations

import threading
import time

import pytest

from memrag.config import Settings
from memrag.llm import watch
from memrag.llm.embedded import EmbeddedLLM, _streamed


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
SCHEMA = {"type": "object", "properties": {"harbours": {"type": "array", "items": {"type": "string"}}},
          "required": ["harbours"]}
MESSAGES = [{"role": "system", "content": "You extract place names. Reply with JSON only."},
            {"role": "user", "content": "List every harbour town named here: The steamer left Port Alder for "
                                        "Quellhaven, called at Hessby and Skellan, and wintered at Tollimere."}]


def _unstreamed(llm: EmbeddedLLM, messages, schema, max_tokens):
    """The call as it was made before streaming: one request, one envelope."""
    from memrag.llm import embedded

    reply = embedded._engine.server.handle_chat_completions(llm.request(messages, schema, max_tokens))
    return embedded._to_completion(reply, 0.0, llm.model, "test", True)


@pytest.mark.model
def test_streamed_reply_is_the_unstreamed_one_bit_for_bit_and_reports_the_engine_counters():
    # A live reply depends on what the engine's prompt cache holds (a prefix reused or read afresh
    # rounds differently), so both ways are compared from the same cache state: after a first
    # call of the same prompt, a streamed call, then an unstreamed one.
    llm = EmbeddedLLM(cache_dir=Settings().cache_dir)
    llm.ensure_ready()
    _unstreamed(llm, MESSAGES, SCHEMA, 80)
    w = watch.CallWatch()
    phases: list[str] = []
    done = threading.Event()

    def poll():  # what a page sees while the call runs
        while not done.is_set():
            s = w.state()
            if s is not None and (not phases or phases[-1] != s.phase):
                phases.append(s.phase)
            time.sleep(0.01)

    t = threading.Thread(target=poll)
    t.start()
    try:
        with watch.watching(w, "test"):
            streamed = llm.complete(MESSAGES, schema=SCHEMA, max_tokens=80, stage="test")
    finally:
        done.set()
        t.join()
    plain = _unstreamed(llm, MESSAGES, SCHEMA, 80)
    assert streamed.text == plain.text and "harbours" in streamed.text
    assert (streamed.prompt_tokens, streamed.prompt_tokens_cached, streamed.completion_tokens) == (
        plain.prompt_tokens, plain.prompt_tokens_cached, plain.completion_tokens)
    assert watch.WRITING in phases  # the page saw it writing


@pytest.mark.model
def test_a_cancel_stops_the_real_engine_at_the_next_token_and_the_next_call_answers():
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
    # one token's time: well under a second on an idle machine, ~2 s when seven agents share two cores
    assert "cancelled" in box and box["at"] - asked < 5.0
    c = llm.complete([{"role": "user", "content": "Reply with the word yes."}], max_tokens=8, stage="test")
    assert "yes" in c.text.lower()
