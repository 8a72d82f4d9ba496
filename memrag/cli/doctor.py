"""`memrag doctor`: which backend, which model, and does a real call work."""

from __future__ import annotations

import json
import time
from typing import Any

from memrag.config import Settings
from memrag.llm.base import LLMError


def run_doctor(settings: Settings) -> dict[str, Any]:
    """Every check runs for real; `ok` is True only when all of them pass."""
    from memrag import prompts
    from memrag.llm.factory import choose_backend

    checks: list[dict[str, Any]] = []
    report: dict[str, Any] = {"ok": False, "llm": None, "embedder": None, "checks": checks}

    def check(name: str, fn) -> Any:
        t0 = time.perf_counter()
        try:
            detail = fn()
            checks.append({"name": name, "ok": True, "seconds": round(time.perf_counter() - t0, 3),
                           "detail": detail})
            return detail
        except Exception as e:  # every failure is reported, none is raised
            msg = str(e) if isinstance(e, LLMError) else f"{type(e).__name__}: {e}"
            checks.append({"name": name, "ok": False, "seconds": round(time.perf_counter() - t0, 3),
                           "detail": msg})
            return None

    chosen = check("choose backend", lambda: choose_backend(settings))
    if chosen is not None:
        llm, choice = chosen
        checks[-1]["detail"] = choice.reason
        report["llm"] = choice.to_dict()

        def tiny_completion() -> str:
            # Straight to the backend, not through the response cache: this must be a live call.
            c = llm.complete(prompts.doctor_messages(), schema=prompts.DOCTOR_SCHEMA,
                             max_tokens=prompts.max_tokens_for("doctor"), stage="doctor")
            json.loads(c.text)
            mode = f", structured output: {c.structured}" if c.structured else ""
            return (f"{c.text.strip()[:60]} ({c.prompt_tokens} prompt + {c.completion_tokens} "
                    f"completion tokens, {c.seconds:.2f} s{mode})")

        check("LLM completion", tiny_completion)

    def embedding() -> str:
        from memrag.embed import get_embedder

        e = get_embedder(settings.embedder)
        report["embedder"] = {"model": e.model_id, "dim": e.dim}
        t0 = time.perf_counter()
        v = e.encode(["memrag doctor"])
        if v.shape != (1, e.dim):
            raise RuntimeError(f"unexpected embedding shape {v.shape}")
        return f"{e.model_id}, {e.dim}-d, {1000 * (time.perf_counter() - t0):.0f} ms for one text"

    check("embedding", embedding)
    report["ok"] = all(c["ok"] for c in checks)
    return report


def format_report(report: dict[str, Any]) -> str:
    lines = []
    llm = report.get("llm")
    if llm:
        lines.append(f"LLM:      {llm['backend']} / {llm['model']}  ({llm['reason']})")
        if llm.get("warning"):
            lines.append(f"WARNING:  {llm['warning']}")
    emb = report.get("embedder")
    if emb:
        lines.append(f"Embedder: {emb['model']} ({emb['dim']}-d)")
    for c in report["checks"]:
        mark = "ok  " if c["ok"] else "FAIL"
        lines.append(f"[{mark}] {c['name']} ({c['seconds']:.2f} s): {c['detail']}")
    lines.append("All checks passed." if report["ok"] else "Some checks failed: see above.")
    return "\n".join(lines)
