"""Helpers the benchmark scripts share: paths, timers, peak memory, tables, the imported memory.

Every script prints a table (or one JSON object with --json). Figures from these
machines are noisy: compare figures measured side by side in one run, not across runs.
"""

from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# CI and users keep shared/ beside the repository.
DEFAULT_DATA_DIR = REPO.parent / "shared" / "bench" / "musique"
OPENIE_FILE = "openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
CORPUS_FILE = "musique_train_corpus.json"
QUESTIONS_FILE = "musique_train.json"
MEMORY_NAME = "musique-openie"


def data_files(data_dir: Path) -> dict[str, Path]:
    """The three MuSiQue files, checked up front so a missing one is named, not a traceback."""
    files = {"openie": data_dir / OPENIE_FILE, "corpus": data_dir / CORPUS_FILE,
             "questions": data_dir / QUESTIONS_FILE}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise SystemExit("benchmark data not found: " + ", ".join(missing)
                         + "\n(pass --data-dir DIR, the folder holding the MuSiQue files)")
    return files


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far.

    Linux: VmHWM, since ru_maxrss carries the parent's peak over fork + exec (a child started
    from a big process would report the parent's figure). Elsewhere ru_maxrss (KiB on Linux,
    bytes on macOS)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def folder_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file()) / 2**20


def median(xs: Iterable[float]) -> float:
    xs = list(xs)
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: Iterable[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): with few samples it is an observed value."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    rank = max(1, min(len(xs), int(-(-q * len(xs) // 100))))
    return xs[rank - 1]


@dataclass
class Table:
    """A plain-text table; columns are right-aligned except the first."""
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def add(self, *cells: Any) -> None:
        self.rows.append(list(cells))

    def render(self) -> str:
        cells = [[_fmt(c) for c in row] for row in self.rows]
        widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(self.columns)]

        def line(parts: list[str]) -> str:
            return "  ".join(p.ljust(w) if i == 0 else p.rjust(w) for i, (p, w) in enumerate(zip(parts, widths)))
        out = [self.title, line(self.columns), line(["-" * w for w in widths])]
        out += [line(r) for r in cells]
        return "\n".join(out)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if v != v:
            return "-"
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}" if abs(v) < 1000 else f"{v:,.0f}"
    if v is None:
        return "-"
    return str(v)


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def emit(args: Any, result: dict[str, Any], tables: list[Table], notes: list[str]) -> None:
    """Print the tables and notes, or the result as one JSON object with --json."""
    if getattr(args, "json", False):
        print(json.dumps(result, indent=2, default=str))
        return
    for t in tables:
        print()
        print(t.render())
    if notes:
        print()
        for n in notes:
            print(n)


class Stopwatch:
    """`with sw("name"):` adds the block's wall seconds under that name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, name: str) -> "_Lap":
        return _Lap(self, name)


class _Lap:
    def __init__(self, sw: Stopwatch, name: str) -> None:
        self.sw, self.name = sw, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: Any) -> None:
        self.sw.seconds[self.name] = self.sw.seconds.get(self.name, 0.0) + time.perf_counter() - self.t0


# ------------------------------------------------------------------ the imported MuSiQue memory
FULL_PASSAGES = 1890
QUICK_PASSAGES = 150


@dataclass
class CorpusSlice:
    """The OpenIE + corpus files to import: the whole 1,890 passages, or their first n (--quick),
    cut into aligned copies under the work folder. Each slice has its own memory folder and name,
    so a memory of a slice is never mistaken for the full one."""
    openie: Path
    corpus: Path
    passages: int
    full: bool

    @property
    def memory_name(self) -> str:
        return MEMORY_NAME if self.full else f"{MEMORY_NAME}-first{self.passages}"

    @property
    def label(self) -> str:
        return (f"{self.passages} passages" if self.full
                else f"the first {self.passages} of {FULL_PASSAGES} passages")

    def memory_dir(self, work: Path) -> Path:
        return work / ("memory" if self.full else f"memory-first{self.passages}")


def slice_note(sl: CorpusSlice) -> str:
    return f"NOTE: {sl.label} only: not figures to hold against the targets (those are for all {FULL_PASSAGES})."


def corpus_slice(files: dict[str, Path], work: Path, passages: int | None) -> CorpusSlice:
    if passages is not None and passages < 1:
        raise SystemExit(f"--passages must be at least 1 (got {passages})")
    n_all = len(json.loads(files["corpus"].read_text(encoding="utf-8")))
    if passages is None or passages >= n_all:
        return CorpusSlice(files["openie"], files["corpus"], n_all, True)
    out = work / f"data-first{passages}"
    openie, corpus_file = out / OPENIE_FILE, out / CORPUS_FILE
    if not (openie.is_file() and corpus_file.is_file()):
        out.mkdir(parents=True, exist_ok=True)
        data = json.loads(files["openie"].read_text(encoding="utf-8"))
        data["docs"] = data["docs"][:passages]
        corpus = json.loads(files["corpus"].read_text(encoding="utf-8"))[:passages]
        openie.write_text(json.dumps(data), encoding="utf-8")
        corpus_file.write_text(json.dumps(corpus), encoding="utf-8")
    return CorpusSlice(openie, corpus_file, passages, False)


def import_memory(sl: CorpusSlice, path: Path, embedder: Any) -> tuple[Any, list[Any], float]:
    """Run the OpenIE import into `path`; returns (memory, build events, wall seconds)."""
    from memrag.config import IndexParams
    from memrag.index.openie import import_openie

    t0 = time.perf_counter()
    events = list(import_openie(sl.openie, sl.corpus, embedder, IndexParams(), path=path,
                                dataset="musique", name=sl.memory_name))
    seconds = time.perf_counter() - t0
    memory = events[-1].memory
    if memory is None:
        raise RuntimeError("the import ended without a memory")
    return memory, events, seconds


class ForeignMemoryError(RuntimeError):
    """The work folder holds a memory the benches did not make: building into it would add a
    version to someone's own memory (a --work folder may be a link to one)."""


def holds_bench_memory(path: Path, expected: str) -> bool:
    """True when `path` holds the bench memory named `expected`, False when it holds none; raise
    ForeignMemoryError when it holds another (each slice has a folder of its own, so any other
    name there is a memory no bench made)."""
    from memrag.index import store

    if not store.is_memory_dir(path):
        return False
    name = store.read_manifest(path).get("name")
    if name != expected:
        raise ForeignMemoryError(
            f"{path} holds the memory {name!r}, which no bench made; the bench would build a new "
            f"version into it. Give --work a folder of its own (or none: a temporary one).")
    return True


def cached_memory(sl: CorpusSlice, work: Path, embedder: Any, log: Any = print) -> tuple[Any, bool]:
    """The imported memory of this slice under `work`: loaded if a complete one is there, else built.

    Returns (memory, built_now)."""
    from memrag.index import store

    path = sl.memory_dir(work)
    if holds_bench_memory(path, sl.memory_name):
        return store.load(path, embedder.model_id), False
    log(f"importing {sl.label} into {path} (embeds ~34 texts per passage: minutes on two cores) …")
    memory, _, seconds = import_memory(sl, path, embedder)
    log(f"imported in {seconds:.0f} s")
    return memory, True


def questions(files: dict[str, Path]) -> list[dict[str, Any]]:
    """MuSiQue question records in file order ({id, question, answer, ...})."""
    return json.loads(files["questions"].read_text(encoding="utf-8"))
