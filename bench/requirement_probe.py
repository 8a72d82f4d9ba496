"""Would seeding hop 2 from what the tracker says it still needs reach gold the question's seeds cannot?

    python bench/requirement_probe.py --memory sample_corpus/memory RUN [RUN ...]
    python bench/requirement_probe.py --memory data/mem-musique RUN [RUN ...]

Reads each run's results.jsonl (the per-question traces; replay a committed run to get them). For
every question tracked at hop 1 it takes the graph nodes hop 1's expansion requirement names, found
as verbatim seeds are found in the question (`memrag.methods.neuropath.paths.verbatim_keys`:
capitalised spans, longest first; the seeds left out), and counts the gold passages that lie beyond
the seeds' reach within max_hops but within max_hops − 1 hops of those nodes
(`memrag.methods.neuropath.reach.seeded_reach`): the gold a hop-2 seeding from the requirement could
bring into reach. No model call, no embedding.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for where in (REPO, REPO / "bench"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

from expansion_probe import traced_questions, traced_runs_args  # noqa: E402
from memrag.index.memory import Memory  # noqa: E402
from memrag.index.store import load  # noqa: E402
from memrag.methods.neuropath.detail import NeuroPathDetail  # noqa: E402
from memrag.methods.neuropath.paths import verbatim_keys  # noqa: E402
from memrag.methods.neuropath.reach import first_reach, seeded_reach  # noqa: E402

KEYS = ("questions", "with a requirement", "naming a node", "gold", "within max_hops", "beyond",
        "brought into reach")


def run_counts(run_dir: Path, memory: Memory) -> dict[str, int]:
    out = dict.fromkeys(KEYS, 0)
    for trace, gold in traced_questions(run_dir):
        detail = trace.detail(NeuroPathDetail)
        if detail is None or not detail.hops or detail.hops[0].failed:
            continue
        p, requirement = trace.params, detail.hops[0].expansion_requirement
        seeds = ({s.key for s in detail.seeds if s.accepted}
                 | {m.key for s in detail.seeds if s.accepted for m in s.coref})
        within = set(first_reach(memory, seeds, p["max_hops"], p["coref_top"], p["coref_threshold"]))
        beyond = gold - within
        named = [key for _, key in verbatim_keys(requirement, memory.entity_index) if key not in seeds]
        out["questions"] += 1
        out["with a requirement"] += bool(requirement)
        out["naming a node"] += bool(named)
        out["gold"] += len(gold)
        out["within max_hops"] += len(gold & within)
        out["beyond"] += len(beyond)
        out["brought into reach"] += len(beyond & set(seeded_reach(
            memory, named, p["max_hops"] - 1, p["coref_top"], p["coref_threshold"])))
    return out


def main(argv: list[str] | None = None) -> int:
    args = traced_runs_args(__doc__, argv)
    memory = load(args.memory)
    print("| run | " + " | ".join(KEYS) + " |")
    print("|---|" + "---|" * len(KEYS))
    for run in args.runs:
        fig = run_counts(run, memory)
        print(f"| {run.name} | " + " | ".join(str(fig[k]) for k in KEYS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
