"""The Memory page's removal panel under AppTest: remove a document after a confirmation, undo it,
refused in room mode and for the shipped sample memory."""

from __future__ import annotations

import re

from memrag.app.removal_views import SAMPLE_REFUSAL
from memrag.index import removal, store
from test_app_pages import HOSTILE_TITLE, app, no_exception, plain
from test_app_pages import home, recorded, tiny  # noqa: F401 (fixtures)


def unescaped(label: str) -> str:
    return re.sub(r"\\(.)", r"\1", label)


def buttons(at) -> dict[str, bool]:
    """Label as shown → disabled, for every button on the page."""
    return {unescaped(b.label): b.disabled for b in at.button}


def click(at, label: str):
    return next(b for b in at.button if unescaped(b.label) == label).click().run()


def test_remove_asks_first_then_removes_and_undo_brings_it_back(tiny):
    before = store.current_version_dir(tiny)
    at = no_exception(app(tiny).run())
    assert "No earlier version of this memory is kept" in plain(at)
    at.selectbox(key=f"rm_doc_{store.load(tiny).fingerprint()}").set_value("ada").run()
    at = no_exception(click(at, "Remove this document…"))
    assert "Remove 'ada' (Ada Brennick, 1 chunk(s)) from this memory?" in plain(at)
    assert store.current_version_dir(tiny) == before  # nothing changed before the confirmation
    at = no_exception(click(at, "Keep it"))
    assert store.current_version_dir(tiny) == before and "Yes, remove it" not in buttons(at)
    at = no_exception(click(click(at, "Remove this document…"), "Yes, remove it"))
    assert removal.document_names(store.load(tiny)) == ["port", "hostile"]
    shown = plain(at)
    assert "removed ada: 1 chunk(s)" in shown and "chunk numbers and fingerprint changed" in shown
    choice = next(s for s in at.selectbox if (s.key or "").startswith("rm_doc_"))  # the list starts again
    assert choice.options == ["port — Port Alder", f"hostile — {HOSTILE_TITLE}"] and choice.value == "port"
    at = no_exception(click(at, "Undo the last change (removed ada)"))
    assert store.current_version_dir(tiny) == before
    assert "Undid removed ada: version v000001 is live again." in plain(at)
    assert removal.document_names(store.load(tiny)) == ["ada", "port", "hostile"]


def test_room_mode_refuses_removals_unless_allowed(tiny, monkeypatch, restore_error_details):
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = no_exception(app(tiny).run())
    assert "where removing documents is off (MEMRAG_ROOM_ALLOW_LIVE does not list 'removals')" in plain(at)
    assert buttons(at)["Remove this document…"]
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_LIVE", "removals")
    at = no_exception(click(no_exception(at.run()), "Remove this document…"))
    at = no_exception(click(at, "Yes, remove it"))
    assert removal.document_names(store.load(tiny)) == ["port", "hostile"]
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_LIVE", "")
    at = no_exception(at.run())
    assert buttons(at)["Undo the last change (removed ada)"]


def test_the_shipped_sample_memory_cannot_be_changed_from_the_app(recorded):
    before = store.current_version_dir(recorded)
    at = no_exception(app(recorded).run())
    assert SAMPLE_REFUSAL in plain(at)
    assert not any(label.startswith(("Remove", "Undo")) for label in buttons(at))
    assert store.current_version_dir(recorded) == before
