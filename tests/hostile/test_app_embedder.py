"""Hostile-input probes of the app's embedder (issue #35): a memory is opened and asked with the
embedder it was built with when this server has it (MEMRAG_EMBEDDER, a served model), the sidebar
names it, and a memory whose embedder this server lacks gets a sentence saying what would open it.

Real AppTest runs with the real embedder path (no test embedder injected) against a loopback
OpenAI-compatible fake serving `/v1/embeddings`; extraction and answers come from a scripted LLM.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from fake_openai import running_fake_openai
from memrag.app import jobs, session
from memrag.config import IndexParams
from memrag.index.build import build_memory, run_build
from memrag.served_embedders import served_embedder
from test_app_pages import APP, DOCS, ask, click, home, no_exception, plain, scripted, wait_for  # noqa: F401


def sidebar_text(at: AppTest) -> str:
    return " ".join(e.value for e in list(at.sidebar.caption) + list(at.sidebar.error)).replace("\\", "")


@pytest.mark.probe("MEMRAG_EMBEDDER=openai:MODEL: build a memory in the app, then open and ask it",
                   "the app reopens what it built with that embedder, asks with it, and the sidebar names it",
                   group="app")
def test_a_memory_built_in_the_app_with_a_served_embedder_reopens_and_answers(home, monkeypatch):
    with running_fake_openai(models=["default"]) as fake:
        monkeypatch.setenv("MEMRAG_OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("MEMRAG_EMBEDDER", "openai:probe-embed-built")
        at = AppTest.from_file(APP, default_timeout=60)
        at.switch_page("app_pages/memory.py")
        at.session_state[session.TEST_LLM_KEY] = scripted()
        at = no_exception(at.run())
        at.radio(key="memory_source").set_value("Upload files").run()
        at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain")])
        next(t for t in at.text_input if t.label == "memory name").set_value("served").run()
        click(at, "Build memory")
        job = wait_for(at, session.AppState.build_job.key)
        assert job.status == jobs.DONE, job.error
        at = no_exception(at.run())
        assert at.session_state[session.AppState.active_memory.key] == str(home / "memories" / "served")
        text = sidebar_text(at)
        assert "embedder: openai:probe-embed-built@" in text and "new memories" not in text, text
        assert not at.sidebar.error
        embedded = len([r for r in fake.requests if r.path == "/v1/embeddings"])
        at.switch_page("app_pages/ask.py")
        at = ask(no_exception(at.run()))
        assert len([m for m in at.markdown if m.value.startswith("**Answer:**")]) == 4
        assert len([r for r in fake.requests if r.path == "/v1/embeddings"]) > embedded  # the question, by it


@pytest.mark.probe("a memory built with openai:MODEL on one server, opened by an app set up for another",
                   "refused with a sentence naming the embedder and the setting that would open it", group="app")
def test_a_memory_whose_embedder_this_server_lacks_gets_a_sentence(home, monkeypatch):
    path = home / "memories" / "elsewhere"
    with running_fake_openai() as built_on, running_fake_openai() as here:
        monkeypatch.setenv("MEMRAG_OPENAI_BASE_URL", built_on.base_url)
        run_build(build_memory(path, DOCS, scripted(), served_embedder("openai:probe-embed-elsewhere"),
                               IndexParams(), name="elsewhere"))
        monkeypatch.setenv("MEMRAG_OPENAI_BASE_URL", here.base_url)  # the app's server: not the one it was built on
        at = AppTest.from_file(APP, default_timeout=60)
        at.session_state[session.TEST_LLM_KEY] = scripted()
        at.session_state[session.AppState.active_memory.key] = str(path)
        at = no_exception(at.run())
        text = sidebar_text(at)
        assert "was built with the embedder 'openai:probe-embed-elsewhere@" in text, text
        assert "MEMRAG_OPENAI_EMBED_BASE_URL (or MEMRAG_OPENAI_BASE_URL)" in text
        assert "Traceback" not in plain(at)
