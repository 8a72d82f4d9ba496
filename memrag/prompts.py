"""Every prompt memrag sends, in one place, written in our own words.

Bump PROMPT_VERSION whenever a template or schema changes: it is part of every
response-cache key, so stale recordings are detected instead of silently reused.
Every string in a schema has maxLength and every array maxItems: a small model
otherwise repeats itself until the token limit.
"""

from __future__ import annotations

import json
from typing import Any

PROMPT_VERSION = "2026-12-01.2"  # the set as a whole, for stamps

# Per stage family: part of that stage's cache keys. The messages and schema are in the
# key already; bump a version when the handling of a reply changes without them changing.
STAGE_VERSIONS: dict[str, str] = {
    "index.extract": "2",
    "query.entities": "1",
    "neuropath.track": "1",
    "neuropath.judge": "1",
    "hipporag2.recognition": "1",
    "answer": "3",
    "doctor": "1",
}

# Per-stage completion budgets (tokens).
MAX_TOKENS: dict[str, int] = {
    "index.extract": 800,
    "query.entities": 120,
    "neuropath.track": 450,
    "neuropath.judge": 1,  # one token: its probabilities are the answer
    "hipporag2.recognition": 60,
    "answer": 200,
    "doctor": 40,
}


def _family(table: dict[str, str] | dict[str, int], stage: str):
    s = stage
    while s:
        if s in table:
            return table[s]
        s = s.rpartition(".")[0]
    raise KeyError(f"unknown stage {stage!r}")


def max_tokens_for(stage: str) -> int:
    """`neuropath.track.hop2` uses the `neuropath.track` budget."""
    return _family(MAX_TOKENS, stage)


def version_for(stage: str) -> str:
    try:
        return _family(STAGE_VERSIONS, stage)
    except KeyError:
        return PROMPT_VERSION


def _str(n: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": n}


# ---------------------------------------------------------------- extraction
DESCRIPTION_MAX_CHARS = 90  # a description this long was cut by the schema (memrag.index.cleanup trims it)

EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # Entities as [name, type, importance, description] rows: half the tokens of
        # keyed objects, which matters at ~15 tokens/s on a laptop CPU.
        "entities": {
            "type": "array",
            "maxItems": 14,
            "items": {
                "type": "array",
                "prefixItems": [_str(60), _str(20), {"type": "integer", "minimum": 1, "maximum": 5},
                                _str(DESCRIPTION_MAX_CHARS)],
                "minItems": 4,
                "maxItems": 4,
            },
        },
        "triples": {
            "type": "array",
            "maxItems": 16,
            "items": {"type": "array", "minItems": 3, "maxItems": 3, "items": _str(60)},
        },
    },
    "required": ["entities", "triples"],
}

EXTRACT_SYSTEM = (
    "You build a knowledge graph from one passage. Reply with JSON only.\n"
    "entities: every named thing in the passage (person, place, organisation, event, work, date, "
    "other), each as [name as written, one-word type, importance from 1 (minor) to 5 (central), "
    "a description of at most ten words saying what the passage tells about it].\n"
    "triples: facts as [subject, relation, object]. Subject and object are short names of entities, "
    "dates or numbers, never clauses; no leading 'the', 'a' or preposition in them: the relation "
    "carries the preposition ('born in', 'founded in'). Use full names, not pronouns. Keep only "
    "facts the passage states, each once; the most important facts first."
)

# One invented example turn: with instructions alone a 1.5B model puts clauses and
# prepositional phrases ("in 1920", "that the tides ...") in object slots, and those
# become entity nodes. The example is a shared prefix, so prefix reuse makes it cheap.
_EXTRACT_EXAMPLE = (
    "Title: Maren Osk\nPassage:\nMaren Osk was a Danish glassblower. She was born in Ribe in 1851 "
    "and in 1880 opened the Osk Glassworks, which supplied lamps to the Royal Danish Navy.",
    {"entities": [["Maren Osk", "person", 5, "Danish glassblower who opened the Osk Glassworks"],
                  ["Ribe", "place", 2, "birthplace of Maren Osk"],
                  ["Osk Glassworks", "organisation", 4, "glassworks opened by Maren Osk in 1880"],
                  ["Royal Danish Navy", "organisation", 2, "bought lamps from the Osk Glassworks"]],
     "triples": [["Maren Osk", "born in", "Ribe"], ["Maren Osk", "born in", "1851"],
                 ["Maren Osk", "opened", "Osk Glassworks"], ["Osk Glassworks", "opened in", "1880"],
                 ["Osk Glassworks", "supplied lamps to", "Royal Danish Navy"],
                 ["Maren Osk", "occupation", "glassblower"]]},
)


def extract_messages(title: str, text: str) -> list[dict[str, str]]:
    example_passage, example_reply = _EXTRACT_EXAMPLE
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": example_passage},
        {"role": "assistant", "content": json.dumps(example_reply)},
        {"role": "user", "content": f"Title: {title}\nPassage:\n{text}"},
    ]


def retry_messages(messages: list[dict[str, str]], bad_reply: str, error: str) -> list[dict[str, str]]:
    """One retry: show the model its reply and what was wrong with it."""
    return messages + [
        {"role": "assistant", "content": bad_reply[:2000]},
        {"role": "user", "content": f"That reply could not be used ({error}). Reply again with valid JSON only."},
    ]


# ---------------------------------------------------------------- query entities
QUERY_ENTITIES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"entities": {"type": "array", "maxItems": 8, "items": _str(60)}},
    "required": ["entities"],
}

QUERY_ENTITIES_SYSTEM = (
    "List the named entities a question mentions (people, places, organisations, works, events, "
    "dates), exactly as written in the question. No descriptions, no generic words. Reply with JSON."
)

# Two invented example turns: bare instructions make a small model return descriptions.
_QUERY_EXAMPLES = [
    ("Which river runs through the town where Ada Brennick opened her first bakery?",
     ["Ada Brennick"]),
    ("Did the Halvorsen Prize or the Quill Medal come first?", ["Halvorsen Prize", "Quill Medal"]),
]


def query_entities_messages(question: str) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": QUERY_ENTITIES_SYSTEM}]
    for q, ents in _QUERY_EXAMPLES:
        msgs.append({"role": "user", "content": q})
        msgs.append({"role": "assistant", "content": json.dumps({"entities": ents})})
    msgs.append({"role": "user", "content": question})
    return msgs


# ---------------------------------------------------------------- NeuroPath tracking
TRACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning_chain": _str(250),
        "valid_ids": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "expansion_requirement": _str(200),
        "expand_ids": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "continue": {"type": "integer", "enum": [0, 1]},
    },
    "required": ["reasoning_chain", "valid_ids", "expansion_requirement", "expand_ids", "continue"],
}

TRACK_SYSTEM = (
    "You follow paths through a knowledge graph to answer a question. Each numbered path is a "
    "chain of facts (subject → relation → object). Decide:\n"
    "- reasoning_chain: what the useful paths tell you so far, in one or two sentences.\n"
    "- valid_ids: ids of paths that help answer the question, most helpful first.\n"
    "- expansion_requirement: what fact is still missing (empty if nothing is).\n"
    "- expand_ids: ids of paths marked expandable whose far end should be followed one step further "
    "to find the missing fact.\n"
    "- continue: 1 if following those paths further is needed, else 0.\n"
    "Use only ids from the list. Reply with JSON."
)


def track_messages(question: str, hop: int, path_lines: list[str], previous_chain: str,
                   previous_requirement: str, carry: bool = True) -> list[dict[str, str]]:
    """One hop's tracking prompt; with `carry` the previous hop's chain and requirement come along."""
    parts = [f"Question: {question}", f"Hop {hop}."]
    if carry and (previous_chain or previous_requirement):
        parts.append(f"So far: {previous_chain}".strip())
        parts.append(f"Still missing: {previous_requirement}".strip())
    parts.append("Paths:")
    parts.extend(path_lines)
    return [{"role": "system", "content": TRACK_SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


# ---------------------------------------------------------------- NeuroPath judging by likelihood
# One path per call, read as the probability of the first token being "yes". The instructions and
# the question come first and the path last, so every call of a question shares one prefix that
# the engine's prompt cache reuses; no schema (a grammar would bend the probabilities).
JUDGE_LABELS = ("yes", "no")

JUDGE_SYSTEM = (
    "You check one path through a knowledge graph against a question. A path is a chain of facts "
    "(subject → relation → object). Say yes if the path states a fact needed to answer the question, "
    "either the answer itself or a step on the way to it; say no if it does not. Reply with one word: "
    "yes or no."
)


def judge_messages(question: str, path_text: str) -> list[dict[str, str]]:
    """The judge's messages for one path: everything before the path is the same for a question."""
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": f"Question: {question}\nDoes this path help answer the question?\n"
                                        f"Path: {path_text}"}]


# ---------------------------------------------------------------- HippoRAG 2 recognition memory
RECOGNITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"keep": {"type": "array", "maxItems": 10, "items": {"type": "integer"}}},
    "required": ["keep"],
}

RECOGNITION_SYSTEM = (
    "You screen facts taken from a knowledge graph before they are used to answer a question. "
    "Each numbered fact reads subject | relation | object. Keep every fact that helps answer the "
    "question, directly or as one step of the way there; leave out the others. Reply with JSON: "
    "keep = the numbers of the kept facts, most useful first; an empty list when none helps."
)

# One invented example turn: a bridge question where two facts chain and two are distractors.
_RECOGNITION_EXAMPLE = (
    "Which river runs through the town where Ada Brennick opened her first bakery?",
    ["Ada Brennick | opened first bakery in | Tollmere", "Ada Brennick | born in | 1902",
     "Tollmere | lies on | Harrow River", "Brennick Mill | sold to | Lantern Guild"],
    [1, 3],
)


def _recognition_user(question: str, fact_lines: list[str]) -> str:
    return "\n".join([f"Question: {question}", "Facts:"]
                     + [f"{i}. {line}" for i, line in enumerate(fact_lines, start=1)])


def recognition_messages(question: str, fact_lines: list[str]) -> list[dict[str, str]]:
    """HippoRAG 2's recognition-memory step: which of the retrieved facts to keep."""
    q, facts, keep = _RECOGNITION_EXAMPLE
    return [{"role": "system", "content": RECOGNITION_SYSTEM},
            {"role": "user", "content": _recognition_user(q, facts)},
            {"role": "assistant", "content": json.dumps({"keep": keep})},
            {"role": "user", "content": _recognition_user(question, fact_lines)}]


# ---------------------------------------------------------------- answer
ANSWER_REASONING_MAX_CHARS = 320
ANSWER_MAX_CHARS = 80

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # Reasoning first: a small model answers multi-hop questions better after naming the
        # bridge. Its cap is well above what the example turns use, so a reply that reaches it
        # is rare and is counted (AnswerResult.capped) rather than silently cut mid-thought.
        "reasoning": _str(ANSWER_REASONING_MAX_CHARS),
        "answer": _str(ANSWER_MAX_CHARS),
        "cited": {"type": "array", "maxItems": 5, "items": {"type": "integer"}},
    },
    "required": ["reasoning", "answer", "cited"],
}

ANSWER_SYSTEM = (
    "Answer the question from the numbered passages (and the facts after them, if any). "
    "reasoning: one short sentence naming what each step of the question resolves to, in your own "
    "words; do not copy the passages. answer: only the name, place, date or number asked for, never "
    "a sentence; for a question that compares two things, the name of the one that fits. cited: "
    "numbers of the passages you used. If the passages do not say, give your best guess. The example "
    "turns only show the reply format: never answer from them. Reply with JSON."
)

# Two invented example turns: without them a 1.5B model writes its reasoning until the length
# cap and answers with sentences. Their answers are of kinds the corpora rarely ask for (an
# instrument, a bridge), because with a same-shaped example ("where was the founder of X born?")
# the model copied the example's answer into a real one.
_ANSWER_EXAMPLES = [
    ([("Brightwater Observatory", "The Brightwater Observatory opened in 1904; its founder was the astronomer Orla Fenn."),
      ("Orla Fenn", "Orla Fenn (1861-1930) built her first telescope, a small refractor, at the age of nineteen.")],
     "What kind of telescope did the founder of the Brightwater Observatory build first?",
     {"reasoning": "The founder is Orla Fenn [1]; her first telescope was a small refractor [2].",
      "answer": "refractor", "cited": [1, 2]}),
    ([("Pell Bridge", "The Pell Bridge, a stone arch over the river Lune, was completed in 1832."),
      ("Marrow Viaduct", "The Marrow Viaduct carried the coast railway from 1869.")],
     "Which is older, the Pell Bridge or the Marrow Viaduct?",
     {"reasoning": "The Pell Bridge dates from 1832 [1], the Marrow Viaduct from 1869 [2]; 1832 is earlier.",
      "answer": "Pell Bridge", "cited": [1, 2]}),
]


def _answer_user(question: str, passages: list[tuple[str, str]], facts: list[str] | None) -> str:
    lines = ["Passages:"]
    for i, (title, text) in enumerate(passages, start=1):
        lines.append(f"[{i}] {title}\n{text}")
    if facts:  # after the passages: they support the passages, they are not read first
        lines.append("")
        lines.append("Facts from the memory:")
        lines.extend(f"F{i}. {f}" for i, f in enumerate(facts, start=1))
    lines.append("")
    lines.append(f"Question: {question}")
    return "\n".join(lines)


def answer_messages(question: str, passages: list[tuple[str, str]], facts: list[str] | None = None
                    ) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": ANSWER_SYSTEM}]
    for ex_passages, ex_question, ex_reply in _ANSWER_EXAMPLES:
        msgs.append({"role": "user", "content": _answer_user(ex_question, ex_passages, None)})
        msgs.append({"role": "assistant", "content": json.dumps(ex_reply)})
    msgs.append({"role": "user", "content": _answer_user(question, passages, facts)})
    return msgs


# ---------------------------------------------------------------- doctor
DOCTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"capital": _str(40)},
    "required": ["capital"],
}


def doctor_messages() -> list[dict[str, str]]:
    return [{"role": "user", "content": "What is the capital of France? Reply as JSON {\"capital\": ...}."}]
