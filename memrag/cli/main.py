"""python -m memrag doctor | index | edit | ask | eval | demo-check"""

from __future__ import annotations

import argparse
import json
import sys

from memrag.cli import ask, demo, edit, eval as eval_command, index
from memrag.cli.common import add_backend_args, settings_from
from memrag.config import SettingsError
from memrag.durable import StorageError

STORAGE_EXIT = 74  # sysexits' EX_IOERR


def cmd_doctor(args: argparse.Namespace) -> int:
    from memrag.cli.doctor import format_report, run_doctor

    report = run_doctor(settings_from(args))
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    """The parser and the command each subcommand name runs."""
    parser = argparse.ArgumentParser(prog="python -m memrag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("doctor", help="check backend, model and embedder with real calls")
    add_backend_args(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    commands = {"doctor": cmd_doctor}
    for module in (index, edit, ask, eval_command, demo):
        commands.update(module.register(sub))
    return parser, commands


def main(argv: list[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    try:
        return commands[args.command](args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SettingsError as e:
        print(f"memrag: bad settings: {e}", file=sys.stderr)
        return 2
    except StorageError as e:  # disk full, read-only, no access: the message says what was kept
        print(f"memrag: storage error: {e}", file=sys.stderr)
        return STORAGE_EXIT
