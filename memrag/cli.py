"""python -m memrag doctor | index | ask | eval | demo-check"""

from __future__ import annotations

import argparse
import json
import sys

from memrag.config import Settings


def _settings(args: argparse.Namespace) -> Settings:
    s = Settings()
    if getattr(args, "backend", None):
        s.backend = args.backend
    if getattr(args, "model", None):
        s.ollama_model = s.openai_model = args.model  # each backend reads its own
    if getattr(args, "base_url", None):
        s.openai_base_url = args.base_url
    if getattr(args, "parallel", None):
        s.extract_parallel = args.parallel
    if getattr(args, "embedder", None):
        s.embedder = args.embedder
    if getattr(args, "no_cache", False):
        s.response_cache = False
    return s


def _add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["auto", "ollama", "embedded", "openai"],
                   help="LLM backend (default auto; openai when MEMRAG_OPENAI_BASE_URL is set)")
    p.add_argument("--model", help="Ollama model (default phi4), or the OpenAI-compatible server's model")
    p.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
                                      "(MEMRAG_OPENAI_BASE_URL; the key comes from OPENAI_API_KEY)")
    p.add_argument("--parallel", type=_positive_int, metavar="N",
                   help="extraction requests in flight with Ollama or an OpenAI-compatible server (default 4)")
    p.add_argument("--embedder", help="all-MiniLM-L6-v2 (default), ollama:MODEL or openai:MODEL (MEMRAG_EMBEDDER)")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def cmd_doctor(args: argparse.Namespace) -> int:
    from memrag.doctor import format_report, run_doctor

    report = run_doctor(_settings(args))
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


COMMANDS = {"doctor": cmd_doctor}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m memrag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("doctor", help="check backend, model and embedder with real calls")
    _add_backend_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _extend_parser(sub)
    return parser


def _extend_parser(sub: argparse._SubParsersAction) -> None:
    """Subcommands that live in their own modules register here."""
    for module in ("memrag.cli_index", "memrag.cli_ask", "memrag.cli_eval", "memrag.cli_demo"):
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as e:
            if e.name == module:
                continue
            raise
        COMMANDS.update(mod.register(sub, _add_backend_args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
