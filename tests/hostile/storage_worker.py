"""A separate process for the storage probes: builds or saves into a memory folder, and can stop
at a chosen moment (announcing it by creating a file) so the test can kill it with SIGKILL there
or let it go on.

    python storage_worker.py build MEM FIRST COUNT WAIT_S [STOP_AT_CALL MARKER [GO]]
    python storage_worker.py save-stalls MEM MARKER
    python storage_worker.py cli-index MEM DOCS_DIR FILE_SIZE_LIMIT   (the CLI, under `ulimit -f`)

Exit status 0 when done, 3 when the memory was busy (the message on stderr)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parent)]

from memrag.index import store  # noqa: E402
from memrag.index.build import build_memory, run_build  # noqa: E402
from memrag.config import IndexParams  # noqa: E402
from memrag.index.readers import benchmark_document  # noqa: E402
from scripted import HashEmbedder, ScriptedLLM  # noqa: E402


def docs(first: int, count: int) -> list:
    return [benchmark_document(f"d{i}", f"Title {i}", f"Alder{i} stands beside Birch{i}.", "t")
            for i in range(first, first + count)]


def reply(i: int) -> dict:
    return {"entities": [{"name": f"Alder{i}", "type": "thing", "description": "a tree", "importance": 3},
                         {"name": f"Birch{i}", "type": "thing", "description": "a tree", "importance": 3}],
            "triples": [[f"Alder{i}", "stands beside", f"Birch{i}"]]}


def _wait_for(go: Path | None) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (go is None or not go.exists()):
        time.sleep(0.05)


def build(mem: str, first: str, count: str, wait_s: str, stop_at: str = "-1", marker: str = "",
          go: str = "") -> None:
    calls = {"n": 0}

    def extract(messages, stage):
        i = int(messages[-1]["content"].split("Alder", 1)[1].split(" ", 1)[0])
        if calls["n"] == int(stop_at):
            Path(marker).touch()
            _wait_for(Path(go) if go else None)  # without a GO file: until killed
        calls["n"] += 1
        return reply(i)

    llm = ScriptedLLM({"index.extract": extract})
    if marker:
        Path(f"{marker}.ready").touch()  # imports done: the build starts now
    run_build(build_memory(Path(mem), docs(int(first), int(count)), llm, HashEmbedder(), IndexParams(),
                           lock_wait_s=float(wait_s)))


def save_stalls(mem: str, marker: str) -> None:
    """Save a bigger memory, stalling (until killed) after the first vector file is written."""
    m = run_build(build_memory(None, docs(0, 4), ScriptedLLM({"index.extract": [reply(i) for i in range(4)]}),
                               HashEmbedder(), IndexParams()))
    real = store.write_file

    def stalling(path, write):
        real(path, write)
        if path.suffix == ".npy":
            Path(marker).touch()
            _wait_for(None)

    store.write_file = stalling
    store.save(m, Path(mem))


def cli_index(mem: str, docs_dir: str, limit: str) -> None:
    """`python -m memrag index DOCS_DIR --memory MEM` with the scripted LLM and the hash embedder,
    every file this process writes limited to `limit` bytes (as `ulimit -f` does)."""
    import resource

    from memrag import embed
    from memrag.cli.main import main
    from memrag.llm import factory
    from memrag.llm.cache import CachedLLM

    def extract(messages, stage):
        return reply(int(messages[-1]["content"].split("Alder", 1)[1].split(" ", 1)[0]))

    embed._shared[embed.DEFAULT_EMBEDDER] = HashEmbedder()
    factory.make_llm = lambda settings, ledger=None: (
        CachedLLM(ScriptedLLM({"index.extract": extract}), None),
        factory.BackendChoice("scripted", "scripted", "the storage probe's scripted LLM"))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    sys.exit(main(["index", docs_dir, "--memory", mem, "--backend", "embedded"]))


if __name__ == "__main__":
    try:
        {"build": build, "save-stalls": save_stalls, "cli-index": cli_index}[sys.argv[1]](*sys.argv[2:])
    except store.MemoryBusyError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(3)
