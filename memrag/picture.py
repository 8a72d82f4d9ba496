"""A retrieval's picture as data: what to draw, never how (no HTML, no colours, no positions).

Each method's wing builds one (`memrag/methods/<name>/picture.py`); one renderer in `memrag.viz`
draws any picture (`memrag.viz.figure.picture_figure`), and the PNG, GraphML and legend read the
same data. Words here are plain text: the renderer escapes them for whatever it writes.
"""

from __future__ import annotations

from dataclasses import dataclass

# what a node is
NODE_KINDS = ("question", "entity", "passage", "count")  # count: listed-not-kept paths folded into one node
# what an edge stands for
EDGE_KINDS = ("triple", "coreference", "activation", "passage")
# what an edit of the memory did to a mark, when a picture is compared with an earlier run's (ask again)
CHANGES = ("appeared",)
GOLD_ANSWER = "gold answer"  # what a node whose name is the question's reference answer says it is


def plain_name(text: str) -> str:
    """A name as compared with a reference answer: case and spacing left out."""
    return " ".join(text.casefold().split())


def names_gold_answer(label: str, answers: "frozenset[str] | set[str]") -> bool:
    """Whether a node's name is one of the reference answers (`answers`: plain_name'd)."""
    return bool(answers) and plain_name(label) in answers


@dataclass(frozen=True)
class PictureNode:
    id: str
    label: str
    kind: str = "entity"  # one of NODE_KINDS
    role: str = ""  # the method's word for its part: seed, coref, frontier, cue, final …
    fate: str = ""  # what the retrieval did with it (the colour): valid, expanded, dropped, pruned …
    weight: float = 1.0  # relative size, 1 = an ordinary node
    step: int | None = None  # the first step it appears in
    layer: int | None = None  # a column in a layered picture (0 = left); None: laid out freely
    labelled: bool = False  # its label must be written (a named node), not only when there is room
    gold: bool = False  # from a gold passage
    tooltip: str = ""  # plain text shown on hover
    ref: str = ""  # what it stands for in the memory: an entity key, a chunk id, a path id
    change: str = ""  # one of CHANGES: new since the run it is compared with ('' = not compared, or the same)


@dataclass(frozen=True)
class PictureEdge:
    id: str
    source: str
    target: str
    kind: str = "triple"  # one of EDGE_KINDS
    relation: str = ""  # the words written on it (a triple's relation; '' = none)
    fate: str = ""
    bold: bool = False  # on a kept path: drawn heavy, its relation written
    step: int | None = None
    tooltip: str = ""
    ref: str = ""  # a triple id, a chunk id
    change: str = ""  # one of CHANGES (see PictureNode.change)


@dataclass(frozen=True)
class LegendEntry:
    """One line of the legend: a mark (a node fate / role, or an edge kind) and how many it counts.
    `count` counts what `unit` says ("paths", "nodes"), the same number the note says."""
    mark: str  # "node:<fate>", "edge:<kind>", "edge:<kind>:bold", "node:count" …
    label: str
    count: int | None = None
    unit: str = ""

    @property
    def text(self) -> str:
        return self.label if self.count is None else f"{self.label} · {self.count}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class StepLook:
    """How the picture looks at one step of a replay: which nodes and edges are drawn, which of
    them are lit (new or named at this step) and which faded (still there, no longer in play)."""
    step: int
    title: str = ""
    shown: frozenset[str] = frozenset()  # node and edge ids drawn at this step (empty: all)
    lit: frozenset[str] = frozenset()
    faded: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Picture:
    name: str  # a file name stem for downloads ("neuropath-route")
    nodes: tuple[PictureNode, ...]
    edges: tuple[PictureEdge, ...]
    legend: tuple[LegendEntry, ...] = ()
    note: str = ""  # plain text under the picture: what it shows and what it left out
    steps: tuple[StepLook, ...] = ()
    layer_titles: tuple[str, ...] = ()  # a layered picture's column heads ("seeds", "hop 1" …)
    listed_layers: tuple[int, ...] = ()  # columns drawn top to bottom in the order their nodes are listed

    def node(self, node_id: str) -> PictureNode | None:
        return next((n for n in self.nodes if n.id == node_id), None)

    def edge(self, edge_id: str) -> PictureEdge | None:
        return next((e for e in self.edges if e.id == edge_id), None)

    def step_look(self, step: int | None) -> StepLook | None:
        return None if step is None else next((s for s in self.steps if s.step == step), None)
