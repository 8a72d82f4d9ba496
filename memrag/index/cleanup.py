"""What counts as an entity name: the clean-up of an extraction reply's names and triple
endpoints, and the figures that say how clean a memory's names are.

A small extractor puts phrases in name slots: "in 1920", "of the Varrow Coast", "a grain
merchant", "that the shoals followed the tides rather than the seasons". Each becoming an
entity node fills both methods' graphs with non-entities. The rules here:

- every string is made valid text first (`textsafe`);
- characters of a script that occurs nowhere in the passage are dropped, and a word fragment
  left at the end is completed from the passage ("Fenw旧" → "Fenwold"): names are asked for
  "as written";
- a leading lowercase article goes ("the Fenwold Quarry" → "Fenwold Quarry"); a capitalised
  one stays, so titles keep theirs ("The Black Gale at Alder Point") — and since the entity key
  folds a leading "the", "the X" and "X" are one node either way;
- a leading lowercase preposition of a triple's object moves into the relation
  ("had 11,400 inhabitants", "by 1900" → "had 11,400 inhabitants by", "1900");
- an endpoint that is still a clause or a description (more than five words and not a title,
  or opening with "that", "which", "and", …) keeps its triple but gets no entity mention: it is
  a value, not a place in the graph;
- a description cut at the schema's length cap is cut back to a word boundary and marked "…".

Nothing here drops a triple. Every change is counted, and the counts reach the build summary.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from memrag.index.normalise import entity_key
from memrag.textsafe import repair_text

MAX_NAME_WORDS = 5

ARTICLES = ("the", "a", "an")
PREPOSITIONS = (
    "about", "above", "across", "after", "against", "along", "among", "around", "at", "before",
    "behind", "below", "beside", "between", "beyond", "by", "during", "for", "from", "in", "inside",
    "into", "near", "of", "off", "on", "onto", "over", "since", "through", "throughout", "to",
    "toward", "towards", "under", "until", "upon", "with", "within", "without",
)
CLAUSE_OPENERS = ("that", "which", "who", "whom", "whose", "where", "when", "while", "and", "but",
                  "because", "if", "whether", "so", "although", "though", "as")
_EDGE_PUNCT = " \t\n\"'“”‘’`,;:.!?"  # brackets are trimmed only when unbalanced: "Tekeze (river)"
_PAIRS = {")": "(", "]": "[", "}": "{"}
_OPENING = {v: k for k, v in _PAIRS.items()}
_DATE = re.compile(r"^(?:c\.\s*)?\d{1,4}(?:s)?(?:\s*(?:BC|AD|BCE|CE))?$|"
                   r"^\d{1,2}\s+[A-Z][a-z]+\s+\d{3,4}$|^[A-Z][a-z]+\s+\d{1,2},?\s+\d{3,4}$|"
                   r"^[A-Z][a-z]+\s+\d{3,4}$")
_NUMBER = re.compile(r"^[\d.,]+\s*(?:%|[a-z]+)?$")


# ------------------------------------------------------------------ text and scripts
def _script(ch: str) -> str:
    """The first word of a letter's Unicode name: LATIN, CJK, CYRILLIC, GREEK, HIRAGANA, …"""
    try:
        return unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return ""


def passage_scripts(passage: str) -> set[str]:
    return {_script(ch) for ch in passage if ch.isalpha()}


def _words_of(passage: str) -> set[str]:
    return set(re.findall(r"[^\W\d_][\w'-]*", passage))


def trim_edges(s: str) -> str:
    """Edge punctuation and quotes off; a bracket at an end only when it has no partner inside."""
    while True:
        before = s
        s = s.strip(_EDGE_PUNCT)
        if s and s[-1] in _PAIRS and s.count(s[-1]) > s.count(_PAIRS[s[-1]]):
            s = s[:-1]
        if s and s[0] in _OPENING and s.count(s[0]) > s.count(_OPENING[s[0]]):
            s = s[1:]
        if s == before:
            return s


class NameCleaner:
    """Cleans the strings of one reply against the passage they came from, counting changes."""

    def __init__(self, passage: str = "") -> None:
        self.counts: Counter[str] = Counter()
        self._scripts = passage_scripts(passage) if passage else set()
        self._words = _words_of(passage) if passage else set()

    # strings of any kind (names, relations, descriptions)
    def text(self, s: str) -> str:
        s, bad = repair_text(s)
        if bad:
            self.counts["invalid characters dropped"] += bad
        s = " ".join(s.split())
        if self._scripts:
            s = self._foreign_dropped(s)
        return s

    def _foreign_dropped(self, s: str) -> str:
        kept = [ch for ch in s if not ch.isalpha() or _script(ch) in self._scripts]
        if len(kept) == len(s):
            return s
        self.counts["foreign-script characters dropped"] += len(s) - len(kept)
        out = "".join(kept).rstrip()
        # complete a word fragment the dropped characters cut off ("Fenw" → "Fenwold")
        m = re.search(r"([^\W\d_][\w'-]*)$", out)
        if m:
            frag = m.group(1)
            fits = sorted(w for w in self._words if w.startswith(frag) and w != frag)
            if frag not in self._words and len(fits) == 1:
                out = out[: m.start(1)] + fits[0]
                self.counts["word fragments completed"] += 1
        return out

    def description(self, s: str, cap: int) -> str:
        s = self.text(s)
        if cap and len(s) >= cap:  # the schema cut it: back to a word boundary
            cut = s[:cap].rsplit(" ", 1)[0].rstrip(_EDGE_PUNCT + "([{")
            s = (cut or s[:cap]) + "…"
            self.counts["descriptions cut back to a word"] += 1
        return s

    # names
    def name(self, s: str) -> str:
        """An entity-list name: edge punctuation, leading lowercase articles and prepositions off."""
        name, _ = self._strip(self.text(s), keep_prepositions=False)
        return name

    def endpoint(self, s: str) -> tuple[str, str]:
        """A triple endpoint: (name, the prepositions that led it, for the relation)."""
        return self._strip(self.text(s), keep_prepositions=True)

    def _strip(self, s: str, keep_prepositions: bool) -> tuple[str, str]:
        moved: list[str] = []
        s = trim_edges(s)
        while True:
            head, _, rest = s.partition(" ")
            if not rest:
                break
            if head in ARTICLES:  # lowercase only: "The Black Gale" keeps its article
                s = rest
                self.counts["leading articles removed"] += 1
            elif head in PREPOSITIONS:
                s = rest
                moved.append(head)
                self.counts["leading prepositions moved to the relation" if keep_prepositions
                            else "leading prepositions removed"] += 1
            else:
                break
        return trim_edges(s), " ".join(moved)


def relation_with(relation: str, moved: str) -> str:
    """'had 11,400 inhabitants' + 'by' → 'had 11,400 inhabitants by' (no doubled words)."""
    if not moved:
        return relation
    if relation.split()[-len(moved.split()):] == moved.split():
        return relation
    return f"{relation} {moved}"


# ------------------------------------------------------------------ what is a name
def is_title_like(name: str) -> bool:
    """Most of its longer words capitalised: a title or proper name, not a clause."""
    words = [w for w in re.findall(r"[^\W\d_][\w'-]*", name) if len(w) >= 4]
    if not words:
        return True
    caps = sum(1 for w in words if w[0].isupper())
    return caps * 3 >= len(words) * 2


def is_entity_name(name: str) -> bool:
    """Short, not a clause, not a description: the test an entity node's name must pass."""
    if not entity_key(name):
        return False
    words = name.split()
    if words[0] in CLAUSE_OPENERS:
        return False
    return len(words) <= MAX_NAME_WORDS or is_title_like(name)


def value_type(name: str) -> str:
    """A type for an endpoint the model gave no type: dates and numbers are recognisable."""
    if _DATE.match(name):
        return "date"
    if _NUMBER.match(name):
        return "number"
    return "other"


# ------------------------------------------------------------------ how clean a memory is
def name_quality(names: list[str]) -> dict[str, float | int]:
    """Figures over entity-node names: the share led by an article or preposition (titles — a
    capitalised "The" — excepted), the share over five words, and "the X" / "X" pairs."""
    n = len(names)
    led = sum(1 for s in names if s.split() and s.split()[0] in ARTICLES + PREPOSITIONS)
    long = sum(1 for s in names if len(s.split()) > MAX_NAME_WORDS)
    plain = {" ".join(s.lower().split()) for s in names}
    pairs = sum(1 for s in plain if s.startswith("the ") and s[4:] in plain)
    return {"entity names": n,
            "led by an article or preposition %": round(100 * led / n, 1) if n else 0.0,
            "over five words %": round(100 * long / n, 1) if n else 0.0,
            "'the X' / 'X' pairs": pairs}
