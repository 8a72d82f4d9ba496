"""python -m memrag ask --memory DIR "question" [--method neuropath|ecphory|dense|all] [--json] [--out FILE] [--live]
   python -m memrag ask --open FILE [--json]"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from memrag.methods import registry
from memrag.cli.common import add_backend_args, json_params, settings_from
from memrag.durable import write_atomic
from memrag.trace import token_sum
from memrag.tracefile import traces_json


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("ask", help="ask a memory a question with one or all methods, or show a traces file")
    p.add_argument("question", nargs="?", help="the question (not with --open)")
    p.add_argument("--memory", type=Path, help="memory folder (needed unless --open)")
    p.add_argument("--method", default="all", choices=[*registry.names(), "all"])
    p.add_argument("--live", action="store_true",
                   help="run on the current backend even when the memory ships recordings of this question")
    p.add_argument("--params", default="{}", help='JSON: {"neuropath": {"max_hops": 3}, ...}')
    p.add_argument("--json", action="store_true",
                   help='print the traces file ({"memrag": "traces", ...}; the Ask page opens it)')
    p.add_argument("--out", type=Path, help="also write the traces file here")
    p.add_argument("--open", type=Path, metavar="FILE",
                   help="show a traces file (from --out, the Ask page or an evaluation line) instead of asking")
    add_backend_args(p)
    return {"ask": cmd_ask}


def summarise(trace) -> dict:
    calls = trace.llm_calls

    def total(attr):
        return token_sum(getattr(c, attr) for c in calls)
    return {
        "method": trace.method,
        "answer": trace.answer.answer if trace.answer else None,
        "chunks": [{"rank": r.rank, "chunk_id": r.chunk_id, "title": trace.chunk(r.chunk_id).title
                    if trace.chunk(r.chunk_id) else "", "source": r.source, "why": r.why}
                   for r in trace.ranked[:10]],
        "tokens": {"prompt": total("prompt_tokens"), "completion": total("completion_tokens"),
                   "llm_calls": len(calls), "recorded": all(c.cached for c in calls) and bool(calls)},
        "seconds": round(trace.seconds, 3),
        "recorded_seconds": round(sum(c.seconds for c in calls), 3),
    }


def _print(traces: list, summaries: list[dict]) -> None:
    for t, s in zip(traces, summaries):
        print(f"== {t.method}: {s['answer']!r}")
        for c in s["chunks"][:5]:
            print(f"   {c['rank'] + 1}. {c['title']}  [{c['source']}] {c['why'][:80]}")
        tok = s["tokens"]
        print(f"   {tok['prompt']} prompt + {tok['completion']} completion tokens, {tok['llm_calls']} LLM calls"
              f"{' (recorded)' if tok['recorded'] else ''}, {s['seconds']} s")
        for f in t.flags:
            print(f"   note: {f}")


def _open(args: argparse.Namespace) -> int:
    from memrag.filesafe import UnreadableFile, read_bytes
    from memrag.tracefile import MAX_TRACE_BYTES, read_traces

    try:
        traces, meta = read_traces(read_bytes(args.open, MAX_TRACE_BYTES, what="traces file"))
    except UnreadableFile as e:  # its message names the file
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {args.open}: {e}", file=sys.stderr)
        return 1
    summaries = [summarise(t) for t in traces]
    if args.json:
        print(traces_json(traces, meta, summaries=summaries))
    else:
        print(f"question: {traces[0].question}")
        _print(traces, summaries)
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    if args.open is not None:
        if args.question or args.memory:
            print("error: --open shows a file; give it without a question or --memory", file=sys.stderr)
            return 2
        return _open(args)
    if not args.question or args.memory is None:
        print("error: ask needs a question and --memory (or --open FILE)", file=sys.stderr)
        return 2
    from memrag.index import store
    from memrag.ask import ask
    from memrag.embed import get_embedder
    from memrag.llm.base import LLMError
    from memrag.llm.factory import make_llm
    from memrag.methods.base import EmptyMemoryError
    from memrag.llm.recordings import Recordings

    try:
        params = json_params(args.params)
        embedder = get_embedder(settings_from(args).embedder)
        memory = store.load(args.memory, embedder.model_id)
        rec = None if args.live else Recordings.open(args.memory)
        if rec is not None and rec.has_question(args.question):
            llm = rec.replay_llm()
            mode, model = "recorded", rec.model
            print(f"answering from recordings made with {rec.backend} / {rec.model} (use --live to run it now)",
                  file=sys.stderr)
        else:
            llm, choice = make_llm(settings_from(args))
            mode, model = "live", choice.model
            print(choice.describe(), file=sys.stderr)
        methods = list(registry.names()) if args.method == "all" else [args.method]
        traces = ask(memory, args.question, llm=llm, embedder=embedder, methods=methods, params=params)
    except (LLMError, EmptyMemoryError, store.MemoryFormatError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    summaries = [summarise(t) for t in traces]
    meta = {"question": args.question, "mode": mode, "model": model}
    if args.out is not None:
        write_atomic(args.out, traces_json(traces, meta, summaries=summaries))
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(traces_json(traces, meta, summaries=summaries))
    else:
        _print(traces, summaries)
    return 0
