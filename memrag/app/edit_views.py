"""The Memory page's edit panel: merge, split, rename entities, remove a coreference link, remove or
add a triple — each a new version of the memory — its edit log, and a switch to any kept version.
The work is `memrag.index.edits` / `versions` / `copies`; this module only asks and reports.

The rule is removals' (`removal_views.run_change`): refused in room mode unless MEMRAG_ROOM_ALLOW_LIVE
lists 'removals', and never for the shipped sample memory, for which the panel offers to make an
editable copy (its recordings come along, so the demo questions still replay offline).
"""

from __future__ import annotations

from pathlib import Path
import streamlit as st

from memrag import demo
from memrag.app import backend_state, memory_state, room
from memrag.app.removal_views import LOCK_WAIT_S, run_change, take_report
from memrag.app.session import AppState
from memrag.index import copies, edits, versions
from memrag.index.edits import Edit, EditError
from memrag.index.memory import EntityNode, Memory
from memrag.plain_text import clip, escape_markdown

ACTIONS = ("Merge two entities", "Split a merged entity", "Remove a coreference link", "Rename an entity",
           "Remove a triple", "Add a triple")
ANOTHER = "another entity…"
COPY_NOTE = (f"{demo.SAMPLE_FIXED} To test an edit on it, make an editable copy: it holds the same memory and "
             "its recorded demo answers, and opens in its place.")
LOG_ROWS = 200  # the newest entries shown
EDIT_NOTE = ("Answers shown before this change were made on the version before it. The edit log below lists "
             "every version kept; 'Make this version live' goes back to one.")


def edit_panel(path: str | Path, memory: Memory, key: str = "ed") -> None:
    """The edit panel for the memory open at `path`."""
    reported = take_report(key, EDIT_NOTE)
    with st.expander("Edit entities and triples", expanded=reported):  # open again after an edit
        if memory_state.is_sample(path):
            _copy_offer(Path(path), key)
            return
        refusal = room.live_refusal("removals", room.current())
        if refusal:
            st.warning(escape_markdown(refusal))
        action = st.radio("edit", ACTIONS, horizontal=True, key=f"{key}_action", label_visibility="collapsed")
        # keyed by the memory's content: after an edit every field starts again from the new memory
        k = f"{key}_{memory.fingerprint()}"
        _apply_button(Path(path), memory, FORMS[action](memory, k, None), key, k, bool(refusal))
        _history(Path(path), key, bool(refusal))


ENTITY_ACTIONS = ("Rename", "Merge into…", "Remove a coreference link", "Remove one of its triples", "Split")


def entity_actions(path: str | Path, memory: Memory, entity: str, key: str) -> None:
    """Edits of one entity, for a graph's node panel (the Memory page's explorer, a trace's picture):
    the same forms as the edit panel with the entity given. Its outcome shows where `key`'s report is
    taken (`take_report(key, EDIT_NOTE)`, which this calls itself)."""
    node = memory.entity(entity)
    take_report(key, EDIT_NOTE)
    if node is None:
        return
    refusal = edit_refusal(path)
    if refusal:
        st.caption(escape_markdown(refusal))
        return
    choices = [a for a in ENTITY_ACTIONS if a != "Split" or _merged_keys(memory).get(node.key)]
    action = st.segmented_control("edit this entity", choices, key=f"{key}_act_{node.key}")
    if action is None:
        return
    k = f"{key}_{memory.fingerprint()}_{node.key}"
    form = {"Rename": _rename_form, "Merge into…": _merge_form, "Remove a coreference link": _unlink_form,
            "Remove one of its triples": _remove_triple_form, "Split": _split_form}[action]
    _apply_button(Path(path), memory, form(memory, k, node), key, k, False)


def triple_actions(path: str | Path, memory: Memory, triple: int, key: str) -> None:
    """Edits of one triple instance, for a graph's edge panel: remove it (undo goes back)."""
    take_report(key, EDIT_NOTE)
    if not 0 <= triple < len(memory.triples):
        return
    refusal = edit_refusal(path)
    if refusal:
        st.caption(escape_markdown(refusal))
        return
    _apply_button(Path(path), memory, Edit("remove-triple", {"triple": int(triple)}), key,
                  f"{key}_{memory.fingerprint()}_t{triple}", False)


def edit_refusal(path: str | Path) -> str:
    """Why edits cannot be made here ('' when they can): the sample, or room mode."""
    if memory_state.is_sample(path):
        return ("The sample memory cannot be edited: make an editable copy on the Memory page "
                "(Edit entities and triples) and edit that.")
    return room.live_refusal("removals", room.current()) or ""


def panel_actions(path: str | Path, memory: Memory, entity: str, key: str) -> None:
    """A graph panel's edits of the entity it shows: the entity's own (`entity_actions`) and a triple
    of its, chosen from those the panel lists, removed (`triple_actions`). One sentence instead when
    edits are refused here (the sample, room mode)."""
    node = memory.entity(entity)
    if node is None:
        return
    refusal = edit_refusal(path)
    if refusal:
        take_report(key, EDIT_NOTE)
        st.caption(escape_markdown(refusal))
        return
    entity_actions(path, memory, entity, key)
    ids = memory.triples_of.get(node.key, [])
    if not ids:
        return
    t = memory.triples
    chosen = st.selectbox("a triple listed above", ids, index=None, key=f"{key}_{memory.fingerprint()}_triple",
                          placeholder="choose one of its triples to edit",
                          format_func=lambda i: clip(f"#{t[i].triple_id}: {t[i].head} → {t[i].relation} → "
                                                     f"{t[i].tail} (passage {t[i].chunk_id})", 160))
    if chosen is not None:
        triple_actions(path, memory, int(chosen), key)


def _apply_button(path: Path, memory: Memory, edit: Edit | None, key: str, k: str, refused: bool) -> None:
    label = f"Apply: {edit_words(memory, edit)}" if edit is not None else "Apply"
    if st.button(escape_markdown(clip(label, 160)), type="primary", key=f"{k}_apply",
                 disabled=edit is None or refused):
        _apply(path, memory, edit, key)


def _apply(path: Path, memory: Memory, edit: Edit | None, key: str) -> None:
    if edit is None:
        return

    def work() -> str:
        done = edits.edit_memory(path, edit, lambda model: backend_state.embedder(), LOCK_WAIT_S, opened=memory)
        notes = "".join(f"\nNote: {n}." for n in done.notes)
        return f"{done.text[0].upper()}{done.text[1:]}: version {done.version} is live.{notes}"

    run_change(key, work, path)


def edit_words(memory: Memory, edit: Edit) -> str:
    """The edit a button will make, in words ("merge 'A' into 'B'")."""
    a = edit.args

    def name(key: str) -> str:
        node = memory.entity(key)
        return repr(node.name if node is not None else key)

    if edit.kind == "merge":
        return f"merge {name(a['entity'])} into {name(a['into'])}"
    if edit.kind == "split":
        return f"split the latest merge into {name(a['entity'])}"
    if edit.kind == "unlink-coref":
        return f"remove the coreference link between {name(a['entity'])} and {name(a['other'])}"
    if edit.kind == "rename":
        return f"rename {name(a['entity'])} to {a['name']!r}"
    if edit.kind == "remove-triple":
        t = memory.triples[a["triple"]]
        return f"remove triple #{t.triple_id} ({t.head} → {t.relation} → {t.tail})"
    return f"add {a['head']} → {a['relation']} → {a['tail']} to passage {a['passage']}"


# ------------------------------------------------------------------ one form per edit
def _entity(memory: Memory, label: str, k: str, help: str = "") -> EntityNode | None:
    """An entity named in a text box (case and accents aside), with what it resolves to beneath it."""
    text = st.text_input(label, key=k, help=help or "An entity's name as the graph shows it.")
    if not text.strip():
        return None
    try:
        node = edits.find_entity(memory, text)
    except EditError as e:
        st.caption(escape_markdown(str(e).replace(f" {edits.UNCHANGED}", "")))
        return None
    st.caption(escape_markdown(f"→ {node.name} ({node.type}; {len(node.engram_ids)} mention(s) in "
                               f"{len(node.chunk_ids)} passage(s))"))
    return node


def _candidate(memory: Memory, node: EntityNode, label: str, k: str, another: bool) -> EntityNode | None:
    """One of `node`'s coreference candidates (or, with `another`, any entity typed in)."""
    top, threshold = memory.params.get("coref_top", 5), memory.params.get("coref_threshold", 0.8)
    members = memory.coref_of(node.key, top, threshold)
    options = [m.key for m in members] + ([ANOTHER] if another else [])
    if not options:
        st.caption(escape_markdown(f"{node.name} has no coreference candidates at this memory's threshold "
                                   f"{threshold}."))
        return None
    names = {m.key: f"{clip(m.name, 60)} ({m.similarity:.2f})" for m in members}
    chosen = st.selectbox(label, options, key=f"{k}_pick", format_func=lambda o: names.get(o, o))
    if chosen == ANOTHER:
        return _entity(memory, "the other entity", f"{k}_other")
    return memory.entity(chosen)


def _merge_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    a = node or _entity(memory, "merge this entity", f"{k}_a", "Its mentions and triples join the other entity.")
    b = _candidate(memory, a, "into (a coreference candidate, or another entity)", f"{k}_b", True) if a else None
    return Edit("merge", {"entity": a.key, "into": b.key}) if a and b else None


def _merged_keys(memory: Memory) -> dict[str, list[str]]:
    """Entity key → the names merged into it, for merges still on record."""
    merged: dict[str, list[str]] = {}
    for r in memory.merges:
        holder = edits.merged_into(memory, r.joined_key)
        if holder is not None:
            merged.setdefault(holder.key, []).append(r.joined_name)
    return merged


def _split_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    merged = _merged_keys(memory)
    if node is not None:
        return Edit("split", {"entity": node.key}) if node.key in merged else None
    if not merged:
        st.caption("No merge of this memory is on record: nothing to split.")
        return None
    names = {k_: f"{clip(memory.entity(k_).name, 60)} (joined: {', '.join(clip(n, 40) for n in v)})"
             for k_, v in merged.items()}
    chosen = st.selectbox("split the latest merge into", list(merged), key=f"{k}_split",
                          format_func=lambda o: names[o])
    return Edit("split", {"entity": chosen})


def _unlink_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    a = node or _entity(memory, "entity", f"{k}_a", "The link is removed both ways, at every threshold.")
    b = _candidate(memory, a, "its coreference link to", f"{k}_b", False) if a else None
    return Edit("unlink-coref", {"entity": a.key, "other": b.key}) if a and b else None


def _rename_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    a = node or _entity(memory, "rename this entity", f"{k}_a", "Every mention of it and every triple naming it.")
    name = st.text_input("new name", key=f"{k}_name")
    return Edit("rename", {"entity": a.key, "name": name}) if a and name.strip() else None


def _remove_triple_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    a = node or _entity(memory, "a triple of this entity", f"{k}_a")
    if a is None:
        return None
    ids = memory.triples_of.get(a.key, [])
    if not ids:
        st.caption(escape_markdown(f"{a.name} is in no triple."))
        return None
    t = memory.triples
    chosen = st.selectbox("triple", ids, key=f"{k}_t", format_func=lambda i: clip(
        f"#{i} (passage {t[i].chunk_id}): {t[i].head} → {t[i].relation} → {t[i].tail}", 160))
    return Edit("remove-triple", {"triple": int(chosen)})


def _add_triple_form(memory: Memory, k: str, node: EntityNode | None) -> Edit | None:
    cols = st.columns(3)
    head = cols[0].text_input("head", key=f"{k}_h")
    relation = cols[1].text_input("relation", key=f"{k}_r")
    tail = cols[2].text_input("tail", key=f"{k}_t")
    if not memory.chunks:
        return None
    passage = int(st.number_input("passage (the triple's source)", 0, len(memory.chunks) - 1, 0, key=f"{k}_p"))
    c = memory.chunks[passage]
    st.caption(escape_markdown(f"passage {passage}: {clip(c.title, 80)} — {clip(c.text, 200)}"))
    if not (head.strip() and relation.strip() and tail.strip()):
        return None
    return Edit("add-triple", {"head": head, "relation": relation, "tail": tail, "passage": passage})


FORMS = dict(zip(ACTIONS, (_merge_form, _split_form, _unlink_form, _rename_form, _remove_triple_form,
                           _add_triple_form)))


# ------------------------------------------------------------------ the log and the versions
def _history(path: Path, key: str, refused: bool) -> None:
    rows = versions.history(path)[-LOG_ROWS:]
    st.markdown("**Edit log**")
    if not rows:
        st.caption("No change of this memory is logged yet.")
    else:
        st.dataframe([{"when": r.entry.at, "what": r.entry.kind, "change": r.entry.text,
                       "version": r.entry.version, "now": r.state(),
                       "before it": f"{r.entry.previous} ({'kept' if r.before_kept else 'pruned'})"
                       if r.entry.previous else ""} for r in reversed(rows)], hide_index=True)
    kept = [v for v in versions.list_versions(path, open_each=False) if not v.live]
    if kept:
        labels = {v.name: clip(f"{v.name} — {v.change or 'first version'} ({v.saved_at})", 120) for v in kept}
        chosen = st.selectbox("a kept version", list(labels), index=len(labels) - 1, key=f"{key}_version",
                              format_func=lambda v: labels[v])
        if st.button("Make this version live", key=f"{key}_use", disabled=refused):
            run_change(key, lambda: "Version {} is live again (it was opened whole first).".format(
                versions.use_version(path, chosen, LOCK_WAIT_S)[0]), path)


# ------------------------------------------------------------------ the sample: an editable copy
def _copy_offer(sample: Path, key: str) -> None:
    st.info(escape_markdown(COPY_NOTE))
    refusal = room.live_refusal("removals", room.current())
    if refusal:
        st.warning(escape_markdown(refusal))
    name = st.text_input("name of the copy", value="varrow-coast-edits", key=f"{key}_copy_name")
    folder = memory_state.safe_memory_name(name)
    if st.button("Make an editable copy", key=f"{key}_copy", disabled=bool(refusal) or not folder):
        def work() -> str:
            copy = copies.copy_memory(sample, memory_state.memory_path(folder))
            AppState().active_memory = str(copy)
            return f"Made the editable copy '{copy.name}' and opened it: edits go there; the sample stays as it was."

        run_change(key, work, sample, check_builds=False)
