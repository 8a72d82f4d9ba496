"""Every registered method has its views on the Ask page: a method added to the registry without
a detail view and an overview fails here, not on a page."""

from __future__ import annotations

import inspect

from memrag.app.ask_views import METHOD_VIEWS
from memrag.methods import registry


def test_every_registered_method_has_a_detail_view_and_an_overview():
    assert set(METHOD_VIEWS) == set(registry.NAMES)
    for name in registry.NAMES:
        views = METHOD_VIEWS[name]
        # (trace, gold ids, key) and (trace, gold ids, height): a swapped pair would fail at draw time
        assert list(inspect.signature(views.detail).parameters)[2] == "key", name
        assert list(inspect.signature(views.overview).parameters)[2] == "height", name
