"""Finding an entity by what a person types: fuzzy, by key (case, accents, a leading article and
partial words do not matter), so "Penhallow" finds "Osric Penhallow" and "penhalow" still does."""

from __future__ import annotations

from difflib import SequenceMatcher

from memrag.index.memory import Memory
from memrag.index.normalise import entity_key

SUGGESTIONS = 8
MIN_SCORE = 0.6
_ARTICLES = ("a ", "an ")


class UnknownEntity(ValueError):
    """No entity has that name; `suggestions` holds (key, name) pairs of the closest ones."""

    def __init__(self, text: str, suggestions: list[tuple[str, str]]) -> None:
        self.suggestions = suggestions
        names = [name for _, name in suggestions[:3]]
        hint = f"; did you mean {', '.join(names[:-1]) + ' or ' if len(names) > 1 else ''}{names[-1]}?" \
            if names else ""
        super().__init__(f"no entity called {text!r} in this memory{hint}")


def _query_key(text: str) -> str:
    key = entity_key(text)
    for article in _ARTICLES:
        if key.startswith(article):
            key = key[len(article):]
    return key


def match_score(query_key: str, key: str) -> float:
    """How well a typed key matches an entity key, 0..1: 1 exact; about 0.9 when every typed word
    starts a word of the name (closer lengths higher); 0.85 inside it; else word-by-word similarity."""
    if not query_key:
        return 0.0
    if key == query_key:
        return 1.0
    typed, words = query_key.split(), key.split()
    if all(any(w.startswith(t) for w in words) for t in typed):
        return 0.88 + 0.1 * len(query_key) / max(len(key), 1)
    if query_key in key:
        return 0.85
    per_word = [max(SequenceMatcher(None, t, w).ratio() for w in words) for t in typed] if words else [0.0]
    return 0.8 * sum(per_word) / len(per_word)


def suggest_entities(memory: Memory, text: str, n: int = SUGGESTIONS) -> list[tuple[str, str]]:
    """Up to `n` (key, name) pairs of entities that match `text`, best first (ties: more mentions first)."""
    query_key = _query_key(text)
    scored = []
    for pos, node in enumerate(memory.entities):
        score = match_score(query_key, node.key)
        if score >= MIN_SCORE:
            scored.append((-score, -len(node.engram_ids), pos, node.key, node.name))
    return [(key, name) for *_, key, name in sorted(scored)[:n]]


def resolve_entity(memory: Memory, text: str) -> str:
    """The key of the entity `text` names exactly (by name or key); UnknownEntity with suggestions if none."""
    for key in (text, _query_key(text)):
        if memory.entity(key) is not None:
            return key
    raise UnknownEntity(text, suggest_entities(memory, text))
