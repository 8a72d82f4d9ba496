"""python -m memrag index --memory DIR --versions | --use VERSION (the version list and switch)."""

from __future__ import annotations

import json
from pathlib import Path


def versions_command(memory: Path, use: str | None, as_json: bool) -> int:
    """List the versions kept (`use` None) or make one live; errors are raised for the caller to print."""
    from memrag.index import versions

    if use is not None:
        live, before = versions.use_version(memory, use)
        if live == before:
            print(f"version {live} is already the live one; nothing was changed")
        else:
            back = (f"; {before} stays on disk until a later save prunes it (`--use {before}` switches back)"
                    if before else "")
            print(f"version {live} is live now (it was opened whole first){back}")
        if as_json:
            print(json.dumps({"version": live, "before": before}))
        return 0
    listed = versions.list_versions(memory)
    for v in listed:
        print(v.line())
    print(f"{len(listed)} version(s) kept; * marks the live one. `--use VERSION` makes another live.")
    if as_json:
        print(json.dumps({"versions": [v.as_json() for v in listed]}))
    return 0
