"""The app's plain words: one label and one help text for each internal status or symbol, so a
table, a legend and a caption name the same thing the same way.

Tables and legends read their labels from here; help texts go into column help and tooltips,
where the paper's symbols (D_p, D_e, E_final, C_assoc) may appear for readers of the papers.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    label: str
    help: str


# A NeuroPath candidate path's fate at one hop (PathCandidate.fate).
PATH_FATES: dict[str, Word] = {
    "valid": Word("valid", "the model judged this path useful for the answer (a valid path)"),
    "expanded": Word("expanded", "the model chose to follow this path one hop further"),
    "shown": Word("listed, not judged", "shown to the model, whose reply could not be read"),
    "dropped": Word("listed, not kept", "shown to the model, which did not keep it"),
    "unlisted": Word("over the listing cap", "left out of the prompt: more new paths than max_listed"),
    "pruned": Word("pruned", "left out before the model saw it: least similar to the goal (prune_top)"),
}

# NeuroPath's two halves of the ranked list, named in the paper D_p and D_e.
KEPT_PATH_PASSAGES = Word("passages on the kept paths",
                          "the chunks the last valid paths were read from (the paper's D_p)")
COMPLETION_PASSAGES = Word("passages found by the completion search",
                           "a dense search of the whole memory with the question, the model's reasoning chain "
                           "and what it still needs (the paper's D_e)")
GOES_ON = Word("asked for another hop", "the model's 'continue' flag: 1 = track one hop further, 0 = enough")
PATH_NUMBERS = Word("paths by number", "the numbers the model gave in its reply: kept (valid_ids), to extend "
                                       "(expand_ids) and numbers that match no listed path (ignored)")
PATH_PROBABILITY = Word("P(yes)", "the likelihood tracker's judgement of the path on its own: the model's "
                                  "probability of 'yes' to 'does this path help answer the question?', normalised "
                                  "over yes + no; a path carried from an earlier hop keeps its earlier "
                                  "probability; empty where the generative tracker decided")
ACTIVATION_STEP = Word("activation step", "what EcphoryRAG had activated after each step: the cues and the "
                                          "initial activation, each associative round, the final re-ranking")
ENGRAMS_AND_ENTITIES = ("An engram is one mention of an entity in one passage; an entity mentioned in "
                        "several passages has several engrams. Counts of entities count each name once.")

# Best fate first: a node or triple shared by several paths shows the best one.
FATES: tuple[str, ...] = tuple(PATH_FATES)


def fate_rank(fate: str) -> int:
    """A path fate's place in FATES (best first); anything else ranks after them all."""
    return FATES.index(fate) if fate in FATES else len(FATES)


def path_fate(fate: str) -> str:
    return PATH_FATES[fate].label if fate in PATH_FATES else fate


def path_counts(counts: dict[str, int]) -> str:
    """'2 valid; 1 expanded; 3 listed, not kept; 4 pruned': paths by fate (PATH_FATES order), in the
    words every table, legend and lesson uses."""
    return "; ".join(f"{counts[f]} {w.label}" for f, w in PATH_FATES.items() if counts.get(f))


PATH_FATE_HELP = "; ".join(f"{w.label}: {w.help}" for w in PATH_FATES.values())

# A graph node's kind (GraphNode.kind) counted in a note: singular, plural.
NODE_KINDS: dict[str, tuple[str, str]] = {"query": ("question", "question"), "cue": ("cue", "cues"),
                                          "entity": ("entity", "entities"), "chunk": ("passage", "passages")}


def counted(n: int, kind: str) -> str:
    """'1 entity', '47 entities', '2 cues'."""
    one, many = NODE_KINDS.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"

# Time, named the same way on every card and table: what the model took when a call was made
# (for a replayed call, in the recorded run), and what this run took here.
ORIGINAL_RUN_S = Word("original run (s)", "seconds the model took for these calls when they were made: for calls "
                                          "replayed from recordings, in the recorded run on the recording model")
MADE_NOW_S = Word("made now (s)", "model seconds of the calls made in this run (not replayed)")
THIS_RUN_S = Word("this run (s)", "seconds this ask took here; for a replay that is retrieval plus reading "
                                  "recorded replies, not the method's speed")

# An LLM call's stage (LLMCallRecord.stage: "<family>" or "<family>.hop<n>") in words: every table,
# chart and inspector names a stage by `stage_name`; the id stays in the trace and the cache keys.
STAGES: dict[str, str] = {
    "query.entities": "entities in the question",
    "neuropath.track": "NeuroPath path tracking",
    "neuropath.judge": "NeuroPath path judgement",
    "hipporag2.recognition": "HippoRAG 2 recognition memory",
    "answer": "answer",
    "index.extract": "extraction (indexing)",
    "doctor": "backend check",
}


def stage_name(stage: str) -> str:
    """'neuropath.track.hop1' → 'NeuroPath path tracking, hop 1'; an unknown stage keeps its id."""
    family, _, tail = stage.rpartition(".")
    if family in STAGES and tail.startswith("hop") and tail[3:].isdigit():
        return f"{STAGES[family]}, hop {tail[3:]}"
    return STAGES.get(stage, stage)
