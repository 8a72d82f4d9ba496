"""Hostile-input probes of the app's links (issue #35): values a link carries that Python calls
digits but no number reaches the page as a note, never a traceback. Real AppTest runs on the tiny
memory standing in for the sample, with its recordings."""

from __future__ import annotations

import pytest

from memrag.app import url_state
from test_app_learn import LEARN, slider
from test_app_pages import assert_nothing_raw, embedder, home, no_exception, plain, recorded, scripted, tiny  # noqa: F401
from test_app_url import linked


@pytest.mark.probe("link: /learn?...&step=² (a superscript two; str.isdigit says yes, int() says no)",
                   "the Learn page opens at step 1 with a note naming the value", group="links")
@pytest.mark.parametrize("step", ["²", "①", "٣", "１２", "3\u0663"])
def test_a_learn_link_whose_step_is_a_unicode_digit_gets_a_note(recorded, step):
    at = no_exception(linked(LEARN, {"q": "t1", "method": "neuropath", "step": step}).run())
    assert f"The link's step {step!r} is not a step number" in plain(at)
    assert slider(at).value == 0
    assert_nothing_raw(at)


def test_a_step_number_is_one_to_four_ascii_digits():
    assert [url_state.step_number(t) for t in ("1", "0042", "9999")] == [1, 42, 9999]
    assert [url_state.step_number(t) for t in ("0", "10000", "²", "٣", "-1", "1.0", " 1", "")] == [None] * 8
