"""The app's own stylesheets and icon come from assets/ (memrag.assets), tracked in git so a clean
clone has them, and stay offline: nothing in them loads from elsewhere."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from memrag.assets import ASSETS_DIR, asset_path, asset_text

ROOT = ASSETS_DIR.parent
USED = ("report.css", "icon.png")


def test_every_asset_in_use_is_tracked_so_a_clean_clone_has_it():
    if shutil.which("git") is None or subprocess.run(["git", "rev-parse"], cwd=ASSETS_DIR,
                                                     capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "--error-unmatch", *USED], cwd=ASSETS_DIR, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("name", [n for n in USED if n.endswith(".css")])
def test_stylesheets_load_nothing_remote(name):
    css = asset_text(name)
    assert css and not re.search(r"url\s*\(|@import|</", css, re.I)


def test_a_missing_asset_is_named():
    with pytest.raises(FileNotFoundError, match="nope.css"):
        asset_path("nope.css")


def test_the_report_carries_its_stylesheet():
    from memrag.eval.report import html_report

    summary = json.loads((ROOT / "docs" / "runs" / "sample-pooled-20" / "summary.json").read_text(encoding="utf-8"))
    assert asset_text("report.css") in html_report(summary, [])
