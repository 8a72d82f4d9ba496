"""The Ask and Learn pages in plain words: answer cards with one time figure for the original run
and one for this replay, a one-line gold fate that opens the step that lost a passage, no
internal names (continue flags, id lists, D_p/D_e) outside help text, EcphoryRAG counted one way
on both pages. The tiny memory with recordings stands in for the sample (tests/test_app_pages.py)."""

from __future__ import annotations

import re

from test_app_pages import ask, ask_page, app, no_exception, plain, recorded, scripted, tiny, home  # noqa: F401

INTERNAL = ("continue =", "valid ids", "expand ids", "ignored ids", "D_p", "D_e")
CARD_TIME = re.compile(r"LLM call\(s\), (\d+) replayed · original run: \d+\.\d s on scripted-1 · this replay: "
                       r"\d+\.\d s")


def assert_plain(at) -> None:
    page = plain(at)
    for name in INTERNAL:
        assert name not in page, name


def test_answer_cards_name_both_times_and_say_the_gold_fate_in_one_line(recorded):
    live = scripted("Grey Sea")
    at = ask(ask_page(recorded, live), question="")
    page = plain(at)
    assert live.calls == []
    # one time line per card: the recorded calls' original seconds and this replay's, named so
    times = CARD_TIME.findall(page)
    assert len(times) == 4, page  # NeuroPath, EcphoryRAG, HippoRAG 2, dense
    assert " s here" not in page and "fresh seconds" not in page
    assert re.search(r"original run: \d+\.\d s and \d+ tokens on the recording model", page)
    # NeuroPath's valid path reads chunk 0 only; the other gold passage came from completion
    gold_lines = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown if m.value.startswith("**Gold:**")]
    assert gold_lines[0] == "**Gold:** 2 of 2 gold passages in the top 5; Port Alder: only by completion"
    assert gold_lines[1:] == ["**Gold:** 2 of 2 gold passages in the top 5"] * 3, gold_lines
    assert_plain(at)
    # the line's button opens NeuroPath's completion step, where that passage was found
    button = next(b for b in at.button if b.label.startswith("show where:"))
    assert button.label == "show where: Retrieval" and any(c.value == "at Completion" for c in at.caption)
    at = no_exception(button.click().run())
    assert at.session_state["res_pick"] == "neuropath"
    assert at.session_state["res_neuropath_tabs"] == "Retrieval"
    assert at.session_state["res_neuropath_np_step"] == "Completion"
    page = plain(at)
    assert "First the passages on the kept paths (chunks 0), then the passages found by the completion search" \
        in page
    assert_plain(at)
    help_texts = " ".join(c.proto.help for c in at.caption if c.proto.help)
    assert "D_p" in help_texts and "D_e" in help_texts  # the paper's symbols stay, as help
    # a hop in words: what the model asked and which paths it kept
    at.segmented_control(key="res_neuropath_np_step").set_value("Hop 1").run()
    page = plain(no_exception(at))
    assert "the model asked for another hop" in page and "The model kept paths 1, chose to extend 1." in page
    assert_plain(at)
    fates = next(d.value for d in at.dataframe if "expandable at" in d.value.columns)
    assert set(fates["fate"]) <= {"valid", "expanded", "listed, not judged", "listed, not kept",
                                  "over the listing cap", "pruned"}


def test_ecphory_counts_entities_and_engrams_the_same_way_on_ask_and_learn(recorded):
    at = ask(ask_page(recorded, scripted()), question="")
    at.segmented_control(key="res_pick").set_value("ecphory").run()
    at = no_exception(at)
    slider = at.select_slider(key="res_ecphory_ec_step")
    assert slider.label == "activation step"
    last_round = 1  # the round that ran (round 2 stops: round 1 added nothing new)
    slider.set_value(slider.options.index(f"Round {last_round}")).run()
    ask_note = next(line for line in plain(at).splitlines() if "entities activated so far" in line)
    entities, engrams = map(int, re.search(r"(\d+) entities activated so far \((\d+) engrams", ask_note).groups())
    rounds = next(d.value for d in at.dataframe if "new entities" in d.value.columns)
    for seeds in rounds["seeds"]:  # one entry per entity, however many of its engrams were seeds
        names = [re.sub(r"( ×\d+)? \([\d.]+\)$", "", part) for part in seeds.split(", ") if part]
        assert len(names) == len(set(names)), seeds

    at.switch_page("app_pages/learn.py").run()
    at = no_exception(at)
    at.segmented_control(key="learn_method").set_value("ecphory").run()
    learn_slider = next(s for s in at.select_slider if s.key.startswith("learn_step_"))
    step = next(i for i, o in enumerate(learn_slider.options) if o.endswith(f"Round {last_round}"))
    learn_slider.set_value(step).run()
    page = plain(no_exception(at))
    lesson = re.search(r"(\d+) entities are active now", page)
    drawn = re.search(r"nodes added so far: [^.]*?(\d+) entities", page)
    assert lesson is not None and int(lesson.group(1)) == entities, page
    assert drawn is not None and int(drawn.group(1)) == entities, page
    assert engrams >= entities


def test_seeds_merge_by_entity_and_counts_separate_entities_from_engrams():
    from memrag.methods.ecphory import activation
    from memrag.methods.ecphory.detail import ActivatedEngram, EcphoryDetail, EcphoryRound

    def eng(eid, key, rnd, chunk):
        return ActivatedEngram(eid, key, key.title(), "org", "", chunk, 0.5, rnd, "semantic")

    # Tidewater is mentioned in three chunks: three engrams, one entity
    initial = [eng(0, "tidewater", 0, 0), eng(1, "tidewater", 0, 1), eng(2, "alder", 0, 2)]
    r1 = EcphoryRound(1, seed_ids=[0, 1, 2], weights=[0.3, 0.2, 0.5],
                      new=[eng(3, "tidewater", 1, 3), eng(4, "heron", 1, 4)], new_counts={"semantic": 2})
    d = EcphoryDetail(initial=initial, rounds=[r1])
    seeds = activation.merged_seeds(r1, {0: "Tidewater", 1: "Tidewater", 2: "Alder"})
    assert [activation.seed_text(x) for x in seeds] == ["Tidewater ×2 (0.50)", "Alder (0.50)"]
    assert activation.new_in_round(d, 0) == activation.Activated(entities=2, engrams=3)
    assert activation.new_in_round(d, 1) == activation.Activated(entities=1, engrams=2)  # heron is new
    assert activation.active_after(d, 1) == activation.Activated(entities=3, engrams=5)
    assert activation.names_counted(["Tidewater", "Alder", "Tidewater"]) == "Tidewater ×2, Alder"


def test_wrapped_rows_fit_nine_in_ten_cells_and_an_outlier_does_not_stretch_every_row():
    import pandas as pd

    from memrag.app.widgets import CHARS_PER_LINE, MAX_LINES, fitted_lines

    short = pd.DataFrame({"detail": ["a few words"] * 5})
    assert fitted_lines(short, ["detail"]) == 3  # never under the height Streamlit starts wrapping at
    five_lines = "x" * (4 * CHARS_PER_LINE + 1)
    assert fitted_lines(pd.DataFrame({"detail": [five_lines] * 10}), ["detail"]) == 5
    one_outlier = pd.DataFrame({"detail": ["a few words"] * 19 + ["y" * 50 * CHARS_PER_LINE]})
    assert fitted_lines(one_outlier, ["detail"]) == 3
    assert fitted_lines(pd.DataFrame({"detail": ["z" * 50 * CHARS_PER_LINE] * 3}), ["detail"]) == MAX_LINES
