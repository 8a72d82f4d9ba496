"""The evaluation run: questions × methods over the corpus the scope names, one JSON line each.

    run = run_eval(EvalConfig(dataset="musique", data=..., out=..., scope="pooled"))
    for event in run: ...   # start, index (memory building), memory, question, done

Per question (memrag.eval.scoring): every method is asked (the query-entity call is shared),
the ranked list is mapped to the dataset's recall units and deduplicated before recall@1/2/5/10, the answer is
scored (EM / F1 with SQuAD normalisation, raw EM beside it), each gold passage gets its fate
(memrag.eval.gold), and tokens, LLM calls and seconds are recorded. The line is appended to
`results.jsonl` and flushed to disk before the next question starts; `summary.json` is
recomputed from those lines. A rerun with the same settings skips finished questions; a
torn last line (a crash while writing it) is cut off and that question is done again.

Scopes (memrag.eval.datasets.scoped_corpus): `pooled` = the whole deduplicated corpus, one
memory (with `import_openie`, the OpenIE file's graph instead of LLM extraction);
`limit-pooled` = one memory of the first N questions' passages; `per-question` = one small
memory per question, kept under `out/memories/<qid>` so a rerun reuses it. Opening or building
each memory is memrag.eval.memories.ready_memory.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memrag.ask import ask, resolve_params, stamp_for
from memrag.config import IndexParams, params_dict
from memrag.embed import Embedder
from memrag.eval import rundir
from memrag.eval.config import EvalConfig, EvalEvent, dense_only
from memrag.eval.datasets import SCOPES, Dataset, Passage, Question, load_dataset, question_passages, scoped_corpus
from memrag.eval.memories import ready_memory
from memrag.eval.rundir import RESULTS, RUN, append_record, read_results, write_json_atomic
from memrag.eval.scoring import RECALL_KS, score_question
from memrag.llm.base import LLM
from memrag.prompts import STAGE_VERSIONS
from memrag.methods import registry


# ------------------------------------------------------------------ the run record (run.json)
def _check_config(config: EvalConfig) -> None:
    if config.scope not in SCOPES:
        raise ValueError(f"unknown corpus scope {config.scope!r}; expected one of {', '.join(SCOPES)}")
    unknown = [m for m in config.methods if m not in registry.names()]
    if unknown or not config.methods:
        raise ValueError(f"unknown or no method(s) {', '.join(unknown)}; choose from {', '.join(registry.names())}")
    if len(set(config.methods)) != len(config.methods):
        raise ValueError("a method is named twice")
    extra = sorted(set(config.params) - set(config.methods))
    if extra:
        raise ValueError(f"parameters given for method(s) not being run: {', '.join(extra)}")
    if config.import_openie is not None:
        if config.dataset not in ("musique", "hipporag"):
            raise ValueError("--import-openie applies to MuSiQue / HippoRAG files (an OpenIE file of their corpus)")
        if config.corpus is None:
            raise ValueError("--import-openie needs --corpus (the passages the OpenIE file was made from)")
    if config.memory is not None and config.scope == "per-question":
        raise ValueError("--memory names one memory; the per-question scope builds one per question under --out")
    if config.fate_k < 1:
        raise ValueError(f"fate_k must be at least 1, got {config.fate_k}")


def _path_str(p: Path | None) -> str | None:
    return None if p is None else str(Path(p).resolve())


def run_identity(config: EvalConfig, params: dict[str, Any], llm: LLM | None, embedder: Embedder) -> dict[str, Any]:
    """Settings a resumed run must share with the first one (else its lines would mix two runs)."""
    ident = {
        "dataset": config.dataset, "data": _path_str(config.data), "corpus": _path_str(config.corpus),
        "import_openie": _path_str(config.import_openie), "scope": config.scope, "methods": list(config.methods),
        "answer": config.answer, "params": {m: params_dict(p) for m, p in params.items()}, "fate_k": config.fate_k,
        "embedder": embedder.model_id, "llm": llm.identity() if llm is not None else None,
    }
    if config.scope == "limit-pooled":
        ident["limit"] = config.limit  # the corpus itself depends on it
    return ident


def run_stamp(config: EvalConfig, identity: dict[str, Any], questions: list[Question], passages: list[Passage],
              llm: LLM | None) -> dict[str, Any]:
    """The reproducibility stamp of the whole run: a question's stamp (its corpus
    named by the run's files below instead), and what the run was asked to do."""
    stamp = dataclasses.asdict(stamp_for(llm, identity["embedder"], params=identity["params"]))
    del stamp["corpus"]
    stamp |= {
        "index_params": params_dict(IndexParams()),
        "stage_versions": dict(STAGE_VERSIONS),
        "scope": config.scope,
        "dataset": config.dataset,
        "data": identity["data"],
        "corpus_file": identity["corpus"],
        "import_openie": identity["import_openie"],
        "limit": config.limit,
        "questions": len(questions),
        "corpus_size": len(passages),
        "answers": config.answer,
        "fate_k": config.fate_k,
        "recall_ks": list(RECALL_KS),
        "command": config.command,
        "replies": "recorded" if getattr(llm, "replays", False) else "live",
        "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if config.scope == "per-question":
        stamp["passages_per_question"] = round(sum(len(q.passage_ids) for q in questions) / max(1, len(questions)), 2)
    return stamp


def _brief(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _current_names(params: dict[str, Any]) -> dict[str, Any]:
    """A run folder's recorded parameters under today's names (a renamed parameter, such as
    EcphoryRAG's depth → rounds, reads as its new name); what cannot be read stays as it was."""
    out = {}
    for method, p in params.items():
        try:
            out[method] = params_dict(registry.params_of(method, p))
        except (ValueError, TypeError):
            out[method] = p
    return out


def open_run(out: Path, identity: dict[str, Any], stamp: dict[str, Any]) -> dict[str, Any]:
    """Start run.json, or check that the run in `out` had the same settings and refresh it."""
    path = out / RUN
    if path.exists():
        try:
            run = rundir.read_run_file(path)
        except ValueError as e:  # UnreadableFile too: a pipe, a device, a file past the bound
            raise ValueError(f"{path} is not readable JSON ({e}); it records the run in {out}") from e
        old = dict(run.get("identity", {}))
        if isinstance(old.get("params"), dict):
            old["params"] = _current_names(old["params"])
        diff = sorted(k for k in set(old) | set(identity) if old.get(k) != identity.get(k))
        if diff:
            said = "; ".join(f"{k}: {_brief(old.get(k))} → {_brief(identity.get(k))}" for k in diff)
            raise ValueError(f"{out} holds a run with other settings ({said}); "
                             "resume with the same settings or choose another --out")
        first = run["stamp"]
        if first.get("memrag_revision") != stamp["memrag_revision"]:
            first.setdefault("resumed_revisions", []).append(stamp["memrag_revision"])
        # The question count may grow or shrink between runs (limit); the rest is the first run's.
        for k in ("limit", "questions", "corpus_size", "command"):
            first[k] = stamp[k]
        run["stamp"] = first
    else:
        run = {"identity": identity, "stamp": stamp, "indexing": None}
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, run)
    return run


# ------------------------------------------------------------------ the run
def _needs_llm(config: EvalConfig, params: dict[str, Any]) -> bool:
    """Answers and retrievals that call the LLM need one, and so does a memory built by extraction
    (a dense run builds a passages-only memory, an OpenIE import needs no extraction)."""
    if config.answer or any(registry.get(m).uses_llm(params[m]) for m in config.methods):
        return True
    return not (dense_only(config) or config.import_openie is not None)


def run_eval(config: EvalConfig, *, llm: LLM | None = None, embedder: Embedder | None = None,
             llm_factory: Callable[[], LLM] | None = None) -> Iterator[EvalEvent]:
    """Run (or resume) an evaluation, yielding progress events; see the module docstring.

    `llm_factory` is called only if the run needs an LLM and `llm` is not given (a dense,
    retrieval-only run over an imported memory needs none). Everything that can refuse the run is
    checked before the run folder is touched; the folder is then locked from the first read of its
    results to the last write (a second writer is refused: RunBusyError)."""
    _check_config(config)
    ds = load_dataset(config.dataset, config.data, config.corpus)
    questions, passages = scoped_corpus(ds, config.scope, config.limit)
    params = {m: resolve_params(m, config.params.get(m)) for m in config.methods}
    if llm is None and _needs_llm(config, params):
        if llm_factory is None:
            raise ValueError("this run needs an LLM (answers, NeuroPath/EcphoryRAG/HippoRAG 2 with recognition, "
                             "or building a memory): "
                             "none was given")
        llm = llm_factory()
    with rundir.writing_run(Path(config.out)):
        yield from _run(config, ds, questions, passages, params, llm, embedder)


def _run(config: EvalConfig, ds: Dataset, questions: list[Question], passages: list[Passage],
         params: dict[str, Any], llm: LLM | None, embedder: Embedder | None) -> Iterator[EvalEvent]:
    from memrag.eval import report

    out = Path(config.out)
    results_path = out / RESULTS
    records = {r["qid"]: r for r in reversed(read_results(results_path))}  # the first line of a qid wins
    wanted = {q.qid for q in questions}
    todo = [q for q in questions if q.qid not in records]
    if embedder is None:
        from memrag.embed import get_embedder
        embedder = get_embedder()
    identity = run_identity(config, params, llm, embedder)
    run = open_run(out, identity, run_stamp(config, identity, questions, passages, llm))
    yield EvalEvent("start", {"questions": len(questions), "done": len(questions) - len(todo), "todo": len(todo),
                              "scope": config.scope, "corpus_size": len(passages)})

    def finished() -> list[dict[str, Any]]:
        return [records[q.qid] for q in questions if q.qid in records]

    memory = units = None
    if config.scope != "per-question" and todo:
        memory, units, info = yield from ready_memory(config, ds, passages, rundir.pooled_memory_path(config),
                                                      f"{config.dataset}-{config.scope}", embedder, llm)
        before = run.get("indexing")
        if before and before.get("fingerprint") != info["fingerprint"]:
            raise ValueError(f"the memory at {info['path']} is not the one the finished questions of this run "
                             "used (its content changed): choose another --out to evaluate it")
        if not before:
            run["indexing"] = info
            write_json_atomic(out / RUN, run)
    elif config.scope == "per-question":
        run["indexing"] = {"per_question": True}
        write_json_atomic(out / RUN, run)

    for i, q in enumerate(questions):
        if q.qid in records:
            continue
        t0 = time.perf_counter()
        q_info = None
        if config.scope == "per-question":
            path = rundir.question_memory_dir(out, q.qid)
            memory, units, q_info = yield from ready_memory(config, ds, question_passages(ds, q), path,
                                                            f"{config.dataset}-{q.qid}", embedder, llm)
        assert memory is not None and units is not None
        corpus_label = f"{config.dataset}:{config.scope}" + (f":{q.qid}" if q_info else "")
        traces = ask(memory, q.question, llm=llm, embedder=embedder, methods=list(config.methods), params=params,
                     answer=config.answer, corpus=f"{corpus_label}@{memory.fingerprint()}")
        record = score_question(q, traces, units, config.fate_k)
        record["memory"] = memory.fingerprint()
        if q_info is not None:
            record["indexing"] = q_info
        record["seconds"] = round(time.perf_counter() - t0, 3)
        append_record(results_path, record)
        records[q.qid] = record
        summary = report.write_summary(out, run, finished())
        yield EvalEvent("question", {
            "i": i, "total": len(questions), "qid": q.qid, "done": sum(1 for x in wanted if x in records),
            "metrics": {m: v["metrics"] for m, v in record["methods"].items()}, "summary": summary})
    summary = report.write_outputs(out, run, finished())
    yield EvalEvent("done", {"out": str(out), "summary": summary})


def run_to_end(events: Iterator[EvalEvent]) -> dict[str, Any]:
    """Drain a run and return its summary (for scripts and tests)."""
    summary = None
    for ev in events:
        if ev.kind == "done":
            summary = ev.data["summary"]
    if summary is None:
        raise RuntimeError("the evaluation ended without a summary")
    return summary


__all__ = ["run_eval", "run_to_end"]
