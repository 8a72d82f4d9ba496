"""A rerun does only the work its widget changed: graph layouts and tables are made once per trace
(memrag.app.view_cache), so switching a detail tab, reopening a Learn step or opening an Evaluate
question again lays out no graph a second time. Real AppTest runs of the app, scripted LLM, hash
embedder; the fragments themselves (which part reruns in a browser) are timed by bench/app_bench.py."""

from __future__ import annotations

import gc
import json
from functools import partial
import threading

import pytest

from memrag.app import view_cache
from memrag.viz import figure
from memrag.viz import layout as picture_layout
from test_app_learn import LEARN, slider
from test_app_pages import ask, ask_page, no_exception, recorded, scripted, tiny, home  # noqa: F401


@pytest.fixture()
def layouts(monkeypatch) -> list[int]:
    """Counts typed pictures' layouts (the costly part of every graph picture) from an empty cache."""
    view_cache.MEMO.clear()
    calls: list[int] = []
    picture_layout._laid_out.clear()
    figure._drawn.clear()  # a drawing kept from an earlier test would skip its layout
    monkeypatch.setattr(picture_layout, "lay_out", partial(counted_places, picture_layout.lay_out, calls))
    return calls


def counted_places(real, calls: list[int], *args, **kwargs):
    """A typed picture's layout, counted."""
    calls.append(1)
    return real(*args, **kwargs)


def test_a_tab_switch_after_an_ask_lays_out_no_graph_again(tiny, layouts):
    at = ask(ask_page(tiny, scripted()))
    drawn_by_ask = len(layouts)
    assert drawn_by_ask >= 3  # NeuroPath's route, EcphoryRAG and HippoRAG 2 overviews (+ NeuroPath's hop 1)
    for tab in ("Ranked passages", "LLM calls", "Tokens", "Retrieval"):
        at.session_state["res_neuropath_tabs"] = tab
        no_exception(at.run())
    at.session_state["res_view"] = "One at a time"
    no_exception(at.run())
    at.session_state["res_view"] = "Focus"  # back to the default view
    no_exception(at.run())
    assert len(layouts) == drawn_by_ask, "a rerun laid out a graph it had drawn before"


def join_prefetch() -> None:
    for t in threading.enumerate():
        if t.name == "memrag-prefetch":
            t.join(60)


def test_the_learn_replay_pictures_are_made_once_and_each_step_figure_once(recorded, monkeypatch):
    """Every step's picture is made in one go, once per trace (memrag.explain.learn_picture: they share
    one layout); moving the slider makes no picture again and draws each step's figure at most once
    (memrag.viz.figure keeps its drawings)."""
    from memrag.app import learn_views
    from memrag.viz import figure
    from test_app_pages import app

    view_cache.MEMO.clear()
    figure._drawn.clear()
    pictures: list[int] = []
    figures: list[int | None] = []
    real_pictures, real_draw = learn_views.learn_pictures, figure._draw

    def counted_pictures(trace, **kwargs):
        pictures.append(len(trace.steps))
        return real_pictures(trace, **kwargs)

    def counted_draw(picture, look, width, height, step, top):
        figures.append(step)
        return real_draw(picture, look, width, height, step, top)

    monkeypatch.setattr(learn_views, "learn_pictures", counted_pictures)
    monkeypatch.setattr(figure, "_draw", counted_draw)
    at = no_exception(app(recorded, scripted()).run())
    at.switch_page(LEARN).run()
    for step in (1, 0, 1, 2):
        slider(at).set_value(step).run()
    no_exception(at)
    assert len(pictures) == 1 and pictures[0] >= 3, pictures
    assert sorted(figures) == [0, 1, 2], figures


def test_the_demo_question_shown_is_replayed_and_drawn_before_the_ask_click(recorded, layouts, monkeypatch):
    """The Ask page replays the recorded question it shows, and makes its graphs, in the background;
    the click takes those traces: no second replay and no layout in the click's run, neither of the
    pictures shown first (the focus layout's) nor of the first method's Retrieval tab."""
    import memrag.ask
    from memrag.app import jobs, session
    from test_app_pages import app, click, wait_for

    replays: list[str] = []
    real = memrag.ask.ask
    monkeypatch.setattr(memrag.ask, "ask", lambda *a, **k: replays.append(threading.current_thread().name)
                        or real(*a, **k))
    at = no_exception(app(recorded, scripted()).run())
    at.switch_page("app_pages/ask.py")
    no_exception(at.run())
    join_prefetch()
    assert replays == ["memrag-prefetch"] and layouts, (replays, layouts)
    made_ahead = len(layouts)
    click(at, "Ask")
    job = wait_for(at, session.AppState.ask_job.key)
    no_exception(at.run())
    assert job.status == jobs.DONE and replays == ["memrag-prefetch"]  # the click replayed nothing again
    # and laid out no graph: every one it shows (the typed pictures and the frames) was made ahead
    assert len(layouts) == made_ahead, (made_ahead, len(layouts))
    assert sum("**Answer:**" in m.value for m in at.markdown) == 4
    # the pictures made ahead are the page's own, the gold answer given to them (common.gold_answers)
    from test_app_pages import pictures
    assert any(h.startswith("Vell River: PageRank mass") and "gold answer" in h  # HippoRAG 2's picture
               for p in pictures(at) for h in p.values())


class Obj:
    """A stand-in for a trace: compared by value, watched by identity."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Obj) and other.v == self.v

    __hash__ = None  # type: ignore[assignment]


def test_identity_memo_is_bounded_and_keyed_by_identity_and_options():
    memo = view_cache.IdentityMemo(max_entries=2)
    a, b = Obj(1), Obj(1)  # equal, not identical
    made: list[str] = []

    def make(tag: str):
        return lambda: made.append(tag) or tag

    assert memo.get((a,), "x", make("a-x")) == "a-x"
    assert memo.get((a,), "x", make("again")) == "a-x"  # a hit
    assert memo.get((b,), "x", make("b-x")) == "b-x"  # another object, equal or not
    assert memo.get((a,), "y", make("a-y")) == "a-y"  # other options
    assert len(memo) == 2 and made == ["a-x", "b-x", "a-y"]
    assert memo.get((a,), "x", make("a-x2")) == "a-x2"  # the oldest entry went


def test_a_value_being_made_is_waited_for_not_made_a_second_time():
    """A page's draw that meets a picture a prefetch is making waits for it instead of laying it
    out again beside it on the same two cores."""
    memo = view_cache.IdentityMemo()
    trace, started, release = Obj(1), threading.Event(), threading.Event()
    made: list[str] = []

    def slow() -> str:
        made.append("prefetch")
        started.set()
        release.wait(10)
        return "picture"

    worker = threading.Thread(target=lambda: memo.get((trace,), "x", slow))
    worker.start()
    assert started.wait(10)
    got: list[str] = []
    page = threading.Thread(target=lambda: got.append(memo.get((trace,), "x", lambda: made.append("page") or "again")))
    page.start()
    page.join(0.3)
    assert page.is_alive()  # waiting for the prefetch's value
    release.set()
    worker.join(10)
    page.join(10)
    assert got == ["picture"] and made == ["prefetch"]


def test_a_failed_make_leaves_the_value_to_the_next_caller():
    memo = view_cache.IdentityMemo()
    trace = Obj(1)

    def broken() -> str:
        raise ValueError("a damaged trace")

    with pytest.raises(ValueError):
        memo.get((trace,), "x", broken)
    assert memo.get((trace,), "x", lambda: "made") == "made"


def test_the_apps_first_run_freezes_its_long_lived_objects_out_of_the_collector(tiny):
    """Streamlit collects garbage in full after every run; the modules the pages import are frozen
    out of those passes once (memrag.app.heap)."""
    from memrag.app import heap

    heap._frozen.clear()
    gc.unfreeze()
    try:
        ask_page(tiny, scripted())
        assert any(w.startswith("page ") for w in heap._frozen) and gc.get_freeze_count() > 10_000
        assert not heap.freeze_long_lived(next(iter(heap._frozen)))  # once per page and process
    finally:
        gc.unfreeze()  # the other tests' objects stay collectable


def test_a_collected_object_takes_its_entries_with_it_and_a_dict_is_held():
    memo = view_cache.IdentityMemo()
    trace = Obj(1)
    memo.get((trace,), "x", lambda: "picture")
    assert len(memo) == 1
    del trace
    gc.collect()
    assert len(memo) == 0  # nothing pins a replaced ask's traces (or a memory) in memory
    record = {"qid": "q1"}  # no weak reference to a dict: its entry keeps it alive
    rid = id(record)
    memo.get((record,), "x", lambda: "result")
    del record
    gc.collect()
    assert len(memo) == 1 and next(iter(memo._items.values()))[0][0]["qid"] == "q1"
    assert next(iter(memo._items))[0] == (rid,)


def test_drawn_keys_on_the_renderer_and_its_arguments():
    view_cache.MEMO.clear()
    calls: list[tuple] = []

    def render(trace, step, gold_chunk_ids=None):
        calls.append((step, tuple(gold_chunk_ids or ())))
        return f"{step}:{gold_chunk_ids}"

    t = object()
    assert view_cache.drawn(render, t, 1, gold_chunk_ids=[3, 4]) == "1:[3, 4]"
    view_cache.drawn(render, t, 1, gold_chunk_ids=[3, 4])
    view_cache.drawn(render, t, 2, gold_chunk_ids=[3, 4])
    view_cache.drawn(render, t, 1, gold_chunk_ids=None)
    assert calls == [(1, (3, 4)), (2, (3, 4)), (1, ())]


def test_a_picture_drawn_under_another_look_is_made_again():
    """The focus layout draws a trace's overview under a look (every label, larger type): the cache
    handed back the side-by-side picture before the look was part of its key."""
    from memrag.app.view_cache import drawn
    from memrag.viz import look as looks

    class Subject:  # any object the cache may hold weakly
        pass

    subject, calls = Subject(), []

    def render(s):
        calls.append(looks.current())
        return f"picture {len(calls)}"

    plain = drawn(render, subject)
    assert drawn(render, subject) == plain and len(calls) == 1
    with looks.drawing(looks.Look(label_all=True)):
        focused = drawn(render, subject)
    assert focused != plain and calls[-1].label_all


def test_the_ask_page_loads_the_renderer_before_the_ask_and_drops_it_after(tiny):
    """Before an ask the page holds one hidden, empty chart, so the browser has plotly's code when the
    answers' pictures arrive (its first chart held the main thread ~0.5-0.9 s after the click); with
    answers shown, only real pictures."""
    from memrag.app import graph_view

    def warm(at):
        return [c for c in at.get("plotly_chart") if not json.loads(c.proto.spec).get("data")]

    at = ask_page(tiny, scripted())
    (chart,) = warm(at)
    assert any(f".st-key-{graph_view.WARM_KEY} {{display: none}}" in h.proto.body for h in at.get("html"))
    at = ask(at)
    assert not warm(at) and at.get("plotly_chart")
