"""The Learn page's replay pictures (memrag.explain.learn_picture) on the sample memory's recorded
demo questions: one node set per trace (one layout), nothing drawn is taken away by the cap (it fades),
NeuroPath's completion draws the passages completion added and why, named nodes are labelled, the
gold answer's node is marked wherever drawn, a seed is a seed in the legend, and no two legend
entries of a step share a mark."""

from __future__ import annotations

import pytest

from memrag.ask import METHODS
from memrag.demo import gold_chunk_ids
from memrag.explain import lessons
from memrag.explain.learn_picture import COMPLETION_QUERY, GOLD_ANSWER, learn_pictures
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.picture import Picture
from memrag.trace import Trace
from memrag.viz import look as looks, style
from sample_replay import replay_sample

TAUGHT = ("neuropath", "ecphory", "hipporag2")


@pytest.fixture(scope="module")
def replays() -> list[tuple[dict, Trace, list[Picture]]]:
    memory, asked = replay_sample(TAUGHT)
    out = []
    for q, traces in asked:
        for t in traces:
            names = [lesson.names for lesson in lessons.lessons(t)]
            pics = learn_pictures(t, gold_chunk_ids=gold_chunk_ids(memory, q["gold_docs"]),
                                  gold_answers=[q["answer"], *q.get("answer_aliases", [])], names=names)
            out.append((q, t, pics))
    return out


def drawn(p: Picture) -> set[str]:
    ids = {n.id for n in p.nodes}
    return set(p.steps[0].shown) & ids


def test_every_step_shares_one_node_set_and_never_drops_what_it_drew(replays):
    for q, t, pics in replays:
        assert len(pics) == len(t.steps)
        assert len({tuple(n.id for n in p.nodes) for p in pics}) == 1, (q["id"], t.method)
        assert len({tuple((e.id, e.source, e.target) for e in p.edges) for p in pics}) == 1, (q["id"], t.method)
        for before, now in zip(pics, pics[1:]):
            lost = drawn(before) - drawn(now)
            assert not lost, (q["id"], t.method, now.steps[0].title, sorted(lost)[:5])
        for p in pics:  # faded and lit: drawn, never both
            look = p.steps[0]
            assert look.faded <= look.shown and look.lit <= look.shown and not (look.faded & look.lit)


def test_ecphory_fades_at_the_cap_instead_of_dropping(replays):
    faded = [(q["id"], len(p.steps[0].faded)) for q, t, pics in replays if t.method == "ecphory" for p in pics
             if p.steps[0].faded]
    assert faded, "no EcphoryRAG step went past the 40-node cap on the sample"
    q01 = next(pics for q, t, pics in replays if q["id"] == "q01" and t.method == "ecphory")
    full = [len(drawn(p) - p.steps[0].faded) for p in q01]
    assert max(full) <= 40 and len(drawn(q01[3])) > 40, (full, len(drawn(q01[3])))


def test_neuropath_completion_draws_the_passages_completion_added_and_why(replays):
    for q, t, pics in replays:
        if t.method != "neuropath" or t.steps[-1].kind != "completion":
            continue
        d = t.detail(NeuroPathDetail)
        last, before = pics[-1], pics[-2]
        look = last.steps[0]
        passages = [n for n in last.nodes if n.kind == "passage" and n.id in look.shown]
        context = t.answer.context_chunk_ids if t.answer else []
        assert {n.ref for n in passages} == {str(c) for c in context}, q["id"]
        assert {n.id for n in passages} <= look.lit and not ({n.id for n in passages} & drawn(before)), q["id"]
        for n in passages:  # each says why it is there: a kept path, or the completion search's rank
            assert n.labelled and n.tooltip, (q["id"], n)
            assert (n.role == "dp") == (int(n.ref) in d.dp_chunk_ids), (q["id"], n)
        if any(n.role == "completion" for n in passages):
            query = last.node("q:completion")
            assert query is not None and query.label == COMPLETION_QUERY and d.de_query in query.tooltip
            assert {e.target for e in last.edges if e.source == query.id and e.id in look.shown} == \
                {n.id for n in passages if n.role == "completion"}
        assert last.note != before.note and "passages" in last.note


def test_named_nodes_are_labelled_and_the_gold_answer_is_marked(replays):
    q01 = {t.method: pics for q, t, pics in replays if q["id"] == "q01"}
    round2 = q01["ecphory"][3]  # its lesson names Wenna Thorold
    wenna = [n for n in round2.nodes if n.label == "Wenna Thorold" and n.id in drawn(round2)]
    assert wenna and all(n.labelled for n in wenna)
    for method, pics in q01.items():
        for p in pics:
            answer = [n for n in p.nodes if n.id in drawn(p) and n.kind == "entity" and n.label.startswith("Tresswick")]
            for n in answer:
                assert n.labelled and n.label == f"Tresswick ({GOLD_ANSWER})", (method, p.steps[0].title, n.label)
    hop2 = q01["neuropath"][2]
    assert any(n.label == f"Tresswick ({GOLD_ANSWER})" for n in hop2.nodes if n.id in drawn(hop2))


def test_a_lone_seed_is_a_seed_and_legend_marks_are_distinct(replays):
    for q, t, pics in replays:
        if t.method == "neuropath":
            first = pics[0]
            # seeds and their coreference candidates, before any path: no fate yet
            assert all(n.role in ("seed", "coref") and n.fate == "" for n in first.nodes if n.id in drawn(first)), \
                [(n.label, n.role, n.fate) for n in first.nodes if n.id in drawn(first)]
            assert not any("no drawn path" in e.label for e in first.legend), [e.text for e in first.legend]
        for p in pics:  # each entry a mark of its own, as the renderer draws it (fill and shape)
            marks = [(m.fill, m.symbol) for m in (style.legend_mark(e.mark, looks.current()) for e in p.legend)]
            labels = [e.label for e in p.legend]
            assert len(set(marks)) == len(marks) and len(set(labels)) == len(labels), (q["id"], t.method, labels)
            assert sum(e.count or 0 for e in p.legend) == len(drawn(p)), (q["id"], p.steps[0].title)
