"""Next-token probabilities: reading them from replies, storing them, and turning them into
probabilities of labels.

A caller asks `llm.complete(messages, max_tokens=1, top_logprobs=N, stage=...)` (no schema: a
grammar would bend the raw probabilities) and gets `Completion.top_logprobs`: for each generated
token, the N most likely tokens at that position with their log-probabilities, most likely first.
`read_labels` does that for a set of labels and says why when it cannot (the engine gives none),
so the caller can fall back to a generated answer and say so.

Servers send the positions as OpenAI's `logprobs.content` (llama.cpp, the embedded engine, vLLM)
or Ollama's top-level `logprobs`; both are one list of `{token, logprob, top_logprobs: [...]}`,
read by `parse_positions`. A malformed list is a broken reply (LLMReplyError), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memrag.llm.base import LLM, MAX_TOP_LOGPROBS, Completion, Message, TokenLogprob

# A log-probability a hair above 0 is rounding in the engine, not a probability above 1.
_ROUNDING = 1e-4
# Engines write an impossible token as a large negative number (vLLM -9999.0); below this, not a reading.
_LEAST_LOGPROB = -1e6
# Listed probabilities are each rounded by the engine; their sum may pass 1 by as much, never more.
_MASS_ROUNDING = 1e-3


class MalformedLogprobs(ValueError):
    """The log-probabilities a reply carries are not a list memrag can read (the message says where)."""


def _alternative(item: Any, where: str) -> TokenLogprob:
    if not isinstance(item, dict):
        raise MalformedLogprobs(f"{where} is a JSON {type(item).__name__}, not an object")
    token, logprob = item.get("token"), item.get("logprob")
    if not isinstance(token, str):
        raise MalformedLogprobs(f"{where} has no token text")
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        raise MalformedLogprobs(f"{where} has no numeric logprob (got {type(logprob).__name__})")
    # Compared before any conversion: an integer of 400 digits does not fit a float (OverflowError).
    if not (_LEAST_LOGPROB <= logprob <= _ROUNDING):  # NaN fails every comparison
        raise MalformedLogprobs(f"{where} has logprob {str(logprob)[:40]}, which is no log-probability "
                                f"(a finite number from {_LEAST_LOGPROB:g} to 0)")
    return TokenLogprob(token=token, logprob=min(0.0, float(logprob)))


def _alternatives(items: Any, top: int, where: str) -> list[TokenLogprob]:
    if not isinstance(items, list):
        raise MalformedLogprobs(f"{where} has no top_logprobs list")
    if len(items) > top:
        raise MalformedLogprobs(f"{where} lists {len(items)} alternatives where {top} were asked for")
    alts = [_alternative(item, f"{where}, alternative {j}") for j, item in enumerate(items)]
    mass = math.fsum(a.probability for a in alts)
    if mass > 1 + _MASS_ROUNDING:  # the same token listed twice, or numbers no softmax makes
        raise MalformedLogprobs(f"{where} lists alternatives whose probabilities sum to {mass:.3g}, more than 1")
    return sorted(alts, key=lambda a: -a.logprob)


def parse_positions(content: Any, *, top: int, max_positions: int) -> list[list[TokenLogprob]] | None:
    """A server's per-token list (`[{token, logprob, top_logprobs: [...]}, ...]`) as positions of
    alternatives; None when the server sent none (null or absent). Raises MalformedLogprobs."""
    if content is None:
        return None
    if not isinstance(content, list):
        raise MalformedLogprobs(f"the log-probabilities are a JSON {type(content).__name__}, not a list")
    if len(content) > max_positions:
        raise MalformedLogprobs(f"the reply lists {len(content)} token positions, more than the "
                                f"{max_positions} tokens asked for")
    out = []
    for i, entry in enumerate(content):
        if not isinstance(entry, dict):
            raise MalformedLogprobs(f"position {i} is a JSON {type(entry).__name__}, not an object")
        out.append(_alternatives(entry.get("top_logprobs"), top, f"position {i}"))
    return out


def choice_positions(choice: Any, *, top: int, max_positions: int) -> list[list[TokenLogprob]] | None:
    """The positions in an OpenAI-shaped `choices[0]` (`logprobs.content`; llama.cpp, vLLM, OpenAI)."""
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    if lp is not None and not isinstance(lp, dict):
        raise MalformedLogprobs(f"choices[0].logprobs is a JSON {type(lp).__name__}, not an object")
    return parse_positions((lp or {}).get("content"), top=top, max_positions=max_positions)


def stored_positions(value: Any, *, top: int = 0) -> list[list[TokenLogprob]]:
    """Positions as `stored` wrote them (a cache row, a recordings line); raises MalformedLogprobs.
    `top` bounds each position (0: the most any request may ask for)."""
    if not isinstance(value, list):
        raise MalformedLogprobs(f"stored log-probabilities are a JSON {type(value).__name__}, not a list")
    return [_alternatives(p, top or MAX_TOP_LOGPROBS, f"position {i}") for i, p in enumerate(value)]


def stored(positions: list[list[TokenLogprob]]) -> list[list[dict[str, Any]]]:
    """The JSON form of positions, read back by `stored_positions`."""
    return [[{"token": a.token, "logprob": a.logprob} for a in p] for p in positions]


def fold(token: str) -> str:
    """A token or label as compared: spaces around it and case do not matter ("Yes", " yes", "YES")."""
    return token.strip().casefold()


@dataclass
class LabelProbabilities:
    """The probability of each label as the first generated token, its spelling variants summed.

    A label none of whose variants is among the listed tokens gets 0 here, but its true
    probability may be up to `unlisted_bound` (the least likely listed token's).
    """
    probabilities: dict[str, float]
    listed_mass: float  # total probability of every listed token, labels or not
    unlisted_bound: float
    unlisted: list[str] = field(default_factory=list)  # labels with no listed variant

    def normalised(self) -> dict[str, float]:
        """The labels' probabilities rescaled to sum to 1 (all 0 when no label was listed)."""
        total = sum(self.probabilities.values())
        return {k: (v / total if total > 0 else 0.0) for k, v in self.probabilities.items()}


def label_probabilities(position: Sequence[TokenLogprob], labels: Sequence[str]) -> LabelProbabilities:
    """Sum, per label, the probabilities of the listed tokens that fold to it."""
    folded = {fold(label): label for label in labels}
    if len(folded) != len(labels) or "" in folded:
        raise ValueError(f"labels must be non-blank and distinct once case and spaces are folded: {list(labels)!r}")
    probs = {label: 0.0 for label in labels}
    seen: set[str] = set()
    for alt in position:
        label = folded.get(fold(alt.token))
        if label is not None:
            probs[label] += alt.probability
            seen.add(label)
    mass = sum(a.probability for a in position)
    bound = min((a.probability for a in position), default=1.0)
    return LabelProbabilities(probs, min(1.0, mass), bound, [la for la in labels if la not in seen])


def logprobs_missing(llm: Any) -> str:
    """'' when `llm` (a backend or a wrapper around one) returns top log-probabilities on
    request; otherwise why not, in words for a trace."""
    ask = getattr(llm, "logprobs_missing", None)
    if not callable(ask):
        return f"{type(llm).__name__} does not pass next-token probabilities"
    return str(ask())


@dataclass
class LabelReading:
    """What `read_labels` found: the labels' probabilities, or why there are none (`reason`)."""
    labels: LabelProbabilities | None
    reason: str = ""
    completion: Completion | None = None  # the call made (None when none was made)


DEFAULT_TOP = 20  # OpenAI's own API gives at most 20 alternatives


def read_labels(llm: LLM, messages: list[Message], labels: Sequence[str], *, stage: str,
                top: int = DEFAULT_TOP) -> LabelReading:
    """Ask for the first token's distribution and read each label's probability from it.

    No call is made when the engine cannot give probabilities; a reply without them is a
    reading with a reason. LLMError from the call propagates (the caller decides, as for any call).
    """
    missing = logprobs_missing(llm)
    if missing:
        return LabelReading(None, missing)
    c = llm.complete(messages, max_tokens=1, stage=stage, top_logprobs=top)
    if not c.top_logprobs:
        return LabelReading(None, f"the {c.backend or 'engine'} reply carried no token probabilities "
                                  "(the server may not support them)", c)
    return LabelReading(label_probabilities(c.top_logprobs[0], labels), "", c)
