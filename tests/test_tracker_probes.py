"""bench/tracker_probes.py: both tracker probes against any backend in one command, its verdict
(does likelihood beat list order?) and how to make the likelihood tracker that backend's default.
End to end against the fake Ollama and OpenAI-compatible servers (the sample's recorded listings,
only the judge and label calls reach the server), and, marked `model`, llama.cpp's own server."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from fake_ollama import ChatReply, running_fake_ollama
from fake_openai import Reply, running_fake_openai

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _probes():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("tracker_probes_under_test", BENCH / "tracker_probes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TP = _probes()
SAMPLE_2 = ["--", "--dataset", "sample", "--scope", "pooled", "--limit", "2"]


def _position(p_yes: float) -> list[dict]:
    alts = [("yes", p_yes), ("no", 1 - p_yes - 0.05), ("A", 0.05)]
    top = [{"token": t, "logprob": math.log(p)} for t, p in alts]
    return [{"token": "yes", "logprob": top[0]["logprob"], "top_logprobs": top}]


def _hop1(p_yes, position, precision, top) -> dict:
    return {"separation": {"p_yes": p_yes, "list_position": position},
            "likelihood": {"precision": precision, "top_precision": top, "kept": 10}}


LABELS = {"separation": {"labels_two_orders": 0.6, "list_position": 0.8}}


def test_the_verdict_needs_both_better_separation_and_better_kept_paths():
    assert TP.verdict(_hop1(0.7, 0.6, 0.5, 0.4), LABELS)[0] is True
    assert TP.verdict(_hop1(0.7, 0.6, 0.4, 0.4), LABELS)[0] is False  # kept paths no better than the top
    beats, lines = TP.verdict(_hop1(0.54, 0.81, 0.5, 0.6), LABELS)
    assert beats is False and lines[-1] == "likelihood beats list order: NO"
    assert "0.54" in lines[0] and "0.81" in lines[0]
    assert TP.verdict(_hop1(float("nan"), float("nan"), float("nan"), float("nan")), LABELS)[0] is None


def test_how_to_make_it_the_default_names_the_backend_and_the_parameter():
    lines = TP.how_to_default(True, "--backend ollama --model phi4")
    assert "python -m memrag ask --backend ollama --model phi4" in lines[0]
    assert '{"neuropath": {"tracker": "likelihood"}}' in lines[0] and "measure it" in lines[1]
    assert "keep the default" in TP.how_to_default(False, "--backend embedded")[1]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """A response cache of the test's own: a reply cached by an earlier run would answer the judge
    calls before they reach the server under test."""
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))


def _run_and_read(argv: list[str], out: Path, capsys) -> tuple[dict, str]:
    assert TP.main(argv) == 0
    printed = capsys.readouterr().out
    return json.loads((out / "verdict.json").read_text()), printed


def test_against_a_fake_ollama_the_judge_calls_ask_twenty_alternatives_without_thinking(tmp_path, monkeypatch,
                                                                                           capsys):
    with running_fake_ollama(["phi4"]) as fake:
        fake.default_reply = ChatReply(content="yes", logprobs=_position(0.6))
        monkeypatch.setenv("OLLAMA_HOST", fake.host)
        out = tmp_path / "phi4"
        verdict, printed = _run_and_read(["--backend", "ollama", "--model", "phi4", "--out", str(out), *SAMPLE_2],
                                         out, capsys)
        bodies = fake.chat_bodies()
    judged = [b for b in bodies if b.get("logprobs")]
    assert judged and all(b["top_logprobs"] <= 20 and b["think"] is False for b in judged)
    # every probability call reached the server; the recorded listings answered the rest
    assert len(judged) == len(bodies)
    probe = json.loads((out / "hop1" / "probe.json").read_text())
    assert probe["summary"]["engine_calls"] == len(bodies) - 2 * json.loads(
        (out / "labels" / "probe.json").read_text())["summary"]["questions"]
    # one P(yes) for every path ties everything: it cannot beat list order
    assert verdict["beats_list_order"] in (False, None)
    assert "likelihood beats list order:" in printed and "--backend ollama --model phi4" in printed


def test_against_a_fake_openai_compatible_server(tmp_path, capsys):
    with running_fake_openai(["served"]) as fake:
        fake.default = Reply(content="yes", logprobs={"content": _position(0.7)})
        out = tmp_path / "served"
        verdict, printed = _run_and_read(["--backend", "openai", "--base-url", fake.base_url, "--model", "served",
                                          "--out", str(out), *SAMPLE_2], out, capsys)
        bodies = fake.chat_bodies()
    assert bodies and all(b["logprobs"] is True and b["max_tokens"] == 1 for b in bodies)
    assert {"hop1", "labels"} <= {p.name for p in out.iterdir()}
    assert (out / "hop1" / "replies.jsonl").is_file() and (out / "labels" / "replies.jsonl").is_file()
    assert "--backend openai" in printed and verdict["lines"][-1].startswith(("It beat", "It did not"))


@pytest.mark.model
def test_against_llama_cpps_own_server(tmp_path, capsys):
    from memrag.config import Settings
    from memrag.llm.llamacpp_server import SERVED_MODEL, serve_gguf
    from memrag.llm.model_file import MODEL_FILE, ensure_model

    path = Settings().cache_dir / "models" / MODEL_FILE
    ensure_model(path)
    out = tmp_path / "llamacpp"
    with serve_gguf(path, slots=1, n_ctx=4096) as url:
        verdict, printed = _run_and_read(["--backend", "openai", "--base-url", url, "--model", SERVED_MODEL,
                                          "--out", str(out), *SAMPLE_2[:-1], "1"], out, capsys)
    probe = json.loads((out / "hop1" / "probe.json").read_text())
    assert probe["summary"]["engine_calls"] > 0 and probe["summary"]["engine"].startswith("openai")
    assert verdict["beats_list_order"] in (True, False, None) and "likelihood beats list order:" in printed
