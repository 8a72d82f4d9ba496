"""Indexing cost on the 1,890-passage MuSiQue OpenIE import, and extraction cost with the embedded model.

    python bench/index_bench.py [--quick] [--json] [--no-extract] [--passages N] [--data-dir DIR] [--work DIR]
                                [--server-slots 1,2 [--server-chunks N]]

Import part (no LLM): seconds for each embedding job (entities, chunks, engrams,
triples), JSON reading + integration, coreference, graph construction, save;
the saved folder's size; loading it in a fresh process (and making it
query-ready: faiss indices, coreference sets, graphs); peak RSS.
Targets: everything that is not embedding ≤ 30% of embedding time; load < 2 s.

Extraction part (skip with --no-extract): the first passages of the corpus
through `extract_chunk` with the embedded model (response cache off): seconds,
prompt and completion tokens per chunk.

Server part (with --server-slots): the same passages extracted through llama.cpp's own
OpenAI-compatible HTTP server (started from xllamacpp on 127.0.0.1 with the embedded GGUF), once
per slot count, with as many requests in flight as slots (`build_memory(parallel=slots)`, the
path `--parallel N` takes): chunks per second side by side. A figure to report, not a target: on
2 cores the slots share the same cores.

--quick imports only the first 150 passages (a check that the script runs, not
figures to compare with the targets) and extracts 2 passages. The memory is
written to DIR/memory (DIR/memory-first150 with --quick; default DIR: a temporary
folder, removed at the end); `bench/retrieval_bench.py --work DIR` reuses it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C

NON_EMBEDDING_TARGET = 0.30
LOAD_TARGET_S = 2.0


# ------------------------------------------------------------------ import
def run_import(sl: C.CorpusSlice, path: Path, embedder: Any, log: Any) -> dict[str, Any]:
    """The import with each event's arrival time, so the stages between events can be timed too."""
    from memrag.config import IndexParams
    from memrag.index.openie import import_openie

    t0 = time.perf_counter()
    events = []
    for ev in import_openie(sl.openie, sl.corpus, embedder, IndexParams(), path=path,
                            dataset="musique", name=sl.memory_name):
        events.append((time.perf_counter() - t0, ev))
        if ev.kind != "chunk_done":
            log(f"  {events[-1][0]:7.1f} s  {ev.kind} {_brief(ev.data)}")
    wall = time.perf_counter() - t0
    at = {ev.kind: t for t, ev in events if ev.kind != "embedding"}
    embedding = [(t, ev.data) for t, ev in events if ev.kind == "embedding"]
    first_embed_start = embedding[0][0] - embedding[0][1]["seconds"]
    coref = next(ev.data["seconds"] for _, ev in events if ev.kind == "coref")
    saved = next(ev.data["seconds"] for _, ev in events if ev.kind == "saved")
    embed_s = sum(d["seconds"] for _, d in embedding)
    stages = {
        "read JSON + checks": at["start"],
        "integrate chunks": first_embed_start - at["start"],
        "coreference": coref,
        "save": saved,
    }
    stages["other (stats, bookkeeping)"] = wall - embed_s - sum(stages.values())
    return {"wall_s": wall, "embedding": [{"what": d["what"], "count": d["count"], "seconds": d["seconds"]}
                                          for _, d in embedding],
            "embedding_s": embed_s, "stages_s": stages, "memory": events[-1][1].memory,
            "stats": events[-1][1].data}


def _brief(data: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in data.items() if isinstance(v, (int, float, str)) and k != "path")


def time_graphs(memory: Any) -> dict[str, float]:
    out = {}
    for name in ("triple_graph", "cooccurrence_graph"):
        t0 = time.perf_counter()
        getattr(memory, name)
        out[name] = time.perf_counter() - t0
    return out


# ------------------------------------------------------------------ load (fresh process)
def load_child(path: str) -> None:
    """Run in a fresh interpreter: time imports, load, and each structure the first query builds."""
    t0 = time.perf_counter()
    from memrag.index import store
    from memrag.methods.ecphory import search as ecphory
    t_imports = time.perf_counter() - t0
    steps: dict[str, float] = {}

    def lap(name: str, fn: Any) -> Any:
        s = time.perf_counter()
        value = fn()
        steps[name] = time.perf_counter() - s
        return value

    m = lap("load", lambda: store.load(Path(path)))
    for kind in ("chunks", "entities", "engrams", "triples"):
        lap(f"faiss {kind}", lambda k=kind: m.index(k)._faiss())
    top, thr = m.params.get("coref_top", 5), m.params.get("coref_threshold", 0.8)
    lap("coreference sets", lambda: m.coref_sets(top, thr))
    lap("triple graph", lambda: m.triple_graph)
    lap("co-occurrence graph", lambda: m.cooccurrence_graph)
    lap("ecphory tables", lambda: ecphory._table(m))
    lap("fingerprint", m.fingerprint)
    print(json.dumps({"imports_s": t_imports, "steps_s": steps, "peak_rss_mib": C.peak_rss_mib()}))


def load_in_fresh_process(path: Path) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--_load-child", str(path)], capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"the load child failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ extraction with the embedded model
def run_extraction(files: dict[str, Path], n: int) -> dict[str, Any]:
    from memrag.config import Settings
    from memrag.index.extract import extract_chunk
    from memrag.llm.factory import make_llm

    llm, _ = make_llm(Settings(backend="embedded", response_cache=False))
    t0 = time.perf_counter()
    llm.inner.ensure_ready()  # type: ignore[attr-defined]
    ready_s = time.perf_counter() - t0
    corpus = json.loads(files["corpus"].read_text(encoding="utf-8"))
    rows = []
    for i, passage in enumerate(corpus[:n]):
        t0 = time.perf_counter()
        out = extract_chunk(llm, passage["title"], passage["text"])
        wall = time.perf_counter() - t0
        calls = out.calls
        rows.append({
            "passage": i, "title": passage["title"], "words": len(passage["text"].split()),
            "seconds": wall, "calls": len(calls),
            "prompt_tokens": sum(c.prompt_tokens or 0 for c in calls),
            "prompt_tokens_cached": sum(c.prompt_tokens_cached or 0 for c in calls),
            "completion_tokens": sum(c.completion_tokens or 0 for c in calls),
            "ok": out.error is None, "error": out.error,
            "entities": len(out.extraction.entities) if out.extraction else 0,
            "triples": len(out.extraction.triples) if out.extraction else 0,
        })
    return {"model_ready_s": ready_s, "chunks": rows}


# ------------------------------------------------------------------ extraction through llama.cpp's server
def run_server_extraction(files: dict[str, Path], n: int, slot_counts: list[int]) -> list[dict[str, Any]]:
    """Chunks per second through the OpenAI-compatible backend, one server per slot count.

    xllamacpp cannot stop a server, so each slot count gets its own in this process (the idle
    ones hold memory, not cores)."""
    from memrag.index.build import build_memory, run_build
    from memrag.config import IndexParams, Settings
    from memrag.embed import get_embedder
    from memrag.index.readers import Document
    from memrag.llm.cache import CachedLLM
    from memrag.llm.llamacpp_server import serve_gguf
    from memrag.llm.model_file import MODEL_FILE, ensure_model
    from memrag.llm.openai_backend import OpenAICompatibleLLM

    path = Settings().cache_dir / "models" / MODEL_FILE
    ensure_model(path)
    corpus = json.loads(files["corpus"].read_text(encoding="utf-8"))[:n]
    docs = [Document(f"p{i}", p["title"], p["text"], "musique", "benchmark") for i, p in enumerate(corpus)]
    rows = []
    for slots in slot_counts:
        with serve_gguf(path, slots=slots) as url:
            llm = OpenAICompatibleLLM(base_url=url)
            llm.check()
            t0 = time.perf_counter()
            memory = run_build(build_memory(None, docs, CachedLLM(llm, None), get_embedder(), IndexParams(),
                                            parallel=slots))
            wall = time.perf_counter() - t0
        failed = sum(1 for log in memory.extraction_log.values() if log.status != "ok")
        rows.append({"slots": slots, "chunks": len(docs), "seconds": wall,
                     "chunks_per_s": len(docs) / wall if wall else float("nan"), "failed": failed})
    return rows


# ------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help=f"import the first {C.QUICK_PASSAGES} passages only, extract 2 instead of 5")
    ap.add_argument("--passages", type=int, default=None, help="import the first N passages only")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--no-extract", action="store_true", help="skip the embedded-model extraction part")
    ap.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR, help="folder of the MuSiQue files")
    ap.add_argument("--work", type=Path, default=None, help="keep the memory in DIR/memory (default: temp)")
    ap.add_argument("--server-slots", default="",
                    help="also extract through llama.cpp's HTTP server with these slot counts, e.g. 1,2")
    ap.add_argument("--server-chunks", type=int, default=6, help="passages extracted per slot count (default 6)")
    ap.add_argument("--_load-child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._load_child:
        load_child(args._load_child)
        return 0

    files = C.data_files(args.data_dir)
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="memrag-index-bench-")
        work = Path(tmp.name)
    else:
        work = args.work
        work.mkdir(parents=True, exist_ok=True)
    log = (lambda *a: print(*a, file=sys.stderr, flush=True))
    try:
        return _run(args, files, work, log)
    except C.ForeignMemoryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if tmp is not None:
            tmp.cleanup()


def _run(args: argparse.Namespace, files: dict[str, Path], work: Path, log: Any) -> int:
    from memrag.index import store
    from memrag.embed import get_embedder

    t0 = time.perf_counter()
    embedder = get_embedder()
    embedder_load_s = time.perf_counter() - t0
    sl = C.corpus_slice(files, work, args.passages or (C.QUICK_PASSAGES if args.quick else None))
    path = sl.memory_dir(work)
    C.holds_bench_memory(path, sl.memory_name)  # raises for a memory no bench made; a bench one gets a new version
    log(f"importing {sl.label} into {path} …")
    imp = run_import(sl, path, embedder, log)
    memory = imp.pop("memory")
    graphs = time_graphs(memory)
    vdir = store.current_version_dir(path)
    size_mib = C.folder_mib(vdir)
    rss_after_import = C.peak_rss_mib()
    t0 = time.perf_counter()
    store.load(path, embedder.model_id)
    load_in_process_s = time.perf_counter() - t0
    log("loading it in a fresh process …")
    child = load_in_fresh_process(path)

    non_embed = imp["wall_s"] - imp["embedding_s"] + sum(graphs.values())
    ratio = non_embed / imp["embedding_s"] if imp["embedding_s"] else float("nan")
    load_s = child["steps_s"]["load"]
    ready_s = sum(child["steps_s"].values())

    tables: list[C.Table] = []
    t = C.Table(f"Import of {sl.label}: {imp['stats']['entities']} entities, "
                f"{imp['stats']['engrams']} engrams, {imp['stats']['triples']} triples",
                ["stage", "count", "seconds", "texts/s"])
    for e in imp["embedding"]:
        t.add(f"embedding {e['what']}", e["count"], e["seconds"],
              e["count"] / e["seconds"] if e["seconds"] else float("nan"))
    t.add("embedding, all", sum(e["count"] for e in imp["embedding"]), imp["embedding_s"], None)
    for name, s in imp["stages_s"].items():
        t.add(name, None, s, None)
    for name, s in graphs.items():
        t.add(f"build {name}", None, s, None)
    t.add("not embedding, all", None, non_embed, None)
    t.add("import wall (incl. embedding)", None, imp["wall_s"], None)
    tables.append(t)

    t = C.Table("Entity names after the clean-up (memrag.index.cleanup)", ["figure", "value"])
    for name, v in (imp["stats"].get("names") or {}).items():
        t.add(name, v)
    for name, v in (imp["stats"].get("cleanup") or {}).items():
        t.add(f"clean-up: {name}", v)
    tables.append(t)

    t = C.Table("Saved memory, opened in a fresh process", ["step", "seconds"])
    t.add("python imports (memrag, faiss, networkx)", child["imports_s"])
    for name, s in child["steps_s"].items():
        t.add(name, s)
    t.add("load + query-ready, all", ready_s)
    t.add("load in this process (for comparison)", load_in_process_s)
    tables.append(t)

    t = C.Table("Targets", ["figure", "value", "target", "verdict"])
    t.add("not embedding / embedding", f"{ratio:.0%}", f"<= {NON_EMBEDDING_TARGET:.0%}",
          C.verdict(ratio <= NON_EMBEDDING_TARGET))
    t.add("load seconds (fresh process)", load_s, f"< {LOAD_TARGET_S}", C.verdict(load_s < LOAD_TARGET_S))
    tables.append(t)

    notes = [f"folder size: {size_mib:.1f} MiB ({vdir})",
             f"peak RSS: import process {rss_after_import:.0f} MiB (embedder included), "
             f"fresh load process {child['peak_rss_mib']:.0f} MiB",
             f"embedder load: {embedder_load_s:.1f} s (not counted above)"]

    if not sl.full:
        notes.insert(0, C.slice_note(sl))
    result: dict[str, Any] = {
        "passages": sl.passages, "full_corpus": sl.full, "import": imp, "graphs_s": graphs,
        "non_embedding_s": non_embed, "non_embedding_ratio": ratio,
        "folder_mib": size_mib, "peak_rss_mib_import": rss_after_import, "fresh_load": child,
        "load_in_process_s": load_in_process_s, "embedder_load_s": embedder_load_s,
        "targets": {"non_embedding_ratio": {"value": ratio, "max": NON_EMBEDDING_TARGET,
                                            "ok": ratio <= NON_EMBEDDING_TARGET},
                    "load_s": {"value": load_s, "max": LOAD_TARGET_S, "ok": load_s < LOAD_TARGET_S}},
    }

    if not args.no_extract:
        n = 2 if args.quick else 5
        log(f"extracting {n} passages with the embedded model …")
        ex = run_extraction(files, n)
        result["extraction"] = ex
        t = C.Table(f"Extraction with the embedded model (model ready in {ex['model_ready_s']:.1f} s)",
                    ["passage", "words", "calls", "prompt tok", "cached tok", "completion tok", "seconds",
                     "completion tok/s", "ok"])
        for r in ex["chunks"]:
            t.add(r["title"][:40], r["words"], r["calls"], r["prompt_tokens"], r["prompt_tokens_cached"],
                  r["completion_tokens"], r["seconds"],
                  r["completion_tokens"] / r["seconds"] if r["seconds"] else float("nan"),
                  "yes" if r["ok"] else f"no: {r['error'][:40]}")
        rows = ex["chunks"]
        t.add("mean", sum(r["words"] for r in rows) / len(rows),
              sum(r["calls"] for r in rows) / len(rows), sum(r["prompt_tokens"] for r in rows) / len(rows),
              sum(r["prompt_tokens_cached"] for r in rows) / len(rows),
              sum(r["completion_tokens"] for r in rows) / len(rows), sum(r["seconds"] for r in rows) / len(rows),
              None, f"{sum(r['ok'] for r in rows)}/{len(rows)}")
        tables.append(t)
        notes.append(f"peak RSS with the embedded model loaded: {C.peak_rss_mib():.0f} MiB")

    if args.server_slots:
        slot_counts = [int(s) for s in args.server_slots.split(",") if s.strip()]
        log(f"extracting {args.server_chunks} passages through llama.cpp's server with {slot_counts} slots …")
        rows = run_server_extraction(files, args.server_chunks, slot_counts)
        result["server_extraction"] = rows
        t = C.Table("Extraction through llama.cpp's OpenAI-compatible server (requests in flight = slots)",
                    ["slots", "chunks", "seconds", "chunks/s", "failed"])
        for r in rows:
            t.add(r["slots"], r["chunks"], r["seconds"], r["chunks_per_s"], r["failed"])
        tables.append(t)

    C.emit(args, result, tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
