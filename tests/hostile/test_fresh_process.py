"""A bad OLLAMA_HOST set before anything is imported (issue 35): `import ollama` builds a client from
it at module level, so a test that imports `ollama` first (as pytest's own process does) cannot see
the crash. Every probe here starts a fresh Python with the variable already set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrag.config import SettingsError, parse_url

probe = pytest.mark.probe
ROOT = Path(__file__).resolve().parents[2]
BAD_HOSTS = ["::garbage::", "http://127.0.0.1:99999"]


def _sentence(host: str) -> str:
    """What the settings check (and so `memrag doctor`) says about this OLLAMA_HOST."""
    with pytest.raises(SettingsError) as e:
        parse_url("OLLAMA_HOST", host, bare_host=True)
    return str(e.value)


def _fresh(code_or_args: list[str], host: str, home: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMRAG_OPENAI", "OLLAMA_"))}
    env.update(OLLAMA_HOST=host, MEMRAG_HOME=str(home), MEMRAG_PRELOAD="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    return subprocess.run([sys.executable, *code_or_args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@probe("settings: every memrag module imported in a fresh process with OLLAMA_HOST=::garbage:: or …:99999",
       "no import raises (the ollama client is made only when an Ollama backend is)", group="settings")
@pytest.mark.parametrize("host", BAD_HOSTS, ids=["garbage", "port-99999"])
def test_no_memrag_module_fails_to_import_with_a_bad_host(host, tmp_path):
    code = ("import importlib, pkgutil, memrag\n"
            "failed = []\n"
            "for m in pkgutil.walk_packages(memrag.__path__, 'memrag.'):\n"
            "    if m.name.startswith('memrag.app') or m.name == 'memrag.__main__':\n"
            "        continue  # the app's modules need a running script; the app probe below covers them\n"
            "    try:\n"
            "        importlib.import_module(m.name)\n"
            "    except Exception as e:\n"
            "        failed.append(f'{m.name}: {type(e).__name__}: {e}')\n"
            "print(json.dumps(failed))\n")
    done = _fresh(["-c", "import json\n" + code], host, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@probe("settings: `doctor`, `index` and `ask` in a fresh process with OLLAMA_HOST=::garbage:: or …:99999",
       "a refusal with the settings check's sentence, no traceback", group="settings")
@pytest.mark.parametrize("host", BAD_HOSTS, ids=["garbage", "port-99999"])
def test_the_cli_gives_the_settings_sentence(host, tmp_path):
    (tmp_path / "doc.txt").write_text("Ada Brennick was born in Port Alder.")
    for args in (["doctor"], ["index", "--memory", str(tmp_path / "m"), str(tmp_path / "doc.txt")],
                 ["ask", "--memory", str(tmp_path / "m"), "Where was Ada born?"]):
        done = _fresh(["-m", "memrag", *args], host, tmp_path)
        assert done.returncode != 0, args
        assert _sentence(host) in done.stderr, (args, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (args, done.stderr[-2000:])


_APP_RUN = """
import json
from streamlit.testing.v1 import AppTest
from memrag.app import session
from test_app_pages import APP, embedder, plain
at = AppTest.from_file(APP, default_timeout=90)
at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
at.run()
print(json.dumps({"exceptions": [str(e.value) for e in at.exception], "text": plain(at)}))
"""


@probe("settings: the app's Start page in a fresh process with OLLAMA_HOST=::garbage:: or …:99999",
       "no exception; the page says the LLM is not available with the settings check's sentence",
       group="settings")
@pytest.mark.parametrize("host", BAD_HOSTS, ids=["garbage", "port-99999"])
def test_the_app_gives_the_same_sentence_as_doctor(host, tmp_path):
    done = _fresh(["-c", _APP_RUN], host, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    page = json.loads(done.stdout.strip().splitlines()[-1])
    assert page["exceptions"] == []
    assert "LLM: not available" in page["text"] and _sentence(host) in page["text"], page["text"][-2000:]
