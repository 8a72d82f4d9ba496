"""Hostile probes of where secrets go (issue 27, probes 1, 2 and 7's keys): a key reaches only the
server it was given for, no stored or shown text carries a key or a URL password, keys are checked
when a backend is built, and the egress notice names every host documents go to. Every server here
is a loopback fake (tests/fake_openai.py, tests/fake_ollama.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_ollama import running_fake_ollama
from fake_openai import Reply, running_fake_openai
from memrag.cli.doctor import format_report, run_doctor
from memrag.config import IndexParams, Settings
from memrag.index import store
from memrag.index.build import build_memory
from memrag.index.readers import benchmark_document
from memrag.llm.base import LLMError, LLMRefused, LLMReplyError
from memrag.llm.factory import choose_backend
from memrag.llm.ollama_backend import OllamaLLM
from memrag.llm.openai_backend import OpenAICompatibleLLM
from memrag.served_embedders import served_embedder
from scripted import HashEmbedder

probe = pytest.mark.probe
KEY = "sk-llm-host-only-4f8a0c1e9b"
EMBED_KEY = "sk-embed-host-only-77d2e5"
PASSWORD = "pw-hunter2-q9"
MSGS = [{"role": "user", "content": "Who wrote it?"}]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("MEMRAG_OPENAI_BASE_URL", "OPENAI_API_KEY", "MEMRAG_OPENAI_EMBED_BASE_URL",
                 "MEMRAG_OPENAI_EMBED_API_KEY", "MEMRAG_EMBEDDER", "MEMRAG_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _auth_headers(fake) -> list[str]:
    return [v for r in fake.requests for k, v in r.headers.items() if k.lower() == "authorization"]


# ------------------------------------------------------------------ probe 1: a key belongs to one URL
@probe("MEMRAG_OPENAI_EMBED_BASE_URL names a second host; OPENAI_API_KEY is set for the LLM's host",
       "the embeddings host never receives OPENAI_API_KEY; it gets MEMRAG_OPENAI_EMBED_API_KEY when set, "
       "and the LLM's host never receives that one", group="secrets")
def test_the_llm_key_never_goes_to_the_embeddings_host(clean_env: pytest.MonkeyPatch) -> None:
    with running_fake_openai(models=["default"]) as llm_host, running_fake_openai(models=["emb"]) as embed_host:
        clean_env.setenv("MEMRAG_OPENAI_BASE_URL", llm_host.base_url)
        clean_env.setenv("OPENAI_API_KEY", KEY)
        clean_env.setenv("MEMRAG_OPENAI_EMBED_BASE_URL", embed_host.base_url)
        served_embedder("openai:emb", Settings()).encode(["a private document"])
        assert embed_host.requests and not any(KEY in h for h in _auth_headers(embed_host))

        clean_env.setenv("MEMRAG_OPENAI_EMBED_API_KEY", EMBED_KEY)
        served_embedder("openai:emb", Settings()).encode(["another document"])
        assert _auth_headers(embed_host)[-1] == f"Bearer {EMBED_KEY}"

        OpenAICompatibleLLM(base_url=llm_host.base_url, model="default", api_key=Settings().openai_api_key
                            ).complete(MSGS, max_tokens=20, stage="answer")
        assert _auth_headers(llm_host) == [f"Bearer {KEY}"]


@probe("the embedder's server is the LLM's own base URL", "it gets the LLM's key (one server, one key)",
       group="secrets")
def test_the_same_server_keeps_its_key(clean_env: pytest.MonkeyPatch) -> None:
    with running_fake_openai(models=["emb"]) as host:
        clean_env.setenv("MEMRAG_OPENAI_BASE_URL", host.base_url)
        clean_env.setenv("OPENAI_API_KEY", KEY)
        served_embedder("openai:emb", Settings()).encode(["x"])
        assert _auth_headers(host) == [f"Bearer {KEY}"]


@probe("MEMRAG_OPENAI_BASE_URL and OPENAI_API_KEY are set; --base-url (or the sidebar) names another server",
       "the other server never receives the environment's key, and the CLI says it was withheld", group="secrets")
def test_the_environments_key_stays_with_the_environments_server(clean_env: pytest.MonkeyPatch, capsys) -> None:
    import argparse

    from memrag.cli.common import settings_from

    with running_fake_openai(models=["default"]) as own, running_fake_openai(models=["default"]) as other:
        clean_env.setenv("MEMRAG_OPENAI_BASE_URL", own.base_url)
        clean_env.setenv("OPENAI_API_KEY", KEY)
        typed = settings_from(argparse.Namespace(backend="openai", base_url=other.base_url))
        llm, _ = choose_backend(typed)
        llm.complete(MSGS, max_tokens=20, stage="answer")
        assert other.requests and not any(KEY in h for h in _auth_headers(other))
        assert "OPENAI_API_KEY" in capsys.readouterr().err
        # the same server named again (a trailing slash) keeps its key
        same = settings_from(argparse.Namespace(backend="openai", base_url=own.base_url + "/"))
        choose_backend(same)[0].complete(MSGS, max_tokens=20, stage="answer")
        assert _auth_headers(own)[-1] == f"Bearer {KEY}"


@probe("the LLM on loopback, the embedder on another host",
       "the egress notice names the embedder's host: in the backend choice (CLI, sidebar) and in doctor",
       group="secrets")
def test_the_embedders_host_is_announced(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import memrag.embed

    clean_env.setenv("MEMRAG_OPENAI_EMBED_BASE_URL", "http://embed.invalid:9/v1")
    # doctor's embedding check would call the embedder's host: a local stand-in answers instead
    clean_env.setattr(memrag.embed, "get_embedder", lambda spec: HashEmbedder())
    with running_fake_openai(models=["default"]) as llm_host:
        settings = Settings(backend="openai", openai_base_url=llm_host.base_url, openai_model="default",
                            embedder="openai:emb", data_dir=tmp_path, cache_dir=tmp_path)
        _, choice = choose_backend(settings)
        assert "documents leave this machine" in choice.warning and "embed.invalid" in choice.warning
        assert "WARNING:" in choice.describe() and "127.0.0.1" not in choice.warning
        assert "WARNING:  your documents leave" in format_report(run_doctor(settings))


@probe("Ollama on another host as the LLM", "the egress notice names it (documents go there too)",
       group="secrets")
def test_a_remote_ollama_is_announced(tmp_path: Path) -> None:
    from memrag.llm.egress import egress_notice

    with running_fake_ollama(models=["phi4"]) as fake:
        _, local = choose_backend(Settings(backend="ollama", ollama_host=fake.host, data_dir=tmp_path))
        assert local.warning == ""
    settings = Settings(backend="auto", ollama_host="http://gpu.invalid:11434", data_dir=tmp_path,
                        embedder="ollama:bge-m3")
    assert "gpu.invalid (the LLM and the embedder)" in egress_notice(settings, "ollama")
    assert "gpu.invalid (the embedder)" in egress_notice(settings, "embedded")


# ------------------------------------------------------------------ probe 2: one exit path for secrets
@pytest.fixture
def openai_fake() -> Iterator:
    with running_fake_openai(models=["default"]) as fake:
        yield fake


@probe("a 200 reply of the wrong shape that echoes the request's Authorization header",
       "the error's message and raw text carry no key", group="secrets")
def test_an_echoed_key_is_not_kept(openai_fake) -> None:
    openai_fake.script(Reply(raw_body=json.dumps({"echo": {"headers": {"Authorization": f"Bearer {KEY}"}},
                                                  "note": "token=abc"}).encode()))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default", api_key=KEY)
    with pytest.raises(LLMReplyError) as e:
        llm.complete(MSGS, max_tokens=20, stage="answer")
    assert KEY not in str(e.value) and KEY not in e.value.raw and "echo" in e.value.raw


@probe("a key that looks like no known key format, echoed in an error body",
       "it is removed too (the backend registered it when it was built)", group="secrets")
def test_an_unusual_key_is_removed_wherever_it_shows(openai_fake) -> None:
    odd = "Zx81QvRt72mPlain"
    openai_fake.script(Reply(status=500, content=f"upstream said: you sent {odd}"))
    llm = OpenAICompatibleLLM(base_url=openai_fake.base_url, model="default", api_key=odd)
    with pytest.raises(LLMError) as e:
        llm.complete(MSGS, max_tokens=20, stage="answer")
    assert odd not in str(e.value) and odd not in getattr(e.value, "raw", "")


def _docs(n: int) -> list:
    return [benchmark_document(f"d{i}", f"Town {i}", f"Town {i} lies on River {i}.", "t") for i in range(n)]


def _all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@probe("a build whose server echoes the key in a wrong-shaped reply, through a base URL with "
       "user:password@", "no file of the memory folder, no message on stderr holds the key or the password",
       group="secrets")
def test_no_secret_reaches_the_memory_folder(openai_fake, tmp_path: Path, capsys, caplog) -> None:
    openai_fake.script(Reply(raw_body=json.dumps({"echo": f"Authorization: Bearer {KEY}"}).encode()),
                       Reply(status=500, content="CUDA error"))
    base = openai_fake.base_url.replace("http://", f"http://alice:{PASSWORD}@")
    llm = OpenAICompatibleLLM(base_url=base, model="default", api_key=KEY, timeout=5)
    mem = tmp_path / "mem"
    list(build_memory(mem, _docs(2), llm, HashEmbedder(), IndexParams()))
    log = store.load(mem).extraction_log
    assert [log[i].status for i in range(2)] == ["failed", "failed"]
    stored = _all_bytes(tmp_path)
    shown = capsys.readouterr().err + caplog.text + repr(llm) + str(log[0].__dict__) + str(log[1].__dict__)
    for secret in (KEY, PASSWORD):
        assert secret.encode() not in stored and secret not in shown


@probe("a base URL with user:password@ and a query, to a closed port",
       "check(), repr and the error name the server without the password or the query", group="secrets")
def test_a_url_password_is_never_shown() -> None:
    llm = OpenAICompatibleLLM(base_url=f"http://alice:{PASSWORD}@127.0.0.1:9/v1?token=tok-77q", model="m")
    ok, why = llm.check()
    with pytest.raises(LLMError) as e:
        llm.complete(MSGS, max_tokens=5, stage="answer")
    for text in (why, repr(llm), str(e.value)):
        assert PASSWORD not in text and "tok-77q" not in text and "alice" not in text
    assert ok is False and "127.0.0.1:9/v1" in why
    ollama = OllamaLLM(host=f"http://alice:{PASSWORD}@127.0.0.1:9", model="phi4")
    ok, why = ollama.check()
    assert ok is False and PASSWORD not in why and "127.0.0.1:9" in why


# ------------------------------------------------------------------ probe 7: keys checked when built
@probe("an API key holding a pasted U+2011 (non-breaking hyphen)",
       "the backend is refused when built, with a message naming the character and the setting; "
       "check() never raises", group="secrets")
def test_a_key_with_a_non_ascii_character() -> None:
    with pytest.raises(LLMRefused, match=r"OPENAI_API_KEY.*U\+2011") as e:
        OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk\u2011abc123def")
    assert "abc123def" not in str(e.value)


@probe("an API key with a trailing space, or a trailing newline",
       "refused when built: 'ends with a space' / 'ends with a line break', not a broken reply",
       group="secrets")
@pytest.mark.parametrize("key,said", [("sk-abc123def ", "ends with a space"),
                                      ("sk-abc123def\n", "ends with a line break"),
                                      ("sk-abc 123def", "has a space at character 7")])
def test_a_key_with_whitespace(key: str, said: str) -> None:
    with pytest.raises(LLMRefused, match=said):
        OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m", api_key=key)


@probe("OLLAMA_API_KEY (which the ollama client sends by itself) holding a pasted U+2011",
       "the Ollama backend is refused when built, naming OLLAMA_API_KEY and the character", group="secrets")
def test_an_ollama_key_with_a_non_ascii_character(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", "ol\u2011abc123def")
    with pytest.raises(LLMRefused, match=r"OLLAMA_API_KEY.*U\+2011"):
        OllamaLLM(host="http://127.0.0.1:9", model="phi4")


@probe("the app with the LLM on loopback and MEMRAG_EMBEDDER=openai:emb on another host",
       "the sidebar warns that documents leave this machine, naming the embedder's host", group="secrets")
def test_the_sidebar_names_the_embedders_host(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from streamlit.testing.v1 import AppTest

    from memrag.app import session as app_state
    from memrag.app.session import AppState

    clean_env.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    clean_env.setenv("MEMRAG_EMBEDDER", "openai:emb")
    clean_env.setenv("MEMRAG_OPENAI_EMBED_BASE_URL", "http://embed.invalid:9/v1")
    with running_fake_openai(models=["default"]) as fake:
        at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=60)
        at.session_state[app_state.TEST_EMBEDDER_KEY] = HashEmbedder()  # nothing calls the embedder's host
        at.session_state[AppState.backend.key] = "openai"
        at.session_state[AppState.openai_base_url.key] = fake.base_url
        at.session_state[AppState.openai_model.key] = "embed-probe"  # not a choice cached by another test
        fake.models.append("embed-probe")
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(w.value.replace("\\", "") for w in at.sidebar.warning)
    assert "documents leave this machine" in shown and "embed.invalid" in shown
