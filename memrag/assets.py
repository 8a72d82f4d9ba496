"""The app's own static files (the report's stylesheet, the icon) live in `assets/` at the
repository root, beside `app.py`; this is the one place that finds them."""

from __future__ import annotations

import functools
from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"


def asset_path(name: str) -> Path:
    """The path of `assets/<name>`; a missing file is an error that names it (a broken checkout)."""
    path = ASSETS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"memrag's asset {name!r} is missing: expected {path}")
    return path


@functools.cache
def asset_text(name: str) -> str:
    """A text asset (CSS), read once per process."""
    return asset_path(name).read_text(encoding="utf-8").strip()
