"""`python -m memrag demo-check`, the demo-giver's pre-flight: it must pass on a good checkout, and
its page check must render pages the way `streamlit run app.py` does (inside st.navigation)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrag.app.page_check import render_pages

REPO = Path(__file__).resolve().parents[1]

ENTRY = '''
import streamlit as st
page = st.navigation([st.Page("app_pages/a.py", title="A", default=True), st.Page("app_pages/b.py", title="B")])
page.run()
'''
LINKS_TO_B = 'import streamlit as st\nst.write("page a")\nst.page_link("app_pages/b.py", label="to B")\n'


def _toy_app(root: Path, page_b: str) -> Path:
    (root / "app_pages").mkdir(parents=True)
    (root / "app.py").write_text(ENTRY)
    (root / "app_pages" / "a.py").write_text(LINKS_TO_B)
    (root / "app_pages" / "b.py").write_text(page_b)
    return root


def test_a_page_linking_to_another_page_passes(tmp_path):
    # Rendered bare, page a's st.page_link raised StreamlitPageNotFoundError (the demo-check failure
    # on main before this test); through the entry script it renders.
    root = _toy_app(tmp_path / "app", 'import streamlit as st\nst.write("page b")\n')
    assert render_pages(root) == "rendered without errors through app.py: a, b"


def test_a_broken_page_fails_the_check_naming_it(tmp_path):
    root = _toy_app(tmp_path / "app", 'raise ValueError("b is broken")\n')
    with pytest.raises(RuntimeError, match=r"b\.py: .*b is broken"):
        render_pages(root)


def test_demo_check_passes_on_this_checkout(tmp_path):
    env = {**os.environ, "MEMRAG_HOME": str(tmp_path / "home"), "OLLAMA_HOST": "http://127.0.0.1:9"}
    run = subprocess.run([sys.executable, "-m", "memrag", "demo-check"], cwd=REPO, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Ready for the demo." in run.stdout
    pages_line = next(line for line in run.stdout.splitlines() if "] pages" in line)
    for page in ("start", "memory", "ask", "evaluate", "learn"):
        assert page in pages_line
