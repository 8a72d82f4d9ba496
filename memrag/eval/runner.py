"""The evaluation run: questions × methods over the corpus the scope names, one JSON line each.

    run = run_eval(EvalConfig(dataset="musique", data=..., out=..., scope="pooled"))
    for event in run: ...   # start, index (memory building), memory, question, done

Per question: every method is asked (the query-entity call is shared), the ranked list is
mapped to the dataset's recall units and deduplicated before recall@1/2/5/10, the answer is
scored (EM / F1 with SQuAD normalisation, raw EM beside it), each gold passage gets its fate
(memrag.eval.gold), and tokens, LLM calls and seconds are recorded. The line is appended to
`results.jsonl` and flushed to disk before the next question starts; `summary.json` is
recomputed from those lines. A rerun with the same settings skips finished questions; a
torn last line (a crash while writing it) is cut off and that question is done again.

Scopes (memrag.eval.datasets.scoped_corpus): `pooled` = the whole deduplicated corpus, one
memory (with `import_openie`, the OpenIE file's graph instead of LLM extraction);
`limit-pooled` = one memory of the first N questions' passages; `per-question` = one small
memory per question, kept under `out/memories/<qid>` so a rerun reuses it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from memrag.index import store
from memrag.ask import METHODS, ask, resolve_params, stamp_for
from memrag.index.build import build_memory
from memrag.config import IndexParams, params_dict
from memrag.embed import Embedder
from memrag.eval import rundir
from memrag.eval.config import EvalConfig
from memrag.eval.datasets import SCOPES, Dataset, Passage, Question, load_dataset, question_passages, scoped_corpus
from memrag.eval.metrics import exact_match, f1_score, raw_exact_match, recall_at_k
from memrag.eval.gold import NOT_IN_MEMORY, best_fate, gold_fate
from memrag.eval.rundir import RESULTS, RUN, append_record, read_results, write_json_atomic
from memrag.index.readers import Document, benchmark_document, read_paths
from memrag.llm.base import LLM
from memrag.index.memory import Memory
from memrag.index.openie import import_openie
from memrag.index.passages_only import PASSAGES_ONLY, build_passages_only, is_passages_only
from memrag.prompts import STAGE_VERSIONS
from memrag.trace import Trace, token_sum
from memrag.viz.tables import ALL_METHODS, totals_across

RECALL_KS = (1, 2, 5, 10)
RANKED_KEPT = 100  # ranked entries kept in each stored trace; recall and fates are computed before the cut
TOP_PASSAGES = 10  # distinct passages listed per method in each record, for drill-down

@dataclass
class EvalEvent:
    kind: str  # start | index | memory | question | done
    data: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------ chunks → recall units
@dataclass
class ChunkUnits:
    """Which passage (and so which recall unit) each chunk of a memory belongs to."""
    pid_of_chunk: dict[int, str]
    unit_of_chunk: dict[int, str]
    chunks_of_unit: dict[str, list[int]]
    missing: list[str]  # passages of the scope with no chunk in the memory

    def unit(self, chunk_id: int) -> str:
        # A chunk of no known passage still takes a slot of its own in the ranking.
        return self.unit_of_chunk.get(chunk_id, f"chunk:{chunk_id}")


def map_chunks(memory: Memory, ds: Dataset, passages: list[Passage]) -> ChunkUnits:
    """Map each memory document to its passage: by (title, text) as the corpus gives them (an
    OpenIE import keeps them verbatim), else by document id (built memories use the pid).
    Refuses a memory holding documents outside the scope: its recall would not be the scope's."""
    by_text = {(p.title, p.text): p for p in ds.passages.values()}
    in_scope = {p.pid for p in passages}
    pid_of_doc: dict[str, str] = {}
    foreign: list[str] = []
    for d in memory.documents:
        p = by_text.get((d.title, d.text)) or ds.passages.get(d.doc_id)
        if p is None or p.pid not in in_scope:
            foreign.append(d.doc_id)
        else:
            pid_of_doc[d.doc_id] = p.pid
    if foreign:
        raise ValueError(
            f"the memory holds {len(foreign)} document(s) that are not passages of this {ds.name} scope "
            f"(first: {foreign[0]!r}); it was built for another corpus or scope: give another --memory or --out")
    pid_of_chunk, unit_of_chunk, chunks_of_unit = {}, {}, {}
    for c in memory.chunks:
        pid = pid_of_doc.get(c.doc_id)
        if pid is None:
            continue
        unit = ds.passages[pid].unit
        pid_of_chunk[c.chunk_id] = pid
        unit_of_chunk[c.chunk_id] = unit
        chunks_of_unit.setdefault(unit, []).append(c.chunk_id)
    covered = set(pid_of_chunk.values())
    return ChunkUnits(pid_of_chunk, unit_of_chunk, chunks_of_unit, [p.pid for p in passages if p.pid not in covered])


# ------------------------------------------------------------------ scoring one question
def _count(v: Any) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


def call_totals(traces: list[Trace]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per method (the shared query-entity call billed to each) and across methods (counted once),
    with the app's own rules (memrag.viz.tables.totals_across)."""
    rows = {r["method"]: r for r in totals_across(traces).to_dict("records")}

    def pick(r: dict[str, Any]) -> dict[str, Any]:
        return {"prompt_tokens": _count(r["prompt tokens"]), "completion_tokens": _count(r["completion tokens"]),
                "llm_calls": int(r["calls"]), "cached_calls": int(r["recorded calls"])}

    return {t.method: pick(rows[t.method]) for t in traces}, pick(rows[ALL_METHODS])


def _answer_scores(trace: Trace, answers: list[str]) -> dict[str, float | None]:
    if trace.answer is None:
        return {"em": None, "raw_em": None, "f1": None}
    a = trace.answer
    return {"em": exact_match(a.answer, answers), "raw_em": raw_exact_match(a.raw_answer, answers),
            "f1": f1_score(a.answer, answers)}


def unit_fates(trace: Trace, q: Question, units: ChunkUnits, k: int) -> list[dict[str, Any]]:
    """One fate per gold passage (unit): the best of its chunks' fates."""
    out = []
    for u in q.gold_units:
        cids = units.chunks_of_unit.get(u, [])
        if not cids:
            out.append({"unit": u, "chunk_id": None, "fate": NOT_IN_MEMORY,
                        "detail": "no chunk of this gold passage is in the memory", "rank": None})
            continue
        best = best_fate(gold_fate(trace, cids, k, unit_of=units.unit))
        out.append({"unit": u, **best})
    return out


def score_question(q: Question, traces: list[Trace], units: ChunkUnits, fate_k: int) -> dict[str, Any]:
    per_method, across = call_totals(traces)
    methods: dict[str, Any] = {}
    for t in traces:
        ranked_units = [units.unit(r.chunk_id) for r in t.ranked]
        metrics: dict[str, float | None] = {f"recall@{k}": recall_at_k(ranked_units, q.gold_units, k)
                                            for k in RECALL_KS}
        metrics.update(_answer_scores(t, q.answers))
        top: list[str] = []
        seen: set[str] = set()
        for r in t.ranked:
            u = units.unit(r.chunk_id)
            if u not in seen:
                seen.add(u)
                top.append(units.pid_of_chunk.get(r.chunk_id, f"chunk:{r.chunk_id}"))
                if len(top) == TOP_PASSAGES:
                    break
        trace = t.to_dict()
        trace["ranked"] = trace["ranked"][:RANKED_KEPT]
        methods[t.method] = {
            "metrics": metrics,
            "gold_fate": unit_fates(t, q, units, fate_k),
            "tokens": per_method[t.method],
            "seconds": t.seconds,
            "retrieval_seconds": t.retrieval_seconds,
            "answer": t.answer.answer if t.answer is not None else None,
            "answer_capped": list(t.answer.capped) if t.answer is not None else [],
            "top_passages": top,
            "ranked_total": len(t.ranked),
            "trace": trace,
        }
    return {"qid": q.qid, "question": q.question, "answers": q.answers, "gold_units": q.gold_units,
            "hops": q.meta.get("hops"), "methods": methods, "all_methods": across}


# ------------------------------------------------------------------ memories
def memory_indexing(memory: Memory) -> dict[str, Any]:
    """What the memory holds and what building it cost (from its own ledger and log)."""
    rows = memory.ledger_rows
    # an unknown count in either column leaves both unknown
    known = token_sum(n for r in rows for n in (r.get("prompt_tokens"), r.get("completion_tokens"))) is not None
    return {
        "fingerprint": memory.fingerprint(),
        "llm": dict(memory.llm),
        "documents": len(memory.documents), "chunks": len(memory.chunks), "entities": len(memory.entities),
        "engrams": len(memory.engrams), "triples": len(memory.triples),
        "failures": sum(1 for x in memory.extraction_log.values() if x.status == "failed"),
        "llm_calls": len(memory.ledger_rows),
        "prompt_tokens": token_sum(r["prompt_tokens"] for r in rows) if known else None,
        "completion_tokens": token_sum(r["completion_tokens"] for r in rows) if known else None,
        "extraction_seconds": round(sum(x.seconds for x in memory.extraction_log.values()), 3),
    }


def _sample_docs_dir(config: EvalConfig) -> Path:
    if config.corpus is not None:
        return Path(config.corpus)
    data = Path(config.data)
    if data.is_dir():
        return data / "docs" if (data / "docs").is_dir() else data
    return data.parent / "docs"


def _documents(config: EvalConfig, passages: list[Passage]) -> list[Document]:
    """The scope's passages as documents. Benchmark passages are never split; the sample corpus is
    read from its files exactly as `python -m memrag index` reads them (doc id = file stem = pid)."""
    if config.dataset != "sample":
        return [benchmark_document(p.pid, p.title, p.text, config.dataset) for p in passages]
    folder = _sample_docs_dir(config)
    report = read_paths([folder / f"{p.pid}.md" for p in passages], IndexParams())
    if report.problems:
        raise ValueError("cannot read sample documents: "
                         + "; ".join(f"{x.name}: {x.reason}" for x in report.problems))
    return report.documents


def _openie_files(config: EvalConfig, passages: list[Passage], work: Path) -> tuple[Path, Path]:
    """The OpenIE and corpus files for these passages: the given files when the scope is the whole
    corpus, else index-aligned subsets of both written under `work`."""
    assert config.import_openie is not None and config.corpus is not None
    corpus = json.loads(Path(config.corpus).read_text(encoding="utf-8"))
    openie = json.loads(Path(config.import_openie).read_text(encoding="utf-8"))
    docs = openie.get("docs") if isinstance(openie, dict) else None
    if not isinstance(corpus, list) or not isinstance(docs, list) or len(docs) != len(corpus):
        raise ValueError(f"{config.import_openie} and {config.corpus} are not index-aligned OpenIE and corpus files")
    wanted = {(p.title, p.text) for p in passages}
    if wanted == {(str(e.get("title", "")), str(e.get("text", ""))) for e in corpus}:
        return Path(config.import_openie), Path(config.corpus)
    picked: dict[tuple[str, str], int] = {}
    for i, e in enumerate(corpus):
        key = (str(e.get("title", "")), str(e.get("text", "")))
        if key in wanted and key not in picked:
            picked[key] = i
    if len(picked) != len(wanted):
        raise ValueError(f"{len(wanted) - len(picked)} passage(s) of the scope are not in {config.corpus}")
    order = sorted(picked.values())
    work.mkdir(parents=True, exist_ok=True)
    corpus_file, openie_file = work / "corpus.json", work / "openie.json"
    write_json_atomic(corpus_file, [corpus[i] for i in order])
    write_json_atomic(openie_file, {"docs": [docs[i] for i in order]})
    return openie_file, corpus_file


def _scalars(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if isinstance(v, (int, float, str, bool)) or v is None}


def ready_memory(config: EvalConfig, ds: Dataset, passages: list[Passage], path: Path, label: str,
                 embedder: Embedder, llm: LLM | None) -> Generator[EvalEvent, None, tuple[Memory, ChunkUnits, dict]]:
    """Open the memory at `path` if it already holds these passages, else build (or extend) it.
    Yields indexing events; returns (memory, chunk → unit map, indexing facts)."""
    t0 = time.perf_counter()
    source = "opened"
    build = True
    extracted = False  # an existing extraction memory is extended, never replaced by a passages-only one
    if store.is_memory_dir(path):
        memory = store.load(path, embedder.model_id)
        units = map_chunks(memory, ds, passages)
        # Passages without text make no chunk: they can never be added, so they do not call for a build.
        unbuilt = [pid for pid in units.missing if ds.passages[pid].text.strip()]
        if unbuilt and config.import_openie is not None:
            raise ValueError(f"{path} lacks {len(unbuilt)} passage(s) of this scope; it was imported "
                             "from another corpus: give another --memory or --out")
        if is_passages_only(memory) and not dense_only(config):
            raise ValueError(f"{path} holds passages only (built for a dense run): the graph methods and the "
                             "answer step need a memory built with extraction; give another --memory or --out")
        build = bool(unbuilt)  # an extraction build is extended; its journal keeps finished chunks
        extracted = not is_passages_only(memory)
        if build and is_passages_only(memory):
            raise ValueError(f"{path} is a passages-only memory lacking {len(unbuilt)} passage(s) of this "
                             "scope: give another --memory or --out")
    if build:
        if dense_only(config) and config.import_openie is None and not extracted:
            events = build_passages_only(path, _documents(config, passages), embedder, IndexParams(), name=label)
            source = PASSAGES_ONLY
        elif config.import_openie is not None:
            openie_file, corpus_file = _openie_files(config, passages, path.parent / f"{path.name}.openie")
            events = import_openie(openie_file, corpus_file, embedder, IndexParams(), path=path,
                                   dataset=config.dataset, name=label)
            source = "openie-import"
        else:
            events = build_memory(path, _documents(config, passages), llm, embedder, IndexParams(), name=label,
                                  parallel=config.extract_parallel)
            source = "extraction"
        memory = None
        for ev in events:
            yield EvalEvent("index", {"memory": label, "event": ev.kind, **_scalars(ev.data)})
            if ev.kind == "done":
                memory = ev.memory
        assert memory is not None
        units = map_chunks(memory, ds, passages)
    info = {**memory_indexing(memory), "source": source, "path": str(path),
            "seconds": round(time.perf_counter() - t0, 3), "passages": len(passages),
            "missing_passages": len(units.missing)}
    yield EvalEvent("memory", {"memory": label, **_scalars(info)})
    return memory, units, info


# ------------------------------------------------------------------ the run record (run.json)
def _check_config(config: EvalConfig) -> None:
    if config.scope not in SCOPES:
        raise ValueError(f"unknown corpus scope {config.scope!r}; expected one of {', '.join(SCOPES)}")
    unknown = [m for m in config.methods if m not in METHODS]
    if unknown or not config.methods:
        raise ValueError(f"unknown or no method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
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
    """The reproducibility stamp (DESIGN §8) of the whole run: a question's stamp (its corpus
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


def open_run(out: Path, identity: dict[str, Any], stamp: dict[str, Any]) -> dict[str, Any]:
    """Start run.json, or check that the run in `out` had the same settings and refresh it."""
    path = out / RUN
    if path.exists():
        try:
            run = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise ValueError(f"{path} is not readable JSON ({e}); it records the run in {out}") from e
        old = run.get("identity", {})
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
def dense_only(config: EvalConfig) -> bool:
    """A retrieval-only dense run: it reads chunk vectors alone, so no LLM and no graph are needed."""
    return not config.answer and all(m == "dense" for m in config.methods)


def _needs_llm(config: EvalConfig, todo: list[Question]) -> bool:
    return not dense_only(config)


def run_eval(config: EvalConfig, *, llm: LLM | None = None, embedder: Embedder | None = None,
             llm_factory: Callable[[], LLM] | None = None) -> Iterator[EvalEvent]:
    """Run (or resume) an evaluation, yielding progress events; see the module docstring.

    `llm_factory` is called only if the run needs an LLM and `llm` is not given (a dense,
    retrieval-only run over an imported memory needs none)."""
    from memrag.eval import report

    _check_config(config)
    out = Path(config.out)
    ds = load_dataset(config.dataset, config.data, config.corpus)
    questions, passages = scoped_corpus(ds, config.scope, config.limit)
    params = {m: resolve_params(m, config.params.get(m)) for m in config.methods}
    results_path = out / RESULTS
    records = {r["qid"]: r for r in reversed(read_results(results_path))}  # the first line of a qid wins
    wanted = {q.qid for q in questions}
    todo = [q for q in questions if q.qid not in records]
    if llm is None and _needs_llm(config, todo):
        if llm_factory is None:
            raise ValueError("this run needs an LLM (answers, NeuroPath/EcphoryRAG, or building a memory): "
                             "none was given")
        llm = llm_factory()
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


__all__ = ["EvalConfig", "EvalEvent", "RECALL_KS", "ChunkUnits", "map_chunks",
           "ready_memory", "run_eval", "run_to_end", "score_question", "unit_fates"]
