"""Query cost on the 1,890-passage MuSiQue memory imported from the OpenIE file.

    python bench/retrieval_bench.py [--quick] [--json] [--no-llm] [--profile] [--passages N]
                                    [--questions N] [--data-dir DIR] [--work DIR]

Part 1, our code only: each method's `retrieve` on the first 30 MuSiQue questions,
driven by a scripted LLM with a fixed policy, so the time outside LLM calls is
memrag's own work (question / entity / goal embeddings included, and shown
separately). One warm-up query per method (a question outside the
timed set) builds the lazy indices and graphs first and is reported apart.
Targets (median): dense < 20 ms, NeuroPath < 100 ms, EcphoryRAG < 50 ms, HippoRAG 2 < 100 ms
(its retrieval-only variant; its graph is built by the warm-up query, outside the figures).

The fixed policy: query entities = the capitalised spans of the question;
NeuroPath tracking keeps paths 1-3, expands 1-2, continues after hop 1 and stops
after hop 2, with a fixed requirement; the answer is always "x".

Part 2, the embedded model (skip with --no-llm): 5 real questions (--quick: 2)
through `memrag.ask.ask` for dense, NeuroPath, EcphoryRAG and HippoRAG 2, response cache off:
prompt / completion tokens, LLM calls and seconds per method. The shared
query-entity call is billed to each method that uses it, as the traces record.
Target: NeuroPath ≤ 3,000 prompt + completion tokens per query, answer included.

--quick: the first 150 passages only (a check that the script runs, not figures
to compare with the targets), 10 timed questions, 2 real ones. The memory is
cached in DIR/memory (DIR/memory-first150 with --quick; default DIR: a temporary
folder); a memory left there by `bench/index_bench.py --work DIR` is reused.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import importlib.util
import io
import pstats
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C
from memrag.methods.neuropath.detail import NeuroPathDetail

METHODS = ("dense", "neuropath", "ecphory", "hipporag2")
TARGET_MS = {"dense": 20.0, "neuropath": 100.0, "ecphory": 50.0, "hipporag2": 100.0}
# Part 1 times HippoRAG 2's retrieval-only variant (no recognition call): the graph search is its own
# work; the recognition call is one LLM call that part 2 measures.
TIMED_PARAMS = {"hipporag2": {"recognition": False}}
NEUROPATH_TOKEN_TARGET = 3000
FIXED_REQUIREMENT = "the fact that links the named entity to the answer"

# Capitalised words that start questions rather than name things.
_NOT_NAMES = {"who", "what", "when", "where", "which", "why", "how", "whose", "whom", "in", "on", "at",
              "the", "a", "an", "is", "was", "are", "were", "did", "does", "do", "of", "for", "from",
              "by", "to", "after", "before", "during", "since", "as", "with", "and", "or"}
_SPAN = re.compile(r"[A-Z0-9][\w'’.-]*(?:\s+(?:of|the|de|and|&)?\s*[A-Z0-9][\w'’.-]*)*")


def capitalised_spans(question: str) -> list[str]:
    """The fixed query-entity rule: runs of capitalised words (with 'of'/'the' inside), question
    words dropped from the front."""
    out: list[str] = []
    for span in _SPAN.findall(question):
        words = re.sub(r"['’]s$", "", span.rstrip(".,?")).split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        name = " ".join(words)
        if name and name not in out:
            out.append(name)
    return out


def _scripted_class() -> type:
    """tests/scripted.py's ScriptedLLM, loaded by path (a 'tests' package elsewhere cannot shadow it)."""
    spec = importlib.util.spec_from_file_location("memrag_bench_scripted", C.REPO / "tests" / "scripted.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ScriptedLLM


def fixed_policy_llm() -> Any:
    """A ScriptedLLM with the fixed policy that also measures the wall time spent inside it."""
    Scripted = _scripted_class()

    def entities(messages: list[dict[str, str]], stage: str) -> dict[str, Any]:
        return {"entities": capitalised_spans(messages[-1]["content"])}

    def track(messages: list[dict[str, str]], stage: str) -> dict[str, Any]:
        hop = int(stage.rsplit("hop", 1)[-1])
        return {"reasoning_chain": "The listed paths connect the question's entities.",
                "valid_ids": [1, 2, 3], "expansion_requirement": FIXED_REQUIREMENT,
                "expand_ids": [1, 2], "continue": 1 if hop == 1 else 0}

    def answer(messages: list[dict[str, str]], stage: str) -> dict[str, Any]:
        return {"answer": "x", "reasoning": "", "cited": [1]}

    class TimedScripted(Scripted):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__({"query.entities": entities, "neuropath.track": track, "answer": answer})
            self.seconds = 0.0

        def complete(self, messages, *, schema=None, max_tokens, stage):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            try:
                return super().complete(messages, schema=schema, max_tokens=max_tokens, stage=stage)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls.clear()  # keep no history: the benchmark runs many queries

    return TimedScripted()


class TimedEmbedder:
    """Passes encode() through, adding up its wall time (the query-side embeddings)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.seconds, self.texts = 0.0, 0

    def encode(self, texts: list[str], batch_size: int = 64) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts, batch_size)
        finally:
            self.seconds += time.perf_counter() - t0
            self.texts += len(texts)


# ------------------------------------------------------------------ part 1: our code only
def time_methods(memory: Any, embedder: Any, questions: list[str], warmup: str,
                 profile: bool) -> dict[str, Any]:
    from memrag.ask import make_stamp, resolve_params
    from memrag.methods.base import QueryContext

    retrievers = {m: importlib.import_module(f"memrag.methods.{m}").retrieve for m in METHODS}

    llm = fixed_policy_llm()
    emb = TimedEmbedder(embedder)
    stamp = make_stamp(memory, llm, emb)
    profilers = {m: cProfile.Profile() for m in METHODS} if profile else {}

    def one(method: str, q: str, prof: cProfile.Profile | None = None) -> dict[str, Any]:
        llm.seconds, emb.seconds, emb.texts = 0.0, 0.0, 0
        p = resolve_params(method, TIMED_PARAMS.get(method))
        if prof:
            prof.enable()
        t0 = time.perf_counter()
        ctx = QueryContext(memory, llm, emb, q, stamp)
        trace = retrievers[method](ctx, p)
        wall = time.perf_counter() - t0
        if prof:
            prof.disable()
        return {"wall_s": wall, "llm_s": llm.seconds, "embed_s": emb.seconds, "embedded_texts": emb.texts,
                "ours_s": wall - llm.seconds, "llm_calls": len(trace.llm_calls), "flags": list(trace.flags),
                "hops": len(d.hops) if (d := trace.detail(NeuroPathDetail)) else None}

    warm = {m: one(m, warmup) for m in METHODS}
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in METHODS}
    for q in questions:  # methods interleaved per question, so machine noise hits all of them
        for m in METHODS:
            runs[m].append(one(m, q))
    for q in questions if profile else []:  # a separate pass: the profiler slows what it watches
        for m in METHODS:
            one(m, q, profilers[m])
    out: dict[str, Any] = {"warmup": warm, "runs": runs, "summary": {}}
    for m in METHODS:
        ours = [r["ours_s"] * 1000 for r in runs[m]]
        med = C.median(ours)
        out["summary"][m] = {
            "median_ms": med, "p90_ms": C.percentile(ours, 90), "max_ms": max(ours),
            "median_embed_ms": C.median(r["embed_s"] * 1000 for r in runs[m]),
            "median_not_embed_ms": C.median((r["ours_s"] - r["embed_s"]) * 1000 for r in runs[m]),
            "median_llm_ms": C.median(r["llm_s"] * 1000 for r in runs[m]),
            "mean_llm_calls": sum(r["llm_calls"] for r in runs[m]) / len(runs[m]),
            "mean_embedded_texts": sum(r["embedded_texts"] for r in runs[m]) / len(runs[m]),
            "fallbacks": sum(any(f.startswith("fallback") for f in r["flags"]) for r in runs[m]),
            "target_ms": TARGET_MS[m], "ok": med < TARGET_MS[m],
        }
    if profile:
        out["profiles"] = {}
        for m, prof in profilers.items():
            buf = io.StringIO()
            # the 25 functions with the most own time, libraries included (torch, faiss show up)
            pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
            out["profiles"][m] = buf.getvalue()
    return out


# ------------------------------------------------------------------ part 2: the embedded model
def real_questions(memory: Any, embedder: Any, records: list[dict[str, Any]]) -> dict[str, Any]:
    from memrag.ask import ask
    from memrag.config import Settings
    from memrag.llm.factory import make_llm

    llm, _ = make_llm(Settings(backend="embedded", response_cache=False))
    t0 = time.perf_counter()
    llm.inner.ensure_ready()  # type: ignore[attr-defined]
    ready_s = time.perf_counter() - t0
    rows = []
    for rec in records:
        traces = ask(memory, rec["question"], llm=llm, embedder=embedder, methods=list(METHODS))
        for t in traces:
            calls = t.llm_calls
            rows.append({
                "question": rec["question"], "gold": rec.get("answer"), "method": t.method,
                "answer": t.answer.answer if t.answer else "", "llm_calls": len(calls),
                "prompt_tokens": sum(c.prompt_tokens or 0 for c in calls),
                "prompt_tokens_cached": sum(c.prompt_tokens_cached or 0 for c in calls),
                "completion_tokens": sum(c.completion_tokens or 0 for c in calls),
                "llm_s": sum(c.seconds for c in calls), "wall_s": t.seconds,
                "retrieval_s": t.retrieval_seconds,
                "stages": [c.stage for c in calls],
            })
    summary = {}
    for m in METHODS:
        mine = [r for r in rows if r["method"] == m]
        totals = [r["prompt_tokens"] + r["completion_tokens"] for r in mine]
        summary[m] = {
            "mean_prompt_tokens": sum(r["prompt_tokens"] for r in mine) / len(mine),
            "mean_completion_tokens": sum(r["completion_tokens"] for r in mine) / len(mine),
            "mean_total_tokens": sum(totals) / len(totals), "max_total_tokens": max(totals),
            "mean_llm_calls": sum(r["llm_calls"] for r in mine) / len(mine),
            "mean_llm_s": sum(r["llm_s"] for r in mine) / len(mine),
            "mean_wall_s": sum(r["wall_s"] for r in mine) / len(mine),
        }
    np_max = summary["neuropath"]["max_total_tokens"]
    return {"model_ready_s": ready_s, "rows": rows, "summary": summary,
            "neuropath_target": {"max_total_tokens": np_max, "target": NEUROPATH_TOKEN_TARGET,
                                 "ok": np_max <= NEUROPATH_TOKEN_TARGET}}


# ------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help=f"the first {C.QUICK_PASSAGES} passages only, 10 timed questions, 2 real ones")
    ap.add_argument("--passages", type=int, default=None, help="import the first N passages only")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--no-llm", action="store_true", help="skip the embedded-model part")
    ap.add_argument("--profile", action="store_true",
                    help="then cProfile each method in a second pass over the same questions")
    ap.add_argument("--questions", type=int, default=None, help="timed questions (default 30, quick 10)")
    ap.add_argument("--data-dir", type=Path, default=C.DEFAULT_DATA_DIR, help="folder of the MuSiQue files")
    ap.add_argument("--work", type=Path, default=None, help="cache the memory in DIR/memory (default: temp)")
    args = ap.parse_args()

    files = C.data_files(args.data_dir)
    tmp = None
    if args.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="memrag-retrieval-bench-")
        work = Path(tmp.name)
    else:
        work = args.work
        work.mkdir(parents=True, exist_ok=True)
    try:
        return _run(args, files, work)
    except C.ForeignMemoryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        if tmp is not None:
            tmp.cleanup()


def _run(args: argparse.Namespace, files: dict[str, Path], work: Path) -> int:
    from memrag.embed import get_embedder

    log = (lambda *a: print(*a, file=sys.stderr, flush=True))
    embedder = get_embedder()
    t0 = time.perf_counter()
    sl = C.corpus_slice(files, work, args.passages or (C.QUICK_PASSAGES if args.quick else None))
    memory, built = C.cached_memory(sl, work, embedder, log)
    memory_s = time.perf_counter() - t0
    records = C.questions(files)
    n = args.questions or (10 if args.quick else 30)
    if n >= len(records):
        raise SystemExit(f"--questions must be below {len(records)} (one question is kept for the warm-up)")
    timed = [r["question"] for r in records[:n]]
    log(f"timing {len(METHODS)} methods on {n} questions …")
    part1 = time_methods(memory, embedder, timed, records[-1]["question"], args.profile)

    tables = []
    t = C.Table(f"Retrieval outside LLM calls, {n} MuSiQue questions over {sl.label} "
                f"(scripted fixed-policy LLM), ms",
                ["method", "median", "p90", "max", "embed (med)", "rest (med)", "warm-up", "LLM calls",
                 "fallbacks", "target", "verdict"])
    for m in METHODS:
        s = part1["summary"][m]
        t.add(m, s["median_ms"], s["p90_ms"], s["max_ms"], s["median_embed_ms"], s["median_not_embed_ms"],
              part1["warmup"][m]["ours_s"] * 1000, s["mean_llm_calls"], s["fallbacks"],
              f"< {s['target_ms']:.0f}", C.verdict(s["ok"]))
    tables.append(t)
    notes = [f"memory: {len(memory.chunks)} chunks, {len(memory.entities)} entities, "
             f"{len(memory.engrams)} engrams, {len(memory.triples)} triples "
             f"({'imported' if built else 'loaded'} in {memory_s:.1f} s)",
             "embed = question / entity / goal embeddings inside retrieve; rest = everything else of ours; "
             "warm-up = first query per method (builds lazy indices and graphs), not in the figures."]
    if not sl.full:
        notes.insert(0, C.slice_note(sl))
    result: dict[str, Any] = {"passages": sl.passages, "full_corpus": sl.full, "questions": n, "retrieval": part1,
                              "memory_seconds": memory_s, "memory_built": built}

    if not args.no_llm:
        k = 2 if args.quick else 5
        log(f"asking {k} real questions with the embedded model …")
        part2 = real_questions(memory, embedder, records[:k])
        result["embedded"] = part2
        t = C.Table(f"Embedded model, {k} MuSiQue questions, per query (mean; model ready in "
                    f"{part2['model_ready_s']:.1f} s)",
                    ["method", "prompt tok", "completion tok", "total tok", "max total", "LLM calls", "LLM s",
                     "wall s"])
        for m in METHODS:
            s = part2["summary"][m]
            t.add(m, s["mean_prompt_tokens"], s["mean_completion_tokens"], s["mean_total_tokens"],
                  s["max_total_tokens"], s["mean_llm_calls"], s["mean_llm_s"], s["mean_wall_s"])
        tables.append(t)
        t = C.Table("Per question", ["question", "method", "answer", "gold", "tokens", "calls", "wall s"])
        for r in part2["rows"]:
            t.add(r["question"][:48], r["method"], r["answer"][:24], str(r["gold"])[:24],
                  r["prompt_tokens"] + r["completion_tokens"], r["llm_calls"], r["wall_s"])
        tables.append(t)
        tgt = part2["neuropath_target"]
        notes.append(f"NeuroPath tokens per query: max {tgt['max_total_tokens']} vs target <= {tgt['target']}: "
                     f"{C.verdict(tgt['ok'])}")

    C.emit(args, result, tables, notes)
    if args.profile and not args.json:
        for m, text in part1["profiles"].items():
            print(f"\n=== cProfile, {m}: top 25 functions by own time ===\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
