"""What EcphoryRAG's associative rounds added to what it recalled, counted over eval run folders.

    python bench/ecphory_rounds.py data/eval/sample-run data/eval/musique-1-30 ...

Reads each run's results.jsonl (the per-question traces; not committed) and counts, per run, over
the questions with an EcphoryRAG trace: recalled engrams (E_final), those first activated in a
round >= 1, the initial engrams they displaced from it, round engrams ranked above an initial query hit
(the paper's Algorithm 1 admits none: the query hits and the re-rank share one similarity), and
the questions whose recalled set the rounds changed at all. memrag.methods.ecphory.activation counts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memrag.methods.ecphory.activation import rounds_added  # noqa: E402
from memrag.methods.ecphory.detail import EcphoryDetail  # noqa: E402
from memrag.tracefile import load_trace  # noqa: E402

METHOD = "ecphory"


def run_rounds(run_dir: Path) -> dict[str, float]:
    counted = [rounds_added(d) for d in (t.detail(EcphoryDetail) for t in _traces(run_dir)) if d is not None]
    n = len(counted)
    return {"questions": n,
            "recalled per question": sum(r.recalled for r in counted) / n if n else 0.0,
            "from the rounds per question": sum(r.from_rounds for r in counted) / n if n else 0.0,
            "questions the rounds changed": sum(1 for r in counted if r.from_rounds),
            "initial engrams displaced": sum(r.displaced for r in counted),
            "round engrams above a query hit": sum(r.above_a_query_hit for r in counted)}


def _traces(run_dir: Path):
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            m = json.loads(line).get("methods", {}).get(METHOD)
            if m and m.get("trace"):
                yield load_trace(m["trace"], str(run_dir))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="eval run folders (with results.jsonl)")
    args = p.parse_args(argv)
    rows = [(r.name, run_rounds(r)) for r in args.runs]
    keys = list(rows[0][1])
    print("| run | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, fig in rows:
        print(f"| {name} | " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in fig.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
