"""The Memory page's edit panel under AppTest: accept a coreference candidate as a merge, rename,
read the edit log and go back to a kept version; refused in room mode; the shipped sample offers
an editable copy (with its recordings) instead of edits."""

from __future__ import annotations

from memrag.app.edit_views import COPY_NOTE
from memrag.index import edit_log, store
from memrag.llm.recordings import Recordings
from test_app_pages import app, assert_nothing_raw, no_exception, plain, table_with
from test_app_pages import home, recorded, tiny  # noqa: F401 (fixtures)
from test_app_removal import buttons, click, unescaped


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


# ------------------------------------------------------------------ the hooks a graph's panel calls
def _panel_page(path: str, entity: str, triple: int) -> None:
    from memrag.app import edit_views
    from memrag.index import store as memory_store

    memory = memory_store.load(path)
    edit_views.entity_actions(path, memory, entity, "np")
    if triple >= 0:
        edit_views.triple_actions(path, memory, triple, "ep")


def panel_app(path, entity: str, triple: int = -1):
    from streamlit.testing.v1 import AppTest

    from memrag.app import session
    from test_app_pages import embedder

    at = AppTest.from_function(_panel_page, args=(str(path), entity, triple), default_timeout=60)
    at.session_state[session.TEST_EMBEDDER_KEY] = embedder()
    return at


def test_a_node_panel_merges_the_chosen_entity_into_a_candidate(tiny):
    at = no_exception(panel_app(tiny, "ada brenick").run())
    assert [b for b in buttons(at)] == []  # nothing until an action is chosen
    at = no_exception(at.get("button_group")[0].set_value("Merge into…").run())
    assert "Apply: merge 'Ada Brenick' into 'Ada Brennick'" in buttons(at)
    at = no_exception(next(b for b in at.button if b.label.startswith("Apply")).click().run())
    assert "Merged 'Ada Brenick' into 'Ada Brennick'" in plain(at)
    assert "ada brenick" not in store.load(tiny).entity_index


def test_an_edge_panel_removes_its_triple_and_the_sample_is_refused(tiny, monkeypatch):
    from memrag import sample

    m = store.load(tiny)
    t = next(t for t in m.triples if t.relation == "painted")
    at = no_exception(panel_app(tiny, "miro tann", t.triple_id).run())
    apply_ = next(b for b in at.button if b.key and b.key.startswith("ep_"))
    assert unescaped(apply_.label) == f"Apply: remove triple #{t.triple_id} (Miro Tann → painted → Grey Sea)"
    at = no_exception(apply_.click().run())
    assert [x.relation for x in store.load(tiny).triples].count("painted") == 0
    monkeypatch.setattr(sample, "sample_memory_dir", lambda *a: tiny)
    at = no_exception(panel_app(tiny, "miro tann", 0).run())
    assert "The sample memory cannot be edited" in plain(at) and not any(b.startswith("Apply") for b in buttons(at))


# ------------------------------------------------------------------ the Memory page explorer's panel
def panel_triple_box(at, tiny):
    return at.selectbox(key=f"mem_kg_edit_{store.load(tiny).fingerprint()}_triple")


def test_the_explorer_panel_removes_a_triple_it_lists_and_the_log_undoes_it(tiny):
    before = store.current_version_dir(tiny)
    t = next(t for t in store.load(tiny).triples if t.relation == "painted")
    at = no_exception(app(tiny).run())
    at = no_exception(at.text_input(key="mem_kg_find").set_value("Miro Tann").run())  # the panel shows Miro Tann
    box = panel_triple_box(at, tiny)
    assert box.value is None and any(f"#{t.triple_id}: Miro Tann → painted → Grey Sea" in o for o in box.options)
    at = no_exception(box.set_value(t.triple_id).run())
    apply_ = next(b for b in at.button if b.key and b.key.startswith("mem_kg_edit_") and b.label.startswith("Apply"))
    assert unescaped(apply_.label) == f"Apply: remove triple #{t.triple_id} (Miro Tann → painted → Grey Sea)"
    at = no_exception(apply_.click().run())
    assert [x.relation for x in store.load(tiny).triples].count("painted") == 0
    assert "Removed triple" in plain(at) and "is live" in plain(at)
    assert [e.kind for e in edit_log.read(tiny)][-1] == "remove-triple"
    at = no_exception(at.selectbox(key="ed_version").set_value(before.name).run())
    at = no_exception(click(at, "Make this version live"))
    assert store.current_version_dir(tiny) == before
    assert [x.relation for x in store.load(tiny).triples].count("painted") == 1


def test_the_explorer_panel_refuses_edits_of_the_sample_and_in_room_mode(tiny, monkeypatch, restore_error_details):
    from memrag import sample

    monkeypatch.setenv("MEMRAG_ROOM_MODE", "1")
    at = no_exception(no_exception(app(tiny).run()).text_input(key="mem_kg_find").set_value("Miro Tann").run())
    assert "MEMRAG_ROOM_ALLOW_LIVE does not list 'removals'" in plain(at)
    assert not any(s.key and s.key.startswith("mem_kg_edit_") for s in at.selectbox)
    monkeypatch.setenv("MEMRAG_ROOM_ALLOW_LIVE", "removals")
    at = no_exception(at.run())
    assert panel_triple_box(at, tiny) is not None
    monkeypatch.delenv("MEMRAG_ROOM_MODE")
    monkeypatch.setattr(sample, "sample_memory_dir", lambda *a: tiny)
    at = no_exception(at.run())
    assert "The sample memory cannot be edited" in plain(at)
    assert not any(s.key and s.key.startswith("mem_kg_edit_") for s in at.selectbox)


def test_the_same_edits_and_undo_from_the_explorer_panel_and_the_command_line_give_the_same_memory(tiny, home,
                                                                                               monkeypatch):
    import shutil

    from edit_memory import content
    from memrag.cli.main import main
    from test_app_pages import embedder

    by_cli = home / "memories" / "by-cli"
    shutil.copytree(tiny, by_cli)
    monkeypatch.setattr("memrag.cli.edit._embedder", lambda model_id: embedder())  # the app's embedder
    t = next(t for t in store.load(tiny).triples if t.relation == "painted")
    # the app: the Memory page explorer's panel, a triple it lists removed, then the entity merged
    at = no_exception(app(tiny).run())
    at = no_exception(at.text_input(key="mem_kg_find").set_value("Miro Tann").run())
    at = no_exception(panel_triple_box(at, tiny).set_value(t.triple_id).run())
    at = no_exception(next(b for b in at.button if b.key and b.key.startswith("mem_kg_edit_")
                           and b.label.startswith("Apply")).click().run())
    assert main(["edit", "--memory", str(by_cli), "remove-triple", str(t.triple_id)]) == 0
    assert content(store.load(tiny)) == content(store.load(by_cli))
    at = no_exception(at.text_input(key="mem_kg_find").set_value("Ada Brenick").run())
    at = no_exception(next(g for g in at.get("button_group") if "mem_kg_edit_act" in str(g.key))
                      .set_value("Merge into…").run())
    apply_ = next(b for b in at.button if b.key and b.key.startswith("mem_kg_edit_") and b.label.startswith("Apply"))
    assert unescaped(apply_.label) == "Apply: merge 'Ada Brenick' into 'Ada Brennick'"
    at = no_exception(apply_.click().run())
    assert main(["edit", "--memory", str(by_cli), "merge", "Ada Brenick", "Ada Brennick"]) == 0
    merged = content(store.load(tiny))
    assert merged == content(store.load(by_cli)) and "ada brenick" not in store.load(tiny).entity_index
    # undo: the app's 'Undo the last change' and `index --undo` go back to the same memory
    undo = next(b for b in at.button if unescaped(b.label).startswith("Undo the last change (merged 'Ada Brenick'"))
    at = no_exception(undo.click().run())
    assert main(["index", "--memory", str(by_cli), "--undo"]) == 0
    undone = content(store.load(tiny))
    assert undone == content(store.load(by_cli)) and undone != merged
    assert store.load(tiny).entity("ada brenick") is not None
