"""The deviations table cites what a reader can open: every file a row names is in the repository
(DESIGN.md is not), and the README shows the table the wings declare."""

from __future__ import annotations

import re
from pathlib import Path

from memrag.methods.deviations import all_deviations, markdown_table

ROOT = Path(__file__).resolve().parent.parent
CITED_FILE = re.compile(r"\b[\w.-]+(?:/[\w.-]+)+\.(?:py|md|json)\b")


def test_every_row_cites_only_what_the_repository_has():
    rows = all_deviations()
    cited = {m for d in rows for text in d.values() for m in CITED_FILE.findall(text)}
    assert "bench/dense_reference.py" in cited  # the dense reference's figures
    assert sorted(c for c in cited if not (ROOT / c).is_file()) == []
    assert [d["what"] for d in rows if "DESIGN" in " ".join(d.values())] == []


def test_the_readme_shows_the_declared_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table().strip() in readme
