"""Room mode (issue 27): its settings parsed strictly, and live work refused with a sentence that
says why while recorded demos still run."""

from __future__ import annotations

import pytest

from memrag.app import room, session
from memrag.app.room import Room
from memrag.config import ROOM_LIVE_WORK, RoomSettings, RoomSettingsError, room_settings
from test_app_pages import (QUESTION, app, click, embedder, home, no_exception, plain, recorded,  # noqa: F401
                            scripted, tiny, wait_for)

ON = Room(RoomSettings(on=True))
pytestmark = pytest.mark.usefixtures("restore_error_details")


@pytest.mark.parametrize("env, names", [
    ({"MEMRAG_ROOM_MODE": "maybe"}, "MEMRAG_ROOM_MODE"),
    ({"MEMRAG_ROOM_ALLOW_LIVE": "builds,deletes"}, "MEMRAG_ROOM_ALLOW_LIVE: 'deletes'"),
    ({"MEMRAG_ROOM_ALLOW_BASE_URLS": "http://u:pw@10.0.0.5/v1"}, "MEMRAG_ROOM_ALLOW_BASE_URLS"),
    ({"MEMRAG_ROOM_ALLOW_BASE_URLS": "http://10.0.0.5/v1?x=1"}, "MEMRAG_ROOM_ALLOW_BASE_URLS"),
    ({"MEMRAG_ROOM_ALLOW_BASE_URLS": "file:///etc/passwd"}, "MEMRAG_ROOM_ALLOW_BASE_URLS"),
    ({"MEMRAG_ROOM_ALLOW_BASE_URLS": "http://10.0.0.5:99999/v1"}, "MEMRAG_ROOM_ALLOW_BASE_URLS"),
])
def test_a_bad_room_setting_is_refused_naming_the_variable(env, names):
    with pytest.raises(RoomSettingsError, match=names):
        room_settings(env)
    here = room.current(env)  # the app's reading of it: room mode, nothing live, the reason kept
    assert here.on and not here.settings.live and names.split(":")[0] in here.problem


def test_room_settings_read_as_written():
    s = room_settings({"MEMRAG_ROOM_MODE": "on", "MEMRAG_ROOM_ALLOW_LIVE": " asks , Builds",
                       "MEMRAG_ROOM_ALLOW_BASE_URLS": "HTTP://Box.lan:8000/v1/, https://api.example.org/v1"})
    assert s.on and s.live == {"asks", "builds"}
    assert s.base_urls == ("http://box.lan:8000/v1", "https://api.example.org:443/v1")
    assert room_settings({"MEMRAG_ROOM_ALLOW_LIVE": "all"}).live == set(ROOM_LIVE_WORK)
    assert room_settings({}) == RoomSettings()  # off unless set


def test_an_allowed_url_matches_only_as_written_after_normalising():
    here = Room(RoomSettings(on=True, base_urls=("http://box.lan:8000/v1",)))
    assert room.base_url_refusal("http://BOX.lan:8000/v1/", here, env={}) is None
    for other in ("http://box.lan:8000/v1/admin", "http://box.lan:8001/v1", "http://box.lan:8000/v1?x=",
                  "http://me@box.lan:8000/v1", "https://box.lan:8000/v1", "not a url"):
        assert "MEMRAG_ROOM_ALLOW_BASE_URLS" in room.base_url_refusal(other, here, env={}), other
    # the operator's own MEMRAG_OPENAI_BASE_URL is allowed without listing it again
    assert room.base_url_refusal("http://gpu:8000/v1", here, env={"MEMRAG_OPENAI_BASE_URL": "http://gpu:8000/v1"}) \
        is None
    assert room.base_url_refusal("http://anything/", Room(RoomSettings()), env={}) is None  # room mode off


def test_live_work_is_refused_with_a_sentence_unless_listed():
    sentence = room.live_refusal("builds", ON)
    assert "room mode" in sentence and "MEMRAG_ROOM_ALLOW_LIVE" in sentence and "'builds'" in sentence
    assert room.live_refusal("builds", Room(RoomSettings(on=True, live=frozenset({"builds"})))) is None
    assert all(room.live_refusal(w, Room(RoomSettings())) is None for w in ROOM_LIVE_WORK)
    with pytest.raises(ValueError, match="unknown kind of live work"):
        room.live_refusal("deploys", ON)


@pytest.mark.parametrize("address, headers, warned", [
    ("127.0.0.1", {}, False),
    ("localhost", {"Host": "localhost:8501"}, False),
    ("0.0.0.0", {}, True),
    (None, {}, True),  # started outside the repository root: .streamlit/config.toml not read
    ("127.0.0.1", {"X-Forwarded-For": "203.0.113.9"}, True),  # behind a proxy
])
def test_served_beyond_loopback_without_room_mode_warns(address, headers, warned):
    text = room.exposure_warning(address, headers, Room(RoomSettings()))
    assert (text is not None) == warned
    if warned:
        assert "MEMRAG_ROOM_MODE=1" in text
    assert room.exposure_warning(address, headers, ON) is None


def _upload(at):
    at.radio(key="memory_source").set_value("Upload files").run()
    at.file_uploader[0].set_value([("notes.txt", b"Ada Brennick was born in Port Alder.", "text/plain")]).run()
    return no_exception(at)


def test_a_live_build_is_refused_in_room_mode(home, monkeypatch):
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = _upload(app().run())
    assert "where building a memory is off (MEMRAG_ROOM_ALLOW_LIVE does not list 'builds')" in plain(at)
    assert next(b for b in at.button if b.label == "Build memory").disabled
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_LIVE", "builds")
    at = no_exception(at.run())
    assert not next(b for b in at.button if b.label == "Build memory").disabled


def test_room_mode_refuses_a_live_ask_and_replays_a_recorded_demo(recorded, monkeypatch):
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    live_llm = scripted("Grey Sea")
    at = app(recorded, live_llm).run()
    at.switch_page("app_pages/ask.py")
    at = no_exception(at.run())
    assert at.toggle(key="ask_live").disabled
    click(at, "Ask")  # the demo question: replayed
    job = wait_for(at, session.AppState.ask_job.key)
    assert job.error == "" and live_llm.calls == []
    at = no_exception(at.run())
    assert any(m.value == "**Answer:** Vell River" for m in at.markdown)
    at.radio(key="ask_kind").set_value("Your own question").run()
    at.text_area(key="ask_free").set_value("Who founded Port Alder?").run()
    assert "where asking the live model is off" in plain(at)
    assert next(b for b in at.button if b.label == "Ask").disabled


def test_room_mode_hides_cancel_and_a_failed_builds_words(home, monkeypatch):
    import threading

    from memrag.app import jobs

    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    gate = threading.Event()

    def waiting(job: jobs.Job) -> None:
        job.report("start", total=2, done=0)
        gate.wait(30)
        raise RuntimeError("HTTP 403: internal admin console: db password=hunter2")

    job = jobs.start_job("build", "building", waiting, total=2)
    at = app()
    at.session_state[session.AppState.build_job.key] = job.id
    try:
        at = no_exception(at.run())
        assert not [b for b in at.button if b.label == "Cancel"]
        assert "where cancelling running work is off" in plain(at)
    finally:
        gate.set()
    assert job.wait(10) and job.status == jobs.FAILED
    at = no_exception(at.run())
    shown = plain(at) + " ".join(c.value for c in at.code)
    assert "The build failed. In room mode" in shown and "db password" not in shown and "RuntimeError" not in shown


def test_room_mode_refuses_a_live_evaluation(tmp_path, monkeypatch):
    import test_app_evaluate as te

    te.home.__wrapped__(tmp_path, monkeypatch)  # the fixture's body: MEMRAG_HOME and a small bench
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = te.hotpot_run(te.app().run())
    assert "where running a live evaluation is off (MEMRAG_ROOM_ALLOW_LIVE does not list 'evals')" in te.texts(at)
    assert next(b for b in at.button if b.label == "Run evaluation").disabled


def test_room_mode_keeps_the_evaluate_path_box_inside_the_run_folders(monkeypatch, tmp_path):
    # MEMRAG_ALLOW_RUN_PATHS=1 opens any server folder from the Evaluate page's box; in room mode
    # strangers type there, so the box stays inside the app's run folders (before: it opened /).
    from memrag.app import eval_views as ev

    monkeypatch.setenv("MEMRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(ev.RUN_PATHS_ENV, "1")
    assert ev.typed_run_folder(str(tmp_path)) == tmp_path.resolve()  # the operator's own app
    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    with pytest.raises(ValueError, match="outside this app's run folders"):
        ev.typed_run_folder(str(tmp_path))
