"""An evaluation run asked again on another version of its memory (after edits): the same
questions, methods, parameters and k, over the memory's live version, into a new run folder.

Every call whose prompt did not change is answered from the first run's stored traces
(memrag.explain.ask_again's ReusePreviousLLM: same engine, same stage, same messages → the same
reply, marked cached); only changed calls go to the engine given (a live model, or a replay of the
memory's recordings). The new folder's `again.json` names the run it repeats and the memory
version it used, so the Evaluate page opens the two compared (memrag.eval.run_diff).

Pooled scopes only: a per-question run has one memory per question, which no edit names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from memrag import jsonsafe
from memrag.eval.config import EvalConfig
from memrag.eval.datasets import load_dataset, scoped_corpus
from memrag.eval.rundir import write_json_atomic
from memrag.eval.scoring import map_chunks
from memrag.explain.ask_again import PreviousReplies, ReusePreviousLLM
from memrag.filesafe import read_text
from memrag.index import store
from memrag.index.memory import Memory
from memrag.llm.base import LLM
from memrag.tracefile import record_traces

AGAIN = "again.json"
AGAIN_MAX_BYTES = 100_000  # a few paths and names


@dataclass(frozen=True)
class Rerun:
    """A run to ask again: its config (the memory and out folder set), and what it repeats."""
    config: EvalConfig
    before: Path  # the first run's folder
    memory: Path
    version: str  # the memory's live version when the rerun was planned
    fingerprint: str


def _path(v: Any) -> Path | None:
    return Path(v) if isinstance(v, str) and v else None


def plan_rerun(before: Path, run: dict[str, Any], records: Sequence[dict[str, Any]], memory_dir: Path,
               memory: Memory, out_root: Path) -> Rerun:
    """The rerun of the run in `before` (its run.json `run`, its finished `records`) on `memory`,
    opened from `memory_dir`'s live version. ValueError, saying why, when it cannot be asked again:
    a per-question run, a memory the run already used (nothing changed), or one that lacks some of
    the run's passages (asking would build them)."""
    ident = run.get("identity") or {}
    stamp = run.get("stamp") or {}
    if ident.get("scope") not in ("pooled", "limit-pooled"):
        raise ValueError("only a pooled run can be asked again on an edited memory (a per-question run has one "
                         "memory per question)")
    data = _path(ident.get("data"))
    if data is None or not records:
        raise ValueError(f"{before} holds no finished question and no data file to ask again")
    used = {r.get("memory") for r in records}
    if memory.fingerprint() in used:
        raise ValueError(f"{memory_dir} at its live version is the memory this run used: edit it first")
    config = EvalConfig(dataset=str(ident.get("dataset")), data=data, out=Path(), scope=str(ident["scope"]),
                        limit=stamp.get("limit"), methods=tuple(ident.get("methods") or ()),
                        corpus=_path(ident.get("corpus")), import_openie=_path(ident.get("import_openie")),
                        memory=Path(memory_dir), answer=bool(ident.get("answer", True)),
                        params=dict(ident.get("params") or {}), fate_k=int(ident.get("fate_k") or 5),
                        command=f"asked again on {memory_dir}")
    ds = load_dataset(config.dataset, config.data, config.corpus)
    _, passages = scoped_corpus(ds, config.scope, config.limit)
    missing = [pid for pid in map_chunks(memory, ds, passages).missing if ds.passages[pid].text.strip()]
    if missing:
        raise ValueError(f"{memory_dir} lacks {len(missing)} passage(s) of this run's corpus: asking again would "
                         "build them; give a memory made from the same passages")
    version = store.current_version_dir(Path(memory_dir)).name
    out = Path(out_root) / f"{Path(before).name}-again-{memory.fingerprint()[:10]}"
    return Rerun(EvalConfig(**{**config.__dict__, "out": out}), Path(before), Path(memory_dir), version,
                 memory.fingerprint())


def reusing_llm(records: Sequence[dict[str, Any]], engine: LLM) -> ReusePreviousLLM:
    """`engine` behind the first run's replies: a call whose prompt did not change is answered
    from the stored traces, only changed calls reach `engine`."""
    wrapped = ReusePreviousLLM(PreviousReplies([t for r in records for t in record_traces(r)]), engine)
    # the run's stamp says "recorded" when its new calls replay recordings (reused ones replay the first run)
    wrapped.replays = bool(getattr(engine, "replays", False))  # type: ignore[attr-defined]
    return wrapped


def write_again(rerun: Rerun) -> None:
    """Name, in the new folder, the run it repeats and the memory version it used (written before
    the first question, atomically)."""
    out = Path(rerun.config.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / AGAIN, {"before": str(Path(rerun.before).resolve()), "memory": str(rerun.memory),
                                    "version": rerun.version, "fingerprint": rerun.fingerprint})


def read_again(folder: Path) -> dict[str, str] | None:
    """The folder's again.json (None when the run is not a rerun); ValueError when it is damaged."""
    path = Path(folder) / AGAIN
    if not path.exists():
        return None
    data = jsonsafe.loads(read_text(path, AGAIN_MAX_BYTES, what="rerun description"))
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("before", "memory", "version")):
        raise ValueError(f"{path}: not a rerun description (before, memory and version as text)")
    return {k: str(v) for k, v in data.items()}
