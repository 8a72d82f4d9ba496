"""The demo guide's "Fix the memory, ask again" section under AppTest: it shows the recorded
showcase (its edit, why, and what asking again changed when recorded) and opens it on a fresh
editable copy of the sample — the Ask page on the showcase's question (with its gold: the copy keeps
the sample's questions), the Memory page's explorer on the edited triple's head; the sample itself
stays as it was. Refused in room mode unless removals are allowed."""

from __future__ import annotations

import pytest

from memrag import demo
from memrag.explain import showcase
from memrag.app.session import AppState
from memrag.index import store
from test_app_pages import home, no_exception, plain  # noqa: F401 (fixtures)

pytestmark = pytest.mark.skipif(not showcase.available(), reason="no recorded showcase in this checkout")


def _page() -> None:
    import streamlit as st

    from memrag.app import guide_views, recording_state
    from memrag.app.session import AppState

    guide_views.showcase_section()
    path = AppState().active_memory
    if path:
        st.session_state["offered"] = recording_state.demo_questions(path)


def app(monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    # one page, no navigation: the switch is noted instead
    monkeypatch.setattr(st, "switch_page", lambda page: st.session_state.__setitem__("switched_to", page))
    return AppTest.from_function(_page, default_timeout=120)


def test_the_guide_opens_the_showcase_on_a_fresh_copy_of_the_sample(home, monkeypatch):
    show = showcase.load()
    sample_version = store.current_version_dir(demo.sample_memory_dir())
    at = no_exception(app(monkeypatch).run())
    said = plain(at)
    assert "Fix the memory, ask again" in said and show.title in said
    assert all(f"recorded: {line}" in said for line in showcase.expected_lines()) and showcase.expected_lines()
    at = no_exception(next(b for b in at.button if b.key == "guide_showcase").click().run())
    assert at.session_state["switched_to"] == "app_pages/ask.py"
    copy = home / "memories" / "showcase-1"
    assert store.is_memory_dir(copy) and at.session_state[AppState.active_memory.key] == str(copy)
    offered = at.session_state["offered"]
    picked = offered[at.session_state["ask_demo"]]
    assert picked["id"] == show.qid and picked["gold_docs"] == show.record["gold_docs"]  # gold kept on the copy
    head = store.load(copy).triples[show.edit.args["triple"]].head
    assert store.load(copy).entity(at.session_state["mem_kg_chosen"]).name == head
    assert store.current_version_dir(demo.sample_memory_dir()) == sample_version
    at = no_exception(next(b for b in at.button if b.key == "guide_showcase").click().run())
    assert store.is_memory_dir(home / "memories" / "showcase-2")  # a second opening never reuses an edited copy


def test_room_mode_refuses_the_copy_unless_removals_are_allowed(home, monkeypatch, restore_error_details):
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = no_exception(app(monkeypatch).run())
    at = no_exception(next(b for b in at.button if b.key == "guide_showcase").click().run())
    assert "MEMRAG_ROOM_ALLOW_LIVE does not list 'removals'" in plain(at)
    assert not (home / "memories").exists() or not list((home / "memories").iterdir())
