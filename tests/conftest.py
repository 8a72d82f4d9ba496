"""Fixtures for every test."""

from __future__ import annotations

import os

import pytest

# No test loads the embedded model by accident: the app's background preload stays off (a test
# that wants it sets the variable itself), here and in every process a test starts.
os.environ["MEMRAG_PRELOAD"] = "0"


@pytest.fixture(autouse=True)
def self_contained_graph_pages(monkeypatch):
    """Graph pages start self-contained in every test: running app.py in an AppTest switches the
    process-wide shared vis-network script on (it loads from the app's static folder, which a
    page opened outside the app cannot reach)."""
    from memrag.viz import graph_html

    monkeypatch.setattr(graph_html, "_shared_script_tag", "")
