"""Tracker precision: does a path tracker (NeuroPath's) choose better than the order its paths
were listed in?

Per tracking judgement (hop) of one question, on the hop's *new* listed paths only — paths carried
from the previous hop (`PathCandidate.kept_from` set) are listed first and would flatter whatever
keeps them — count the listed new paths, those the tracker kept (its valid ids), and those of each
touching a gold passage. At hop h a path touches gold when the passage of the triple that hop added
(its newest) belongs to a gold recall unit: a hop-2 path also carries its hop-1 prefix's passage, and
counting that would credit hop 2 (and its random baseline) with gold hop 1 already found — 87 of the
136 gold-touching hop-2 paths on the sample touched gold only through the inherited passage.
Against the kept set stand two choosers keeping the same number: the top of the list (the first k
new paths in listing order, i.e. by pruning score) and a random pick (its expectation, exact:
k · gold listed / listed). The recall of the gold-touching listed paths by the kept ones is kept
beside precision, so keeping fewer paths cannot buy it.

Over a run, per hop and over all hops, counts are summed over questions before dividing (micro
average); "tracker − top of list" gets a paired bootstrap interval over questions. A hop whose
judgement failed (no readable reply) has no kept set and is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memrag.eval.records import TrackerHop, TrackerPrecision
from memrag.eval.stats import bootstrap_ratio_ci
from memrag.trace import Trace
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, PathCandidate

ALL_HOPS = "all"


def _touches(path: PathCandidate, gold_chunks: set[int]) -> bool:
    """Whether the passage of the path's newest triple is gold (a path made without triples, as
    in hand-built traces, is judged by all its passages)."""
    if path.triples:
        return path.triples[-1].chunk_id in gold_chunks
    return any(c in gold_chunks for c in path.chunk_ids)


def hop_counts(hop: NeuroPathHop, gold_chunks: set[int]) -> TrackerHop:
    """One judged hop's counts on its new listed paths (see the module's docstring)."""
    new = sorted((p for p in hop.candidates if p.listed_as is not None and p.kept_from is None),
                 key=lambda p: p.listed_as or 0)
    valid = set(hop.valid_ids)
    kept = [p for p in new if p.listed_as in valid]
    return TrackerHop(hop=hop.hop, listed_new=len(new), kept_new=len(kept),
                      gold_listed=sum(_touches(p, gold_chunks) for p in new),
                      gold_kept=sum(_touches(p, gold_chunks) for p in kept),
                      gold_top=sum(_touches(p, gold_chunks) for p in new[:len(kept)]))


def question_counts(trace: Trace, gold_chunks: Iterable[int]) -> list[TrackerHop] | None:
    """Every judged hop of a trace with a path tracker; None for a method without one."""
    detail = trace.detail(NeuroPathDetail)
    if detail is None:
        return None
    gold = set(gold_chunks)
    return [hop_counts(h, gold) for h in detail.hops if not h.failed]


def _share(num: float, den: float) -> float | None:
    return num / den if den else None


def _row(label: str, per_question: Sequence[Sequence[TrackerHop]]) -> TrackerPrecision:
    listed = [sum(h.listed_new for h in q) for q in per_question]
    kept = [sum(h.kept_new for h in q) for q in per_question]
    g_listed = [sum(h.gold_listed for h in q) for q in per_question]
    g_kept = [sum(h.gold_kept for h in q) for q in per_question]
    g_top = [sum(h.gold_top for h in q) for q in per_question]
    # a random pick of k among n listed, g of them gold, holds k·g/n gold paths on average
    g_random = [sum(h.kept_new * h.gold_listed / h.listed_new for h in q if h.listed_new) for q in per_question]
    k = sum(kept)
    diff = _share(sum(g_kept) - sum(g_top), k)
    ci = (bootstrap_ratio_ci([a - b for a, b in zip(g_kept, g_top)], kept)
          if per_question and k else None)
    return TrackerPrecision(hop=label, questions=len(per_question), listed_new=sum(listed), kept_new=k,
                            precision=_share(sum(g_kept), k), top_precision=_share(sum(g_top), k),
                            random_precision=_share(sum(g_random), k), recall=_share(sum(g_kept), sum(g_listed)),
                            diff=diff, diff_ci95=ci)


def aggregate(per_question: Sequence[Sequence[TrackerHop]]) -> list[TrackerPrecision]:
    """One row per hop number ("1", "2", …), each over the questions judged at that hop, then
    ALL_HOPS over every question with a judgement."""
    hops = sorted({h.hop for q in per_question for h in q})
    rows = [_row(str(n), [[h for h in q if h.hop == n] for q in per_question if any(h.hop == n for h in q)])
            for n in hops]
    return rows + [_row(ALL_HOPS, [q for q in per_question if q])]


__all__ = ["ALL_HOPS", "aggregate", "hop_counts", "question_counts"]
