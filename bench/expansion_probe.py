"""Does NeuroPath's choice of paths to expand beat a trivial rule? Counted over eval run folders.

    python bench/expansion_probe.py --memory sample_corpus/memory RUN [RUN ...]
    python bench/expansion_probe.py --memory data/mem-musique RUN [RUN ...]

Reads each run's results.jsonl (the per-question traces; replay a committed run to get them) and,
for every question tracked at hop 1, grows hop 2 from the hop-1 paths each rule picks — the model's
expand_ids, as many paths from the top of the listing, every kept path (valid ∪ expand), every
listed path — pruned as tracking prunes (`memrag.methods.neuropath.reach.listed_after_hop2`). It
prints the gold passages on a listed path after hop 2 under each rule (a gold passage counted by
the chunk its fate names), over the questions where the model asked for hop 2 and over all of them
(a rule that also overrides the model's stop). No model call; the embedder embeds each goal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memrag.embed import get_embedder  # noqa: E402
from memrag.index.store import load  # noqa: E402
from memrag.methods.neuropath.detail import NeuroPathDetail  # noqa: E402
from memrag.methods.neuropath.reach import EXPANSION_RULES, listed_after_hop2  # noqa: E402
from memrag.tracefile import load_trace  # noqa: E402


def run_counts(run_dir: Path, memory, embedder) -> dict[str, dict[str, int]]:
    """{"continued" | "all": {"questions", "gold", "hop 1", rule...: gold passages listed}}."""
    out = {part: {"questions": 0, "gold": 0, "hop 1": 0, **{r: 0 for r in EXPANSION_RULES}}
           for part in ("continued", "all")}
    for trace, gold in traced_questions(run_dir):
        detail = trace.detail(NeuroPathDetail)
        if detail is None or not detail.hops or detail.hops[0].failed:
            continue
        hop1, p = detail.hops[0], trace.params
        goal = embedder.encode([hop1.expansion_requirement or trace.question])[0]
        on_hop1 = {c for q in hop1.candidates if q.listed_as is not None for c in q.chunk_ids}
        listed = {r: listed_after_hop2(memory, hop1, r, goal, p["prune_top"], p["coref_top"], p["coref_threshold"])
                  for r in EXPANSION_RULES}
        for part in ("continued", "all") if hop1.continue_ else ("all",):
            fig = out[part]
            fig["questions"] += 1
            fig["gold"] += len(gold)
            fig["hop 1"] += len(gold & on_hop1)
            for r in EXPANSION_RULES:
                fig[r] += len(gold & listed[r])
    return out


def traced_questions(run_dir: Path) -> Iterator[tuple]:
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            m = json.loads(line).get("methods", {}).get("neuropath")
            if m and m.get("trace"):
                gold = {g["chunk_id"] for g in m.get("gold_fate", []) if g.get("chunk_id") is not None}
                yield load_trace(m["trace"], str(run_dir)), gold


def traced_runs_args(doc: str, argv: list[str] | None) -> argparse.Namespace:
    """The probes' command line: run folders with traces (`runs`) and the memory they were made on."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="eval run folders (with results.jsonl) on --memory")
    p.add_argument("--memory", type=Path, required=True, help="the memory folder the runs were made on")
    args = p.parse_args(argv)
    missing = [str(r) for r in args.runs if not (r / "results.jsonl").is_file()]
    if missing:  # a committed docs/runs folder holds no traces: replay it first (the docstring)
        p.error(f"no results.jsonl (per-question traces) in: {', '.join(missing)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = traced_runs_args(__doc__, argv)
    memory = load(args.memory)
    embedder = get_embedder(memory.embedder_id)
    keys = ["questions", "gold", "hop 1", *EXPANSION_RULES]
    print("| run | part | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for run in args.runs:
        for part, fig in run_counts(run, memory, embedder).items():
            print(f"| {run.name} | {part} | " + " | ".join(str(fig[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
