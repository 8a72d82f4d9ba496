"""python -m memrag demo record | extract — rebuild the shipped demo's recordings or memory."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from memrag.cli.common import add_backend_args, settings_from


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("demo", help="re-record the sample questions, or re-extract the sample memory")
    p.add_argument("action", choices=["record", "extract"])
    p.add_argument("--recorded", action="store_true",
                   help="extract: rebuild from the memory's extraction.jsonl (no model; after a post-processing change)")
    p.add_argument("--fresh", action="store_true",
                   help="record: ask the model every call again (default: reuse the replies the memory's recordings "
                        "already hold for unchanged calls, so only what changed is asked)")
    add_backend_args(p)
    c = sub.add_parser("demo-check", help="before a live demo: backend, sample memory, recordings, pages")
    c.add_argument("--no-pages", action="store_true", help="skip rendering the pages")
    c.add_argument("--json", action="store_true")
    add_backend_args(c)
    return {"demo": cmd_demo, "demo-check": cmd_demo_check}


def cmd_demo_check(args: argparse.Namespace) -> int:
    import json

    from memrag.demo import ROOT
    from memrag.cli.demo_check import format_demo_report, run_demo_check

    report = run_demo_check(settings_from(args), ROOT, pages=not args.no_pages)
    print(json.dumps(report.to_dict()) if args.json else format_demo_report(report))
    return 0 if report.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from memrag import demo
    from memrag.index import store
    from memrag.embed import get_embedder
    from memrag.cli.progress import ProgressLine

    from memrag.llm.factory import make_llm

    settings = settings_from(args)
    if not args.backend:
        settings.backend = "embedded"  # the shipped memory and recordings are made with the embedded model
    llm, choice = make_llm(settings)
    print(choice.describe(), file=sys.stderr)
    # Another LLM's memory and recordings live beside the shipped ones, never over them.
    target = demo.sample_memory_dir(choice.backend, choice.model)
    if args.action == "extract":
        how = "from its recorded extraction replies" if args.recorded else f"with {choice.backend} / {choice.model}"
        print(f"re-extracting the sample memory {how} into {target}", file=sys.stderr)
        bar = ProgressLine("extracting", len(list(demo.sample_docs_dir().iterdir())))
        name = "Varrow Coast (sample)" if choice.backend == "embedded" else f"Varrow Coast (sample, {choice.model})"
        summary = demo.extract(llm, get_embedder(), target, recorded=args.recorded, name=name,
                               progress=lambda i, n, doc, ok: bar.update(i, doc + ("" if ok else " FAILED")))
        bar.close()
        print(", ".join(f"{k} {v}" for k, v in summary.items() if not isinstance(v, (dict, list))))
        for k, v in summary.items():
            if isinstance(v, dict):
                print(f"{k}: " + ", ".join(f"{a} {b}" for a, b in v.items()))
        return 0
    if not store.is_memory_dir(target):
        print(f"error: no sample memory built with {choice.backend} / {choice.model} at {target}: "
              f"build it first with `python -m memrag demo extract --backend {choice.backend}"
              f"{' --model ' + choice.model if choice.backend == 'ollama' else ''}`", file=sys.stderr)
        return 2
    memory = store.load(target, get_embedder().model_id)
    reuse = None if args.fresh else _reusable_recordings(target, llm)
    print(f"recording with {choice.backend} / {choice.model} into {target}"
          + (f", reusing the {len(reuse.responses)} replies it holds for unchanged calls" if reuse else ""),
          file=sys.stderr)
    questions = demo.sample_questions()
    bar = ProgressLine("recording", len(questions))
    path = demo.record(memory, llm, get_embedder(), target, questions=questions,
                       progress=lambda i, n, qid, s: bar.update(i, f"{qid} {s:.0f}s"), reuse=reuse)
    bar.close()
    print(f"wrote {path}")
    return 0


def _reusable_recordings(target, llm):
    """The memory's recordings when the same engine made them; None (said) otherwise."""
    from memrag.llm.recordings import Recordings

    rec = Recordings.open(target)
    if rec is not None and rec.identity != llm.identity():
        print(f"the recordings in {target} were made by {rec.backend} / {rec.model}: every call is asked again",
              file=sys.stderr)
        return None
    return rec
