"""LLM-side costs: memrag's embedded backend vs xllamacpp called directly, prefix reuse,
response-cache hits, and the embedder's throughput.

    python bench/llm_bench.py [--quick] [--json] [--no-llm]

1. Generation (embedded model): the same prompt sent through memrag
   (`make_llm(...).complete`, response cache off) and straight to the engine
   (`_engine.server.handle_chat_completions` with the very request memrag
   builds, captured on the first call), alternating A B A B … so machine noise
   hits both. Reports llama.cpp's generation tokens/s (`predicted_per_second`),
   wall tokens/s (completion tokens / call seconds) and memrag/direct ratios.
   Target: memrag within 10% of direct.
2. Prefix reuse (embedded model): ten calls sharing a ~600-token system prompt
   that differ only in the last user line, then ten whose system prompt starts
   with a distinct nonce (nothing reusable). Total seconds and cached prompt tokens.
3. Response-cache hits: CachedLLM over a ResponseCache in a temp folder,
   median / p95 of 200 hits of an answer-sized prompt. Target < 5 ms.
4. Embedder: texts/s for short (entity names), medium (~40 words) and long
   (~200 words) texts, batch 64 (texts cut from sample_corpus/).

--no-llm skips parts 1 and 2 (nothing loads the model). --quick makes fewer
calls with fewer tokens.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as C

RATIO_TARGET = 0.90
CACHE_HIT_TARGET_MS = 5.0
GENERATE_MESSAGES = [{"role": "user", "content": (
    "Write a long, detailed story about a lighthouse keeper on a stormy northern coast who finds a "
    "message in a bottle. Describe the weather, the lighthouse, the keeper's daily routine and the "
    "message. At least 600 words.")}]


# ------------------------------------------------------------------ shared bits
def timed_complete(llm: Any, messages: list[dict[str, str]], max_tokens: int, stage: str) -> tuple[Any, float]:
    """One memrag call; a reply cut at max_tokens (expected here) still carries its counts."""
    from memrag.llm.base import LLMReplyError

    t0 = time.perf_counter()
    try:
        c = llm.complete(messages, max_tokens=max_tokens, stage=stage)
    except LLMReplyError as e:
        if e.completion is None:
            raise
        c = e.completion
    return c, time.perf_counter() - t0


def envelope(reply: Any) -> dict[str, Any]:
    return json.loads(reply) if isinstance(reply, str) else reply


class _RequestRecorder:
    """Stands in for the engine's server for one call, keeping the request memrag sends."""

    def __init__(self, server: Any) -> None:
        self.server, self.request = server, None

    def handle_chat_completions(self, request: dict[str, Any]) -> Any:
        self.request = copy.deepcopy(request)
        return self.server.handle_chat_completions(request)


def embedded_llm() -> tuple[Any, float]:
    from memrag.config import Settings
    from memrag.llm.factory import make_llm

    llm, _ = make_llm(Settings(backend="embedded", response_cache=False))
    t0 = time.perf_counter()
    llm.inner.ensure_ready()  # type: ignore[attr-defined]
    return llm, time.perf_counter() - t0


# ------------------------------------------------------------------ 1. generation
def generation(llm: Any, max_tokens: int, pairs: int) -> dict[str, Any]:
    from memrag.llm import embedded

    engine = embedded._engine
    assert engine is not None
    server = engine.server
    recorder = _RequestRecorder(server)
    engine.server = recorder
    try:
        timed_complete(llm, GENERATE_MESSAGES, max_tokens, "bench.generate")  # also the warm-up
    finally:
        engine.server = server
    request = recorder.request
    assert request is not None

    def via_memrag() -> dict[str, Any]:
        c, wall = timed_complete(llm, GENERATE_MESSAGES, max_tokens, "bench.generate")
        return _gen_row(envelope(c.raw), c.completion_tokens, wall)

    def direct() -> dict[str, Any]:
        t0 = time.perf_counter()
        reply = envelope(server.handle_chat_completions(copy.deepcopy(request)))
        wall = time.perf_counter() - t0
        return _gen_row(reply, (reply.get("usage") or {}).get("completion_tokens"), wall)

    direct()  # warm-up of the direct path too
    rows: dict[str, list[dict[str, Any]]] = {"memrag": [], "direct": []}
    for _ in range(pairs):
        rows["direct"].append(direct())
        rows["memrag"].append(via_memrag())
    summary = {}
    for path, rs in rows.items():
        summary[path] = {"gen_tok_s": C.median(r["gen_tok_s"] for r in rs),
                         "wall_tok_s": C.median(r["wall_tok_s"] for r in rs),
                         "completion_tokens": C.median(r["completion_tokens"] for r in rs),
                         "wall_s": C.median(r["wall_s"] for r in rs),
                         "prompt_ms": C.median(r["prompt_ms"] for r in rs)}
    ratios = {k: summary["memrag"][k] / summary["direct"][k] for k in ("gen_tok_s", "wall_tok_s")}
    return {"request": {k: v for k, v in request.items() if k != "messages"}, "rows": rows,
            "summary": summary, "ratios": ratios,
            "ok": all(r >= RATIO_TARGET for r in ratios.values())}


def _gen_row(reply: dict[str, Any], completion_tokens: int | None, wall: float) -> dict[str, Any]:
    t = reply.get("timings") or {}
    n = completion_tokens or 0
    return {"completion_tokens": n, "wall_s": wall, "wall_tok_s": n / wall if wall else float("nan"),
            "gen_tok_s": float(t.get("predicted_per_second", float("nan"))),
            "prompt_ms": float(t.get("prompt_ms", float("nan"))), "cache_n": t.get("cache_n")}


# ------------------------------------------------------------------ 2. prefix reuse
_THINGS = ["person", "place", "company", "ship", "battle", "book", "river", "railway", "prize", "building"]
_ATTRS = ["full name", "date of founding", "location", "owner", "founder", "successor", "official title",
          "year of closure"]


def long_system_prompt() -> str:
    """A deterministic instruction block of roughly 600 tokens."""
    lines = ["You are a careful archivist who answers questions about a collection of regional records. "
             "Follow these rules in every reply:"]
    for i in range(17):
        thing, attr, other = _THINGS[i % 10], _ATTRS[i % 8], _THINGS[(i * 3 + 1) % 10]
        lines.append(f"{i + 1}. When a record names a {thing}, note its {attr} exactly as written and "
                     f"say which {other} it is connected to, if the record says so.")
    lines.append("Answer in at most ten words.")
    return "\n".join(lines)


def prefix_reuse(llm: Any, calls: int, max_tokens: int) -> dict[str, Any]:
    system = long_system_prompt()

    def run(nonce: bool) -> dict[str, Any]:
        total, rows = 0.0, []
        for i in range(calls):
            head = f"[request {time.time_ns()}-{i}]\n" if nonce else ""
            msgs = [{"role": "system", "content": head + system},
                    {"role": "user", "content": f"Which details does rule {i + 1} ask for?"}]
            c, wall = timed_complete(llm, msgs, max_tokens, "bench.prefix")
            total += wall
            rows.append({"seconds": wall, "prompt_tokens": c.prompt_tokens, "cached": c.prompt_tokens_cached or 0})
        return {"seconds": total, "calls": rows, "prompt_tokens": sum(r["prompt_tokens"] or 0 for r in rows),
                "cached_tokens": sum(r["cached"] for r in rows)}

    without = run(nonce=True)
    with_reuse = run(nonce=False)
    return {"without_reuse": without, "with_reuse": with_reuse,
            "speedup": without["seconds"] / with_reuse["seconds"] if with_reuse["seconds"] else float("nan"),
            "system_prompt_tokens": with_reuse["calls"][0]["prompt_tokens"]}


# ------------------------------------------------------------------ 3. cache hits
class _FixedLLM:
    """A backend that answers once; every later call must come from the cache."""
    backend, model = "fixed", "fixed-1"

    def __init__(self) -> None:
        self.calls = 0

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model}

    def complete(self, messages, *, schema=None, max_tokens, stage):  # type: ignore[no-untyped-def]
        from memrag.llm.base import Completion

        self.calls += 1
        return Completion(text='{"answer": "x", "reasoning": "", "cited": [1]}', prompt_tokens=900,
                          prompt_tokens_cached=0, completion_tokens=20, seconds=1.0, cached=False,
                          model=self.model, backend=self.backend, stage=stage)


def cache_hits(n: int) -> dict[str, Any]:
    from memrag import prompts
    from memrag.llm.cache import CachedLLM, ResponseCache

    words = corpus_words()
    passages = [(f"Passage {i}", " ".join(words[i * 120:(i + 1) * 120])) for i in range(5)]
    msgs = prompts.answer_messages("Which company built the railway to the harbour town?", passages)
    with tempfile.TemporaryDirectory(prefix="memrag-llm-bench-") as tmp:
        inner = _FixedLLM()
        llm = CachedLLM(inner, ResponseCache(Path(tmp) / "llm_cache.sqlite"))
        llm.complete(msgs, schema=prompts.ANSWER_SCHEMA, max_tokens=200, stage="answer")  # the one miss
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            c = llm.complete(msgs, schema=prompts.ANSWER_SCHEMA, max_tokens=200, stage="answer")
            times.append((time.perf_counter() - t0) * 1000)
            if not c.cached or inner.calls != 1:
                raise RuntimeError("a repeated call missed the response cache: the figures would be wrong")
    med = C.median(times)
    return {"hits": n, "prompt_chars": sum(len(m["content"]) for m in msgs), "median_ms": med,
            "p95_ms": C.percentile(times, 95), "max_ms": max(times), "ok": med < CACHE_HIT_TARGET_MS}


# ------------------------------------------------------------------ 4. embedder
def corpus_words() -> list[str]:
    docs = sorted((C.REPO / "sample_corpus" / "docs").glob("*.md"))
    text = " ".join(p.read_text(encoding="utf-8") for p in docs)
    return re.sub(r"[#*_`>|]", " ", text).split()


def embed_texts(n_short: int, n_medium: int, n_long: int) -> dict[str, list[str]]:
    words = corpus_words()
    names = sorted(set(re.findall(r"[A-Z][a-z]+(?: [A-Z][a-z]+)*", " ".join(words))))

    def windows(size: int, n: int) -> list[str]:
        step = max(1, (len(words) - size) // n)
        return [" ".join(words[(i * step) % (len(words) - size):][:size]) for i in range(n)]
    return {"short (entity names)": [names[i % len(names)] for i in range(n_short)],
            "medium (~40 words)": windows(40, n_medium), "long (~200 words)": windows(200, n_long)}


def embedder_speed(sizes: tuple[int, int, int]) -> dict[str, Any]:
    from memrag.embed import get_embedder

    t0 = time.perf_counter()
    emb = get_embedder()
    load_s = time.perf_counter() - t0
    sets = embed_texts(*sizes)
    emb.encode(sets["medium (~40 words)"][:64])  # warm-up
    out = {}
    for name, texts in sets.items():
        t0 = time.perf_counter()
        emb.encode(texts, batch_size=64)
        s = time.perf_counter() - t0
        out[name] = {"texts": len(texts), "seconds": s, "texts_per_s": len(texts) / s,
                     "mean_words": sum(len(t.split()) for t in texts) / len(texts)}
    return {"model": emb.model_id, "load_s": load_s, "sets": out}


# ------------------------------------------------------------------ main
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer calls, fewer tokens")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--no-llm", action="store_true", help="skip the parts that load the embedded model")
    args = ap.parse_args()
    log = (lambda *a: print(*a, file=sys.stderr, flush=True))
    q = args.quick
    result: dict[str, Any] = {}
    tables: list[C.Table] = []
    notes: list[str] = []

    if not args.no_llm:
        log("loading the embedded model …")
        llm, ready_s = embedded_llm()
        result["model_ready_s"] = ready_s
        log("generation: memrag vs direct …")
        gen = generation(llm, max_tokens=64 if q else 256, pairs=2 if q else 5)
        result["generation"] = gen
        t = C.Table(f"Generation, same prompt, alternating direct/memrag (median of {2 if q else 5} each; "
                    f"model ready in {ready_s:.1f} s)",
                    ["path", "completion tok", "gen tok/s (llama.cpp)", "wall tok/s", "wall s", "prompt ms"])
        for path in ("direct", "memrag"):
            s = gen["summary"][path]
            t.add(path, s["completion_tokens"], s["gen_tok_s"], s["wall_tok_s"], s["wall_s"], s["prompt_ms"])
        t.add("memrag / direct", None, f"{gen['ratios']['gen_tok_s']:.3f}", f"{gen['ratios']['wall_tok_s']:.3f}",
              None, None)
        tables.append(t)
        notes.append(f"generation through memrag within 10% of direct (ratios >= {RATIO_TARGET}): "
                     f"{C.verdict(gen['ok'])}")

        log("prefix reuse …")
        pre = prefix_reuse(llm, calls=4 if q else 10, max_tokens=8 if q else 16)
        result["prefix_reuse"] = pre
        n = len(pre["with_reuse"]["calls"])
        t = C.Table(f"{n} calls sharing a {pre['system_prompt_tokens']}-token prompt prefix",
                    ["run", "total s", "s / call", "prompt tok", "cached tok"])
        for name, key in (("without reuse (nonce first)", "without_reuse"), ("with reuse", "with_reuse")):
            r = pre[key]
            t.add(name, r["seconds"], r["seconds"] / n, r["prompt_tokens"], r["cached_tokens"])
        t.add("speedup", f"{pre['speedup']:.2f}x", None, None, None)
        tables.append(t)

    log("response-cache hits …")
    hits = cache_hits(50 if q else 200)
    result["cache_hits"] = hits
    t = C.Table(f"Response-cache hits ({hits['hits']} hits, {hits['prompt_chars']}-char answer prompt), ms",
                ["median", "p95", "max", "target", "verdict"])
    t.add(hits["median_ms"], hits["p95_ms"], hits["max_ms"], f"< {CACHE_HIT_TARGET_MS}", C.verdict(hits["ok"]))
    tables.append(t)

    log("embedder throughput …")
    emb = embedder_speed((512, 128, 32) if q else (2048, 512, 128))
    result["embedder"] = emb
    t = C.Table(f"Embedder {emb['model']} (batch 64; loaded in {emb['load_s']:.1f} s)",
                ["texts", "count", "mean words", "seconds", "texts/s"])
    for name, s in emb["sets"].items():
        t.add(name, s["texts"], s["mean_words"], s["seconds"], s["texts_per_s"])
    tables.append(t)

    C.emit(args, result, tables, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
