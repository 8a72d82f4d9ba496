"""Names on their way to folders and titles (issue 27, probe 9): memory names in other scripts
stay distinct folders (so their builds never merge), and bidirectional controls never reach a
title, where they would show its characters in another order than they are stored."""

from __future__ import annotations

import pytest

from memrag.app.memory_state import safe_memory_name
from memrag.config import IndexParams
from memrag.index.readers import read_uploads

GROUP = "names"


@pytest.mark.probe("memories named 研究ノート, Мои документы and Αρχείο (and '!!!')",
                   "four distinct folders, none the plain 'memory', each the same on every call", group=GROUP)
def test_names_in_other_scripts_stay_distinct_folders():
    names = ["研究ノート", "Мои документы", "Αρχείο", "!!!"]
    folders = [safe_memory_name(n) for n in names]
    assert len(set(folders)) == len(names) and "memory" not in folders, folders
    assert folders == [safe_memory_name(n) for n in names]  # stable: a rebuild finds its memory again
    assert all(f.startswith("memory-") for f in folders)
    # names that lose nothing keep their plain folder (existing memories are found again)
    assert [safe_memory_name(n) for n in ("My Notes", "Café", "")] == ["my-notes", "cafe", "memory"]
    assert safe_memory_name("研究 v2") != safe_memory_name("Мои v2")  # a shared ASCII remnant is not enough


@pytest.mark.probe("a file named with a right-to-left override (report‮txt.exe) and one whose first line "
                   "holds bidi controls", "titles without any bidirectional control character", group=GROUP)
def test_bidi_controls_never_reach_a_title():
    bidi = "\u202e\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
    report = read_uploads([("report\u202etxt.exe.txt", b"Alder stands beside Birch."),
                           ("notes.md", f"# Plan\u202e{bidi} for Alder\n\nBirch grows.".encode())], IndexParams())
    titles = [d.title for d in report.documents]
    assert len(titles) == 2 and not any(c in t for t in titles for c in bidi), titles
    assert any("Plan" in t and "for Alder" in t for t in titles)
