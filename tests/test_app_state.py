"""The app's session modules (split from app/state.py) and the trace-detail tab dispatch."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from memrag.app import ask_views


def test_an_unknown_tab_is_an_error_not_another_tabs_view():
    # Before, an if/elif chain drew "Deviations from the paper" for any label it did not know.
    with pytest.raises(LookupError, match="no view for the tab 'Lessons'"):
        ask_views.detail_tab("Lessons")
    views = [ask_views.detail_tab(label) for label in ask_views.detail_labels(gold=object())]  # type: ignore[arg-type]
    assert len(set(map(id, views))) == len(views)  # each tab its own view


def test_the_gold_tab_only_with_gold():
    assert "Gold" not in ask_views.detail_labels(None)
    assert ask_views.detail_labels(object())[-2:] == ["Gold", "Deviations from the paper"]  # type: ignore[arg-type]


def _params_script() -> None:
    import streamlit as st

    from memrag.app import param_widgets, session
    from memrag.methods import registry

    session.init_state()
    param_widgets.init_params()
    for m in registry.NAMES:
        param_widgets.param_widgets(m)
    st.session_state["read"] = {m: param_widgets.method_params(m) for m in registry.NAMES}


def test_an_optional_number_shows_zero_and_reads_back_none():
    # "0 = none" comes from the field's type (int | None), not from a list of field names.
    from memrag.app import param_widgets
    from memrag.fields import optional as is_optional
    from memrag.methods import registry

    at = AppTest.from_function(_params_script).run()
    assert not at.exception
    optional = [(m, f) for m in registry.NAMES for f, tp in param_widgets._fields(m) if is_optional(tp)]
    assert optional, "no int | None parameter registered: the rule is untested"
    for m, f in optional:
        box = at.number_input(key=param_widgets.param_key(m, f.name))
        assert box.help.endswith("(0 = none)")
        box.set_value(0).run()
        assert getattr(at.session_state["read"][m], f.name) is None
