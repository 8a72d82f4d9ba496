"""The view in the URL, so a reload or a shared link reopens it.

The page is the URL's path (`st.navigation`: /ask, /learn); the rest are query parameters:

    memory   sample, or the folder name of a saved memory (never a path)
    q        a demo question's id (Ask, Learn)
    question your own question (Ask), at most 1,000 characters
    methods  comma-separated method names (Ask; absent = every method)
    asked    1 = the answers were shown: a recorded question replays them (never a live call)
    method   the method Learn teaches
    step     Learn's step, from 1

A page reads its parameters once per browser session (a reload or a link is a new session), into
its widgets' keys before they are drawn, then writes its current view back on every run. The
values are untrusted: anything unknown or out of range is ignored with a note naming it, shown as
plain text; nothing from the URL becomes markup, a path or a live model call.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any, Mapping, Sequence

import streamlit as st

from memrag.index import store
from memrag.app import memory_state
from memrag.app.session import AppState

SAMPLE = "sample"
MAX_QUESTION = 1000  # the Ask page's text area holds as much
MAX_VALUE = 200  # any other parameter: ids, names, numbers
DONE_KEY = "memrag_url_read"  # pages whose parameters this session has read
PENDING_STEP = "memrag_url_step"  # Learn's step from the URL, used once its trace is known


def clean(value: Any, limit: int = MAX_VALUE) -> str:
    """A parameter as plain one-line text: control and format characters (bidi overrides among
    them) dropped, surrounding space trimmed, at most `limit` characters."""
    text = value if isinstance(value, str) else ""
    text = "".join(" " if ch in "\r\n\t" else ch for ch in text[: limit * 4])
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    return text.strip()[:limit]


def shown(value: str, limit: int = 60) -> str:
    """A rejected value quoted in a note (clipped)."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def first_read(page: str) -> Mapping[str, str] | None:
    """This page's parameters the first time the session runs it, else None (read once)."""
    done = st.session_state.setdefault(DONE_KEY, set())
    if page in done:
        return None
    done.add(page)
    return {k: st.query_params.get(k, "") for k in st.query_params.keys()}


def write(params: Mapping[str, str | None]) -> None:
    """Set the URL's parameters to `params` (None or empty values left out), only when they differ."""
    wanted = {k: v for k, v in params.items() if v}
    if wanted != st.query_params.to_dict():
        st.query_params.from_dict(wanted)


# ------------------------------------------------------------------ the memory (every page)
def memory_name(path: str | None) -> str | None:
    """The URL name of the memory at `path`: sample, a saved memory's folder name, or None."""
    if path is None:
        return None
    if memory_state.is_sample(path):
        return SAMPLE
    p = Path(path)
    return p.name if p.parent.resolve() == memory_state.memories_dir().resolve() else None


def memory_from(name: str) -> tuple[str | None, str]:
    """(memory folder, note): the folder a URL's memory name means, or None with why not."""
    name = clean(name)
    if not name:
        return None, ""
    if name == SAMPLE:
        folder = memory_state.sample_memory_dir()
    elif Path(name).name == name and name not in (".", "..") and "\\" not in name:  # one folder name, no path
        folder = memory_state.memories_dir() / name
    else:
        folder = None
    if folder is None or not store.is_memory_dir(folder):
        return None, f"The link's memory {shown(name)} is not on this machine: the current memory stays open."
    return str(folder), ""


def restore_memory() -> str:
    """Open the URL's memory (once per session); returns a note when it was ignored."""
    params = first_read("memory")
    if not params or "memory" not in params:
        return ""
    folder, note = memory_from(params["memory"])
    if folder is not None:
        AppState().active_memory = folder
    return note


# ------------------------------------------------------------------ Ask
def methods_from(value: str, known: Sequence[str]) -> tuple[list[str] | None, str]:
    """(methods, note): the known names in a comma list, in `known`'s order; None when none is."""
    names = [clean(n) for n in clean(value, MAX_VALUE * 4).split(",") if clean(n)]
    if not names:
        return None, ""
    unknown = [n for n in names if n not in known]
    chosen = [m for m in known if m in names]
    note = f"Unknown method(s) in the link ignored: {', '.join(shown(n) for n in unknown)}." if unknown else ""
    return (chosen or None), note


def demo_index(qid: str, questions: Sequence[Mapping[str, Any]]) -> tuple[int | None, str]:
    """(index, note): the demo question with id `qid`."""
    qid = clean(qid)
    i = next((n for n, q in enumerate(questions) if str(q.get("id", "")) == qid), None)
    return i, ("" if i is not None else f"The link's question {shown(qid)} is not a demo question of this memory.")


def restore_ask(questions: Sequence[Mapping[str, Any]], known: Sequence[str], kinds: tuple[str, str]) -> \
        tuple[bool, list[str]]:
    """Put the URL's question and methods into the Ask page's session values (once per session),
    before its widgets are drawn from them; `kinds` = the question radio's (demo, own) labels.
    Returns (replay the answers, notes)."""
    params = first_read("ask")
    if not params:
        return False, []
    notes: list[str] = []
    state = AppState()
    restored = False  # answers replay only for the link's own question
    if params.get("q"):
        i, note = demo_index(params["q"], questions)
        notes.append(note)
        if i is not None:
            state.ask_kind, state.ask_demo, restored = kinds[0], i, True
    elif params.get("question"):
        text = clean(params["question"], MAX_QUESTION)
        if text:
            state.ask_kind, state.ask_free, restored = kinds[1], text, True
    if params.get("methods"):
        methods, note = methods_from(params["methods"], known)
        notes.append(note)
        if methods:
            state.ask_methods = methods
    return restored and params.get("asked") == "1", [n for n in notes if n]


def ask_params(memory: str | None, record: Mapping[str, Any] | None, question: str, methods: Sequence[str],
               known: Sequence[str], asked: bool) -> dict[str, str | None]:
    """The Ask page's view as parameters."""
    qid = str(record.get("id", "")) if record else ""
    return {"memory": memory, "q": qid or None, "question": None if qid else question.strip()[:MAX_QUESTION],
            "methods": None if list(methods) == list(known) else ",".join(methods),
            "asked": "1" if asked else None}


# ------------------------------------------------------------------ Learn
def restore_learn(questions: Sequence[Mapping[str, Any]], demo_label: str) -> list[str]:
    """Put the URL's demo question and method into the Learn page's widgets and keep its step for
    `learn_step` (once per session); returns notes on what was ignored."""
    params = first_read("learn")
    if not params:
        return []
    notes: list[str] = []
    ss = st.session_state
    if params.get("q"):
        i, note = demo_index(params["q"], questions)
        notes.append(note)
        if i is not None:
            ss["learn_source"], ss["learn_demo"] = demo_label, i
    if params.get("method"):
        ss["memrag_url_method"] = clean(params["method"])
    if params.get("step"):
        step = clean(params["step"])
        if step_number(step) is not None:
            ss[PENDING_STEP] = step_number(step)
        else:
            notes.append(f"The link's step {shown(step)} is not a step number.")
    return [n for n in notes if n]


def step_number(text: str) -> int | None:
    """A link's step as a number from 1 to 9,999, or None: ASCII digits only ('²' and '٣' are digits
    to str.isdigit, and the first one is no number to int())."""
    return int(text) if re.fullmatch(r"[0-9]{1,4}", text) and int(text) > 0 else None


def learn_method(methods: Sequence[str]) -> str:
    """Set Learn's method control from the URL's method once its methods are known; a note if unknown."""
    name = st.session_state.pop("memrag_url_method", None)
    if name is None:
        return ""
    if name in methods:
        st.session_state["learn_method"] = name
        return ""
    return f"The link's method {shown(name)} is not taught for this question."


def learn_step(slider_key: str, steps: int) -> str:
    """Set Learn's step slider from the URL's step once the trace is known; a note if out of range."""
    step = st.session_state.pop(PENDING_STEP, None)
    if step is None:
        return ""
    if 1 <= step <= steps:
        st.session_state[slider_key] = step - 1
        return ""
    return f"The link's step {step} is past this trace's {steps} steps: it starts at step 1."


def learn_params(memory: str | None, record: Mapping[str, Any] | None, method: str, step: int) -> dict[str, str | None]:
    qid = str(record.get("id", "")) if record else ""
    return {"memory": memory, "q": qid or None, "method": method, "step": str(step + 1)}
