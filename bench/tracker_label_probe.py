"""A second likelihood design for NeuroPath's tracker, judged on hop 1: one label distribution over
the whole listing, read in two orders.

    python bench/tracker_label_probe.py --probe-run data/probe-runs/sample-tracker-hop1 \
        --out docs/probes/sample-tracker-label

Reads the hop-1 listings of a `bench/tracker_hop1_probe.py` run (its run folder under
data/probe-runs/, which holds the traces), shows the embedded model each question's new hop-1
paths as options A, B, C … (at most 26), asks for the letter of the most useful one, and reads the
next-token probabilities of the letters — once in listing order and once reversed, averaged per
path so a preference for early (or late) letters cancels. No schema (a grammar distorts the
probabilities). Reports how well that score puts each question's gold-touching paths above its
other paths (0.5 = chance) beside list position, and writes every raw reply (replies.jsonl) and the
per-question scores (probe.json) into --out. An exploration prompt for the next tracker design;
it lives here, not in memrag/prompts.py, until the product uses it.
"""

from __future__ import annotations

import argparse
import json
import string
import sys
import time
from pathlib import Path

import _common as C

from memrag.cli.common import add_backend_args, settings_from
from memrag.config import Settings
from memrag.eval.rundir import RESULTS
from memrag.llm.factory import make_llm
from memrag.llm.logprobs import label_probabilities
from memrag.llm.recordings import RecordingLLM
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail

LABELS = list(string.ascii_uppercase)
SYSTEM = ("You help answer a multi-hop question by choosing facts from a knowledge graph. Each option is a "
          "chain of facts (subject → relation → object). Reply with the letter of the option most useful for "
          "answering the question, or for finding the next fact it needs.")


def letter_probabilities(llm, question: str, paths: list[str]) -> list[float]:
    options = "\n".join(f"{LABELS[i]}. {p}" for i, p in enumerate(paths))
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Question: {question}\nOptions:\n{options}\nAnswer with one letter."}]
    c = llm.complete(messages, max_tokens=1, stage="probe.tracker.labels", top_logprobs=20)
    read = label_probabilities(c.top_logprobs[0], LABELS[:len(paths)])
    return [read.probabilities.get(LABELS[i], 0.0) for i in range(len(paths))]


def pairs_above(scores: list[float], gold: set[int]) -> tuple[int, int]:
    """(gold-touching above other, ties counted half; ×2), all such pairs ×2."""
    g = [scores[i] for i in gold]
    o = [s for i, s in enumerate(scores) if i not in gold]
    return sum(2 if a > b else 1 if a == b else 0 for a in g for b in o), 2 * len(g) * len(o)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe-run", type=Path, required=True, help="a tracker_hop1_probe run folder (data/probe-runs/…)")
    ap.add_argument("--out", type=Path, required=True)
    add_backend_args(ap)
    args = ap.parse_args()
    settings = settings_from(args)
    if not args.backend:
        settings.backend = "embedded"
    label_probe(settings, args.probe_run, args.out)
    return 0


def label_probe(settings: Settings, probe_run: Path, out: Path) -> dict:
    """The label probe on a hop-1 probe's run folder with `settings`' engine; writes `out`, prints
    the table, returns the summary."""
    inner, choice = make_llm(settings)
    llm = RecordingLLM(inner)
    rows, labels_sum, position_sum = [], [0, 0], [0, 0]
    t0 = time.perf_counter()
    for line in (probe_run / RESULTS).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        method = record["methods"]["neuropath"]
        gold_chunks = {f["chunk_id"] for f in method["gold_fate"] if f.get("chunk_id") is not None}
        trace = Trace.from_dict(method["trace"])
        detail = trace.detail(NeuroPathDetail)
        if detail is None or not detail.hops:
            continue
        hop = detail.hops[0]
        new = sorted((p for p in hop.candidates if p.listed_as is not None and p.kept_from is None),
                     key=lambda p: p.listed_as or 0)[: len(LABELS)]
        if len(new) < 2:
            continue
        texts = [p.text for p in new]
        forward = letter_probabilities(llm, record["question"], texts)
        backward = letter_probabilities(llm, record["question"], texts[::-1])[::-1]
        scores = [(a + b) / 2 for a, b in zip(forward, backward)]
        gold = {i for i, p in enumerate(new) if any(c in gold_chunks for c in p.chunk_ids)}
        for acc, s in ((labels_sum, scores), (position_sum, [-float(i) for i in range(len(new))])):
            w, n = pairs_above(s, gold)
            acc[0] += w
            acc[1] += n
        rows.append({"qid": record["qid"], "paths": len(new), "gold": sorted(gold), "scores": scores})
        print(f"{record['qid']}: {len(new)} paths, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    summary = {"questions": len(rows), "separation": {
        "labels_two_orders": labels_sum[0] / labels_sum[1] if labels_sum[1] else None,
        "list_position": position_sum[0] / position_sum[1] if position_sum[1] else None},
        "engine": f"{choice.backend} / {choice.model}", "command": " ".join(sys.argv)}
    out.mkdir(parents=True, exist_ok=True)
    llm.write(out, [], "replies.jsonl")
    (out / "probe.json").write_text(json.dumps({"summary": summary, "questions": rows}, indent=1) + "\n")
    t = C.Table(f"Hop 1 of {len(rows)} questions: gold-touching paths above the others (0.5 = chance)",
                ["score", "P(gold above other)"])
    t.add("letter probabilities, two orders", summary["separation"]["labels_two_orders"])
    t.add("list position (pruning score)", summary["separation"]["list_position"])
    C.emit(argparse.Namespace(json=False), summary, [t], [])
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
