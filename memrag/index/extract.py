"""One LLM call per chunk → entity mentions (engrams) and triples, parsed defensively."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memrag import prompts
from memrag.index.cleanup import NameCleaner, is_entity_name, relation_with, value_type
from memrag.llm.base import LLM
from memrag.llm.jsoncall import call_json
from memrag.index.normalise import entity_key
from memrag.trace import LLMCallRecord

MAX_NAME = 120
MAX_DESCRIPTION = 400


@dataclass
class Mention:
    name: str
    type: str
    description: str
    importance: int


@dataclass
class Extraction:
    entities: list[Mention] = field(default_factory=list)
    triples: list[list[str]] = field(default_factory=list)  # [head, relation, tail]
    cleanup: dict[str, int] = field(default_factory=dict)  # what the name clean-up changed, counted


@dataclass
class ExtractOutcome:
    extraction: Extraction | None
    calls: list[LLMCallRecord]
    error: str | None = None

    @property
    def raw_reply(self) -> str:
        return self.calls[-1].raw_reply if self.calls else ""


def _text(v: Any, limit: int) -> str:
    if v is None:
        return ""
    if not isinstance(v, (str, int, float)):
        raise TypeError(f"expected text, got {type(v).__name__}")
    return " ".join(str(v).split())[:limit]


def _importance(v: Any) -> int:
    try:
        n = int(round(float(v)))
    except (TypeError, ValueError, OverflowError):  # OverflowError: 1e999 parses as infinity
        return 3
    return min(5, max(1, n))


def _mention(item: Any, clean: NameCleaner) -> Mention | None:
    if isinstance(item, str):
        item = {"name": item}
    elif isinstance(item, (list, tuple)):  # the schema's [name, type, importance, description] row
        row = list(item) + [None] * (4 - len(item))
        item = {"name": row[0], "type": row[1], "importance": row[2], "description": row[3]}
    if not isinstance(item, dict):
        return None
    name = clean.name(_text(item.get("name") or item.get("entity"), MAX_NAME))
    if not is_entity_name(name):
        clean.counts["entity-list phrases that are not names (dropped)"] += bool(entity_key(name))
        return None
    return Mention(
        name=name,
        type=clean.text(_text(item.get("type"), 40)).lower() or "other",
        description=clean.description(_text(item.get("description"), MAX_DESCRIPTION),
                                      prompts.DESCRIPTION_MAX_CHARS),
        importance=_importance(item.get("importance", 3)),
    )


def _triple(item: Any, clean: NameCleaner) -> list[str] | None:
    if isinstance(item, dict):
        item = [item.get("subject", item.get("head")), item.get("relation", item.get("predicate")),
                item.get("object", item.get("tail"))]
    if not isinstance(item, (list, tuple)) or len(item) != 3:
        return None
    try:
        head, rel, tail = (_text(x, MAX_NAME) for x in item)
    except TypeError:
        return None
    head, _ = clean.endpoint(head)  # a subject's leading preposition has no place to go
    rel = clean.text(rel)
    tail, moved = clean.endpoint(tail)
    rel = relation_with(rel, moved) if rel else rel
    if not (entity_key(head) and rel and entity_key(tail)):
        return None
    return [head, rel, tail]


def validate_extraction(obj: Any, passage: str = "") -> Extraction:
    """Turn a parsed reply into an Extraction, or raise ValueError saying what is wrong.

    Tolerated: a bare array (of entities or of triples), entities given as plain
    strings, importance as text, missing types. Rejected: nothing usable at all.
    Names are cleaned against `passage` (the chunk's title and text; see memrag.index.cleanup).
    """
    if isinstance(obj, list):
        if obj and all(isinstance(x, (list, tuple)) for x in obj):
            obj = {"entities": [], "triples": obj}
        else:
            obj = {"entities": obj, "triples": []}
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with 'entities' and 'triples'")
    ents_in, trips_in = obj.get("entities", []), obj.get("triples", [])
    if not isinstance(ents_in, list) or not isinstance(trips_in, list):
        raise ValueError("'entities' and 'triples' must be arrays")
    if "entities" not in obj and "triples" not in obj:
        raise ValueError("the object has neither 'entities' nor 'triples'")
    clean = NameCleaner(passage)
    out = postprocess(
        [m for m in (_mention(x, clean) for x in ents_in) if m is not None],
        [t for t in (_triple(x, clean) for x in trips_in) if t is not None],
        clean.counts,
    )
    return out


def postprocess(mentions: list[Mention], triples: list[list[str]], counts: Counter | None = None) -> Extraction:
    """Drop duplicate mentions and triples; add triple endpoints missing from the entities,
    except endpoints that are values rather than names (clauses, descriptions): their triple
    stays, they get no entity mention."""
    counts = counts if counts is not None else Counter()
    out = Extraction()
    seen: dict[str, Mention] = {}
    for m in mentions:
        k = entity_key(m.name)
        if k in seen:  # keep the richer description of a repeated mention
            if len(m.description) > len(seen[k].description):
                seen[k].description = m.description
            seen[k].importance = max(seen[k].importance, m.importance)
            continue
        seen[k] = m
        out.entities.append(m)
    seen_triples: set[tuple[str, str, str]] = set()
    values: set[str] = set()
    for head, rel, tail in triples:
        tk = (entity_key(head), " ".join(rel.lower().split()), entity_key(tail))
        if tk in seen_triples or tk[0] == tk[2]:
            continue
        seen_triples.add(tk)
        out.triples.append([head, rel, tail])
        for name in (head, tail):
            k = entity_key(name)
            if k in seen or k in values:
                continue
            if not is_entity_name(name):
                counts["endpoints kept as values, not entities"] += 1
                values.add(k)
                continue
            seen[k] = Mention(name=name, type=value_type(name), description="", importance=1)
            out.entities.append(seen[k])
    out.cleanup = {k: v for k, v in sorted(counts.items()) if v}
    return out


def extract_chunk(llm: LLM, title: str, text: str) -> ExtractOutcome:
    """One schema-constrained call (plus at most one retry). Never raises for a bad reply."""
    passage = f"{title}\n{text}"
    res = call_json(llm, prompts.extract_messages(title, text), prompts.EXTRACT_SCHEMA,
                    "index.extract", lambda obj: validate_extraction(obj, passage))
    return ExtractOutcome(extraction=res.value, calls=res.calls, error=res.error)
