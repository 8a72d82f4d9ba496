"""Loaders, recall units and corpus scopes, on tiny fixtures written in each dataset's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrag.eval.datasets import (
    load_2wiki,
    load_dataset,
    load_hotpotqa,
    load_musique,
    load_sample,
    question_passages,
    scoped_corpus,
    strip_title_prefix,
    unit_of,
)

FIX = Path(__file__).parent / "fixtures" / "eval"
BENCH = Path(__file__).resolve().parents[1].parent / "shared" / "bench"

ALPHA_BRAND = ("Alpha", "Alpha is a brand owned by Beta Corp.")
ALPHA_LETTER = ("Alpha", "Alpha is also a letter of the Greek alphabet.")
BETA = ("Beta Corp", "Beta Corp was founded by Jane Doe.")
GREEK = ("Greek alphabet", "In the Greek alphabet beta follows alpha.")


def mu(pair: tuple[str, str]) -> str:
    return unit_of("musique", *pair)


# ----------------------------------------------------------------------------- MuSiQue


def test_musique_repeated_title_gives_distinct_units_and_gold_by_title_and_text():
    ds = load_musique(FIX / "musique_questions.json")
    q1, q2 = ds.questions
    assert mu(ALPHA_BRAND) != mu(ALPHA_LETTER)
    # Only the supporting "Alpha" paragraph is gold for q1, not its namesake.
    assert q1.gold_units == [mu(ALPHA_BRAND), mu(BETA)]
    assert q2.gold_units == [mu(ALPHA_LETTER), mu(GREEK)]
    assert q1.answers == ["Jane Doe", "J. Doe"]
    assert q1.meta["hops"] == 2 and q2.meta["hops"] == 3
    assert len(q1.meta["decomposition"]) == 2


def test_musique_without_corpus_pools_question_paragraphs():
    ds = load_musique(FIX / "musique_questions.json")
    # Four distinct (title, text) pairs across six paragraphs; ids follow first appearance.
    assert list(ds.passages) == ["p0", "p1", "p2", "p3"]
    assert [(p.title, p.text) for p in ds.passages.values()] == [ALPHA_BRAND, ALPHA_LETTER, BETA, GREEK]
    assert ds.questions[1].passage_ids == ["p2", "p1", "p3"]
    assert all(p.unit == mu((p.title, p.text)) for p in ds.passages.values())


def test_musique_with_corpus_uses_corpus_order_and_matches_by_title_and_text():
    ds = load_musique(FIX / "musique_questions.json", FIX / "musique_corpus.json")
    assert list(ds.passages) == ["c0", "c1", "c2", "c3", "c4"]
    assert (ds.passages["c3"].title, ds.passages["c3"].text) == ALPHA_LETTER
    # q1 holds the brand "Alpha" (c1), the letter "Alpha" (c3) and Beta Corp (c2).
    assert ds.questions[0].passage_ids == ["c1", "c3", "c2"]
    assert ds.questions[1].passage_ids == ["c2", "c3", "c0"]


def test_musique_paragraph_missing_from_corpus_is_reported(tmp_path):
    corpus = json.loads((FIX / "musique_corpus.json").read_text())
    corpus = [c for c in corpus if c["text"] != ALPHA_LETTER[1]]  # same title stays, text goes
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(corpus))
    with pytest.raises(ValueError, match="2hop__11_22.*'Alpha' is not in the corpus"):
        load_musique(FIX / "musique_questions.json", path)


# ----------------------------------------------------------------------------- 2Wiki


def test_2wiki_strips_title_prefix_and_gold_is_supporting_titles():
    ds = load_2wiki(FIX / "2wiki.jsonl")
    film_x = ds.passages["2wiki_q1_0"]
    assert film_x.title == "Film X"
    assert film_x.text == "0. Film X is a 1999 film.\n1. It was directed by Yan Person."
    assert film_x.unit == "Film X"
    # Supporting-fact ids are sentence ids, never chunk ids; titles carry the link.
    q1, q2 = ds.questions
    assert q1.gold_units == ["Film X", "Yan Person"]
    assert q2.gold_units == ["Yan Person", "Quinn Q"]
    assert q1.meta == {
        "hops": 2,
        "type": "compositional",
        "decomposition": [],
        "evidences": [{"subject": "Film X", "relation": "director", "object": "Yan Person"}],
    }


def test_2wiki_pool_dedupes_by_title_and_text_but_unit_is_title():
    ds = load_2wiki(FIX / "2wiki.jsonl")
    # Six chunks: q2_0 repeats q1_1 exactly; q2_1 shares only the title.
    assert list(ds.passages) == ["2wiki_q1_0", "2wiki_q1_1", "2wiki_q1_2", "2wiki_q2_1", "2wiki_q2_2"]
    assert ds.aliases == {"2wiki_q2_0": "2wiki_q1_1"}
    assert ds.questions[1].passage_ids == ["2wiki_q1_1", "2wiki_q2_1", "2wiki_q2_2"]
    assert ds.passages["2wiki_q1_1"].unit == ds.passages["2wiki_q2_1"].unit == "Yan Person"


def test_2wiki_supporting_title_without_chunk_is_reported(tmp_path):
    rec = json.loads((FIX / "2wiki.jsonl").read_text().splitlines()[0])
    rec["supporting_facts"][0]["title"] = "Missing Page"
    path = tmp_path / "w.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(ValueError, match=r"w\.jsonl:1: .*Missing Page"):
        load_2wiki(path)


# ----------------------------------------------------------------------------- HotpotQA


def test_hotpotqa_strips_colon_prefix_even_when_title_has_a_colon():
    ds = load_hotpotqa(FIX / "hotpotqa.jsonl")
    assert ds.passages["hp1_ctxchunk_2"].text == "A 1977 space opera film."
    assert ds.passages["hp1_ctxchunk_0"].text == (
        "Arthur's Magazine (1844-1846) was an American literary periodical."
    )


def test_hotpotqa_duplicate_text_under_several_ids_is_one_passage_and_one_gold():
    ds = load_hotpotqa(FIX / "hotpotqa.jsonl")
    arthur = ds.passages["hp1_ctxchunk_0"]
    assert ds.aliases == {"hp2_ctxchunk_0": "hp1_ctxchunk_0", "hp2_ctxchunk_1": "hp1_ctxchunk_0"}
    assert len(ds.passages) == 4
    q1, q2 = ds.questions
    assert q1.gold_units == [arthur.text, "First for Women is a magazine started in 1989."]
    # Two gold ids with one text count once.
    assert q2.gold_units == [arthur.text, "Timothy Shay Arthur edited Arthur's Magazine."]
    assert q2.passage_ids == ["hp1_ctxchunk_0", "hp2_ctxchunk_2"]
    assert q2.answers == ["1846", "in 1846"]
    assert q1.meta["type"] == "comparison"


def test_hotpotqa_supporting_id_outside_question_is_reported(tmp_path):
    rec = json.loads((FIX / "hotpotqa.jsonl").read_text().splitlines()[0])
    rec["supporting_facts"][1]["id"] = "hp9_ctxchunk_9"
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(ValueError, match="hp9_ctxchunk_9"):
        load_hotpotqa(path)


def test_strip_title_prefix_leaves_other_text_alone():
    assert strip_title_prefix("X", "Title: X\nbody") == "body"
    assert strip_title_prefix("X", "X: body") == "body"
    assert strip_title_prefix("X", "Y: body") == "Y: body"
    assert strip_title_prefix("X", "body mentions X: here") == "body mentions X: here"


# ----------------------------------------------------------------------------- sample corpus


def test_sample_titles_from_heading_units_are_doc_ids():
    ds = load_sample(FIX / "sample" / "questions.json", FIX / "sample" / "docs")
    mill = ds.passages["mill"]
    assert mill.title == "The Old Mill"
    assert mill.text == "Ada Wright built the mill in 1820.\nIt is fed by the river described elsewhere."
    assert mill.unit == "mill"
    assert ds.passages["notes"].title == "notes"  # no heading: the file name stands in
    s1, s2 = ds.questions
    assert s1.gold_units == ["mill", "river"] and s2.gold_units == ["mill"]
    assert s1.answers == ["Ouse", "River Ouse"]
    assert s1.meta == {"hops": 2, "kind": "bridge"}
    assert sorted(s1.passage_ids) == ["mill", "notes", "river"]


def test_sample_unknown_gold_doc_is_reported(tmp_path):
    qs = json.loads((FIX / "sample" / "questions.json").read_text())
    qs[1]["gold_docs"] = ["windmill"]
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(qs))
    with pytest.raises(ValueError, match="s2.*windmill"):
        load_sample(path, FIX / "sample" / "docs")


# ----------------------------------------------------------------------------- dispatch, errors


def test_load_dataset_dispatches_by_name():
    assert load_dataset("musique", FIX / "musique_questions.json", FIX / "musique_corpus.json").name == "musique"
    hippo = load_dataset("hipporag", FIX / "musique_questions.json")
    assert hippo.name == "hipporag" and hippo.questions[0].gold_units[0] == mu(ALPHA_BRAND)
    assert load_dataset("2wiki", FIX / "2wiki.jsonl").name == "2wiki"
    assert load_dataset("hotpotqa", FIX / "hotpotqa.jsonl").name == "hotpotqa"
    assert len(load_dataset("sample", FIX / "sample").passages) == 3
    with pytest.raises(ValueError, match="unknown dataset 'nq'"):
        load_dataset("nq", FIX / "2wiki.jsonl")


def test_bad_files_get_clear_messages(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.jsonl"):
        load_2wiki(tmp_path / "nothing.jsonl")
    broken = tmp_path / "broken.jsonl"
    broken.write_text((FIX / "hotpotqa.jsonl").read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(ValueError, match=r"broken\.jsonl:2: not valid JSON"):
        load_hotpotqa(broken)
    no_question = tmp_path / "q.json"
    no_question.write_text(json.dumps([{"id": "x", "answer": "a", "paragraphs": []}]))
    with pytest.raises(ValueError, match="question x: missing field 'question'"):
        load_musique(no_question)


def test_unit_of_rejects_unknown_dataset_and_sample_without_id():
    with pytest.raises(ValueError, match="unknown dataset"):
        unit_of("squad", "t", "x")
    with pytest.raises(ValueError, match="pid"):
        unit_of("sample", "t", "x")


# ----------------------------------------------------------------------------- scopes


def test_pooled_scope_is_whole_corpus_with_limited_questions():
    ds = load_musique(FIX / "musique_questions.json", FIX / "musique_corpus.json")
    questions, passages = scoped_corpus(ds, "pooled", limit=1)
    assert [q.qid for q in questions] == ["2hop__11_22"]
    # "Delta" belongs to no question but is part of the open corpus.
    assert [p.pid for p in passages] == ["c0", "c1", "c2", "c3", "c4"]


def test_limit_pooled_scope_is_exactly_the_union_of_first_questions_passages():
    ds = load_hotpotqa(FIX / "hotpotqa.jsonl")
    _, one = scoped_corpus(ds, "limit-pooled", limit=1)
    assert [p.pid for p in one] == ["hp1_ctxchunk_0", "hp1_ctxchunk_1", "hp1_ctxchunk_2"]
    questions, both = scoped_corpus(ds, "limit-pooled", limit=2)
    expected = {pid for q in questions for pid in q.passage_ids}
    assert {p.pid for p in both} == expected and len(both) == len(expected) == 4
    _, all_q = scoped_corpus(ds, "limit-pooled", limit=None)
    assert [p.pid for p in all_q] == [p.pid for p in both]


def test_per_question_scope_gives_each_question_its_own_passages():
    ds = load_musique(FIX / "musique_questions.json", FIX / "musique_corpus.json")
    questions, passages = scoped_corpus(ds, "per-question", limit=2)
    assert {p.pid for p in passages} == {"c0", "c1", "c2", "c3"}
    own = question_passages(ds, questions[1])
    assert [(p.title, p.text) for p in own] == [BETA, ALPHA_LETTER, GREEK]


def test_scope_arguments_are_checked():
    ds = load_2wiki(FIX / "2wiki.jsonl")
    with pytest.raises(ValueError, match="unknown corpus scope 'open'"):
        scoped_corpus(ds, "open", None)
    with pytest.raises(ValueError, match="limit"):
        scoped_corpus(ds, "pooled", 0)


# ----------------------------------------------------------------------------- real data


@pytest.mark.skipif(not BENCH.is_dir(), reason="../shared/bench not present")
def test_real_benchmark_counts_match_the_bench_readme():
    musique = load_musique(BENCH / "musique/musique_train.json", BENCH / "musique/musique_train_corpus.json")
    wiki = load_2wiki(BENCH / "2wikimultihopqa/2wiki_subset.jsonl")
    hotpot = load_hotpotqa(BENCH / "hotpotqa/hotpotqa_subset.jsonl")
    assert (len(musique.questions), len(musique.passages)) == (100, 1890)
    assert (len(wiki.questions), len(wiki.passages)) == (500, 3452)
    assert (len(hotpot.questions), len(hotpot.passages)) == (500, 4925)
    for ds in (musique, wiki, hotpot):
        for q in ds.questions:
            own_units = {ds.passages[pid].unit for pid in q.passage_ids}
            assert q.gold_units and set(q.gold_units) <= own_units, q.qid
    assert all(not p.text.startswith("Title: ") for p in wiki.passages.values())
    # Only the one prefix goes: this book's real text begins with its own full title.
    incest = [p for p in hotpot.passages.values() if p.title == "Incest: From a Journal of Love"]
    assert incest[0].text.startswith("Incest: From a Journal of Love: The Unexpurgated Diary")
