"""python -m memrag ask --memory DIR "question" --method neuropath|ecphory|dense|all [--json] [--live]"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from memrag.ask import METHODS
from memrag.cli.common import add_backend_args, settings_from


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("ask", help="ask a memory a question with one or all methods")
    p.add_argument("question")
    p.add_argument("--memory", required=True, type=Path, help="memory folder")
    p.add_argument("--method", default="all", choices=[*METHODS, "all"])
    p.add_argument("--live", action="store_true",
                   help="run on the current backend even when the memory ships recordings of this question")
    p.add_argument("--params", default="{}", help='JSON: {"neuropath": {"max_hops": 3}, ...}')
    p.add_argument("--json", action="store_true", help='print {"results": [...]} with full traces')
    add_backend_args(p)
    return {"ask": cmd_ask}


def summarise(trace) -> dict:
    calls = trace.llm_calls

    def total(attr):
        vals = [getattr(c, attr) for c in calls]
        return None if any(v is None for v in vals) else sum(vals)
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


def cmd_ask(args: argparse.Namespace) -> int:
    from memrag.index import store
    from memrag.ask import ask
    from memrag.embed import get_embedder
    from memrag.llm.base import LLMError
    from memrag.llm.factory import make_llm
    from memrag.methods.base import EmptyMemoryError
    from memrag.llm.recordings import Recordings

    try:
        params = json.loads(args.params)
        embedder = get_embedder()
        memory = store.load(args.memory, embedder.model_id)
        rec = None if args.live else Recordings.open(args.memory)
        if rec is not None and rec.has_question(args.question):
            llm = rec.replay_llm()
            print(f"answering from recordings made with {rec.backend} / {rec.model} (use --live to run it now)",
                  file=sys.stderr)
        else:
            llm, choice = make_llm(settings_from(args))
            print(f"LLM: {choice.backend} / {choice.model} ({choice.reason})", file=sys.stderr)
        methods = list(METHODS) if args.method == "all" else [args.method]
        traces = ask(memory, args.question, llm=llm, embedder=embedder, methods=methods, params=params)
    except (LLMError, EmptyMemoryError, store.MemoryFormatError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"results": [{**summarise(t), "trace": t.to_dict()} for t in traces]}, ensure_ascii=False))
        return 0
    for t in traces:
        s = summarise(t)
        print(f"== {t.method}: {s['answer']!r}")
        for c in s["chunks"][:5]:
            print(f"   {c['rank'] + 1}. {c['title']}  [{c['source']}] {c['why'][:80]}")
        tok = s["tokens"]
        print(f"   {tok['prompt']} prompt + {tok['completion']} completion tokens, {tok['llm_calls']} LLM calls"
              f"{' (recorded)' if tok['recorded'] else ''}, {s['seconds']} s")
        for f in t.flags:
            print(f"   note: {f}")
    return 0
