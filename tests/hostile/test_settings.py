"""Hostile settings (issue 27, probe 7): bad environment values are refused with a message that
names the variable, never a traceback, in the library, the CLI and the Start page."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from memrag.config import Settings
from memrag.llm.base import LLMError
from memrag.llm.factory import choose_backend
from memrag.app import session as app_state
from test_app_pages import APP, embedder, no_exception, plain

CLOSED = "http://127.0.0.1:9"  # nothing listens there: a valid address that answers at once with a refusal

BAD_ENV = [
    ({"OLLAMA_HOST": "::garbage::"}, "OLLAMA_HOST"),
    ({"OLLAMA_HOST": "http://127.0.0.1:99999"}, "OLLAMA_HOST"),
    ({"OLLAMA_HOST": CLOSED, "MEMRAG_THREADS": "abc"}, "MEMRAG_THREADS"),
]
IDS = ["host-garbage", "port-99999", "threads-abc"]


@pytest.fixture()
def clean_env(tmp_path, monkeypatch):
    for name in ("OLLAMA_HOST", "MEMRAG_THREADS", "MEMRAG_OPENAI_BASE_URL", "MEMRAG_OLLAMA_MODEL",
                 "MEMRAG_EMBEDDER", "MEMRAG_PRELOAD", "MEMRAG_OPENAI_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    return monkeypatch


@pytest.fixture(params=BAD_ENV, ids=IDS)
def bad_env(request, clean_env) -> str:
    """One of the bad environments set; the name of the variable a message must name."""
    env, name = request.param
    for key, value in env.items():
        clean_env.setenv(key, value)
    return name


@pytest.mark.probe("settings: OLLAMA_HOST=::garbage::, OLLAMA_HOST=…:99999, MEMRAG_THREADS=abc, backend auto",
                   "choosing the backend raises only an LLM error naming the variable", group="settings")
def test_backend_choice_names_the_bad_variable(bad_env):
    with pytest.raises(LLMError, match=bad_env):
        choose_backend(Settings(backend="auto"))


@pytest.mark.probe("settings: every MEMRAG_* variable given a value it cannot use",
                   "one message per variable, each naming it; making Settings never raises", group="settings")
def test_every_variable_is_checked_by_name(clean_env):
    bad = {"OLLAMA_HOST": "ftp://x", "MEMRAG_THREADS": "0", "MEMRAG_OPENAI_BASE_URL": "http://h:70000/v1",
           "MEMRAG_OPENAI_EMBED_BASE_URL": "not a url", "MEMRAG_PRELOAD": "maybe",
           "MEMRAG_OLLAMA_MODEL": "phi4\n", "MEMRAG_EMBEDDER": "mini\tlm", "MEMRAG_ALLOW_RUN_PATHS": "perhaps"}
    for key, value in bad.items():
        clean_env.setenv(key, value)
    from memrag.config import SettingsError

    problems = Settings().problems()
    for key in bad:
        assert sum(p.startswith(key) for p in problems) == 1, (key, problems)
    with pytest.raises(SettingsError):
        Settings().check()
    clean_env.setenv("OLLAMA_HOST", "http://alice:pw-secret@127.0.0.1:99999")
    assert not any("pw-secret" in p for p in Settings().problems())  # a password never shown


@pytest.mark.probe("settings: the CLI run with OLLAMA_HOST=::garbage::",
                   "exit 2 with a message naming OLLAMA_HOST, no traceback", group="settings")
def test_cli_refuses_bad_settings_with_a_message(clean_env, capsys):
    from memrag.cli.main import main

    clean_env.setenv("OLLAMA_HOST", "::garbage::")
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err
    assert "OLLAMA_HOST" in err and "Traceback" not in err


@pytest.mark.probe("settings: the Start page opened with OLLAMA_HOST=::garbage::, …:99999 or MEMRAG_THREADS=abc",
                   "the page shows the LLM as not available with the variable named", group="settings")
def test_the_start_page_shows_bad_settings(bad_env):
    at = AppTest.from_file(APP, default_timeout=60)  # the real backend choice: no test LLM injected
    at.session_state[app_state.TEST_EMBEDDER_KEY] = embedder()
    at = no_exception(at.run())
    assert "LLM: not available" in plain(at) and bad_env in plain(at)
