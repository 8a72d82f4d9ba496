"""NeuroPath's likelihood tracker (a memrag deviation, `tracker="likelihood"`): which listed paths
are kept is read from the model's token probabilities instead of the ids it writes.

Measured on the committed MuSiQue recordings, the 1.5B model's generated `valid_ids` are runs of
the listing order. A small model ranks better than it writes lists, so each listed path that has
no probability yet (every new path; a carried path keeps the one it was judged with) is asked
about on its own — "does this path help answer the question?", one token, no schema — and its
probability is P("yes") normalised over yes + no. Kept = the paths at or above `keep_threshold`,
most probable first (this order is D_p's), at most `keep_top`.

The chain, the expansion requirement, continue and *how many* paths to expand still come from the
generative call of the same hop; *which* ones are the most probable kept paths that can grow (new
at this hop). Its own valid_ids are recorded beside (`NeuroPathHop.generated_valid_ids`).

When the engine gives no probabilities (the backend cannot, a reply carried none, a judge call
failed), the hop falls back to the generative tracker and `tracker_note` says why.
"""

from __future__ import annotations

from memrag import prompts
from memrag.llm.base import LLMCallError
from memrag.llm.jsoncall import failed_call_record, record_of
from memrag.llm.logprobs import logprobs_missing, read_labels
from memrag.methods.base import QueryContext
from memrag.methods.neuropath.params import NeuroPathParams
from memrag.trace import LLMCallRecord, Trace
from memrag.methods.neuropath.detail import NeuroPathHop, PathCandidate

YES, NO = prompts.JUDGE_LABELS


def judge_stage(hop: int) -> str:
    return f"neuropath.judge.hop{hop}"


def judge_paths(ctx: QueryContext, trace: Trace, h: NeuroPathHop, listed: list[PathCandidate]
                ) -> tuple[str, int]:
    """Set `probability` on every listed path that has none yet, one call each, recorded in the
    trace. Returns (why the paths could not be judged, or ''; how many replies listed neither yes
    nor no among their top tokens — those paths get 0). After a failure none of this hop's readings
    is kept, so the trace holds no probability that decided nothing."""
    missing = logprobs_missing(ctx.llm)
    if missing:
        return missing, 0
    todo = [p for p in listed if p.probability is None]
    stage = judge_stage(h.hop)
    reason, unlabelled = "", 0
    for p in todo:
        msgs = prompts.judge_messages(ctx.question, p.text)
        try:
            reading = read_labels(ctx.llm, msgs, prompts.JUDGE_LABELS, stage=stage)
        except LLMCallError as e:
            rec = (record_of(e.completion, msgs) if e.completion is not None
                   else failed_call_record(ctx.llm, stage, msgs, e.raw))
            rec.ok = False
            _record(trace, h, rec)
            reason = f"a judge call failed ({e})"
            break
        if reading.completion is not None:
            _record(trace, h, record_of(reading.completion, msgs, getattr(ctx.llm, "last_key", "") or ""))
        if reading.labels is None:
            reason = reading.reason
            break
        probs = reading.labels.probabilities
        total = probs[YES] + probs[NO]
        # Neither label among the top tokens: the model leans to neither, so nothing says yes.
        unlabelled += total <= 0
        p.probability = probs[YES] / total if total > 0 else 0.0
    if reason:
        for p in todo:
            p.probability = None
    return reason, unlabelled


def _record(trace: Trace, h: NeuroPathHop, rec: LLMCallRecord) -> None:
    h.judge_call_indices.append(len(trace.llm_calls))
    trace.llm_calls.append(rec)


def kept_by_probability(listed: list[PathCandidate], params: NeuroPathParams) -> list[int]:
    """Listed numbers of the kept paths: P(yes) ≥ keep_threshold, most probable first (ties in
    listing order), at most keep_top."""
    above = [p for p in listed if p.probability is not None and p.probability >= params.keep_threshold]
    above.sort(key=lambda p: (-(p.probability or 0.0), p.listed_as or 0))
    if params.keep_top is not None:
        above = above[: params.keep_top]
    return [p.listed_as for p in above if p.listed_as is not None]


def expand_by_probability(valid_n: list[int], by_number: dict[int | None, PathCandidate], asked: int) -> list[int]:
    """The `asked` most probable kept paths that can grow (new at this hop, not carried)."""
    return [n for n in valid_n if by_number[n].kept_from is None][:asked]


def decide(ctx: QueryContext, trace: Trace, h: NeuroPathHop, listed: list[PathCandidate],
           generated: tuple[list[int], list[int]], params: NeuroPathParams) -> tuple[list[int], list[int]]:
    """This hop's (valid, expand) listed numbers under the likelihood tracker, from the generative
    call's `generated` (valid, expand) and the paths' probabilities; the generative pair itself
    when the paths could not be judged (the hop's tracker_note and the trace's flags say why)."""
    valid_n, expand_n = generated
    reason, unlabelled = judge_paths(ctx, trace, h, listed)
    if reason:
        h.tracker_note = f"fell back to the generative tracker: {reason}"
        trace.flags.append(f"likelihood tracker fell back at hop {h.hop}: {reason}")
        return valid_n, expand_n
    by_number: dict[int | None, PathCandidate] = {p.listed_as: p for p in listed}
    kept = kept_by_probability(listed, params)
    expand = expand_by_probability(kept, by_number, len(expand_n))
    h.tracker, h.generated_valid_ids = "likelihood", list(valid_n)
    h.valid_ids, h.expand_ids = kept, expand
    cap = f", at most {params.keep_top}" if params.keep_top is not None else ""
    h.tracker_note = (f"kept: P(yes) ≥ {params.keep_threshold:g}{cap}, most probable first; expand: the "
                      f"{len(expand_n)} most probable kept new path(s), as many as the generative call asked "
                      f"to expand ({len(expand)} available)"
                      + (f"; {unlabelled} repl(ies) listed neither yes nor no (probability 0)" if unlabelled else ""))
    return kept, expand
