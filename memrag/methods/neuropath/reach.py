"""How far the memory graph lets NeuroPath's paths go, whatever the tracker chose: the first hop at
which a path from the seeds could reach each chunk. A gold chunk inside this reach that no listed
path touched was lost to tracking (it stopped, or never expanded a path that way), not to the seeds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from memrag.index.memory import Memory
from memrag.methods.neuropath.paths import best_first, far_end, grow_paths, kept_numbers, path_scores
from memrag.methods.neuropath.detail import NeuroPathDetail, NeuroPathHop, ReachedChunk
from memrag.trace import Trace

# The counts of `gold_reach`, in the order each narrows the one before.
REACH_KEYS = ("gold", "within_max_hops", "on_listed_paths", "kept")


def first_reach(memory: Memory, seed_keys: Iterable[str], max_hops: int, coref_top: int,
                coref_threshold: float) -> dict[int, int]:
    """chunk id → the first hop (1 … max_hops) at which a path could take one of its triples.

    Follows the tracker's growth rule without its choices: hop 1 takes every triple touching a seed
    (the seed set already holds the seeds' coreference members); each later hop takes every triple
    touching a previous hop's far end or that end's coreference candidates. A key touched once
    yields the same triples again, so each key is expanded once."""
    first: dict[int, int] = {}
    touch = set(seed_keys)
    done: set[str] = set()
    for hop in range(1, max_hops + 1):
        ends: set[str] = set()
        for key in touch - done:
            done.add(key)
            for tid in memory.triples_of.get(key, []):
                t = memory.triples[tid]
                first.setdefault(t.chunk_id, hop)
                ends.add(far_end(t, key)[0])
        if hop < max_hops:  # the ends' coreference candidates matter only if another hop follows
            touch = ends | {m.key for end in ends for m in memory.coref_of(end, coref_top, coref_threshold)}
    return first


def seeded_reach(memory: Memory, keys: Iterable[str], hops: int, coref_top: int,
                 coref_threshold: float) -> dict[int, int]:
    """`first_reach` from graph nodes seeded as the question's seeds are, each with its coreference
    candidates: what seeding a later hop from other nodes (those an expansion requirement names, say)
    could reach within `hops`. Nothing for no keys or hops < 1."""
    keys = list(keys)
    if not keys or hops < 1:
        return {}
    touch = set(keys) | {m.key for k in keys for m in memory.coref_of(k, coref_top, coref_threshold)}
    return first_reach(memory, touch, hops, coref_top, coref_threshold)


def unlisted_reach(memory: Memory, seed_keys: Iterable[str], max_hops: int, coref_top: int,
                   coref_threshold: float, listed_chunks: set[int]) -> list[ReachedChunk]:
    """The reach minus the chunks some candidate path touched, in chunk order (for the trace)."""
    reach = first_reach(memory, seed_keys, max_hops, coref_top, coref_threshold)
    return [ReachedChunk(cid, hop) for cid, hop in sorted(reach.items()) if cid not in listed_chunks]


def gold_reach(trace: Trace, gold: Sequence[Iterable[int]]) -> dict[str, int] | None:
    """How far NeuroPath got towards each gold passage (`gold`: each passage's chunk ids): how many
    there are, how many a path from the seeds could reach within max_hops (the memory graph's
    reach: a listed or pruned candidate's chunk, or `unlisted_reach`), how many some listed path
    touched, and how many the kept paths' passages (D_p) hold. None for another method, or a trace
    written before the reach was recorded. A question without seeds reaches nothing."""
    detail = trace.detail(NeuroPathDetail)
    if detail is None:
        return None
    if detail.unlisted_reach is None and detail.hops:
        return None
    candidates = [p for h in detail.hops for p in h.candidates]
    within = {c for p in candidates for c in p.chunk_ids} | {r.chunk_id for r in detail.unlisted_reach or []}
    listed = {c for p in candidates if p.listed_as is not None for c in p.chunk_ids}
    kept = set(detail.dp_chunk_ids)
    units = [set(u) for u in gold]
    return {"gold": len(units), "within_max_hops": sum(bool(u & within) for u in units),
            "on_listed_paths": sum(bool(u & listed) for u in units), "kept": sum(bool(u & kept) for u in units)}


# Who picks the hop-1 paths that grow into hop 2, for `listed_after_hop2`: the model's expand_ids; as
# many paths from the top of the listing (the trivial rule the model's choice must beat); every path
# the model kept (valid ∪ expand); every listed path.
EXPANSION_RULES = ("model", "list order", "kept", "every listed")


def listed_after_hop2(memory: Memory, hop1: NeuroPathHop, rule: str, goal: np.ndarray, prune_top: int | None,
                      coref_top: int, coref_threshold: float) -> set[int]:
    """The chunks on listed paths after hop 2 had `rule` picked the hop-1 paths to expand: hop 1's
    listed paths, then the new hop-2 paths grown and pruned as tracking grows and prunes them
    (`goal`: the vector of hop 1's expansion requirement, or of the question if it wrote none)."""
    if rule not in EXPANSION_RULES:
        raise ValueError(f"rule must be one of {EXPANSION_RULES}, got {rule!r}")
    listed = sorted((p for p in hop1.candidates if p.listed_as is not None), key=lambda p: p.listed_as or 0)
    by_number = {p.listed_as: p for p in listed}
    chosen = [n for n in hop1.expand_ids if n in by_number]
    picks = {"model": chosen,
             "list order": [p.listed_as for p in listed[:len(chosen)]],
             "kept": kept_numbers([n for n in hop1.valid_ids if n in by_number], chosen),
             "every listed": [p.listed_as for p in listed]}[rule]
    seen = {p.text for p in hop1.candidates}  # hop 1 saw every candidate's text, pruned or not
    grown = grow_paths(memory, [by_number[n] for n in picks], 2, seen, coref_top, coref_threshold)
    order = best_first(path_scores(memory, grown, goal))
    top = [grown[i] for i in (order if prune_top is None else order[:prune_top])]
    return {c for p in listed + top for c in p.chunk_ids}
