"""Time estimates from this process's measured LLM throughput — the one home for them.

Every fresh (not cached, not replayed) LLM call a job makes is observed: its prompt tokens that
the engine had to read (the cached prefix excluded), its completion tokens and its seconds. From
those, per backend, come a prompt rate and a completion rate in tokens per second; an estimate is
the calls ahead times their typical token counts divided by those rates. Before any call was
measured, the rates are stated defaults and every estimate says so.

Where the engine reports how its time was split (llama.cpp's `timings`, Ollama's durations), the
two rates are measured separately; otherwise one call's seconds scale both default rates alike.

The embedded engine runs on this machine's cores, so other work slows it: each measurement notes
how busy the machine was (load average per core, at least 1), and an estimate for it is scaled by
how busy the machine is now against then, and says so when busy ("load 5 on 2 cores: about 6 min").
No streamlit here: the pages, the sidebar and the jobs all read the same numbers.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memrag.llm.base import LLM, Completion, Message
from memrag.methods import registry
from memrag.methods.spec import SHARED_STAGES

# Default rates (prompt, completion tokens per second) before any call here was measured:
# the embedded 1.5B model on 2 cores, and a typical Ollama / server GPU or many-core CPU.
DEFAULT_RATES: dict[str, tuple[float, float]] = {"embedded": (40.0, 10.0), "other": (400.0, 40.0)}
# Typical (fresh prompt, completion) tokens of one call, by stage family, until measured here; each
# method's spec adds its own stages' (typical_tokens_table).
TYPICAL_TOKENS: dict[str, tuple[float, float]] = {
    "index.extract": (900.0, 250.0), "query.entities": (350.0, 30.0), "answer": (1600.0, 120.0)}


def typical_tokens_table() -> dict[str, tuple[float, float]]:
    return {**TYPICAL_TOKENS, **{k: v for spec in registry.methods() for k, v in spec.stage_tokens.items()}}
FIRST_ESTIMATE = "first estimate, not yet measured on this machine"


def seconds_text(s: float | None) -> str:
    """A duration in words: '16 s', '12 min', '1.5 h'."""
    if s is None:
        return "unknown"
    s = max(0.0, float(s))
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def _family(stage: str) -> str:
    for family in typical_tokens_table():
        if stage == family or stage.startswith(family + "."):
            return family
    return stage


def _rate_key(backend: str) -> str:
    return "embedded" if backend == "embedded" else "other"


Load = Callable[[], tuple[float, int]]  # (1-minute load average, cores)


def machine_load() -> tuple[float, int]:
    """This machine's 1-minute load average and its cores."""
    cores = os.cpu_count() or 1
    try:
        return os.getloadavg()[0], cores
    except OSError:  # no load average here
        return 0.0, cores


def busy_factor(load: float, cores: int) -> float:
    """Roughly how much slower work on these cores runs than on an idle machine: load per core, at least 1."""
    return max(1.0, load / max(1, cores))


def _runs_here(backend: str) -> bool:
    """The backend computes on this machine's cores (a server's speed is its own)."""
    return backend == "embedded"


@dataclass(frozen=True)
class Rates:
    prompt_tps: float
    completion_tps: float
    calls: int  # measured calls behind these rates (0: the defaults)
    busy: float = 1.0  # how busy the machine was while they were measured (busy_factor; 1 = idle)

    @property
    def measured(self) -> bool:
        return self.calls > 0

    def basis(self) -> str:
        if not self.measured:
            return FIRST_ESTIMATE
        return (f"from {self.calls} call(s) measured here: prompt {self.prompt_tps:.0f} tokens/s, "
                f"completion {self.completion_tps:.0f} tokens/s")


@dataclass(frozen=True)
class Estimate:
    seconds: float
    rates: Rates
    load: tuple[float, int] | None = None  # (load, cores) when the machine is busy now
    note: str = ""  # what one step is made of, e.g. tokens per chunk

    def text(self) -> str:
        """'about 40 s (first estimate, not yet measured on this machine)';
        'load 5 on 2 cores: about 6 min (from 3 call(s) measured here: …)'."""
        busy = f"load {self.load[0]:.0f} on {self.load[1]} cores: " if self.load else ""
        return f"{busy}about {seconds_text(self.seconds)} ({self.rates.basis()}{'; ' + self.note if self.note else ''})"


def _split_timings(c: Completion) -> tuple[float, float, float, float] | None:
    """(prompt tokens, prompt seconds, completion tokens, completion seconds) where the engine said."""
    raw = c.raw or {}
    t = raw.get("timings") if isinstance(raw, dict) else None
    if isinstance(t, dict) and t.get("prompt_ms") is not None and t.get("predicted_ms") is not None:
        return (float(t.get("prompt_n") or 0), float(t["prompt_ms"]) / 1000,
                float(t.get("predicted_n") or 0), float(t["predicted_ms"]) / 1000)
    if isinstance(raw, dict) and raw.get("prompt_eval_duration") is not None and raw.get("eval_duration") is not None:
        return (float(raw.get("prompt_eval_count") or 0), float(raw["prompt_eval_duration"]) / 1e9,
                float(raw.get("eval_count") or 0), float(raw["eval_duration"]) / 1e9)
    return None


class Throughput:
    """What this process's fresh calls measured, per backend (thread-safe); `load` reads how busy
    the machine is (tests pass a fixed one)."""

    def __init__(self, load: Load = machine_load) -> None:
        self.load = load
        self._lock = threading.Lock()
        self._by_key: dict[str, dict[str, float]] = {}
        self._tokens: dict[str, list[float]] = {}  # stage family → [calls, fresh prompt, completion]

    def clear(self) -> None:
        """Forget every measurement (tests)."""
        with self._lock:
            self._by_key.clear()
            self._tokens.clear()

    def observe(self, c: Completion) -> None:
        if c.cached or c.seconds <= 0 or c.prompt_tokens is None or c.completion_tokens is None:
            return
        fresh_prompt = max(0, c.prompt_tokens - (c.prompt_tokens_cached or 0))
        split = _split_timings(c)
        busy = busy_factor(*self.load())
        with self._lock:
            m = self._by_key.setdefault(_rate_key(c.backend), {"calls": 0, "p_tok": 0.0, "p_s": 0.0, "c_tok": 0.0,
                                                              "c_s": 0.0, "scale_s": 0.0, "scale_pred": 0.0,
                                                              "busy": 0.0})
            m["calls"] += 1
            m["busy"] += busy
            if split is not None and split[1] > 0 and split[3] > 0:
                m["p_tok"] += split[0]
                m["p_s"] += split[1]
                m["c_tok"] += split[2]
                m["c_s"] += split[3]
            else:  # one figure for the call: how much slower or faster than the defaults predict
                dp, dc = DEFAULT_RATES[_rate_key(c.backend)]
                m["scale_s"] += c.seconds
                m["scale_pred"] += fresh_prompt / dp + c.completion_tokens / dc
            t = self._tokens.setdefault(_family(c.stage), [0.0, 0.0, 0.0])
            t[0] += 1
            t[1] += fresh_prompt
            t[2] += c.completion_tokens

    def rates(self, backend: str) -> Rates:
        dp, dc = DEFAULT_RATES[_rate_key(backend)]
        with self._lock:
            m = self._by_key.get(_rate_key(backend))
            if not m:
                return Rates(dp, dc, 0)
            p = m["p_tok"] / m["p_s"] if m["p_s"] > 0 else None
            c = m["c_tok"] / m["c_s"] if m["c_s"] > 0 else None
            scale = m["scale_s"] / m["scale_pred"] if m["scale_pred"] > 0 else None
            if scale is not None:
                p = p if p is not None else dp / scale
                c = c if c is not None else dc / scale
            return Rates(p or dp, c or dc, int(m["calls"]), m["busy"] / m["calls"])

    def typical_tokens(self, stage: str) -> tuple[float, float]:
        """(fresh prompt, written) tokens of one call of `stage`: measured here, else the table's."""
        family = _family(stage)
        with self._lock:
            t = self._tokens.get(family)
            if t and t[0]:
                return t[1] / t[0], t[2] / t[0]
        table = typical_tokens_table()
        return table.get(family, table["answer"])

    def measured_calls(self, stage: str) -> int:
        """Calls of `stage`'s family measured here (0: typical_tokens gives the table's counts)."""
        with self._lock:
            return int(self._tokens.get(_family(stage), [0])[0])

    def estimate(self, seconds: float, backend: str, note: str = "") -> Estimate:
        """`seconds` at the rates measured for `backend`, scaled for the embedded engine by how busy
        this machine is now against while they were measured."""
        rates = self.rates(backend)
        if not _runs_here(backend):
            return Estimate(seconds, rates, note=note)
        load, cores = self.load()
        now = busy_factor(load, cores)
        return Estimate(seconds * now / rates.busy, rates, (load, cores) if now > 1 else None, note)

    def call_seconds(self, stage: str, backend: str) -> float:
        prompt, completion = self.typical_tokens(stage)
        r = self.rates(backend)
        return prompt / r.prompt_tps + completion / r.completion_tps


THROUGHPUT = Throughput()  # this process's calls


# ------------------------------------------------------------------ what the pages ask for
# Method → its parameters (dataclass or dict; a method left out runs with its defaults).
ParamsByMethod = Mapping[str, Any]


def _method_stages(method: str, params: ParamsByMethod | None) -> tuple[str, ...]:
    """The LLM stages one method makes before its answer, as its spec says for these parameters."""
    return registry.get(method).expected_stages(registry.params_of(method, (params or {}).get(method)))


def _ask_stages(methods: Sequence[str], params: ParamsByMethod | None) -> list[str]:
    """One answer per method, each method's own stages, and a shared stage (the query-entity call)
    once however many methods need it."""
    stages = ["answer"] * len(methods)
    shared: set[str] = set()
    for m in methods:
        for stage in _method_stages(m, params):
            if stage in SHARED_STAGES:
                shared.add(stage)
            else:
                stages.append(stage)
    return stages + [s for s in SHARED_STAGES if s in shared]


def expected_ask_calls(methods: Sequence[str], params: ParamsByMethod | None = None) -> int:
    """LLM calls a live ask usually makes: the shared query-entity call, each method's own stages
    (NeuroPath's tracking hops, HippoRAG 2's recognition call …) and one answer per method
    (retries come on top)."""
    return len(_ask_stages(methods, params))


def _compare_stages(method: str, variants: Sequence[Any]) -> list[str]:
    """Compare mode: the method under each parameter set; a shared stage is made once."""
    stages: list[str] = []
    for v in variants:
        stages += [s for s in _ask_stages([method], {method: v}) if s not in SHARED_STAGES or s not in stages]
    return stages


def expected_compare_calls(method: str, variants: Sequence[Any] = (None, None)) -> int:
    """Compare mode: the method under each of `variants` (parameter sets; None = defaults)."""
    return len(_compare_stages(method, variants))


def build_estimate(chunks: int, backend: str, parallel: int = 1, throughput: Throughput = THROUGHPUT) -> Estimate:
    """Extracting `chunks` chunks on this backend (the embedded engine reads one at a time), with the
    tokens of one chunk it assumed."""
    per = throughput.call_seconds("index.extract", backend)
    lanes = 1 if backend == "embedded" else max(1, parallel)
    prompt, written = throughput.typical_tokens("index.extract")
    seen = throughput.measured_calls("index.extract")
    note = f"{prompt:.0f} prompt and {written:.0f} written tokens a chunk" + (
        f", from {seen} chunk(s) read here" if seen else ", typical")
    return throughput.estimate(chunks * per / lanes, backend, note)


def ask_estimate(methods: Sequence[str], backend: str, params: ParamsByMethod | None = None, *,
                 answer: bool = True, throughput: Throughput = THROUGHPUT) -> Estimate:
    """A live ask of `methods` (without the answer calls when `answer` is False): its expected
    calls at this machine's measured rates."""
    stages = [s for s in _ask_stages(methods, params) if answer or s != "answer"]
    return throughput.estimate(sum(throughput.call_seconds(s, backend) for s in stages), backend)


def compare_estimate(method: str, backend: str, variants: Sequence[Any] = (None, None),
                     throughput: Throughput = THROUGHPUT) -> Estimate:
    """Compare mode: the method under each parameter set; the query-entity call is shared."""
    stages = _compare_stages(method, variants)
    return throughput.estimate(sum(throughput.call_seconds(s, backend) for s in stages), backend)


def calls_estimate(calls: int, stage: str, backend: str, throughput: Throughput = THROUGHPUT) -> Estimate:
    """`calls` calls of one stage (e.g. an evaluation's answers)."""
    return throughput.estimate(calls * throughput.call_seconds(stage, backend), backend)
