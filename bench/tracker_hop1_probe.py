"""Does NeuroPath's likelihood tracker choose better than list order? Hop 1, judged from recordings.

    python bench/tracker_hop1_probe.py --out DIR [--keep-top 5] [--replies FILE] -- EVAL ARGUMENTS

    # the sample corpus (its shipped recordings replay the query-entity and hop-1 tracking calls)
    python bench/tracker_hop1_probe.py --out docs/probes/sample-tracker-hop1 -- --dataset sample --scope pooled
    # MuSiQue 31-60 (a selection set) from its committed replies, on the imported memory;
    # musique_31_60.json = entries 30-59 of the shared musique_train.json (bench/replay_check.py makes it)
    python bench/tracker_hop1_probe.py --out docs/probes/musique-31-60-tracker-hop1 \
        --replies docs/runs/musique-pooled-31-60-retrieval/replies.jsonl -- --dataset musique \
        --data musique_31_60.json --corpus ../shared/bench/musique/musique_train_corpus.json \
        --import-openie ../shared/bench/musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json \
        --memory data/mem-musique --scope pooled

The arguments after `--` are `python -m memrag eval`'s (its --out, --methods, --params and
--no-answer are set here). NeuroPath runs with the likelihood tracker (keep the top --keep-top new
paths by P(yes), no threshold) and `max_hops=1`, without answers. Each question's query-entity
and hop-1 tracking calls replay from the recordings (the sample memory's, or --replies), so hop 1
lists exactly the paths the recorded run listed; only the judge calls — one per listed hop-1 path,
P("yes") from the embedded model's next-token probabilities — go to the engine (and its response
cache).

On the new paths of hop 1 it compares three choosers against list order, each at matched counts:
the likelihood tracker's top --keep-top by P(yes), the generative call's own valid_ids, and the
likelihood ranking cut at the generative call's count. It also reports how well P(yes) and list
position separate gold-touching paths from the rest (the chance that a gold-touching path of a
question ranks above another of its paths: 0.5 is chance). Writes the run folder under
data/probe-runs/ (not committed), and into --out its summary.json, every raw reply the engine gave
(replies.jsonl, the judge calls' probabilities included) and the counts (probe.json). Model time: one judge call per
listed hop-1 path, about 0.3 s each on 2 quiet cores with the question's prefix cached.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import _common as C

from memrag.cli.common import add_backend_args, settings_from
from memrag.cli.main import build_parser
from memrag.cli.eval import config_from_args
from memrag.config import Settings
from memrag.demo import sample_memory_dir
from memrag.embed import get_embedder
from memrag.eval.rundir import RESULTS, SUMMARY
from memrag.eval.runner import run_eval
from memrag.eval.tracker_precision import hop_counts
from memrag.llm.base import Completion, Message
from memrag.llm.factory import make_llm
from memrag.llm.logprobs import logprobs_missing
from memrag.llm.recordings import FILE_NAME, RecordingLLM, Recordings, StaleRecording
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate


class ReplayThenLive:
    """Recorded replies where the recordings have them, the live engine for the rest (recorded too)."""

    def __init__(self, recordings: Recordings, live: RecordingLLM) -> None:
        self.replay, self.live = recordings.replay_llm(), live
        self.backend, self.model = live.backend, live.model
        self.live_calls = 0

    def identity(self) -> dict[str, Any]:
        return self.live.identity()

    def logprobs_missing(self) -> str:
        return logprobs_missing(self.live)

    def complete(self, messages: list[Message], *, schema: dict[str, Any] | None = None, max_tokens: int,
                 stage: str, top_logprobs: int = 0) -> Completion:
        extra = {"top_logprobs": top_logprobs} if top_logprobs else {}
        try:
            return self.replay.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage, **extra)
        except StaleRecording:
            self.live_calls += 1
            return self.live.complete(messages, schema=schema, max_tokens=max_tokens, stage=stage, **extra)


def separation(scored: list[tuple[float, bool]]) -> tuple[int, int]:
    """(pairs where the gold-touching path scores higher, + half the ties ×2, all pairs ×2)."""
    gold = [s for s, g in scored if g]
    other = [s for s, g in scored if not g]
    wins = sum(2 if a > b else 1 if a == b else 0 for a in gold for b in other)
    return wins, 2 * len(gold) * len(other)


def matched(hop: NeuroPathHop, chosen: list[int], gold: set[int]):
    """Counts for a chooser that kept the listing numbers `chosen` on this hop's paths."""
    return hop_counts(replace(hop, valid_ids=chosen), gold)


def question_row(record: dict[str, Any]) -> dict[str, Any]:
    """One result line's hop-1 counts for the three choosers, its P(yes) and gold flags per path."""
    method = record["methods"]["neuropath"]
    gold = {f["chunk_id"] for f in method["gold_fate"] if f.get("chunk_id") is not None}
    trace = Trace.from_dict(method["trace"])
    detail = trace.detail(NeuroPathDetail)
    hop = detail.hops[0] if detail and detail.hops else None
    if hop is None or hop.tracker != "likelihood":
        why = hop.tracker_note if hop is not None else (detail.stop_reason if detail else "")
        return {"qid": record["qid"], "skipped": why or "no hop 1"}
    new: list[PathCandidate] = sorted((p for p in hop.candidates if p.listed_as is not None and p.kept_from is None),
                                      key=lambda p: p.listed_as or 0)
    touches = {p.listed_as: any(c in gold for c in p.chunk_ids) for p in new}
    by_prob = [p.listed_as for p in sorted(new, key=lambda p: -(p.probability or 0.0))]
    generated = [n for n in hop.generated_valid_ids if n in touches]
    return {
        "qid": record["qid"], "listed_new": len(new), "gold_listed": sum(touches.values()),
        "likelihood": asdict(hop_counts(hop, gold)),
        "generative": asdict(matched(hop, generated, gold)),
        "likelihood_at_generative_count": asdict(matched(hop, by_prob[:len(generated)], gold)),
        "probabilities": {str(p.listed_as): p.probability for p in new},
        "gold_touching": [n for n, g in touches.items() if g],
    }


def add_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--keep-top", type=int, default=5)
    ap.add_argument("--replies", type=Path, help="recordings to replay (default: the sample memory's)")
    add_backend_args(ap)


def engine_settings(args: argparse.Namespace) -> Settings:
    """The engine the judge calls go to: --backend and its flags, the embedded model when none is named."""
    settings = settings_from(args)
    if not getattr(args, "backend", None):
        settings.backend = "embedded"
    return settings


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    add_args(ap)
    ap.add_argument("eval_args", nargs=argparse.REMAINDER, help="-- then `python -m memrag eval`'s arguments")
    args = ap.parse_args()
    probe(engine_settings(args), args.out, args.keep_top, args.replies, [a for a in args.eval_args if a != "--"])
    return 0


def probe_run_dir(out: Path) -> Path:
    """Where a probe's run folder (its traces, megabytes) goes: data/probe-runs/<out's name>, uncommitted."""
    return C.REPO / "data" / "probe-runs" / out.name


def probe(settings: Settings, out: Path, keep_top: int, replies: Path | None, eval_args: list[str],
          run_dir: Path | None = None) -> dict[str, Any]:
    """Run the hop-1 probe (see the module docstring) with the judge calls on `settings`' engine into
    `run_dir` (default probe_run_dir(out)); writes `out` and prints the tables; returns the summary."""
    params = {"neuropath": {"tracker": "likelihood", "keep_threshold": 0.0, "keep_top": keep_top,
                            "max_hops": 1}}
    run_dir = run_dir or probe_run_dir(out)
    eval_ns = build_parser()[0].parse_args(["eval", *eval_args, "--out", str(run_dir), "--methods", "neuropath",
                                         "--params", json.dumps(params), "--no-answer"])
    config = config_from_args(eval_ns)
    recordings = Recordings.load(replies or sample_memory_dir() / FILE_NAME)
    inner, choice = make_llm(settings)
    live = RecordingLLM(inner)
    llm = ReplayThenLive(recordings, live)
    if llm.logprobs_missing():
        raise SystemExit(f"the engine gives no probabilities: {llm.logprobs_missing()}")
    if run_dir.exists():  # a resumed run would keep another engine's judgements
        shutil.rmtree(run_dir)
    t0 = time.perf_counter()
    for ev in run_eval(config, llm=llm, embedder=get_embedder(settings.embedder)):
        if ev.kind == "question":
            print(f"{ev.data['qid']}: {llm.live_calls} calls to the engine so far, {time.perf_counter() - t0:.0f} s",
                  file=sys.stderr)
    records = [json.loads(line) for line in (run_dir / RESULTS).read_text(encoding="utf-8").splitlines() if line]
    rows = [question_row(r) for r in records]
    done = [r for r in rows if "skipped" not in r]

    def total(chooser: str, field: str) -> int:
        return sum(r[chooser][field] for r in done)

    def share(a: float, b: float) -> float:
        return a / b if b else float("nan")

    table = C.Table(f"Hop 1 of {len(done)} questions ({len(rows) - len(done)} skipped), new paths, matched counts",
                    ["chooser", "kept", "gold kept", "precision", "top of list", "random"])
    summary: dict[str, Any] = {}
    for chooser in ("likelihood", "generative", "likelihood_at_generative_count"):
        kept = total(chooser, "kept_new")
        rnd = sum(r[chooser]["kept_new"] * r["gold_listed"] / r["listed_new"] for r in done if r["listed_new"])
        summary[chooser] = {"kept": kept, "precision": share(total(chooser, "gold_kept"), kept),
                            "top_precision": share(total(chooser, "gold_top"), kept),
                            "random_precision": share(rnd, kept)}
        table.add(chooser, kept, total(chooser, "gold_kept"), summary[chooser]["precision"],
                  summary[chooser]["top_precision"], summary[chooser]["random_precision"])
    p_yes, position = [0, 0], [0, 0]
    for r in done:
        gold = set(r["gold_touching"])
        for acc, scored in ((p_yes, [(p, int(n) in gold) for n, p in r["probabilities"].items()]),
                            (position, [(-int(n), int(n) in gold) for n in r["probabilities"]])):
            w, n = separation(scored)
            acc[0] += w
            acc[1] += n
    summary["separation"] = {"p_yes": share(*p_yes), "list_position": share(*position)}
    summary.update(engine_calls=llm.live_calls, seconds=time.perf_counter() - t0, params=params,
                   engine=f"{choice.backend} / {choice.model}", command=" ".join(sys.argv))
    out.mkdir(parents=True, exist_ok=True)
    live.write(out, [], "replies.jsonl")
    shutil.copyfile(run_dir / SUMMARY, out / SUMMARY)
    (out / "probe.json").write_text(json.dumps({"summary": summary, "questions": rows}, indent=1) + "\n")
    sep = C.Table("Separating gold-touching paths from the rest (0.5 = chance)", ["score", "P(gold above other)"])
    sep.add("P(yes), likelihood tracker", summary["separation"]["p_yes"])
    sep.add("list position (pruning score)", summary["separation"]["list_position"])
    C.emit(argparse.Namespace(json=False), summary, [table, sep],
           [f"{llm.live_calls} judge calls answered by {summary['engine']} or its response cache "
            f"in {summary['seconds']:.0f} s"])
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
