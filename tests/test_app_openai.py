"""The sidebar with the OpenAI-compatible backend: its settings, the choice it leads to, and the
"documents leave this machine" notice shown before any call (against a loopback fake server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fake_openai import running_fake_openai
from memrag.app import session
from memrag.app.session import AppState
from memrag.llm import egress
from scripted import HashEmbedder

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture()
def sidebar(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    with running_fake_openai(models=["default"]) as fake:
        at = AppTest.from_file(APP, default_timeout=60)
        at.session_state[session.TEST_EMBEDDER_KEY] = HashEmbedder()
        at.session_state[AppState.backend.key] = "openai"
        at.session_state[AppState.openai_base_url.key] = fake.base_url
        yield at, fake


def test_the_sidebar_picks_the_server_and_offers_its_settings(sidebar) -> None:
    at, fake = sidebar
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    labels = {t.label for t in at.sidebar.text_input}
    assert {"Base URL", "Model", "API key"} <= labels
    assert any(n.label == "Extraction requests in flight" for n in at.sidebar.number_input)
    captions = " ".join(c.value for c in at.sidebar.caption).replace("\\", "")  # markdown-escaped
    assert "using openai / default" in captions  # a single-model server needs no model name
    assert not at.sidebar.warning  # loopback: nothing leaves the machine
    assert not [r for r in fake.requests if r.path.endswith("/chat/completions")]


def test_a_server_elsewhere_is_announced_in_the_sidebar(sidebar, monkeypatch) -> None:
    at, _ = sidebar
    monkeypatch.setattr(egress, "is_loopback", lambda url: False)  # as if the server were elsewhere
    at.session_state[AppState.openai_model.key] = "default"  # another choice: not the cached one
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("documents leave this machine" in w.value.replace("\\", "") for w in at.sidebar.warning)
