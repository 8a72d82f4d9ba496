"""Whether a trace, an evaluation run or a memory's recordings were made on an earlier version of a
memory folder, and the one sentence a page shows for it.

Each of them names the memory content it was made on by its fingerprint, and a memory folder's
manifest lists the fingerprints of its earlier versions (`history`). One whose fingerprint is there
was made before documents were added or removed: its chunk numbers are not the live version's, so
a page shows it from its own passages (the readers compare fingerprints before they map a chunk
number onto the memory), and a replay of its recordings misses where a prompt changed with it.
Something made on another memory altogether, or whose fingerprint is not known, says nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memrag.index import store
from memrag.llm.recordings import BrokenRecording, StaleRecording
from memrag.trace import Trace

EARLIER = "made on an earlier version of this memory (documents were added or removed, or it was edited, since)"
SENTENCES = {
    "trace": f"This trace was {EARLIER}: its chunk numbers are not this memory's, so it is shown from its "
             "own passages.",
    "traces": f"These traces were {EARLIER}: their chunk numbers are not this memory's, so they are shown "
              "from their own passages.",
    "run": f"This run was {EARLIER}: its chunk numbers are not this memory's, so its questions' traces are "
           "shown from their own passages.",
    "recordings": f"The recorded answers were {EARLIER}: a call whose prompt changed with it has no "
                  "recorded reply (ask live, or undo the change to replay them).",
}


def _earlier(path: str | Path, fingerprints: Sequence[str]) -> bool:
    """True when one of `fingerprints` is an earlier version of the memory folder at `path` (and
    none is the live one)."""
    try:
        manifest = store.read_manifest(Path(path))
    except (store.MemoryFormatError, OSError):
        return False
    live, history = manifest.get("fingerprint"), set(manifest.get("history", []))
    return live not in fingerprints and any(f in history for f in fingerprints if f)


def stale_note(path: Path, fingerprint: str) -> str | None:
    """Why something made on memory content `fingerprint` does not match the folder's live version,
    when it was made on an earlier version of it (None when it matches, or is not known here)."""
    return SENTENCES["trace"] if _earlier(path, [fingerprint]) else None


def made_on(made: Any) -> tuple[str, list[str]]:
    """(what it is, the fingerprints it was made on) for a trace, several traces (one ask), an
    evaluation run's summary (`RunSummary`: its pooled memory) or recordings."""
    if isinstance(made, Trace):
        return "trace", [made.memory_fingerprint]
    if isinstance(made, Sequence) and not isinstance(made, str) and all(isinstance(t, Trace) for t in made):
        return ("trace" if len(made) == 1 else "traces"), [t.memory_fingerprint for t in made]
    indexing = getattr(made, "indexing", None)
    if isinstance(indexing, Mapping):  # a run of one small memory per question names none here
        return "run", [str(indexing.get("fingerprint") or "")]
    fingerprint = getattr(made, "memory_fingerprint", None)
    if isinstance(fingerprint, str):
        return "recordings", [fingerprint]
    raise TypeError(f"not a trace, a run summary or recordings: {type(made).__name__}")


def stale_message(made: Any, path: str | Path | None) -> str:
    """The sentence for `made` (see `made_on`) when it was made on an earlier version of the memory
    folder at `path`; '' when it matches the live version, belongs to another memory or `path` is none."""
    if path is None:
        return ""
    kind, fingerprints = made_on(made)
    return SENTENCES[kind] if _earlier(path, fingerprints) else ""


def explained_miss(miss: StaleRecording) -> StaleRecording:
    """A replay's miss, saying why when its recordings were made on an earlier version of the memory
    folder they sit in (the llm layer knows the file, not the memory's versions); else `miss` itself."""
    rec = miss.recordings
    if rec is None or isinstance(miss, BrokenRecording):
        return miss
    why = stale_message(rec, rec.path.parent)
    return StaleRecording(f"no recorded response for this {miss.stage} call. {why}", rec, miss.stage) if why else miss
