"""python -m memrag eval --dataset musique|2wiki|hotpotqa|sample --data PATH --scope ... --out DIR"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from memrag.methods import registry
from memrag.cli.common import add_backend_args, json_params, settings_from
from memrag.eval.datasets import DATASET_NAMES, SCOPES
from memrag.filesafe import read_text

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_corpus"
PARAMS_FILE_MAX_BYTES = 1_000_000  # a parameters file is a few hundred bytes


def register(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    p = sub.add_parser("eval", help="evaluate methods on a benchmark (recall@k, EM/F1, gold fate, cost); resumable")
    p.add_argument("--dataset", required=True, choices=DATASET_NAMES)
    p.add_argument("--data", type=Path, help="questions file (for sample: the sample folder; default: the repo's)")
    p.add_argument("--corpus", type=Path, help="MuSiQue corpus JSON (needed with --import-openie); "
                   "for sample: the documents folder")
    p.add_argument("--import-openie", type=Path, help="MuSiQue OpenIE file: build the graph from it, no LLM extraction")
    p.add_argument("--memory", type=Path, help="pooled scopes: the memory folder to open or build (default OUT/memory)")
    p.add_argument("--scope", required=True, choices=SCOPES, help="corpus scope (recorded in every summary)")
    p.add_argument("--limit", type=int, help="the first N questions (default: all)")
    p.add_argument("--methods", default="all",
                   help="comma-separated, from: " + ", ".join(registry.names()) + "; or all (the default)")
    p.add_argument("--params", default="{}", help='JSON or a .json file: {"neuropath": {"max_hops": 3}, ...}; '
                   "or a preset: 'paper' (as the papers wrote it: every deviation with a switch off) or 'defaults'")
    p.add_argument("--no-answer", action="store_true", help="retrieval only: no answer step, no EM/F1")
    p.add_argument("--fate-k", type=int, default=5, help="gold fate: a passage counts as found within the top k")
    p.add_argument("--out", required=True, type=Path, help="run folder (results.jsonl, summary.json, report.html)")
    p.add_argument("--no-cache", action="store_true", help="do not reuse recorded LLM replies")
    p.add_argument("--recorded", action="store_true",
                   help="answer from recordings instead of a live LLM: the memory's responses.jsonl, or --replies")
    p.add_argument("--reuse", type=Path, metavar="REPLIES",
                   help="a live run answers every call this recordings file holds from it (the same engine only) "
                        "and asks the model the rest: a variant re-run pays only for the calls it changed")
    p.add_argument("--replies", type=Path,
                   help="a recordings file (responses.jsonl format): live runs write every raw reply into it after "
                        "each question (commit it beside the summary); with --recorded the run replays from it")
    add_backend_args(p)
    return {"eval": cmd_eval}


def _params(text: str) -> dict:
    from memrag.methods.registry import settings_preset

    if text.strip() in ("paper", "defaults"):
        return settings_preset(text.strip(), registry.names())
    source = read_text(Path(text.strip()), PARAMS_FILE_MAX_BYTES, what="parameters file") \
        if text.strip().endswith(".json") else text
    return json_params(source)


def config_from_args(args: argparse.Namespace):
    from memrag.eval.config import EvalConfig

    data = args.data
    if data is None:
        if args.dataset != "sample":
            raise ValueError("--data is required (the questions file)")
        data = SAMPLE_DIR
    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    if methods == ("all",):  # the word `ask --method` takes too
        methods = tuple(registry.names())
    return EvalConfig(dataset=args.dataset, data=data, out=args.out, scope=args.scope, limit=args.limit,
                      methods=methods, corpus=args.corpus, import_openie=args.import_openie, memory=args.memory,
                      answer=not args.no_answer, params=_params(args.params), fate_k=args.fate_k,
                      command="python -m memrag " + shlex.join(sys.argv[1:]))


def cmd_eval(args: argparse.Namespace) -> int:
    from memrag.eval.report import markdown_table
    from memrag.eval.rundir import REPORT_HTML, RESULTS, SUMMARY, SUMMARY_MD
    from memrag.eval.runner import run_eval
    from memrag.llm.base import LLMError
    from memrag.llm.factory import extraction_slots, make_llm
    from memrag.index.openie import OpenIEFormatError
    from memrag.cli.progress import ProgressLine
    from memrag.index.store import MemoryFormatError

    settings = settings_from(args)
    try:
        config = config_from_args(args)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    if args.reuse and args.recorded:
        print("error: --reuse is for live runs (it asks the model what the file does not hold); "
              "--recorded replays only", file=sys.stderr)
        return 2
    recorder = None

    def llm_factory():
        # Called by the run only when it needs an LLM; the parallelism applies to its memory builds.
        nonlocal recorder
        if args.recorded and args.replies:
            from memrag.llm.recordings import Recordings

            rec = Recordings.load(args.replies)
            print(f"LLM: replies recorded with {rec.backend} / {rec.model} ({args.replies})", file=sys.stderr)
            return rec.replay_llm()
        if args.recorded:
            from memrag.demo import sample_memory_dir
            from memrag.llm.recordings import Recordings

            mdir = args.memory or (sample_memory_dir() if args.dataset == "sample" else None)
            rec = Recordings.open(mdir) if mdir else None
            if rec is None:
                raise ValueError(f"--recorded: no recordings in {mdir or 'the memory (give --memory)'}")
            print(f"LLM: recordings made with {rec.backend} / {rec.model}", file=sys.stderr)
            return rec.replay_llm()
        llm, choice = make_llm(settings)
        print(choice.describe(), file=sys.stderr)
        config.extract_parallel = extraction_slots(choice.backend, settings)
        if args.reuse:
            from memrag.llm.recordings import Recordings, ReuseRecordedLLM

            llm = ReuseRecordedLLM(Recordings.load(args.reuse), llm)
            print(f"LLM: calls recorded in {args.reuse} are answered from it", file=sys.stderr)
        if args.replies:
            from memrag.llm.recordings import RecordingLLM

            recorder = RecordingLLM(llm)
            return recorder
        return llm

    bar = index_bar = None
    summary = None
    todo = done_now = 0
    try:
        from memrag.embed import get_embedder

        for ev in run_eval(config, llm_factory=llm_factory, embedder=get_embedder(settings.embedder)):
            d = ev.data
            if ev.kind == "start":
                todo = d["todo"]
                print(f"{d['questions']} questions, {d['done']} already done; scope {d['scope']} "
                      f"({d['corpus_size']} passages)", file=sys.stderr)
            elif ev.kind == "index":
                if d["event"] == "start":
                    index_bar = ProgressLine(f"indexing {d['memory']}", d.get("chunks", 0))
                elif d["event"] == "chunk_done" and index_bar is not None:
                    index_bar.update(d["i"] + 1, "FAILED" if not d.get("ok", True) else "")
                elif d["event"] == "done" and index_bar is not None:
                    index_bar.update(index_bar.total)
                    index_bar.close()
                    index_bar = None
            elif ev.kind == "question":
                if bar is None:  # counts this session's questions, so the ETA is not flattered by a resume
                    bar = ProgressLine("evaluating", todo)
                done_now += 1
                if recorder is not None:  # an interrupted run keeps every reply so far
                    recorder.write(args.replies.parent, [], args.replies.name)
                r5 = ", ".join(f"{m} {100 * v['recall@5']:.0f}" for m, v in d["metrics"].items())
                bar.update(done_now, f"{d['qid']} R@5 {r5}")
            elif ev.kind == "done":
                summary = d["summary"]
    except (LLMError, OpenIEFormatError, MemoryFormatError, FileNotFoundError, ValueError) as e:
        if bar is not None:
            bar.close()
        print(f"error: {e}", file=sys.stderr)
        print(f"finished questions are kept in {config.out / RESULTS}; run the same command again to resume",
              file=sys.stderr)
        return 1
    if bar is not None:
        bar.close()
    assert summary is not None
    print(markdown_table(summary))
    print(f"\n{config.out / SUMMARY}, {config.out / SUMMARY_MD}, {config.out / REPORT_HTML}", file=sys.stderr)
    return 0
