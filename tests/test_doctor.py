"""`python -m memrag doctor --json`: exactly one JSON object; exit 0 only when everything works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_ollama import closed_port_host, running_fake_ollama

ROOT = Path(__file__).resolve().parent.parent


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memrag", "doctor", "--json", *args], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env={**os.environ, **(env or {})})


def test_ollama_forced_but_down_fails_clearly():
    out = doctor("--backend", "ollama", env={"OLLAMA_HOST": closed_port_host()})
    assert out.returncode != 0
    report = json.loads(out.stdout)  # the whole stdout is one JSON object
    assert report["ok"] is False and report["llm"] is None
    failed = [c for c in report["checks"] if not c["ok"]]
    assert failed and "ollama serve" in failed[0]["detail"].lower()


def test_ollama_without_the_model_names_the_pull_command():
    with running_fake_ollama(models=["llama3:latest"]) as fake:
        out = doctor("--backend", "ollama", "--model", "phi4", env={"OLLAMA_HOST": fake.host})
    assert out.returncode != 0
    report = json.loads(out.stdout)
    assert any("ollama pull phi4" in c["detail"] for c in report["checks"] if not c["ok"])


def test_ollama_with_the_model_answers_through_the_real_client():
    with running_fake_ollama(models=["phi4:latest"]) as fake:
        fake.script('{"capital": "Paris"}')
        out = doctor("--backend", "ollama", env={"OLLAMA_HOST": fake.host})
    report = json.loads(out.stdout)
    assert out.returncode == 0, out.stdout
    assert report["ok"] and report["llm"]["backend"] == "ollama" and report["llm"]["model"] == "phi4"
    assert report["embedder"] == {"model": "all-MiniLM-L6-v2", "dim": 384}
    assert [c["name"] for c in report["checks"]] == ["choose backend", "LLM completion", "embedding"]


@pytest.mark.model
def test_auto_without_ollama_uses_the_embedded_model_for_real():
    out = doctor(env={"OLLAMA_HOST": closed_port_host()})
    report = json.loads(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr
    assert report["llm"]["backend"] == "embedded" and "not reachable" in report["llm"]["reason"].lower()
    assert all(c["ok"] for c in report["checks"])
