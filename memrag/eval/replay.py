"""Replay identity: what of an evaluation run must come out the same when it is replayed from its
recorded replies, and where two runs differ.

A run's *figures* are its summary without what measures the machine rather than the methods
(the replay's own seconds, where the memory was opened from) and without the stamp and the
deviations table (they describe the code, not its results). A run's *digest* adds, per question
and method, the ranked chunk ids, the answer, each gold passage's fate and the token counts: a
compact record that changes whenever a ranking, an answer or a fate does.

Used by tests/test_replay_identity.py (the sample's snapshot, bench/replay_snapshot.py) and
bench/replay_check.py (the committed runs in docs/runs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memrag.eval.rundir import RESULTS, SUMMARY, read_results

# Summary parts that describe the code or the invocation, not what the methods did.
NOT_FIGURES = ("stamp", "deviations")
# Keys (at any depth) whose values measure this machine or this checkout: a replay may differ there.
VOLATILE = frozenset({"seconds", "seconds_per_query", "retrieval_seconds", "path", "source"})
RANKED_TOP = 20  # chunk ids kept per method and question in a digest


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def summary_figures(summary: dict[str, Any]) -> dict[str, Any]:
    """Everything a summary says about the methods' results, nothing that measures the machine."""
    return _without_volatile({k: v for k, v in summary.items() if k not in NOT_FIGURES})


def method_digest(entry: dict[str, Any], top: int = RANKED_TOP) -> dict[str, Any]:
    """One method's result for one question, reduced to what a replay must reproduce."""
    tokens = entry.get("tokens") or {}
    return {
        "ranked": [r["chunk_id"] for r in (entry.get("trace") or {}).get("ranked", [])[:top]],
        "answer": entry.get("answer"),
        "fates": [[f.get("unit"), f.get("fate"), f.get("rank")] for f in entry.get("gold_fate", [])],
        "tokens": [tokens.get("prompt_tokens"), tokens.get("completion_tokens"), tokens.get("llm_calls")],
        "metrics": entry.get("metrics"),
    }


def run_digest(out: Path, top: int = RANKED_TOP) -> dict[str, Any]:
    """A run folder's figures and, per question (in file order) and method, its digest."""
    out = Path(out)
    summary = json.loads((out / SUMMARY).read_text(encoding="utf-8"))
    questions = {r["qid"]: {m: method_digest(e, top) for m, e in r["methods"].items()}
                 for r in read_results(out / RESULTS, repair=False)}
    return {"methods": list(summary.get("methods", {})), "summary": summary_figures(summary),
            "questions": questions}


def differences(expected: Any, actual: Any, where: str = "", limit: int = 20) -> list[str]:
    """Where two JSON values differ, as 'path: expected → actual' lines (at most `limit`).
    Numbers compare exactly: a replay is meant to be bit-identical."""
    found: list[str] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in list(a) + [k for k in b if k not in a]:
                if k not in b:
                    found.append(f"{at}/{k}: {_brief(a[k])} → (missing)")
                elif k not in a:
                    found.append(f"{at}/{k}: (missing) → {_brief(b[k])}")
                else:
                    walk(a[k], b[k], f"{at}/{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{at}[{i}]")
        elif type(a) is not type(b) or a != b:
            found.append(f"{at}: {_brief(a)} → {_brief(b)}")

    walk(expected, actual, where)
    return found


def _brief(value: Any, width: int = 100) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def replay_sample(out: Path, methods: tuple[str, ...] | None = None) -> Path:
    """Replay the sample's demo questions from the shipped memory's recordings into `out` (the
    run `python -m memrag eval --dataset sample --scope pooled --recorded` makes)."""
    from memrag.demo import SAMPLE_DIR, sample_memory_dir
    from memrag.eval.config import EvalConfig
    from memrag.eval.runner import run_eval, run_to_end
    from memrag.llm.recordings import Recordings

    rec = Recordings.open(sample_memory_dir())
    if rec is None:
        raise FileNotFoundError(f"no recordings in {sample_memory_dir()}")
    config = EvalConfig(dataset="sample", data=SAMPLE_DIR, out=Path(out), scope="pooled")
    if methods is not None:
        config.methods = tuple(methods)
    run_to_end(run_eval(config, llm=rec.replay_llm()))
    return Path(out)


__all__ = ["RANKED_TOP", "differences", "method_digest", "replay_sample", "run_digest", "summary_figures"]
