"""Every registered method has its views on the Ask page: a method added to the registry without
a detail view and an overview fails here, not on a page."""

from __future__ import annotations

import inspect

from memrag.app.method_views import MethodViews
from memrag.methods import registry


def test_every_registered_method_has_a_detail_view_and_an_overview():
    for spec in registry.methods():
        views = spec.views
        assert isinstance(views, MethodViews), spec.name
        assert spec.view_at.startswith(f"memrag.app.method_views.{spec.name}:"), spec.name
        # (trace, gold ids, key) and (trace, gold ids, height): a swapped pair would fail at draw time
        assert list(inspect.signature(views.detail).parameters)[2] == "key", spec.name
        assert list(inspect.signature(views.overview).parameters)[2] == "height", spec.name
