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
        s.ollama_model = args.model
    if getattr(args, "no_cache", False):
        s.response_cache = False
    return s


def _add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["auto", "ollama", "embedded"], help="LLM backend (default auto)")
    p.add_argument("--model", help="Ollama model (default phi4)")


def cmd_doctor(args: argparse.Namespace) -> int:
    from memrag.cli.doctor import format_report, run_doctor

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
    for module in ("memrag.cli.index", "memrag.cli.ask", "memrag.cli.eval", "memrag.cli.demo"):
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
