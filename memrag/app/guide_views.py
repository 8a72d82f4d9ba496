"""The demo guide on the Start and Ask pages: the recorded questions grouped by what they show
(computed by `memrag.explain.demo_guide` from the memory's recordings, never picked by hand).

Working the guide out replays every recorded question with every method (seconds, no model), so it
happens once per memory and recordings, when first asked for: the Start page's guide switch or its
"Try a demo question" button. The Ask page's question picker tags questions only once it exists,
so opening Ask never waits for it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from memrag.app import backend_state, memory_state, recording_state, session
from memrag.explain import demo_guide
from memrag.explain.demo_guide import Guide
from memrag.llm.recordings import StaleRecording
from memrag.plain_text import escape_markdown

_DONE: dict[tuple[str, str, float, str], Guide] = {}  # what this server has worked out (see `known_guide`)


def _key(path: str, memory: Any) -> tuple[str, str, float, str]:
    rec, _ = recording_state.recordings(path)
    try:
        mtime = rec.path.stat().st_mtime if rec is not None else 0.0
    except OSError:
        mtime = 0.0
    return str(path), memory.fingerprint(), mtime, backend_state.embedder_id()


def _questions(path: str) -> list[dict[str, Any]]:
    return [q for q in recording_state.demo_questions(path) if q.get("gold_docs") and "answer" in q]


def guide(path: str | None) -> Guide | None:
    """The memory's guide, worked out now if needed (None: no recorded questions with gold)."""
    if path is None or not _questions(path):
        return None
    memory = memory_state.open_memory(path)
    key = _key(path, memory)
    if key not in _DONE:
        rec, _ = recording_state.recordings(path)
        if rec is None:
            return None
        try:
            with st.spinner("working out the demo guide from the recordings (every question, every method)…"):
                outcomes = demo_guide.replay_outcomes(memory, rec, backend_state.embedder(), _questions(path))
        except StaleRecording as e:  # the recordings lack a call: no guide, and the page says why
            st.warning(escape_markdown(f"No demo guide: {e}"))
            return None
        _DONE[key] = demo_guide.build_guide(outcomes)
    return _DONE[key]


def known_guide(path: str | None, memory: Any) -> Guide | None:
    """The guide if this server has worked it out already; never computes."""
    return _DONE.get(_key(path, memory)) if path is not None and memory is not None else None


def question_label(record: dict[str, Any], known: Guide | None) -> str:
    """'q15: In which year … · a graph method found the bridge Dense missed' for a question picker."""
    label = f"{record.get('id', '')}: {record['question']}"
    tags = known.tags(str(record.get("id", ""))) if known is not None else []
    return label + (f" · {'; '.join(tags)}" if tags else "")


def default_index(questions: list[dict[str, Any]], known: Guide | None) -> int:
    """Where the default demo question sits in `questions` (0 without a guide)."""
    ids = [str(q.get("id", "")) for q in questions]
    return ids.index(known.default) if known is not None and known.default in ids else 0


def _open_on_ask(path: str, index: int) -> None:
    """The memory at `path` active and the Ask page's picker on its demo question `index`."""
    session.AppState().active_memory = path
    st.session_state["ask_kind"] = "Demo question"
    st.session_state["ask_demo"] = index


def open_default_question() -> None:
    """The sample memory, the Ask page on the guide's default question (the page switch is the caller's)."""
    path = str(memory_state.sample_memory_dir())
    _open_on_ask(path, default_index(recording_state.demo_questions(path), guide(path)))


def guide_section() -> None:
    """The Start page's guide: each group, how it was computed, its questions with what they show."""
    path = str(memory_state.sample_memory_dir())
    if not st.toggle("show the demo guide: which recorded question shows what", key="start_guide"):
        return
    known = guide(path)
    if known is None:
        st.caption("The sample memory has no recorded questions with gold answers.")
    else:
        _groups(path, known)
    showcase_section()


def _groups(path: str, known: Guide) -> None:
    st.caption(escape_markdown(demo_guide.how_computed(known)))
    questions = recording_state.demo_questions(path)
    for g in known.groups:
        st.markdown(f"**{escape_markdown(g.title)}** · {len(g.picks)} question(s)")
        st.caption(escape_markdown(g.how))
        for p in g.picks:
            left, right = st.columns([5, 1])
            left.markdown(escape_markdown(f"{p.qid}: {p.question} — {p.why}"))
            if right.button("open on Ask", key=f"guide_{g.key}_{p.qid}"):
                _open_on_ask(path, [str(q.get("id", "")) for q in questions].index(p.qid))
                st.switch_page("app_pages/ask.py")


# ------------------------------------------------------------------ the recorded showcase of editing
SHOWCASE_STEPS = "\n".join((
    "1. **Ask** replays the question from the recordings.",
    "2. On the **Memory** page the explorer's panel shows the triple's head: open 'Edit this entity or one of its "
    "triples', choose the triple, **Apply**.",
    "3. Back on **Ask**, **Ask again on this version**: the calls the edit changed are answered from the "
    "showcase's recordings (offline), and the page lists what changed per method.",
    "4. To undo: the Memory page's **Edit entities and triples**, **Make this version live** on the first version."))


def showcase_section() -> None:
    """'Fix the memory, ask again': the recorded showcase, what it showed when recorded, and a button
    that opens it on a fresh editable copy of the sample (the sample itself is never edited)."""
    from memrag.explain import showcase

    if not showcase.available():
        return
    try:
        show, lines = showcase.load(), showcase.expected_lines()
        record = show.record
    except (ValueError, KeyError, OSError) as e:  # a damaged showcase file: said, not raised
        st.caption(escape_markdown(f"The showcase cannot be opened: {e}"))
        return
    st.markdown("**Fix the memory, ask again** · a recorded showcase")
    st.markdown(escape_markdown(f"{show.qid}: {record['question']} — {show.title}"))
    st.caption(escape_markdown(show.why))
    for line in lines:
        st.markdown("- " + escape_markdown(f"recorded: {line}"))
    st.caption(SHOWCASE_STEPS)
    if st.button("Open the showcase on an editable copy", key="guide_showcase"):
        if _open_showcase(show):
            st.switch_page("app_pages/ask.py")


def _open_showcase(show: Any) -> bool:
    """A fresh copy of the sample made and opened, the Ask page on the showcase's question and the
    Memory page's explorer on the edited triple's head; False (said) when it cannot be made."""
    from memrag.app import memory_views, room
    from memrag.index import copies, edits, store

    refusal = room.live_refusal("removals", room.current())
    if refusal:
        st.warning(escape_markdown(refusal))
        return False
    sample = memory_state.sample_memory_dir()
    n = 1
    while memory_state.memory_path(f"showcase-{n}").exists():
        n += 1
    try:
        copy = copies.copy_memory(sample, memory_state.memory_path(f"showcase-{n}"))
    except (store.MemoryStoreError, OSError) as e:
        st.error(escape_markdown(room.shown_error(str(e), room.current(), "The copy")))
        return False
    path = str(copy)
    index = [str(q.get("id", "")) for q in recording_state.demo_questions(path)].index(show.qid)
    _open_on_ask(path, index)
    if show.edit.kind == "remove-triple":
        memory = memory_state.open_memory(path)
        head = memory.triples[int(show.edit.args["triple"])].head
        memory_views.choose_entity("mem", edits.find_entity(memory, head).key)
    return True
