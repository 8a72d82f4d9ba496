"""How large and how fully a graph is drawn, chosen by the page around it, not by the method that
builds the graph: the Ask page's focus layout draws one method's picture large with every label
(and larger still for a presenter) and the others small, through the same renderer each method's
view already calls. A page sets the look for the graphs drawn inside a `with drawing(...)` block.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

LABEL_PX = 13  # a label's type size at scale 1 (the acceptance's floor is 12 px)
PRESENTER_SCALE = 1.35


@dataclass(frozen=True)
class Look:
    scale: float = 1.0  # type and node size, 1 = normal; PRESENTER_SCALE for a room
    label_all: bool = False  # write every node's label (the focus graph), not only those that matter
    compact: bool = False  # a small multiple: no written labels, the legend folded away

    @property
    def label_px(self) -> int:
        return round(LABEL_PX * self.scale)


_current: contextvars.ContextVar[Look] = contextvars.ContextVar("memrag_graph_look", default=Look())


def current() -> Look:
    """The look graphs are drawn with here (the default outside any `drawing` block)."""
    return _current.get()


@contextlib.contextmanager
def drawing(look: Look) -> Iterator[Look]:
    """Graphs rendered inside the block take `look`."""
    token = _current.set(look)
    try:
        yield look
    finally:
        _current.reset(token)
