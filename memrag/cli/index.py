"""python -m memrag index PATH... --memory DIR [--import-openie FILE --corpus FILE] [--json]
python -m memrag index --memory DIR --list | --remove NAME... | --undo | --versions | --use VERSION"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from memrag.cli.common import add_backend_args, settings_from
from memrag.config import IndexParams
from memrag.trace import CallCost, token_totals


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("index", help="build or extend a memory from documents, or import an OpenIE file")
    p.add_argument("paths", nargs="*", type=Path, help="files or folders (.txt .md .pdf .html)")
    p.add_argument("--memory", required=True, type=Path, help="memory folder (created or extended)")
    p.add_argument("--import-openie", type=Path, help="HippoRAG-style OpenIE file (no LLM calls)")
    p.add_argument("--corpus", type=Path, help="the corpus JSON the OpenIE file was made from")
    p.add_argument("--name", default="", help="a name for a new memory")
    p.add_argument("--retry-failed", action="store_true", help="extract again chunks that failed before")
    p.add_argument("--json", action="store_true", help="last stdout line: one JSON summary object")
    edit = p.add_mutually_exclusive_group()
    edit.add_argument("--list", action="store_true", help="list the memory's documents by name")
    edit.add_argument("--remove", nargs="+", metavar="NAME",
                      help="remove these documents (names as --list prints them) as a new memory version")
    edit.add_argument("--undo", action="store_true", help="switch back to the version before the last change")
    edit.add_argument("--versions", action="store_true",
                      help="list every version kept on disk, what made it and whether it opens")
    edit.add_argument("--use", metavar="VERSION", help="make this kept version (as --versions lists it) the live one")
    add_backend_args(p)
    return {"index": cmd_index}


# The sample memory may be built here where there is none (a checkout without it), never changed.
SAMPLE_REMEDY = ("Nothing was changed. Copy the folder to change a copy, or rebuild the sample itself with "
                 "`python -m memrag demo extract --recorded`.")


def cmd_index(args: argparse.Namespace) -> int:
    refusal = _sample_refusal(args)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return 1
    if args.list or args.remove or args.undo or args.versions or args.use:
        if args.paths or args.import_openie:
            print("--list, --remove, --undo, --versions and --use take no PATHs or --import-openie", file=sys.stderr)
            return 2
        return _edit(args)
    return _build(args)


def _sample_refusal(args: argparse.Namespace) -> str:
    """Why this call may not run: it would change the shipped sample memory ('' otherwise)."""
    from memrag import demo
    from memrag.index import store

    if args.list or args.versions or not (args.remove or args.undo or args.use or store.is_memory_dir(args.memory)):
        return ""
    return demo.sample_refusal(args.memory, SAMPLE_REMEDY)


def _edit(args: argparse.Namespace) -> int:
    """--list, --remove, --undo, --versions and --use: read or change the memory without an LLM."""
    from memrag.embed import get_embedder
    from memrag.cli.edit import versions_command
    from memrag.index import removal, store

    try:
        if not store.is_memory_dir(args.memory):
            raise store.MemoryStoreError(f"{args.memory} is not a memrag memory folder (it has no CURRENT file)")
        if args.list:
            memory = store.load(args.memory)
            rows = [{"name": d.doc_id, "title": d.title, "chunks": sum(c.doc_id == d.doc_id for c in memory.chunks)}
                    for d in memory.documents]
            for r in rows:
                print(f"{r['name']}\t{r['title']}\t{r['chunks']} chunk(s)")
            if args.json:
                print(json.dumps({"documents": rows}))
            return 0
        if args.remove:
            done = removal.remove_documents(args.memory, args.remove, get_embedder)
            print(done.text() + " (undo with --undo)")
            print(removal.STALE_NOTE, file=sys.stderr)
            if args.json:
                print(json.dumps({"version": done.version, "removed": done.documents}))
            return 0
        if args.versions or args.use:
            return versions_command(args.memory, args.use, args.json)
        live, undone = store.undo(args.memory)
        what = undone.get("change") or "the last change"
        print(f"undid the last change ({what}): version {live} is live again")
        if args.json:
            print(json.dumps({"version": live, "undone": what}))
        return 0
    except ValueError as e:  # MemoryStoreError and its kinds: unknown name, busy, damaged, nothing to undo
        print(f"error: {e}", file=sys.stderr)
        return 1


def _build(args: argparse.Namespace) -> int:
    from memrag.index.build import build_memory
    from memrag.embed import get_embedder
    from memrag.index.readers import read_paths
    from memrag.llm.base import LLMError
    from memrag.llm.factory import extraction_slots, make_llm
    from memrag.index.openie import OpenIEFormatError, import_openie
    from memrag.cli.progress import ProgressLine
    from memrag.index.store import MemoryFormatError

    params = IndexParams()
    settings = settings_from(args)
    embedder = get_embedder(settings.embedder)
    try:
        if args.import_openie:
            if not args.corpus:
                print("--import-openie needs --corpus (the passages the OpenIE file was made from)", file=sys.stderr)
                return 2
            if args.paths:
                print("give either PATHs or --import-openie, not both", file=sys.stderr)
                return 2
            events = import_openie(args.import_openie, args.corpus, embedder, params, path=args.memory,
                                   dataset=args.import_openie.stem, name=args.name)
        else:
            if not args.paths:
                print("nothing to index: give files or folders, or --import-openie", file=sys.stderr)
                return 2
            report = read_paths(args.paths, params)
            for prob in report.problems:
                print(f"{'skipped' if prob.fatal else 'note'}: {prob.name}: {prob.reason}", file=sys.stderr)
            for dup in report.duplicates:
                print(f"skipped duplicate: {dup}", file=sys.stderr)
            if not report.documents:  # a memory of nothing is not made (nor an existing one touched)
                print(f"error: nothing to index: every path given was skipped (the reasons are above); "
                      f"{args.memory} was not {'changed' if args.memory.exists() else 'made'}", file=sys.stderr)
                return 1
            llm, choice = make_llm(settings)
            print(choice.describe(), file=sys.stderr)
            events = build_memory(args.memory, report.documents, llm, embedder, params,
                                  parallel=extraction_slots(choice.backend, settings),
                                  retry_failed=args.retry_failed, name=args.name)
        return _drain(events, args, ProgressLine)
    except (LLMError, OpenIEFormatError, MemoryFormatError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _drain(events, args, ProgressLine) -> int:
    bar = None
    summary = None
    for ev in events:
        d = ev.data
        if ev.kind == "start":
            bar = ProgressLine("indexing", d["chunks"])
        elif ev.kind == "chunk_done" and bar is not None:
            bar.update(d["i"] + 1, "resumed" if d.get("resumed") else ("FAILED" if not d["ok"] else ""))
            if not d["ok"]:
                print(f"\nchunk {d['chunk_id']} of {d['doc_id']} failed: {d['error']}\n  raw reply: "
                      f"{(d.get('raw_reply') or '')[:300]!r}", file=sys.stderr)
        elif ev.kind == "skipped":
            print(f"skipped {d['title']!r}: {d['reason']}", file=sys.stderr)
        elif ev.kind == "done":
            summary = dict(d)
            fresh = [c for c in map(CallCost.from_row, ev.memory.ledger_rows) if not c.cached]
            summary["prompt_tokens"], summary["completion_tokens"] = token_totals(fresh)
    if bar is not None:
        bar.close()
    assert summary is not None
    keys = ["documents", "chunks", "entities", "engrams", "triples", "coref_sets", "failures",
            "prompt_tokens", "completion_tokens", "seconds"]
    out = {k: summary.get(k) for k in keys}
    out["names"] = summary.get("names", {})
    out["cleanup"] = summary.get("cleanup", {})
    if args.json:
        print(json.dumps(out))
    else:
        print(", ".join(f"{k} {v}" for k, v in out.items() if not isinstance(v, dict)))
        print("entity names: " + ", ".join(f"{k} {v}" for k, v in out["names"].items()))
        if out["cleanup"]:
            print("name clean-up: " + ", ".join(f"{k} {v}" for k, v in out["cleanup"].items()))
    return 0
