"""Each method's views on the Ask page, one module per method (memrag/app/method_views/<name>.py,
named by its spec's `view_at`): the side-by-side overview, the Retrieval tab, and which step of
that tab shows where a gold passage was lost."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from memrag.methods.fate_kit import FateRecord, Moment
from memrag.trace import Trace


class MadeAhead(Protocol):
    """A view's graph known before it is shown (common.TypedPicture): the Ask page's prefetch calls
    `make` off the page's run, so `show` finds it made."""

    def make(self, trace: Trace) -> Any: ...

    def show(self, trace: Trace, height: int) -> None: ...


def ranked_passages(record: FateRecord, trace: Trace) -> tuple[str | None, str | int | None]:
    """A method without its own steps shows a gold passage's fate in its ranked list."""
    return "Ranked passages", None


def ranked_moment(moment: Moment, trace: Trace) -> tuple[str | None, str | int | None]:
    """A moment of a passage's story shown by a method without its own steps: its ranked list."""
    return "Ranked passages", None


def no_picture(trace: Trace, ids: Iterable[int] | None, height: int) -> MadeAhead | None:
    """A method whose side-by-side view draws no graph (or one no prefetch needs to know of)."""
    return None


def no_detail_picture(trace: Trace, ids: Iterable[int] | None) -> MadeAhead | None:
    return None


def plain_step_name(trace: Trace, step: str | int) -> str:
    return str(step)


@dataclass(frozen=True)
class MethodViews:
    detail: Callable[[Trace, Iterable[int] | None, str], None]  # the Retrieval tab: trace, gold ids, key
    overview: Callable[[Trace, Iterable[int] | None, int], None]  # the side-by-side picture: trace, gold ids, height
    # (tab, step) that shows a gold chunk's fate; the step is one the detail view's step picker offers
    lost_at: Callable[[FateRecord, Trace], tuple[str | None, str | int | None]] = ranked_passages
    step_key: str = ""  # the detail view's step picker: session key f"{key}_{step_key}_step" ("" = none)
    step_name: Callable[[Trace, str | int], str] = plain_step_name  # a step as the "show where" button says it
    # (tab, step) that shows one moment of a gold passage's story (its first miss, its final loss)
    moment_at: Callable[[Moment, Trace], tuple[str | None, str | int | None]] = ranked_moment
    # the graph `overview` draws for (trace, gold ids, height), so it can be made before it is shown
    overview_picture: Callable[[Trace, Iterable[int] | None, int], MadeAhead | None] = no_picture
    # the graph the Retrieval tab draws first (trace, gold ids), made ahead for the same reason
    first_detail_picture: Callable[[Trace, Iterable[int] | None], MadeAhead | None] = no_detail_picture
    # after an ask-again: draws (trace before, trace now, gold ids) with what is new since the edit marked;
    # None = the method shows its changes as the diff's lines only
    since: Callable[[Trace, Trace, list[int]], None] | None = None
    # its overview picture, (trace, gold_chunk_ids=) -> a typed picture (memrag.picture.Picture), for
    # `method_picture`; None: the spec's (a wing outside memrag may name one there)
    renderer: Callable[..., Any] | None = None
