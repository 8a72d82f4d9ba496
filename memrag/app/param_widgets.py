"""Method parameters in the session: one widget per field of each registered method's parameter
dataclass, read back as that dataclass. Everything per method comes from the registry."""

from __future__ import annotations

import math
from dataclasses import Field, fields
from typing import Any, Literal, get_args, get_origin, get_type_hints

import streamlit as st

from memrag.app.session import PREFIX, WIDGET_PREFIX, bound
from memrag.config import help_of
from memrag.fields import bounds_of, optional, value_type
from memrag.methods import registry

PARAM_CLASSES = registry.LIVE_PARAMS  # every registered method, read now (a method registered later too)
METHOD_LABELS = registry.LIVE_LABELS  # in display order


def value_key(method: str, name: str, scope: str = "") -> str:
    """The session key holding a method parameter's value; `scope` names another set than the
    sidebar's (e.g. compare mode's two sets)."""
    return f"{PREFIX}p_{scope + '_' if scope else ''}{method}_{name}"


def param_key(method: str, name: str, scope: str = "") -> str:
    """The key of the widget that edits a method parameter."""
    return WIDGET_PREFIX + value_key(method, name, scope)


def _ends(cls: type, name: str, kind: type) -> tuple[Any, Any]:
    """The widget's least and largest value: the bounds the field declares (memrag.fields), the
    same the validator checks; an end it does not declare is left open."""
    b = bounds_of(cls, name)
    return tuple(kind(x) if math.isfinite(x) else None for x in (b.low, b.high))  # type: ignore[return-value]


def _float_step(low: float | None, high: float | None) -> float:
    """A tenth of the range's order of magnitude, at most 0.05 (a probability moves in twentieths)."""
    if low is None or high is None or high <= low:
        return 0.05
    return min(0.05, 10 ** math.floor(math.log10(high - low)) / 10)


def _widget_value(value: Any) -> Any:
    return 0 if value is None else value


def _fields(method: str) -> list[tuple[Field, Any]]:
    cls = PARAM_CLASSES[method]
    hints = get_type_hints(cls)
    return [(f, hints[f.name]) for f in fields(cls)]


def init_params() -> None:
    """Give every parameter of every method its default (once per session)."""
    for method in PARAM_CLASSES:
        for f, _ in _fields(method):
            st.session_state.setdefault(value_key(method, f.name), _widget_value(f.default))


def param_widgets(method: str, container: Any = None, scope: str = "") -> None:
    """One widget per field of the method's parameter dataclass, with the field's help text."""
    where = container or st
    cls = PARAM_CLASSES[method]
    for f, tp in _fields(method):
        key, label, tip = value_key(method, f.name, scope), f.name.replace("_", " "), help_of(cls, f.name)
        options = get_args(tp) if get_origin(tp) is Literal else None
        if options:
            bound(where.selectbox, label, key, options=options, help=tip)
        elif isinstance(f.default, bool):
            bound(where.checkbox, label, key, help=tip)
        elif value_type(tp) is float:
            low, high = _ends(cls, f.name, float)
            bound(where.number_input, label, key, min_value=low, max_value=high, step=_float_step(low, high),
                  help=tip)
        else:  # int, or int | None where 0 means None
            low, high = _ends(cls, f.name, int)
            extra = " (0 = none)" if optional(tp) else ""
            bound(where.number_input, label, key, min_value=min(low, 0) if optional(tp) and low is not None
                  else low, max_value=high, step=1, help=tip + extra)


def method_params(method: str, scope: str = "") -> Any:
    """The method's parameters as set in the sidebar, or in the set `scope`: an instance of the
    registry's parameter class for `method` (which has no common base, hence Any)."""
    values = {}
    for f, tp in _fields(method):
        v = st.session_state.get(value_key(method, f.name, scope), _widget_value(f.default))
        values[f.name] = None if v == 0 and optional(tp) else v
    return PARAM_CLASSES[method](**values)


def set_method_params(method: str, params: Any, scope: str = "") -> None:
    """Store a whole parameter set and drop its widgets' own state, so each widget starts again
    from the stored value on the next run (e.g. when a compare preset is picked)."""
    for f in fields(params):
        st.session_state[value_key(method, f.name, scope)] = _widget_value(getattr(params, f.name))
        st.session_state.pop(param_key(method, f.name, scope), None)


def changed_params(method: str) -> dict[str, Any]:
    """The parameters that differ from the defaults (shown with results)."""
    p, d = method_params(method), PARAM_CLASSES[method]()
    return {f.name: getattr(p, f.name) for f in fields(p) if getattr(p, f.name) != getattr(d, f.name)}
