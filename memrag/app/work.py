"""The app's job bodies: building a memory, asking, comparing two parameter sets.

Each returns the function a background job runs (memrag.app.jobs); it reports progress as
events and keeps what the page draws while it runs (the growing graph) in `job.state`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from memrag.app.estimates import ObservedLLM, expected_ask_calls, expected_compare_calls
from memrag.app.jobs import Job, JobLLM
from memrag.explain import ablations
from memrag.index.memory import Memory
from memrag.llm.base import LLM


def build_work(path: Path | None, documents: list, llm: LLM | None, embedder: Any, params: Any, *,
               parallel: int = 1, name: str = "") -> Callable[[Job], Any]:
    """A job body that runs `build_memory` and keeps the growing graph in `job.state`.

    The job holds its own LLM and embedder references, so the page that started it may go.
    A cancel stops between events; chunks already extracted stay in the memory's journal,
    so building the same documents again resumes without new tokens.
    """
    from memrag.index.build import build_memory

    if llm is not None:
        llm = ObservedLLM(llm)  # extraction calls measure this machine's speed for later estimates

    def work(job: Job) -> Any:
        job.update_state(lambda s: s.update(nodes={}, edges=[], coref_links=[], failures=[], current=None, titles={},
                                            skipped=[], chunks_done=0, resumed=0, fresh_tokens=0))
        memory = None
        for ev in build_memory(path, documents, llm, embedder, params, parallel=parallel, name=name):
            job.check_cancel()
            d = ev.data
            if ev.kind == "start":
                job.report("start", d, total=d["chunks"], done=0, note=f"{d['chunks']} chunk(s) to read")
            elif ev.kind == "chunk_started":
                job.update_state(lambda s: _chunk_started(s, d))
                job.report("chunk_started", {k: d[k] for k in ("i", "total", "doc_id", "title")},
                           note=f"reading chunk {d['i'] + 1} of {d['total']}: {d['title'][:80]}")
            elif ev.kind == "chunk_done":
                job.update_state(lambda s: _add_chunk(s, d))
                job.report("chunk_done", {k: d[k] for k in ("i", "chunk_id", "doc_id", "ok", "error", "resumed",
                                                            "seconds", "fresh_tokens")},
                           done=d["i"] + 1, step_seconds=None if d.get("resumed") else d.get("seconds"))
            elif ev.kind == "document_done":
                job.update_state(lambda s: s["coref_links"].extend(d.get("coref_links", [])))
                job.report("document_done", {"doc_id": d["doc_id"], "new_entities": d.get("new_entities"),
                                             "coref_links": len(d.get("coref_links", []))})
            elif ev.kind == "skipped":
                job.update_state(lambda s: s["skipped"].append(d))
                job.report("skipped", d)
            elif ev.kind == "embedding":
                job.report("embedding", d, note=f"embedding {d['count']} {d['what']}")
            elif ev.kind == "saved":
                job.report("saved", d, note="saved")
            elif ev.kind == "done":
                memory = ev.memory
                job.report("done", d, note="finished")
        return {"path": str(path) if path is not None else None, "memory": memory}

    return work


def _chunk_started(state: dict[str, Any], d: dict[str, Any]) -> None:
    state["current"] = {"i": d["i"], "title": d["title"], "text": d["text"]}
    state["titles"][d["i"]] = d["title"]  # a failed chunk is later named by its title


def _add_chunk(state: dict[str, Any], d: dict[str, Any]) -> None:
    for n in d.get("nodes", []):
        state["nodes"].setdefault(n["key"], {"name": n["name"], "type": n["type"]})
    state["edges"].extend(d.get("edges", []))
    state["chunks_done"] += 1
    state["resumed"] += int(bool(d.get("resumed")))
    state["fresh_tokens"] += d.get("fresh_tokens") or 0
    if not d.get("ok"):
        state["failures"].append({"chunk_id": d["chunk_id"], "doc_id": d["doc_id"],
                                  "title": state.get("titles", {}).get(d["i"], ""), "error": d.get("error") or "",
                                  "raw_reply": d.get("raw_reply") or ""})


def ask_work(memory: Memory, question: str, llm: LLM, embedder: Any, methods: list[str],
             params: dict[str, Any], *, corpus: str = "") -> Callable[[Job], Any]:
    """A job body that runs `memrag.ask.ask` with every LLM call going through `JobLLM`."""
    from memrag.ask import ask

    def work(job: Job) -> Any:
        wrapped = JobLLM(llm, job, expected_calls=expected_ask_calls(methods, params))
        job.report("start", {"methods": list(methods)}, total=wrapped.expected_calls, done=0,
                   note="embedding the question")
        return ask(memory, question, llm=wrapped, embedder=embedder, methods=methods, params=params,
                   corpus=corpus)

    return work


def compare_work(memory: Memory, question: str, llm: Any, embedder: Any, method: str,
                 variants: list[ablations.Variant]) -> Callable[[Job], list[ablations.Variant]]:
    """A job body running both variants, every LLM call through `JobLLM` (progress and cancel)."""
    if method not in ablations.METHODS:
        raise ValueError(f"compare mode is for {', '.join(ablations.METHODS)}, not {method!r}")

    def work(job: Job) -> list[ablations.Variant]:
        wrapped = JobLLM(llm, job, expected_calls=expected_compare_calls(method, [v.params for v in variants]))
        job.report("start", {"method": method}, total=wrapped.expected_calls, done=0, note="embedding the question")
        return ablations.run_variants(memory, question, wrapped, embedder, method, variants)

    return work
