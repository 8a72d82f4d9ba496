"""Where the shipped sample lives, and the one rule that keeps its memory unchanged.

Its own module at the bottom of the package order: the memory store (edits), the CLI and the app
all ask it, and memrag.demo (which runs asks) sits above the store."""

from __future__ import annotations

from pathlib import Path

from memrag.textsafe import slug

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_corpus"


def sample_memory_dir(backend: str = "embedded", model: str = "") -> Path:
    """The shipped memory (built and recorded with the embedded model), or the folder beside it
    for a memory built with another LLM (`memory-ollama-phi4`, …): never over the shipped one."""
    if backend == "embedded":
        return SAMPLE_DIR / "memory"
    return SAMPLE_DIR / f"memory-{slug(f'{backend}-{model}', ascii_fold=False)}"


# The rule for the app and the CLI alike: the shipped memory is changed only by `demo extract`
# (its recorded demo answers and the replay-identity snapshot are made on it).
SAMPLE_FIXED = ("The sample memory ships with memrag and cannot be changed here (its recorded demo answers are "
                "made on it).")


def is_sample_memory(path: str | Path | None) -> bool:
    """True for the shipped sample memory's folder, however the path to it is written."""
    return path is not None and Path(path).resolve() == sample_memory_dir().resolve()


def sample_refusal(path: str | Path | None, remedy: str) -> str:
    """Why a change to the memory at `path` is refused ('' when it is not the shipped sample)."""
    return f"{SAMPLE_FIXED} {remedy}" if is_sample_memory(path) else ""
