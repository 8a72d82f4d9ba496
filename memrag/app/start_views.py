"""The start page's words and its three ways in (pages stay thin: app_pages/start.py only lays
them out).

The methods named come from `memrag.methods.registry` at run time, so a method added there is
named here without an edit. Each way in sets what the target page reads from the session and
says which page to open; the page switch itself happens in the page script.
"""

from __future__ import annotations

import streamlit as st

from memrag.app import backend_state, guide_views, memory_state
from memrag.index import store
from memrag.methods import registry

ASK_PAGE, MEMORY_PAGE, LEARN_PAGE = "app_pages/ask.py", "app_pages/memory.py", "app_pages/learn.py"

INTRO = ("memrag turns your documents into a memory — a knowledge graph of entities and the facts linking "
         "them, each tied to the passage it came from — and answers questions from it with methods modelled "
         "on how brains recall. Every step of a retrieval is shown: which entities a question woke up, which "
         "paths were followed, which passages reached the answer and why the others did not, next to plain "
         "dense retrieval as the baseline.")

def methods_line() -> str:
    """'Methods here: NeuroPath, EcphoryRAG and Dense.' — read from the registry now."""
    labels = list(registry.LABELS.values())
    named = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return f"Methods here: {named}."


def analogies() -> list[str]:
    """One line per graph method, in our own words (each spec's `start_line`), in display order."""
    return [registry.get(name).start_line for name in registry.display_order() if registry.get(name).start_line]


def sample_ready() -> bool:
    return store.is_memory_dir(memory_state.sample_memory_dir())


def open_demo_question() -> None:
    """The sample memory, the Ask page on the demo guide's default question (methods side by side):
    one that shows a method's difference, computed from the recordings."""
    guide_views.open_default_question()


def open_upload() -> None:
    """The Memory page with its upload form showing."""
    st.session_state["memory_source"] = "Upload files"


def backend_line() -> str:
    _, choice, error = backend_state.backend_choice()
    if choice is None:
        return f"LLM: not available ({error})"
    return f"LLM: {choice.backend} / {choice.model}"


def memory_line() -> str:
    path, memory, error = memory_state.active_memory()
    if memory is not None:
        return (f"Active memory: {memory_state.memory_label(path)} — {len(memory.documents)} documents, "
                f"{len(memory.entities)} entities, {len(memory.triples)} triples.")
    return f"Active memory: none ({error})" if error else "Active memory: none yet."
