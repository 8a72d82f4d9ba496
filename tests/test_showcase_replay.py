"""The recorded showcase (sample_corpus/showcase, memrag/explain/showcase.py) replays offline: on a
fresh copy of the sample, the question replayed from the sample's recordings, the edit made, the
question asked again with every unchanged call answered from the first traces and every changed
one from the showcase's recordings — and the outcome is the one recorded in expected.json, where
some method's gold passage moves from beyond the top k into it and its answer becomes the reference.
A showcase missing a recorded reply fails loudly instead of passing."""

from __future__ import annotations

import shutil

import pytest

from memrag import demo
from memrag.embed import get_embedder
from memrag.eval.metrics import exact_match
from memrag.explain import showcase
from memrag.index import store
from memrag.llm.recordings import StaleRecording

pytestmark = pytest.mark.skipif(not showcase.available(), reason="no recorded showcase in this checkout")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    show = showcase.load()
    return show, showcase.replay(show, get_embedder(), tmp_path_factory.mktemp("showcase"))


def test_the_showcase_replays_offline_as_recorded(replayed):
    show, r = replayed
    assert showcase.outcome(r) == showcase.expected()
    assert sum(r.asked.values()) > 0  # the edit changed some calls: the showcase's recordings answered them
    assert all(c.ok for t in r.after for c in t.llm_calls)  # no call failed on the way


def test_the_edit_turns_a_miss_into_a_hit_for_some_method(replayed):
    show, r = replayed
    record = show.record
    answers = [record["answer"], *record.get("answer_aliases", [])]
    k = showcase.K
    found = [d for d in r.diffs
             if any((g.rank_before is None or g.rank_before > k) and g.rank_after is not None and g.rank_after <= k
                    for g in d.gold)
             and exact_match(d.answer_after, answers) and not exact_match(d.answer_before, answers)]
    assert found, [d.lines() for d in r.diffs]


def test_the_edit_is_the_one_the_showcase_names_and_the_sample_is_untouched(replayed):
    show, r = replayed
    sample = store.load(demo.sample_memory_dir())
    t = sample.triples[show.edit.args["triple"]]
    assert f"{t.head} → {t.relation} → {t.tail}" in show.title
    assert r.before[0].memory_fingerprint == sample.fingerprint() != r.after[0].memory_fingerprint
    assert store.is_memory_dir(demo.sample_memory_dir()) and "showcase" not in str(demo.sample_memory_dir())


def test_a_showcase_missing_a_recorded_reply_fails_instead_of_passing(tmp_path):
    folder = tmp_path / "showcase"
    shutil.copytree(showcase.SHOWCASE_DIR, folder)
    lines = (folder / showcase.RESPONSES).read_text().splitlines(keepends=True)
    (folder / showcase.RESPONSES).write_text("".join(lines[:-1]))  # one reply gone
    with pytest.raises(StaleRecording):
        showcase.replay(showcase.load(folder), get_embedder(), tmp_path / "work")
