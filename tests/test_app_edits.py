"""The Memory page's edit panel under AppTest: accept a coreference candidate as a merge, rename,
read the edit log and go back to a kept version; refused in room mode; the shipped sample offers
an editable copy (with its recordings) instead of edits."""

from __future__ import annotations

from memrag.app.edit_views import COPY_NOTE
from memrag.index import edit_log, store
from memrag.llm.recordings import Recordings
from test_app_pages import app, assert_nothing_raw, no_exception, plain, table_with
from test_app_pages import home, recorded, tiny  # noqa: F401 (fixtures)
from test_app_removal import buttons, click


def key(path, name: str) -> str:
    return f"ed_{store.load(path).fingerprint()}_{name}"


def apply(at, tiny):
    return at.button(key=key(tiny, "apply")).click().run()


def choose(at, action: str):
    return at.radio(key="ed_action").set_value(action).run()


def test_accept_a_coreference_candidate_then_go_back_from_the_log(tiny):
    before = store.current_version_dir(tiny)
    at = no_exception(app(tiny).run())
    assert buttons(at)["Apply"]  # nothing named yet: off
    at = no_exception(at.text_input(key=key(tiny, "a")).input("ada brenick").run())
    assert "→ Ada Brenick (person; 1 mention(s) in 1 passage(s))" in plain(at)
    pick = at.selectbox(key=key(tiny, "b_pick"))
    assert pick.options[0].startswith("Ada Brennick (0.87)") and pick.options[-1] == "another entity…"
    assert "Apply: merge 'Ada Brenick' into 'Ada Brennick'" in buttons(at)
    at = no_exception(apply(at, tiny))
    m = store.load(tiny)
    assert "ada brenick" not in m.entity_index and m.entity("ada brennick") is not None
    shown = plain(at)
    assert "Merged 'Ada Brenick' into 'Ada Brennick'" in shown and "version v000002 is live" in shown
    log = table_with(at, "change")
    assert list(log["what"]) == ["merge", "build"] and list(log["now"]) == ["live", "kept"]
    at = no_exception(at.selectbox(key="ed_version").set_value(before.name).run())
    at = no_exception(click(at, "Make this version live"))
    assert store.current_version_dir(tiny) == before and "Version v000001 is live again" in plain(at)
    assert [e.kind for e in edit_log.read(tiny)] == ["build", "merge", "use"]


def test_a_refused_edit_says_why_and_changes_nothing(tiny):
    before = store.current_version_dir(tiny)
    at = no_exception(choose(app(tiny).run(), "Rename an entity"))
    at = no_exception(at.text_input(key=key(tiny, "a")).input("Nowhere Town").run())
    assert "not an entity of this memory: 'Nowhere Town'" in plain(at) and buttons(at)["Apply"]
    at.text_input(key=key(tiny, "a")).input("Port Alder")
    at = no_exception(at.text_input(key=key(tiny, "name")).input("Ada Brennick").run())
    at = no_exception(apply(at, tiny))
    assert "'Ada Brennick' names the entity 'Ada Brennick' already: merge 'Port Alder' into it" in plain(at)
    assert store.current_version_dir(tiny) == before


def test_hostile_names_are_shown_as_text(tiny):
    at = no_exception(choose(app(tiny).run(), "Remove a triple"))
    at = no_exception(at.text_input(key=key(tiny, "a")).input("Miro Tann").run())
    triple = at.selectbox(key=key(tiny, "t"))
    assert any("<script>alert(1)</script>" in o for o in triple.options)
    assert_nothing_raw(at)
    at = no_exception(apply(at, tiny))
    assert "Removed triple" in plain(at) and len(store.load(tiny).triples) == 3
    assert_nothing_raw(at)


def test_room_mode_refuses_edits_unless_removals_are_allowed(tiny, monkeypatch, restore_error_details):
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = no_exception(app(tiny).run())
    at = no_exception(at.text_input(key=key(tiny, "a")).input("Ada Brenick").run())
    assert "MEMRAG_ROOM_ALLOW_LIVE does not list 'removals'" in plain(at)
    assert buttons(at)["Apply: merge 'Ada Brenick' into 'Ada Brennick'"]  # off
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_LIVE", "removals")
    at = no_exception(apply(no_exception(at.run()), tiny))
    assert "ada brenick" not in store.load(tiny).entity_index


def test_the_sample_offers_an_editable_copy_with_its_recordings(recorded, home):
    before = sorted(p.name for p in recorded.iterdir())
    at = no_exception(app(recorded).run())
    assert COPY_NOTE in plain(at) and not any(b.startswith("Apply") for b in buttons(at))
    at = no_exception(at.text_input(key="ed_copy_name").input("My Edits!").run())
    at = no_exception(click(at, "Make an editable copy"))
    copy = home / "memories" / "my-edits"
    assert "Made the editable copy 'my-edits' and opened it" in plain(at)
    assert sorted(p.name for p in recorded.iterdir()) == before  # the sample is as it was
    assert store.memory_to_rows(store.load(copy)) == store.memory_to_rows(store.load(recorded))
    assert Recordings.open(copy).responses.keys() == Recordings.open(recorded).responses.keys()
    assert "Apply" in buttons(no_exception(at.run()))  # the copy is open, and editable
    assert [e.text for e in edit_log.read(copy)] == ["copied from tiny (its version v000001)"]
