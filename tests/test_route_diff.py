"""NeuroPath's route after an edit marks what is new since the earlier run (ask again), replayed
offline from the recorded showcase (sample_corpus/showcase): removing triple #258 turns hop 1's
listed paths into kept ones, so the route now must mark them — and a run compared with itself
marks nothing."""

from __future__ import annotations

import pytest

from memrag.embed import get_embedder
from memrag.explain import showcase
from memrag.explain.trace_diff import diff_method
from memrag.methods.neuropath import changes, route_diff
from memrag.methods.neuropath.detail import NeuroPathDetail
from memrag.viz import figure, style
from memrag.viz.look import Look

pytestmark = pytest.mark.skipif(not showcase.available(), reason="no recorded showcase in this checkout")


@pytest.fixture(scope="module")
def np_traces(tmp_path_factory):
    r = showcase.replay(showcase.load(), get_embedder(), tmp_path_factory.mktemp("showcase"))
    pick = lambda ts: next(t for t in ts if t.method == "neuropath")  # noqa: E731
    return pick(r.before), pick(r.after)


def test_the_route_after_the_showcase_edit_marks_the_paths_that_appeared(np_traces):
    before, after = np_traces
    picture = route_diff.since(before, after)
    nodes, edges = route_diff.marked(picture)
    assert edges, picture.note
    was_kept = {x for label, items in changes.steps(before) if label == "hop 1: paths kept" for x in items}
    # every marked triple edge carries a path kept at hop 1 now that the earlier run did not keep there
    kept_now = [c for h in after.detail(NeuroPathDetail).hops if h.hop == 1 for c in h.candidates
                if c.fate in changes.KEPT and changes.chain(c) not in was_kept]
    assert kept_now and any(str(c.triples[0].triple_id) in e.ref.split(",") for c in kept_now for e in edges)
    assert all(e.change == "appeared" and "new since the edit" in e.tooltip for e in edges)
    assert any(n.kind == "count" and "new)" in n.label for n in nodes)  # folded listings say how many are new
    entry = picture.legend[-1]
    assert entry.label == f"new since the edit ({len(route_diff.new_paths(after, before))} gone)"
    assert entry.count == len(route_diff.new_paths(before, after)) > 0
    assert "hop 1: paths kept +" in picture.note
    drawn = figure.draw(picture, Look())
    assert any(getattr(t, "line", None) is not None and t.line.color == style.CHANGE_COLOUR for t in drawn.figure.data)


def test_a_trace_compared_with_itself_marks_nothing(np_traces):
    _, after = np_traces
    picture = route_diff.since(after, after)
    assert route_diff.marked(picture) == ([], [])
    assert route_diff.new_paths(after, after) == {} and route_diff.step_counts(after, after) == []
    assert [e.text for e in picture.legend] == [e.text for e in route_diff.route.route(after).legend]


def test_paths_that_end_alike_are_named_by_their_whole_chain(np_traces):
    before, after = np_traces
    listed = {s.label: s for s in diff_method(before, after).steps}["hop 2: paths listed, not kept"]
    last = lambda x: x.split(" ⇒ ")[-1]  # noqa: E731
    both = {last(x) for x in listed.appeared if " ⇒ " in x} & {last(x) for x in listed.disappeared if " ⇒ " in x}
    assert both  # the showcase has such pairs: same last triple, a different first one
    tail = sorted(both)[0]
    plus = next(x for x in listed.appeared if x.endswith(tail))
    minus = next(x for x in listed.disappeared if x.endswith(tail))
    assert plus != minus and plus.split(" ⇒ ")[0] != minus.split(" ⇒ ")[0]
