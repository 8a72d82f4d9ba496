"""Does a backend's likelihood beat list order for NeuroPath's tracker? Both tracker probes, one command.

    # Ollama's phi4 (`ollama pull phi4`; token probabilities need the server from 0.12.11)
    python bench/tracker_probes.py --backend ollama --model phi4 --out data/probes/phi4
    # an OpenAI-compatible server (llama.cpp's llama-server, vLLM, …): its /v1 address and model id
    python bench/tracker_probes.py --backend openai --base-url http://127.0.0.1:8080/v1 --model NAME \
        --out data/probes/NAME
    # another question set: `python -m memrag eval`'s arguments after -- (default: the sample, pooled)
    python bench/tracker_probes.py --backend ollama --model phi4 --out data/probes/phi4-musique \
        --replies docs/runs/musique-pooled-31-60-retrieval/replies.jsonl -- --dataset musique ...

Runs bench/tracker_hop1_probe.py — hop 1 of every question with the likelihood tracker: the
query-entity and tracking calls replay from the recordings (the sample memory's, or --replies), so
the listings are the recorded ones, and only the one-token judge calls go to the backend — then
bench/tracker_label_probe.py on that run (the listing as letters, read in two orders). It prints
both tables and a verdict: likelihood beats list order when P(yes) puts a question's gold-touching
paths above its other paths more often than list position does *and* the paths the likelihood
tracker keeps touch gold more often than as many paths from the top of the list. Then how to make
the likelihood tracker that backend's default. Model time: one judge call per listed hop-1 path
plus two label calls per question.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the repository on sys.path)
import tracker_hop1_probe as hop1
import tracker_label_probe as labels

LIKELIHOOD_PARAMS = json.dumps({"neuropath": {"tracker": "likelihood"}})


def _ok(x: Any) -> bool:
    return isinstance(x, (int, float)) and not math.isnan(x)


def verdict(hop1_summary: dict[str, Any], label_summary: dict[str, Any]) -> tuple[bool | None, list[str]]:
    """Whether likelihood beats list order (None: the probes found nothing to compare), and the lines
    that say so with the figures."""
    sep, kept = hop1_summary["separation"], hop1_summary["likelihood"]
    figures = [sep["p_yes"], sep["list_position"], kept["precision"], kept["top_precision"]]
    lines = [f"P(yes) ranks a gold-touching hop-1 path above another path {_f(sep['p_yes'])} of the time, list "
             f"position {_f(sep['list_position'])} (0.5 = chance)",
             f"kept by likelihood: {_f(kept['precision'])} touch gold; as many from the top of the list: "
             f"{_f(kept['top_precision'])} ({kept['kept']} paths)",
             f"letters over the listing, two orders: {_f(label_summary['separation']['labels_two_orders'])} "
             f"against list position {_f(label_summary['separation']['list_position'])}"]
    if not all(_ok(x) for x in figures):
        return None, lines + ["likelihood beats list order: undecided (no question had both gold-touching and "
                              "other paths at hop 1; probe more questions)"]
    beats = sep["p_yes"] > sep["list_position"] and kept["precision"] > kept["top_precision"]
    return beats, lines + [f"likelihood beats list order: {'YES' if beats else 'NO'}"]


def _f(x: Any) -> str:
    return f"{x:.2f}" if _ok(x) else "–"


def how_to_default(beats: bool | None, backend_flags: str) -> list[str]:
    """How to make the likelihood tracker this backend's default (memrag keeps one default for every
    backend, so it is a parameter passed with that backend)."""
    params = shlex.quote(LIKELIHOOD_PARAMS)
    lines = [f"To use the likelihood tracker with this backend: python -m memrag ask {backend_flags} "
             f"--memory MEMORY --params {params} \"QUESTION\" (the same --params for `eval`); in the app, "
             "NeuroPath's parameter 'tracker' = likelihood, or Compare mode's preset 'tracker by likelihood / "
             "generative'."]
    if beats:
        lines.append("It beat list order here: measure it on a selection set with `eval --params` before "
                     "making it the default (docs/results.md keeps what the defaults were chosen on).")
    else:
        lines.append("It did not beat list order here: keep the default (generative) on this backend.")
    return lines


def backend_flags(args: argparse.Namespace) -> str:
    flags = [f"--backend {args.backend}"] if args.backend else ["--backend embedded"]
    if args.model:
        flags.append(f"--model {shlex.quote(args.model)}")
    if args.base_url:
        flags.append(f"--base-url {shlex.quote(args.base_url)}")
    return " ".join(flags)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="hop1/ and labels/ go here (probe.json, replies.jsonl)")
    hop1.add_args(ap)
    ap.add_argument("eval_args", nargs=argparse.REMAINDER, help="-- then `python -m memrag eval`'s arguments")
    args = ap.parse_args(argv)
    eval_args = [a for a in args.eval_args if a != "--"] or ["--dataset", "sample", "--scope", "pooled"]
    settings = hop1.engine_settings(args)
    run_dir = hop1.probe_run_dir(args.out)  # the traces (megabytes) stay out of --out
    first = hop1.probe(settings, args.out / "hop1", args.keep_top, args.replies, eval_args, run_dir)
    second = labels.label_probe(settings, run_dir, args.out / "labels")
    beats, lines = verdict(first, second)
    lines += how_to_default(beats, backend_flags(args))
    (args.out / "verdict.json").write_text(json.dumps({"beats_list_order": beats, "lines": lines}, indent=1) + "\n",
                                           encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
