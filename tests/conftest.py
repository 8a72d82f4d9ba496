"""Fixtures for every test."""

from __future__ import annotations

import os

import pytest

# No test loads the embedded model by accident: the app's background preload stays off (a test
# that wants it sets the variable itself), here and in every process a test starts.
os.environ["MEMRAG_PRELOAD"] = "0"


@pytest.fixture
def folder_with_links(tmp_path):
    """corpus/ holding one file of its own and three links that lead out of it: to a file outside,
    to a folder outside, and to nothing. Readers of a folder must skip all three."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Secret words outside the folder.")
    (outside / "more.md").write_text("More outside words.")
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "own.txt").write_text("The folder's own words.")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside, target_is_directory=True)
    (root / "dangling.txt").symlink_to(tmp_path / "gone.txt")
    return root


@pytest.fixture
def restore_error_details():
    """Room mode sets Streamlit's process-wide `client.showErrorDetails`; later AppTests must not
    inherit it."""
    from streamlit import config as st_config

    before = st_config.get_option("client.showErrorDetails")
    yield
    st_config.set_option("client.showErrorDetails", before)
