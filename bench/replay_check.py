"""Replay every committed run that kept its raw replies and say whether it still gives its figures.

    # the MuSiQue memory (the OpenIE import, no model; ~10-20 min of embedding once), then the check:
    python -m memrag eval --dataset musique --data ../shared/bench/musique/musique_train.json \
        --corpus ../shared/bench/musique/musique_train_corpus.json \
        --import-openie ../shared/bench/musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json \
        --memory data/mem-musique --scope pooled --limit 1 --methods dense --no-answer --out /tmp/mem-probe
    python bench/replay_check.py --musique-memory data/mem-musique --work data/replay-check
    # after a refactor: the same, plus a per-question comparison with the replays made before it
    python bench/replay_check.py --musique-memory data/mem-musique --work data/replay-after \
        --baseline data/replay-check
    # on a MuSiQue memory whose near-ties order differently (see below), the other methods alone
    python bench/replay_check.py --musique-memory data/mem-musique --without neuropath \
        --runs musique-pooled-1-30-four-methods-seed-floor --work data/replay-check-without-neuropath
    # every run, and the table docs/runs/REPLAY.md shows
    python bench/replay_check.py --musique-memory data/mem-musique --table /tmp/replay-table.md

For each docs/runs/<run>/ with a replies.jsonl (and each sample run: it replays from the shipped
memory's recordings, sample_corpus/memory/responses.jsonl), the run's own settings are read from its
summary's stamp (dataset, scope, limit, methods, parameters, answers on or off, fate k) and the
run is made again with `--recorded --replies` into WORK/<run> (emptied first: a resumed run would
keep the old results). Per-question runs rebuild their small memories from the extraction replies
in the same file (cache hits, no model); pooled MuSiQue runs open --musique-memory; a MuSiQue slice
(--scope limit-pooled) imports its own small memory into WORK/<run>/memory. Then:

- against the committed summary.json: every figure (memrag.eval.replay.summary_figures: the
  summary without the stamp, the deviations table and the replay's own seconds) must be equal
  (a figure summaries gained after the run was made is listed, not compared);
- with --baseline: each question's ranked chunk ids, answer, fates and tokens, and the figures,
  against WORK/<run>/digest.json of an earlier check (written by every check), e.g. one made
  before a refactor.

MuSiQue: a memory imported on another machine or day holds the same content (the same
fingerprint, bde4deaa7650c69e), but its vectors can differ in the last bits, and near-tied
candidates then order differently: the runs made on 2026-12-01's import stopped at question 3 on
today's (at their own commit too) and were made again on it (docs/runs/REPLAY.md). A replay that
stops with "no recorded response" on another import is that; `--without neuropath` replays the
other methods. A --baseline made on the same memory compares two versions of the code exactly,
whatever the memory.

A run made at an older commit may legitimately differ from its summary (a prompt, default or
fix since); its line names the first differences, or why it could not replay (a changed prompt
misses the recorded replies). Exit status 0 when every run was identical (with --baseline: to
the baseline), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from memrag.eval.replay import differences, run_digest, summary_figures  # noqa: E402

RUNS = REPO / "docs" / "runs"
DEFAULT_BENCH = REPO.parent / "shared" / "bench"
DATA_FILES = {"musique": "musique/musique_train.json", "2wiki": "2wikimultihopqa/2wiki_subset.jsonl",
              "hotpotqa": "hotpotqa/hotpotqa_subset.jsonl"}
MUSIQUE_CORPUS = "musique/musique_train_corpus.json"
MUSIQUE_OPENIE = "musique/openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
SHOWN = 6  # differences printed per run
# Parameters added after some runs were made: a stamp without one ran with this value in effect
# (the behaviour before the parameter existed), whatever today's default is: one seed link per
# entity (seed_top, 2026-12-07), no class-word skip (skip_class_words, added off on 2026-12-02),
# the tracking prompt that carries the previous hop's chain (hop_prompt, added 'carry' on 2026-12-02),
# the generative tracker (tracker and its keep_* settings, 2026-12-02).
ADDED_LATER: dict[str, dict[str, Any]] = {"neuropath": {
    "seed_top": 1, "skip_class_words": False, "hop_prompt": "carry",
    "tracker": "generative", "keep_threshold": 0.5, "keep_top": 10}}
# Behaviour that changed without a parameter until one was added for it, keyed by a parameter that
# arrived in the same commit: a stamp without that marker was made before the change (the fused
# merge's floor came with hop_prompt, 80bc2f3, 2026-12-02; dp_floor names it since 2026-12-07).
MADE_BEFORE: dict[str, dict[str, dict[str, Any]]] = {"neuropath": {"hop_prompt": {"dp_floor": False}}}


def replay_params(method: str, stamped: dict[str, Any]) -> dict[str, Any]:
    """The parameters that replay a run's `method` as it was made: its stamp's, plus ADDED_LATER's and
    MADE_BEFORE's values for what the stamp predates."""
    before = {k: v for marker, values in MADE_BEFORE.get(method, {}).items() if marker not in stamped
              for k, v in values.items()}
    return {**ADDED_LATER.get(method, {}), **before, **stamped}
# Figures whose definition changed after some runs were made: a difference in them is listed with
# the reason, not counted against the run.
REDEFINED = {"tracker_precision": "2026-12-07 (issue 37): at hop h a path touches gold only through the passage "
                                  "of the triple that hop added"}

# Counts split in two after some runs were made: {new part: (the count it came out of, when)}. A
# summary that predates the split is compared with the parts added back together.
SPLIT = {"reachable within max_hops, but tracking did not go there":
         ("no seed reaches it within max_hops", "2026-12-02 (issue 26): NeuroPath's gold fates tell a tracker "
                                                "that stopped short from seeds that reach nothing")}

# Differences a run's replay is known to show and why, each excused only for its exact line
# ('path: committed → replayed'): anything else still counts.
KNOWN: dict[str, dict[str, str]] = {
    "hotpotqa-per-question-5-four-methods": dict.fromkeys(
        ("summary/indexing/prompt_tokens: 29768 → 29791", "summary/indexing/extraction_seconds: 2603.128 → 2632.837"),
        "the replay sums the 51 extraction replies the run committed (29,791 prompt tokens, 2,632.8 s); the "
        "live run's own total was 23 tokens and 29.7 s lower, matching no single reply (not traced further); the "
        "memories, rankings, answers and every method's figure are the same"),
    "musique-pooled-dense": dict.fromkeys(
        ('summary/indexing/fingerprint: "28c46103d29c0ab4" → "bde4deaa7650c69e"',
         "summary/indexing/entities: 19099 → 18246", "summary/indexing/engrams: 25526 → 24674",
         "summary/indexing/triples: 17183 → 17180"),
        "made on 2026-11-30 over that day's OpenIE import; the import cleans names against the passage since "
        "d50da6b (2026-12-01), which merges more names (every later MuSiQue run's "
        "memory is bde4deaa7650c69e with 18,246 entities); the passages and dense's figures are the same"),
    "hotpotqa-pooled-dense": {
        'summary/indexing/fingerprint: "b175d94c2e8f9707" → "65398e2926b27769"':
        "the passages are read as text safe to show since 7d623c5 (2026-12-01: bidirectional controls dropped), so "
        "27 of the 4,925 passages lose their U+200E marks (beside the Arabic or Persian name of 'Badr Hari', "
        "'Aghajari', …); the "
        "run's own commit (8280ca5) rebuilt here gives b175d94c2e8f9707 again; every figure is the same"},
}


def _summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


def replies_of(run: Path) -> Path | None:
    """The recordings a run replays from: its own replies.jsonl, or the committed run's file its
    command replayed from (`--replies docs/runs/<other>/replies.jsonl`); None when it kept none."""
    if (run / "replies.jsonl").is_file():
        return run / "replies.jsonl"
    words = shlex.split(_summary(run)["stamp"].get("command", ""))
    named = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--replies"]
    for name in named:
        path = (REPO / name).resolve()
        if path.is_file() and path.parent.parent == RUNS.resolve():
            return path
    return None


def needs_no_model(summary: dict[str, Any]) -> bool:
    """A run without answers whose methods call no model with its parameters, over a memory no model
    built (the OpenIE import, or passages only for dense): nothing to replay but the arithmetic."""
    from memrag.ask import resolve_params
    from memrag.methods import registry

    stamp = summary["stamp"]
    source = ((summary.get("indexing") or {}).get("llm") or {}).get("backend")
    if stamp["answers"] or source not in ("import", "passages-only"):
        return False
    return not any(registry.get(m).uses_llm(resolve_params(m, p)) for m, p in stamp["params"].items())


def how_it_replays(run: Path) -> str:
    """'replies' (its own, or the run's it replayed from), 'sample recordings' (the shipped sample
    memory's), 'no model' (needs_no_model), or why it cannot replay."""
    if not (run / "summary.json").is_file():
        return "cannot replay: no summary.json"
    summary = _summary(run)
    if replies_of(run) is not None:
        return "replies"
    if summary["stamp"].get("dataset") == "sample":
        return "sample recordings"
    if needs_no_model(summary):
        return "no model"
    return ("cannot replay: made live before runs kept their raw replies; missing: the replies of its "
            f"{_calls(summary)} model calls (re-running it live is a new run, not a replay)")


def _calls(summary: dict[str, Any]) -> str:
    """About how many model calls a run made: at query time, and building its memories."""
    per_q = (summary.get("all_methods") or {}).get("llm_calls_per_query")
    n = summary["stamp"].get("questions")
    built = (summary.get("indexing") or {}).get("llm_calls")
    asked = f"about {round(per_q * n)}" if per_q and n else "its"
    return asked + (f" query-time and {built} extraction" if built else "")


def every_run() -> dict[Path, str]:
    """Every docs/runs folder with how it replays (how_it_replays)."""
    return {d: how_it_replays(d) for d in sorted(RUNS.iterdir()) if d.is_dir()}


def committed_runs() -> list[Path]:
    """The runs that replay with one command."""
    return [d for d, how in every_run().items() if not how.startswith("cannot")]


def _questions_file(stamp: dict[str, Any], bench: Path, work: Path) -> Path:
    """The run's questions file: the shared one, or (MuSiQue 31-60, made from a scratch file) the
    shared file's entries cut the way docs/results.md says."""
    if stamp["dataset"] == "sample":
        return REPO / "sample_corpus"
    shared = bench / DATA_FILES[stamp["dataset"]]
    if Path(stamp["data"]).name == Path(shared).name:
        return shared
    if Path(stamp["data"]).name == "musique_31_60.json":
        cut = work / "musique_31_60.json"
        cut.write_text(json.dumps(json.loads(shared.read_text(encoding="utf-8"))[30:60]), encoding="utf-8")
        return cut
    raise ValueError(f"unknown questions file {stamp['data']}")


def kept_methods(run: Path, without: tuple[str, ...] = ()) -> list[str]:
    """The run's methods (its stamp's parameters name them), less `without`."""
    stamp = json.loads((run / "summary.json").read_text(encoding="utf-8"))["stamp"]
    return [m for m in stamp["params"] if m not in without]


def imported(summary: dict[str, Any]) -> bool:
    """A run over the MuSiQue memory imported from the OpenIE file: built by the run (its stamp names
    the file) or opened (its indexing record says the memory came from an import)."""
    llm = ((summary.get("indexing") or {}).get("llm") or {})
    return bool(summary["stamp"].get("import_openie")) or llm.get("backend") == "import"


def replay_command(run: Path, bench: Path, work: Path, musique_memory: Path,
                   without: tuple[str, ...] = ()) -> list[str]:
    """The `python -m memrag eval` command that replays `run` from its replies into WORK/<run>
    (less the methods `without` names)."""
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    stamp = summary["stamp"]
    methods = kept_methods(run, without)
    params = work / f"{run.name}.params.json"
    params.write_text(json.dumps({m: replay_params(m, stamp["params"][m]) for m in methods}),
                      encoding="utf-8")
    cmd = [sys.executable, "-m", "memrag", "eval", "--dataset", stamp["dataset"],
           "--data", str(_questions_file(stamp, bench, work)), "--scope", stamp["scope"],
           "--methods", ",".join(methods), "--params", str(params), "--fate-k", str(stamp["fate_k"]),
           "--recorded", "--out", str(work / run.name)]
    replies = replies_of(run)
    if replies is not None:  # else a sample run (the shipped memory's recordings) or one needing no model
        cmd += ["--replies", str(replies)]
    if stamp.get("limit"):
        cmd += ["--limit", str(stamp["limit"])]
    if not stamp["answers"]:
        cmd.append("--no-answer")
    if imported(summary):
        cmd += ["--corpus", str(bench / MUSIQUE_CORPUS), "--import-openie", str(bench / MUSIQUE_OPENIE)]
        if stamp["scope"] == "pooled":  # else the slice's own small memory, imported into the replay's folder
            cmd += ["--memory", str(musique_memory)]
    return cmd


def _keys_of(committed: Any, replayed: Any, at: str, added: list[str]) -> Any:
    """`replayed` without the keys `committed` lacks (figures added to summaries after that run was
    made), each dropped key's name put in `added`."""
    if isinstance(committed, dict) and isinstance(replayed, dict):
        added += [k for k in replayed if k not in committed]
        return {k: _keys_of(committed[k], v, f"{at}/{k}", added) for k, v in replayed.items() if k in committed}
    return replayed


def split_known(run: str, diff: list[str]) -> tuple[list[str], dict[str, str]]:
    """The differences that count, and those KNOWN for `run` (line → why)."""
    known = KNOWN.get(run, {})
    return [x for x in diff if x not in known], {x: known[x] for x in diff if x in known}


def fold_split(committed: Any, replayed: Any, folded: list[str]) -> Any:
    """`replayed` with each SPLIT part that `committed` predates added back into the count it came
    out of (the part's name put in `folded`)."""
    if not (isinstance(committed, dict) and isinstance(replayed, dict)):
        return replayed
    out = {k: fold_split(committed.get(k), v, folded) for k, v in replayed.items()}
    for part, (whole, _) in SPLIT.items():
        if part in out and part not in committed and whole in committed and whole in out:
            out[whole] += out.pop(part)
            folded.append(part)
    return out


def only_methods(figures: dict[str, Any], methods: list[str]) -> dict[str, Any]:
    """A summary's figures about `methods` alone: their entries, the pairs among them, their overlap
    with dense; the cost across methods (it sums every method's calls) is left out."""
    keep = set(methods)
    out = {k: v for k, v in figures.items() if k != "all_methods"}
    out["methods"] = {m: e for m, e in figures.get("methods", {}).items() if m in keep}
    out["paired"] = {p: v for p, v in figures.get("paired", {}).items() if set(p.split(" vs ")) <= keep}
    if "same_top5_as_dense" in figures:
        out["same_top5_as_dense"] = {m: n for m, n in figures["same_top5_as_dense"].items() if m in keep}
    return out


def split_redefined(diff: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The differences that count, and those in REDEFINED figures by figure name."""
    counted: list[str] = []
    redefined: dict[str, list[str]] = {}
    for line in diff:
        key = next((k for k in REDEFINED if f"/{k}" in line.split(":", 1)[0]), None)
        if key is None:
            counted.append(line)
        else:
            redefined.setdefault(key, []).append(line)
    return counted, redefined


def check(run: Path, args: argparse.Namespace) -> str:
    """Replay one run; its verdict: 'identical', 'differs (N figures: the first)', 'could not replay: why'
    (to the committed summary), and with --baseline '; baseline identical' or '; baseline DIFFERS'."""
    out = args.work / run.name
    if out.exists():
        shutil.rmtree(out)
    without = tuple(args.without)
    methods = kept_methods(run, without)
    if not methods:
        print(f"{run.name}: skipped (no method left)\n")
        return "skipped"
    cmd = replay_command(run, args.bench, args.work, args.musique_memory, without)
    print(f"## {run.name}\n$ {' '.join(cmd[1:])}", flush=True)
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        last = [x for x in done.stderr.splitlines() if x.strip()][-3:]
        print(f"{run.name}: could not replay (exit {done.returncode}): " + " | ".join(last) + "\n", flush=True)
        why = next((x.removeprefix("error: ") for x in reversed(last) if x.startswith("error: ")), last[-1] if last else "")
        return f"could not replay: {why.split(': the prompts')[0]}"
    digest = run_digest(out)
    (out / "digest.json").write_text(json.dumps(digest, ensure_ascii=False), encoding="utf-8")
    committed = summary_figures(json.loads((run / "summary.json").read_text(encoding="utf-8")))
    replayed = digest["summary"]
    if len(methods) < len(kept_methods(run)):
        committed, replayed = only_methods(committed, methods), only_methods(replayed, methods)
    added: list[str] = []
    folded: list[str] = []
    replayed = fold_split(committed, replayed, folded)
    diff, redefined = split_redefined(differences(committed, _keys_of(committed, replayed, "summary", added),
                                                  "summary", limit=1000))
    diff, known = split_known(run.name, diff)
    for line, why in known.items():
        print(f"  known: {line} ({why}; not counted)")
    for part in sorted(set(folded)):
        print(f"  '{part}' counted in '{SPLIT[part][0]}' (split from it on {SPLIT[part][1]}; the summary predates it)")
    verdict = "identical" if not diff else f"differs ({len(diff)} figures: {'; '.join(diff[:3])})"
    if known and not diff:
        verdict = f"identical but for {len(known)} known line(s) (KNOWN: {', '.join(sorted({x.split(':')[0] for x in known}))})"
    for key, lines in redefined.items():
        print(f"  {len(lines)} figure(s) of {key} differ as redefined on {REDEFINED[key]} (not counted)")
    print(f"{run.name}: {'identical' if not diff else f'differs ({len(diff)} figures)'} to its committed summary.json"
          + (f" (and {len(added)} figures it predates: {', '.join(sorted(set(added)))})" if added else ""))
    for line in diff[:SHOWN]:
        print(f"  {line}")
    if args.baseline is not None:
        base = args.baseline / run.name / "digest.json"
        bdiff = differences(json.loads(base.read_text(encoding="utf-8")), digest, "", limit=1000) \
            if base.is_file() else [f"no {base}"]
        print(f"  against the baseline {base}: {'identical' if not bdiff else f'DIFFERS ({len(bdiff)})'}")
        for line in bdiff[:SHOWN]:
            print(f"    {line}")
        verdict += "; baseline " + ("identical" if not bdiff else "DIFFERS")
    print(flush=True)
    return verdict


def replays_from(run: Path, how: str) -> str:
    """The table's 'replays from' cell for a run that replays `how` (how_it_replays)."""
    if how == "replies":
        source = replies_of(run)
        return "its replies" if source is not None and source.parent == run else f"{source.parent.name}'s replies"
    return {"sample recordings": "the sample memory's recordings", "no model": "nothing (no model call)"}.get(how, "–")


def table(results: dict[str, str]) -> str:
    """A markdown table of every run: what it replays from and its verdict (`results`, by run name;
    a run that cannot replay says why)."""
    rows = ["| run | replays from | verdict |", "|---|---|---|"]
    for run, how in every_run().items():
        verdict = results.get(run.name, how if how.startswith("cannot") else "not checked")
        rows.append(f"| {run.name} | {replays_from(run, how)} | {verdict.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=REPO / "data" / "replay-check",
                    help="replays go to WORK/<run> (each emptied first)")
    ap.add_argument("--bench", type=Path, default=DEFAULT_BENCH, help="the shared benchmark folder")
    ap.add_argument("--musique-memory", type=Path, default=REPO / "data" / "mem-musique",
                    help="the pooled MuSiQue memory built from the OpenIE import")
    ap.add_argument("--baseline", type=Path, help="an earlier check's WORK: compare each question too")
    ap.add_argument("--runs", help="comma-separated run names (default: every run with replies)")
    ap.add_argument("--without", default="", help="comma-separated methods to leave out of every replay "
                    "(one whose replies no longer match, e.g. neuropath on MuSiQue: see the docstring)")
    ap.add_argument("--table", type=Path, help="also write every run's verdict as a markdown table here "
                    "(docs/runs/REPLAY.md's table)")
    args = ap.parse_args(argv)
    args.without = [m.strip() for m in args.without.split(",") if m.strip()]
    missing = [str(args.bench / f) for f in (*DATA_FILES.values(), MUSIQUE_CORPUS, MUSIQUE_OPENIE)
               if not (args.bench / f).is_file()]
    if missing:
        raise SystemExit("benchmark data not found: " + ", ".join(missing) + " (give --bench DIR)")
    args.work.mkdir(parents=True, exist_ok=True)
    runs = committed_runs()
    if args.runs:
        wanted = set(args.runs.split(","))
        runs = [r for r in runs if r.name in wanted]
    results = {r.name: check(r, args) for r in runs}
    print("summary:\n" + "\n".join(f"  {n}: {v}" for n, v in results.items()))
    if not args.runs:  # what cannot be replayed, and why
        print("\n".join(f"  {d.name}: {how}" for d, how in every_run().items() if how.startswith("cannot")))
    if args.table is not None:
        args.table.write_text(table(results), encoding="utf-8")
    # with a baseline, the question is whether the code changed anything; without, the committed figures
    ok = [v.endswith("baseline identical") if args.baseline else v.startswith("identical") or v == "skipped"
          for v in results.values()]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
