"""A memory folder's recorded LLM replies (reopened when the file changes) and the demo
questions offered for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from memrag.app.memory_state import is_sample
from memrag.llm.recordings import FILE_NAME, Recordings, RecordingsFormatError


def _recordings_mtime(path: str) -> float:
    f = Path(path) / FILE_NAME
    return f.stat().st_mtime if f.is_file() else 0.0


@st.cache_resource(show_spinner=False, max_entries=6)
def _open_recordings(path: str, mtime: float) -> tuple[Recordings | None, str]:
    try:
        return Recordings.open(Path(path)), ""
    except (RecordingsFormatError, OSError) as e:  # the message says what is wrong with the file
        return None, str(e)


def recordings(path: str | None) -> tuple[Recordings | None, str]:
    """(Recordings or None, error) for the memory folder at `path`."""
    if path is None:
        return None, ""
    return _open_recordings(str(Path(path).resolve()), _recordings_mtime(path))


def demo_questions(path: str | None) -> list[dict[str, Any]]:
    """Questions offered for a memory: the sample's gold questions, or those its recordings hold."""
    if path is None:
        return []
    if is_sample(path):
        from memrag import demo

        return demo.sample_questions()
    rec, _ = recordings(path)
    if rec is None:
        return []
    known = _sample_records(path, rec)
    return [known.get(" ".join(q.split())) or {"id": f"r{i + 1}", "question": q} for i, q in enumerate(rec.questions)]


def _sample_records(path: str, rec: Recordings) -> dict[str, dict[str, Any]]:
    """The sample's question records (with gold) for the questions `rec` holds, when the memory at `path`
    holds every gold document of them: a copy of the sample (edited or not) keeps its gold questions,
    while another memory's recordings of the same words get no gold that is not in it."""
    from memrag import demo
    from memrag.app.memory_state import open_memory

    wanted = {" ".join(q["question"].split()): q for q in demo.sample_questions()}
    held = [wanted[n] for n in (" ".join(q.split()) for q in rec.questions) if n in wanted]
    if not held:
        return {}
    docs = {c.doc_id for c in open_memory(path).chunks}
    return {" ".join(q["question"].split()): q for q in held if set(q.get("gold_docs", [])) <= docs}
