"""The Memory page's removal panel: remove one document (after a confirmation) and undo the last
change. The work is `memrag.index.removal` and `store.undo`; this module only asks and reports.

Refused in room mode unless MEMRAG_ROOM_ALLOW_LIVE lists 'removals', and never offered for the
sample memory that ships with memrag (the demo's recordings are made on it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from memrag import demo
from memrag.app import backend_state, jobs, memory_state, room
from memrag.durable import StorageError
from memrag.index import removal, store
from memrag.index.memory import Memory
from memrag.plain_text import clip, escape_markdown

LOCK_WAIT_S = 2.0  # a page waits this long for a build or removal in another session, then says so
SAMPLE_REFUSAL = f"{demo.SAMPLE_FIXED} Build a memory from your own documents to remove documents from it."


def removal_panel(path: str | Path, memory: Memory, key: str = "rm") -> None:
    """Remove a document and undo the last change, for the memory open at `path`."""
    take_report(key, removal.STALE_NOTE)  # outside the expander: the outcome is seen whether or not it is open
    with st.expander("Remove documents", expanded=bool(st.session_state.get(f"{key}_confirm"))):
        if memory_state.is_sample(path):
            st.info(SAMPLE_REFUSAL)
            return
        refusal = room.live_refusal("removals", room.current())
        if refusal:
            st.warning(escape_markdown(refusal))
        _remove(Path(path), memory, key, bool(refusal))
        _undo(Path(path), key, bool(refusal))


def take_report(key: str, note: str = "") -> bool:
    """Show (once) the outcome `run_change` left for `key`, with `note` under a success; True when
    there was one."""
    done = st.session_state.pop(f"{key}_done", None)
    if done is not None:
        kind, message = done
        (st.success if kind == "ok" else st.error)(escape_markdown(message))
        if kind == "ok" and note:  # a removal or an undo: either way the chunk numbers changed
            st.caption(escape_markdown(note))
    return done is not None


def _remove(path: Path, memory: Memory, key: str, refused: bool) -> None:
    if not memory.documents:
        st.caption("This memory holds no documents.")
        return
    titles = {d.doc_id: clip(d.title, 80) for d in memory.documents}
    chunks = {name: sum(c.doc_id == name for c in memory.chunks) for name in titles}
    pending = st.session_state.get(f"{key}_confirm")
    if pending in titles:
        st.warning(escape_markdown(
            f"Remove '{pending}' ({titles[pending]}, {chunks[pending]} chunk(s)) from this memory? Its chunks, "
            "mentions, triples and vectors go, and entities only it mentions; the memory's earlier version is "
            "kept, so 'Undo the last change' brings it back."))
        yes, no = st.columns(2)
        if yes.button("Yes, remove it", type="primary", key=f"{key}_yes", disabled=refused):
            st.session_state.pop(f"{key}_confirm")
            run_change(key, lambda: removal.remove_documents(path, [pending], _embedder, LOCK_WAIT_S).text(), path)
        if no.button("Keep it", key=f"{key}_no"):
            st.session_state.pop(f"{key}_confirm")
            st.rerun()
        return
    # keyed by the memory's content: after a removal the choice starts again from the new list
    name = st.selectbox("document", list(titles), key=f"{key}_doc_{memory.fingerprint()}",
                        format_func=lambda n: f"{n} — {titles[n]}")
    if st.button("Remove this document…", key=f"{key}_ask", disabled=refused):
        st.session_state[f"{key}_confirm"] = name
        st.rerun()


def _undo(path: Path, key: str, refused: bool) -> None:
    change = store.undoable(path)
    if change is None:
        st.caption("No earlier version of this memory is kept: nothing to undo.")
        return
    if st.button(escape_markdown(f"Undo the last change ({change})"), key=f"{key}_undo", disabled=refused):
        run_change(key, lambda: "Undid {}: version {} is live again.".format(change, store.undo(path, LOCK_WAIT_S)[0]),
             path)


def run_change(key: str, work: Any, path: Path, check_builds: bool = True) -> None:
    """Do a change of the memory at `path` — a removal, an edit, an undo (`work()` returns what it did
    in words) — under removals' room rule, checked again here where the work starts, and not while a
    build writes into it; then show the memory anew with the outcome (`take_report`)."""
    refusal = room.live_refusal("removals", room.current())
    if refusal:
        st.session_state[f"{key}_done"] = ("error", refusal)
    elif check_builds and any(Path(j.meta.get("path", "")).resolve() == path.resolve()
                              for j in jobs.list_jobs("build", running_only=True)):
        st.session_state[f"{key}_done"] = ("error", "A build into this memory is running: wait until it has "
                                                    "finished. Nothing was changed.")
    else:
        try:
            with st.spinner("writing a new version of the memory…"):
                st.session_state[f"{key}_done"] = ("ok", work())
        except (store.MemoryStoreError, StorageError, OSError) as e:
            st.session_state[f"{key}_done"] = ("error", room.shown_error(str(e), room.current(), "The change"))
    st.rerun()


def _embedder(model_id: str) -> Any:
    """The app's embedder (a memory built with another cannot be opened here, so it is the memory's)."""
    return backend_state.embedder()
