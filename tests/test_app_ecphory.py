"""EcphoryRAG's typed picture in the app (AppTest, scripted LLM, hash embedder): a click on an
engram, a passage or a count box reaches Python — the panel says what the retrieval did with it and
offers "show where" (its click is a browser test's)."""

from __future__ import annotations

from memrag.app import graph_view, jobs, session
from memrag.methods.ecphory import recall
from memrag.methods.ecphory.detail import EcphoryDetail
from memrag.methods.ecphory.fates import step_words
from test_app_pages import ask, ask_page, home, no_exception, pictures, plain, tiny  # noqa: F401


def ecphory_page(tiny):
    at = ask_page(tiny)
    at.session_state["ask_methods"] = ["ecphory"]
    at = ask(at.run())
    trace = next(t for t in jobs.get_job(at.session_state[session.AppState.ask_job.key]).result
                 if t.method == "ecphory")
    return at, trace


def click(at, key: str, kind: str, ident: str):
    """What a click on a point sets (graph_view._clicked), then the run it causes."""
    at.session_state[graph_view.chosen_key(key)] = (kind, ident)
    return no_exception(at.run())


def test_a_click_on_an_engram_opens_its_story(tiny):
    at, trace = ecphory_page(tiny)
    d = trace.detail(EcphoryDetail)
    later = next((a for r in d.rounds for a in r.new), None) or d.initial[0]
    # the Retrieval tab's picture (one method: no side-by-side row)
    key = f"ecphory_detail_{id(trace)}_large"
    assert f"node|e:{later.key}" in pictures(at)[-1]
    at = click(at, key, "node", f"e:{later.key}")
    page = plain(at)
    assert f"Activated in {step_words(later.round)}" in page or "Recalled: final engram #" in page, page
    table = next(x.value for x in at.dataframe if "activated in" in x.value.columns and "origin" in x.value.columns)
    assert step_words(later.round) in set(table["activated in"])
    # "show where" (its click reruns only the dialog in a browser: tests/browser/test_browser_picture.py)
    assert any(b.label == "show where" for b in at.button)
    assert trace.steps[recall.round_step(trace, later.round)].kind == ("initial" if later.round == 0 else "round")


def test_a_click_on_a_passage_says_why_it_is_in_the_context(tiny):
    at, trace = ecphory_page(tiny)
    cid = trace.detail(EcphoryDetail).context_chunk_ids[0]
    at = click(at, f"ecphory_detail_{id(trace)}_large", "node", f"c:{cid}")
    rank, ranked = next((i, r) for i, r in enumerate(trace.ranked, start=1) if r.chunk_id == cid)
    page = plain(at)
    assert f"Rank {rank}" in page and ranked.why in page and "the answer read it" in page, page
    assert "Its activated engrams:" in page  # what EcphoryRAG read from it
