"""HippoRAG 2's and dense retrieval's typed pictures (memrag.methods.hipporag2.mass_picture,
memrag.methods.dense.picture): on the hand-worked memory of test_hipporag2 (masses worked out
there) and on the sample's recorded q11, drawn by memrag.viz.figure."""

from __future__ import annotations

import json
import html

import plotly.io as pio
import pytest
from test_hipporag2 import P3, ctx, keep, world

from memrag.demo import gold_chunk_ids, sample_questions
from memrag.methods.dense import picture as dense_picture
from memrag.methods.hipporag2 import mass_picture
from memrag.methods.hipporag2 import search as hipporag2
from memrag.methods.hipporag2.detail import HippoRAG2Detail
from memrag.trace import RankedChunk, Trace
from memrag.viz import figure, label_places, layout
from memrag.viz.look import Look

FOCUS = Look(label_all=True)


@pytest.fixture(scope="module")
def walked() -> Trace:
    return hipporag2.retrieve(ctx(world(), keep(1, 3)), P3)  # T0 and T2 kept: three phrase seeds


def _by_id(pic):
    return {n.id: n for n in pic.nodes}


def test_nodes_grow_with_their_pagerank_mass(walked):
    pic = mass_picture.picture(walked)
    mass = {n.id: n.score for n in walked.nodes if n.kind != "query"}
    drawn = sorted((n for n in pic.nodes if n.id in mass), key=lambda n: mass[n.id])
    weights = [n.weight for n in drawn]
    assert weights == sorted(weights) and weights[0] < weights[-1]
    top = max(mass, key=mass.get)
    assert _by_id(pic)[top].weight == pytest.approx(2.0)  # 0.6 + 1.4: the heaviest node
    assert mass_picture.mass_weight(0.25, 1.0) == pytest.approx(0.6 + 1.4 * 0.5)  # a quarter: half the growth
    assert mass_picture.mass_weight(None, 1.0) == mass_picture.mass_weight(0.3, 0.0) == 1.0


def test_the_walk_reads_left_to_right(walked):
    d = walked.detail(HippoRAG2Detail)
    pic = mass_picture.picture(walked)
    by = _by_id(pic)
    assert by["q"].layer == 0
    assert {n.id for n in pic.nodes if n.layer == 1} == {f"e:{s.key}" for s in d.phrase_seeds}
    assert all(n.role == "seed" and n.labelled for n in pic.nodes if n.layer == 1)
    reached = [n for n in pic.nodes if n.layer == 2]
    assert reached and all(n.role == "phrase" for n in reached)
    # the passages: every one the list ranked (five), "#rank title", those the answer read in their colour
    passages = [n for n in pic.nodes if n.layer == 3]
    titles = {c.chunk_id: c.title for c in walked.chunks}
    assert {n.label for n in passages} == {f"#{i} {titles[r.chunk_id]}" for i, r in enumerate(walked.ranked, 1)
                                          if f"c:{r.chunk_id}" in by}
    assert [n.label.split()[0] for n in passages] == [f"#{i}" for i in range(1, len(passages) + 1)]  # best first
    at = layout.places(pic, figure.DESIGN_WIDTH, 620)
    assert [at[n.id][1] for n in passages] == sorted(at[n.id][1] for n in passages)  # drawn top down: #1 on top
    read = set(walked.answer.context_chunk_ids if walked.answer else walked.ranked_ids()[:5])
    assert {int(n.ref) for n in passages if n.fate == "context"} == read & {int(n.ref) for n in passages}
    # a kept fact's relation is written on a bold edge; no edge runs down the reached phrases' column
    bold = {e.relation for e in pic.edges if e.kind == "triple" and e.bold}
    assert "opened bakery in" in bold and "owned by" in bold
    assert not any(by[e.source].layer == by[e.target].layer == 2 for e in pic.edges)
    assert pic.layer_titles[0] == "question" and len(pic.layer_titles) == 4
    # the kept facts are said under it whole (a relation is written on the picture where there is room)
    assert pic.note.startswith("Kept fact(s): Ada Brennick —opened bakery in→ Tollmere; "
                               "Brennick Mill —owned by→ Ada Brennick. 3 seeded phrase(s)")


def test_a_narrow_picture_drops_its_column_heads_names_and_edge_legend(walked):
    wide, narrow = mass_picture.picture(walked), mass_picture.picture(walked, narrow=True)
    assert wide.layer_titles and not narrow.layer_titles
    assert any(x.mark.startswith("edge:") for x in wide.legend)
    assert [x for x in wide.legend if x.mark.startswith("node:")] == list(narrow.legend)
    assert [n.id for n in wide.nodes] == [n.id for n in narrow.nodes] and wide.edges == narrow.edges
    assert any(n.labelled for n in wide.nodes) and not any(n.labelled for n in narrow.nodes)
    assert narrow.note.startswith("Kept fact(s): ") and len(narrow.note) < len(wide.note) / 2


def test_gold_passages_and_the_gold_answer_are_marked(walked):
    last = walked.ranked[-1].chunk_id  # Quellhaven: no mass, ranked last
    pic = mass_picture.picture(walked, gold_chunk_ids=[walked.ranked[0].chunk_id, last], gold_answers=["harrow  RIVER"],
                               passages=1)
    by = _by_id(pic)
    assert by[f"c:{walked.ranked[0].chunk_id}"].gold
    lost = by[f"c:{last}"]  # beyond the one passage asked for: drawn all the same, at its rank
    assert lost.gold and lost.label.startswith(f"#{len(walked.ranked)} ")
    assert not any(n.gold for n in pic.nodes if n.id not in (f"c:{walked.ranked[0].chunk_id}", f"c:{last}"))
    river = by["e:harrow river"]
    assert river.label == "Harrow River (gold answer)" and river.labelled
    assert any(x.mark == "node:gold" for x in pic.legend)
    assert "node:gold" not in {x.mark for x in mass_picture.picture(walked).legend}


def test_the_step_looks_follow_the_retrieval(walked):
    pic = mass_picture.picture(walked)
    kinds = {s.index: s.kind for s in walked.steps}
    looks = {kinds[s.step]: s for s in pic.steps}
    assert set(looks) == {"seeds", "pagerank", "ranked"}
    seeds = looks["seeds"]
    assert {i for i in seeds.shown if _by_id(pic).get(i)} == {"q"} | {n.id for n in pic.nodes if n.role == "seed"}
    assert not looks["pagerank"].shown and looks["pagerank"].lit == {n.id for n in pic.nodes if n.role == "phrase"}
    # the ranking: all but the passages the answer read fade (none is lit: a lit ring would hide a gold one)
    read = {n.id for n in pic.nodes if n.fate == "context"}
    assert read and not looks["ranked"].lit
    assert {n.id for n in pic.nodes} - looks["ranked"].faded == read | {"q"}


def test_a_trace_whose_edges_joined_the_wrong_nodes_draws_only_its_seed_edges(walked):
    """Traces recorded before the subgraph's numbering fix hold triples between passages: their
    graph edges are not drawn, and the note says why."""
    from dataclasses import replace

    old = Trace.from_json(walked.to_json())
    triple = next(e for e in old.edges if e.kind == "triple")
    passage = next(n.id for n in old.nodes if n.kind == "chunk")
    old.edges[old.edges.index(triple)] = replace(triple, target=passage)
    pic = mass_picture.picture(old)
    assert pic.edges and {e.kind for e in pic.edges} == {"activation"} and all(e.bold for e in pic.edges)
    assert pic.note.endswith(mass_picture.MISJOINED)
    assert mass_picture.MISJOINED not in mass_picture.picture(walked).note
    assert {e.kind for e in mass_picture.picture(walked).edges} > {"activation"}


def test_a_fallback_draws_dense_ranking():
    t = hipporag2.retrieve(ctx(world(), keep()), P3)  # recognition kept nothing
    assert t.detail(HippoRAG2Detail).fallback_dense
    pic = mass_picture.picture(t, gold_chunk_ids=[t.ranked[1].chunk_id])
    assert pic.name == "hipporag2-fallback" and pic.note.startswith("No graph search (recognition memory kept no fact)")
    assert [n.id for n in pic.nodes] == ["q"] + [f"c:{r.chunk_id}" for r in t.ranked]
    assert [n.gold for n in pic.nodes[1:]] == [False, True] + [False] * (len(t.ranked) - 2)
    with pytest.raises(ValueError, match="not a HippoRAG 2 trace"):
        mass_picture.picture(Trace("dense", "q"))


def _ranked_trace(scores: list[float]) -> Trace:
    t = Trace("dense", "Which harbour?")
    t.ranked = [RankedChunk(cid, rank, s, "dense", f"cosine {s:.3f}") for rank, (cid, s) in enumerate(
        sorted(enumerate(scores), key=lambda x: -x[1]))]
    return t


def test_dense_draws_its_ranking_in_order_best_on_top():
    t = _ranked_trace([0.31, 0.72, 0.55, 0.12, 0.64, 0.40, 0.2, 0.1, 0.05, 0.5, 0.3, 0.22, 0.01])
    gold = [12, 2]  # the last of thirteen, and the third
    pic = dense_picture.ranking_picture(t, gold_chunk_ids=gold, top=4)
    passages = [n for n in pic.nodes if n.kind == "passage"]
    assert [int(n.ref) for n in passages] == [1, 4, 2, 9, 12]  # the top 4 by score, then the gold one at #13
    assert [n.label.split()[0] for n in passages] == ["#1", "#2", "#3", "#4", "#13"]
    assert [n.gold for n in passages] == [False, False, True, False, True]
    assert [n.fate for n in passages] == ["context"] * 4 + [""]  # no answer step: the head of five was read
    weights = [n.weight for n in passages]
    assert weights == sorted(weights, reverse=True) and weights[0] > weights[-1]
    ys = layout.places(pic, figure.DESIGN_WIDTH, 420)
    assert [ys[n.id][1] for n in passages] == sorted(ys[n.id][1] for n in passages)  # best first, top down
    assert "(#13)" in pic.note
    assert [x.text for x in pic.legend] == ["the question", "passage the answer read · 4 passages",
                                            "passage ranked below it · 1 passage", "ring: from a gold passage"]


# ------------------------------------------------------------------ the sample's q11, recorded
@pytest.fixture(scope="module")
def q11():
    from memrag.ask import ask
    from memrag.demo import sample_memory_dir
    from memrag.embed import get_embedder
    from memrag.index import store
    from memrag.llm.recordings import Recordings

    emb = get_embedder()
    memory, rec = store.load(sample_memory_dir(), emb.model_id), Recordings.open(sample_memory_dir())
    q = next(x for x in sample_questions() if x["id"] == "q11")
    traces = ask(memory, q["question"], llm=rec.replay_llm(), embedder=emb, methods=["hipporag2", "dense"])
    return traces, gold_chunk_ids(memory, q["gold_docs"]), [q["answer"], *q["answer_aliases"]]


def test_q11_reads_in_focus_every_word_apart(q11):
    (hippo, dense), gold, answers = q11
    for pic in (mass_picture.picture(hippo, gold_chunk_ids=gold, gold_answers=answers),
                dense_picture.ranking_picture(dense, gold_chunk_ids=gold)):
        assert {int(n.ref) for n in pic.nodes if n.gold} == set(gold) & {int(n.ref) for n in pic.nodes
                                                                          if n.kind == "passage"}
        drawn = figure.draw(pic, FOCUS, width=figure.DESIGN_WIDTH, height=620)
        written = {w.text for w in drawn.words}
        assert {figure.short(n.label) for n in pic.nodes if n.labelled} <= written  # every named node named
        for w in drawn.words:
            assert w.px >= 11
        for i, a in enumerate(drawn.words):
            for b in drawn.words[i + 1:]:
                assert not label_places._overlaps(a.box, b.box), (a.text, b.text)
        # every word plotly writes is escaped text
        spec = json.loads(pio.to_json(drawn.figure))
        words = [a["text"] for a in spec["layout"].get("annotations", [])]
        assert all("<" not in w for w in words) and html.unescape(" ".join(words))
    seeds = [n for n in mass_picture.picture(hippo).nodes if n.role == "seed"]
    assert {n.label for n in seeds} == {"Skellan Marine Station", "University of Tollimere"}
