"""Write the sample's replay snapshot, the fixture tests/test_replay_identity.py compares against.

    python bench/replay_snapshot.py            # writes tests/fixtures/replay_snapshot.json

It replays every sample demo question with every method from the shipped recordings
(sample_corpus/memory/responses.jsonl) and keeps, per question and method, the top ranked chunk
ids, the answer, the gold fates, the tokens and calls, and the run's summary figures
(memrag.eval.replay). Regenerating it is legitimate only for an intended change of behaviour
(a new default, a re-recorded sample), named in the commit that changes it: a refactor must
leave it as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memrag.eval.replay import replay_sample, run_digest  # noqa: E402

SNAPSHOT = REPO / "tests" / "fixtures" / "replay_snapshot.json"


def _layout(digest: dict) -> str:
    """One line per question and method, so a diff of the fixture shows which of them changed."""
    def one(v: object) -> str:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    questions = ",\n".join(
        f" {one(qid)}: {{\n" + ",\n".join(f"  {one(m)}: {one(d)}" for m, d in per.items()) + "\n }"
        for qid, per in digest["questions"].items())
    return (f'{{"methods": {one(digest["methods"])},\n"summary": {one(digest["summary"])},\n'
            f'"questions": {{\n{questions}\n}}}}\n')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=SNAPSHOT, help=f"the snapshot file (default {SNAPSHOT})")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        digest = run_digest(replay_sample(Path(tmp) / "run"))
    args.out.write_text(_layout(digest), encoding="utf-8")
    print(f"{args.out}: {len(digest['questions'])} questions × {len(digest['methods'])} methods")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
