"""Helpers every method's Ask-page views share: a typed picture made ahead and drawn later, the
ranked list as a picture when a method has nothing else to draw, and what a click on a passage opens."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import streamlit as st

from memrag import picture as pictures
from memrag.app import focus, graph_view, memory_state
from memrag.eval.gold import gold_fate_records
from memrag.methods import registry
from memrag.methods.dense import picture as dense_picture
from memrag.plain_text import escape_markdown
from memrag.trace import Trace
from memrag.viz import figure, layout
from memrag.viz import look as looks

# px a picture is laid out for beside the other methods: a quarter of the page at 1,440 px, so no word
# is placed past a narrow column's edge (a wider column spreads the nodes, and words find room)
SIDE_WIDTH = 240.0
RANKED_TAB = "Ranked passages"
FATE_K = 5  # the k the Ask page's gold lines judge a passage's fate at


_gold_answers: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("memrag_gold_answers", default=())


@contextlib.contextmanager
def gold_answers(answers: Sequence[str]) -> Iterator[None]:
    """Pictures drawn inside the block mark an entity named like one of `answers` (the question's
    gold answers; a view's arguments carry only the gold passages)."""
    token = _gold_answers.set(tuple(answers))
    try:
        yield
    finally:
        _gold_answers.reset(token)


def current_gold_answers() -> tuple[str, ...]:
    return _gold_answers.get()


@dataclass(frozen=True)
class TypedPicture:
    """A typed picture (memrag.picture) as a view draws it through graph_view.picture_chart, its
    clicks reaching Python: `build` makes it (with these count nodes opened), `part` writes the
    method's own lines of the panel a click opens. `make` lays it out ahead (the Ask page's
    prefetch); `show` draws it, finding that layout made."""
    build: Callable[[frozenset[str]], pictures.Picture]
    key: str
    height: int
    width: float
    part: graph_view.TracePart | None = None
    step: int | None = None  # the picture's step look to draw (memrag.picture.StepLook); None: all of it

    def make(self, trace: Trace) -> None:
        picture = self.build(frozenset())
        layout.places(picture, self.width, layout.fitted_height(picture, self.height))

    def show(self, trace: Trace, height: int) -> None:
        self.build(frozenset())  # here, not in the chart's fragment: a picture that cannot be made says why
        chart = graph_view.Chart(looks.current(), height, self.width, graph_view.results_key(), self.step)
        graph_view.picture_chart(trace, self.build, self.key, chart, self.part)


def chart_width(look: looks.Look) -> float:
    """The design width of a method's overview: the focus graph's (large, or a small multiple of
    it), or a column's beside the other methods."""
    return figure.DESIGN_WIDTH if look.label_all or look.compact else SIDE_WIDTH


def chart_key(trace: Trace, what: str) -> str:
    """A chart's key on the page: one per trace, picture and size (the focus layout draws a method
    small and large in one run)."""
    return f"{trace.method}_{what}_{id(trace)}_{'small' if looks.current().compact else 'large'}"


def ranking_picture_of(trace: Trace, ids: Iterable[int] | None, height: int, width: float | None = None,
                       note: str = "", what: str = "ranking") -> TypedPicture:
    """The trace's ranked list as a picture (memrag.methods.dense.picture), a click on a passage
    opening its rank, score, text and fate; `what` names the chart among the trace's others."""
    gold = tuple(ids or ())
    return TypedPicture(lambda opened: dense_picture.ranking_picture(trace, gold_chunk_ids=gold, note=note),
                        chart_key(trace, what), height,
                        chart_width(looks.current()) if width is None else width, passage_part)


def method_picture_of(trace: Trace, ids: Iterable[int] | None, height: int, drawable: bool) -> TypedPicture:
    """The method's own picture (the typed picture its views or its spec's renderer builds), or its
    ranked list when the trace holds nothing to draw."""
    spec = registry.get(trace.method)
    renderer = spec.views.renderer or spec.renderer
    if drawable and renderer is not None:
        gold = tuple(ids or ())
        return TypedPicture(lambda opened: renderer(trace, gold_chunk_ids=gold), chart_key(trace, "overview"),
                            height, chart_width(looks.current()), passage_part)
    return ranking_picture_of(trace, ids, height)


def method_picture(trace: Trace, ids: Iterable[int] | None, height: int, drawable: bool) -> None:
    method_picture_of(trace, ids, height, drawable).show(trace, height)


def numbers(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids) or "none"


def passage_part(trace: Trace, target: pictures.PictureNode | pictures.PictureEdge, results_key: str) -> None:
    """What the retrieval did with a clicked passage: its rank, score and why, whether the answer
    read it, a gold passage's fate, its text, and "show where" (its row in the ranked list)."""
    if not isinstance(target, pictures.PictureNode):
        return
    if target.kind == "question":
        st.text(trace.question)
        return
    if target.kind != "passage" or not target.ref.isdigit():
        return
    cid = int(target.ref)
    rank = next((i for i, r in enumerate(trace.ranked, start=1) if r.chunk_id == cid), None)
    if rank is None:
        st.caption(f"chunk {cid} · not in the ranked list")
        return
    r = trace.ranked[rank - 1]
    read = cid in dense_picture.context_ids(trace)
    score = dense_picture.score_text(r.score)
    st.markdown(f"**Rank {rank}** of {len(trace.ranked)} · score {score} · chunk {cid} · "
                + ("the answer read it" if read else "the answer did not read it"))
    if r.why:
        st.caption(escape_markdown(r.why))
    if target.gold:
        record = gold_fate_records(trace, [cid], k=FATE_K)[0]
        st.markdown("**Gold passage:** " + escape_markdown(f"{record.fate}; {record.detail}"))
    text = _passage_text(trace, cid)
    if text:
        with st.expander("the passage", expanded=True):
            st.text(text)
    if st.button("show where", key=f"{results_key}_where_{trace.method}_{cid}", icon=":material/search:",
                 help="Opens this method's ranked list, this passage's row highlighted."):
        focus.open_view(results_key, trace.method, RANKED_TAB, None, cid)
        st.rerun()


def _passage_text(trace: Trace, cid: int) -> str:
    """The passage's text: from the trace, else from the open memory when the trace was made on it."""
    c = trace.chunk(cid)
    if c is not None:
        return c.text
    _, memory, _ = memory_state.active_memory()
    if memory is not None and memory.fingerprint() == trace.memory_fingerprint and 0 <= cid < len(memory.chunks):
        return memory.chunks[cid].text
    return ""
