"""The versions a memory folder keeps, and switching to any of them.

Every save (a build, a removal, an edit) writes a new version folder and switches CURRENT to it;
`store.undo` walks back one version along the line it came from. This module lists every version
still on disk — what made it, when, its counts, whether it opens — and makes any of them live
(`use_version`), after opening it whole as `store.undo` does: a damaged version is refused, named,
and the live one stays. Nothing here deletes a version; the store's pruning after a save does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memrag.durable import storage_guard
from memrag.index import edit_log, store
from memrag.index.store_format import MemoryFormatError

_NAME = re.compile(r"^v?(\d{1,9})$")


@dataclass(frozen=True)
class VersionInfo:
    """One version folder as `--versions` lists it."""

    name: str  # v000003
    live: bool
    change: str  # what made it, in words ('' for a first build that did not say)
    saved_at: str
    previous: str  # the version that was live when it was saved ('' when none is recorded)
    counts: dict[str, int] = field(default_factory=dict)
    fingerprint: str = ""
    problem: str = ""  # why it cannot be opened ('' when it opens)

    def line(self) -> str:
        """One line of `index --versions`."""
        mark = "*" if self.live else " "
        what = self.change or "first version"
        if self.problem:
            return f"{mark} {self.name}\t{self.saved_at or '?'}\t{self.change or '?'}\tCANNOT BE OPENED: {self.problem}"
        counts = ", ".join(f"{v} {k}" for k, v in self.counts.items() if k in ("documents", "entities", "triples"))
        after = f" (after {self.previous})" if self.previous else ""
        return f"{mark} {self.name}\t{self.saved_at}\t{what}{after}\t{counts}"

    def as_json(self) -> dict[str, Any]:
        return {"version": self.name, "live": self.live, "change": self.change, "saved_at": self.saved_at,
                "previous": self.previous, "counts": self.counts, "fingerprint": self.fingerprint,
                "opens": not self.problem, "problem": self.problem}


def version_name(text: str) -> str:
    """'v000003' from '3', 'v3' or 'v000003'; ValueError for anything else."""
    m = _NAME.match(text.strip())
    if not m:
        raise store.UnknownVersionError(f"{text!r} is not a version name: give it as --versions lists it "
                                        "(v000003, or 3). Nothing was changed.")
    return f"v{int(m.group(1)):06d}"


def list_versions(path: Path, open_each: bool = True) -> list[VersionInfo]:
    """Every version folder on disk, oldest first. With `open_each`, each is opened whole (as a
    switch to it would) so a damaged one says why; without, only its manifest is read."""
    path = Path(path)
    try:
        live = store.current_version_dir(path).name
    except MemoryFormatError:
        live = ""  # CURRENT names nothing usable: every version is listed, none as live
    out = []
    for name in store.kept_versions(path):
        manifest, problem = {}, ""
        try:
            manifest = store.version_manifest(path, name)
            if open_each:
                store.load_version(path, name)
        except MemoryFormatError as e:
            problem = str(e)
        out.append(VersionInfo(name, name == live, manifest.get("change", ""), manifest.get("saved_at", ""),
                               manifest.get("previous", ""), dict(manifest.get("counts") or {}),
                               manifest.get("fingerprint", ""), problem))
    return out


def use_version(path: Path, version: str, lock_wait_s: float = store.LOCK_WAIT_S) -> tuple[str, str]:
    """Make `version` (as `version_name` reads it) the live version, after opening it whole.
    Returns (the version now live, the one that was live before). The version left is kept on disk
    until a later save prunes it (a save keeps the live version's line of ancestors)."""
    path = Path(path)
    wanted = version_name(version)
    with store.writing(path, lock_wait_s), storage_guard(path, "switch the memory's version",
                                                         "The memory is unchanged."):
        try:
            before = store.current_version_dir(path).name
        except MemoryFormatError:
            before = ""  # a damaged CURRENT: switching to a version that opens is the way out
        kept = store.kept_versions(path)
        if wanted not in kept:
            raise store.UnknownVersionError(
                f"memory {path} keeps no version {wanted}; it keeps {', '.join(kept) or 'none'}. "
                "Nothing was changed.")
        if wanted != before:
            store.switch_to(path, wanted, "use", f"switched to {wanted}" + (f" from {before}" if before else ""))
        return wanted, before


@dataclass(frozen=True)
class HistoryRow:
    """One entry of the folder's log, with what is on disk now: whether the version it made is
    still kept (or was pruned), whether it is live, and whether the version before it is kept
    (so `index --use` can go back to before it)."""

    entry: edit_log.LogEntry
    kept: bool
    live: bool
    before_kept: bool

    def state(self) -> str:
        if self.live:
            return "live"
        return "kept" if self.kept else "pruned"

    def line(self) -> str:
        e = self.entry
        back = (f"; before it: {e.previous} (kept)" if self.before_kept else
                f"; before it: {e.previous} (pruned: cannot go back)" if e.previous else "")
        return f"{e.at}\t{e.kind}\t{e.text}\t-> {e.version} ({self.state()}){back}"

    def as_json(self) -> dict[str, Any]:
        return {**{k: getattr(self.entry, k) for k in ("at", "kind", "text", "version", "previous", "args")},
                "state": self.state(), "before_kept": self.before_kept}


def history(path: Path) -> list[HistoryRow]:
    """The folder's log, oldest first, each entry with what is on disk now."""
    path = Path(path)
    kept = set(store.kept_versions(path))
    try:
        live = store.current_version_dir(path).name
    except MemoryFormatError:
        live = ""
    return [HistoryRow(e, e.version in kept, e.version == live, bool(e.previous) and e.previous in kept)
            for e in edit_log.read(path)]
