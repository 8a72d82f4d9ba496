"""Dense retrieval's typed picture (memrag.picture): the question on the left and the head of its
ranked list in one column on the right, best first, each passage written "#rank title" and sized
by its score; the passages the answer read in their own colour; a gold passage ringed wherever it
ranked (one beyond the head is drawn under it, at its rank). Any method's ranked list is drawn
this way when it has nothing else to draw (HippoRAG 2's or NeuroPath's fall back to dense)."""

from __future__ import annotations

from collections.abc import Iterable

from memrag.picture import LegendEntry, Picture, PictureEdge, PictureNode
from memrag.plain_text import clip
from memrag.trace import RankedChunk, Trace

TOP = 10  # passages drawn from the head of the list (gold ones further down come on top)
ANSWER_HEAD = 5  # with no answer step, the head the answer would have read
TEXT_TIP = 300  # characters of a passage's text on its hover
LAYERS = ("question", "ranked passages")
CONTEXT_WORDS = "passage the answer read"
BELOW_WORDS = "passage ranked below it"
RANKED = "ranked"  # a passage's role: its place in the list (its label says which)
GOLD_WORDS = "ring: from a gold passage"


def passage_id(chunk_id: int) -> str:
    return f"c:{chunk_id}"


def context_ids(trace: Trace) -> list[int]:
    """The passages the answer read (the head of the list when the trace has no answer step)."""
    return list(trace.answer.context_chunk_ids) if trace.answer else trace.ranked_ids()[:ANSWER_HEAD]


def score_text(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.3f}"


def ranked_label(rank: int, title: str) -> str:
    """A passage as a ranked picture writes it: its place in the list, then its title."""
    return f"#{rank} {title}"


def _weight(score: float | None, low: float, high: float) -> float:
    """Larger for a higher score among those drawn (min-max: cosines of one question lie close)."""
    if score is None or high <= low:
        return 1.0
    return 0.8 + 0.8 * (score - low) / (high - low)


def ranking_picture(trace: Trace, *, gold_chunk_ids: Iterable[int] | None = None, top: int = TOP,
                    name: str = "", note: str = "") -> Picture:
    """The ranked list as a picture (see the module); `note` is said before the picture's own."""
    gold = set(gold_chunk_ids or ())
    context = set(context_ids(trace))
    drawn = [(rank, r) for rank, r in enumerate(trace.ranked, start=1) if rank <= top or r.chunk_id in gold]
    scores = [r.score for _, r in drawn if r.score is not None]
    low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
    nodes = [PictureNode("q", "question", kind="question", role="question", layer=0, labelled=True,
                         tooltip=trace.question)]
    edges = []
    for rank, r in drawn:
        nodes.append(_passage(trace, rank, r, r.chunk_id in context, r.chunk_id in gold, _weight(r.score, low, high)))
        edges.append(PictureEdge(f"q>{passage_id(r.chunk_id)}", "q", passage_id(r.chunk_id), kind="activation",
                                 tooltip=f"#{rank}: {r.why or 'score ' + score_text(r.score)}", ref=str(r.chunk_id)))
    read = sum(1 for n in nodes if n.fate == "context")
    legend = [LegendEntry("node:question", "the question"),
              LegendEntry("node:passage:context", CONTEXT_WORDS, read, "passages" if read != 1 else "passage")]
    if len(drawn) > read:
        legend.append(LegendEntry("node:passage", BELOW_WORDS, len(drawn) - read,
                                  "passages" if len(drawn) - read != 1 else "passage"))
    if any(n.gold for n in nodes):
        legend.append(LegendEntry("node:gold", GOLD_WORDS))
    return Picture(name or f"{trace.method}-ranking", tuple(nodes), tuple(edges), tuple(legend),
                   " ".join(x for x in (note, _note(trace, drawn, top, gold)) if x), layer_titles=LAYERS,
                   listed_layers=(1,))


def _passage(trace: Trace, rank: int, r: RankedChunk, read: bool, gold: bool, weight: float) -> PictureNode:
    c = trace.chunk(r.chunk_id)
    title = c.title if c else f"chunk {r.chunk_id}"
    tip = f"#{rank}: {title} (chunk {r.chunk_id}, score {score_text(r.score)})" + (f"\n{r.why}" if r.why else "")
    if c is not None:
        tip += "\n" + clip(c.text, TEXT_TIP)
    return PictureNode(passage_id(r.chunk_id), ranked_label(rank, title), kind="passage", role=RANKED,
                       fate="context" if read else "", weight=weight, layer=1, labelled=True, gold=gold,
                       tooltip=tip, ref=str(r.chunk_id))


def _note(trace: Trace, drawn: list[tuple[int, RankedChunk]], top: int, gold: set[int]) -> str:
    head = min(top, len(trace.ranked))
    said = f"The top {head} of {len(trace.ranked)} ranked passages, best first; size by score."
    below = [rank for rank, r in drawn if rank > top]
    if below:
        said += " A gold passage ranked lower is drawn under them at its rank (" + \
                ", ".join(f"#{x}" for x in below) + ")."
    missing = gold - set(trace.ranked_ids())
    if missing:
        said += f" {len(missing)} gold chunk(s) are not in the ranked list."
    return said
