"""Parameter dataclasses whose fields carry their own help text and bounds, their dict forms, and
the one validator every parameter set passes (`checked`).

Shared by the settings (config.py) and every method's parameters (methods/<name>/params.py). A
numeric field declares its bounds where it is declared (`helped(5, "...", low=1, high=50)`); the
validator (used by `ask`, `eval`, `--params` and the app) and the app's widgets read them from there.
"""

from __future__ import annotations

import math
import types
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

# A numeric field without declared bounds may hold any finite number of its kind (every field of
# memrag's own methods declares its bounds: tests/hostile/test_params.py).
_UNDECLARED = (-math.inf, math.inf)


@dataclass(frozen=True)
class Bounds:
    """The range a numeric parameter may take, both ends included."""
    low: float
    high: float
    declared: bool = True  # False: the field gave none, these are the defaults for its kind

    def text(self, whole: bool) -> str:
        def show(x: float) -> str:
            return str(int(x)) if math.isfinite(x) and (whole or float(x).is_integer()) else f"{x:g}"
        if not math.isfinite(self.high):
            return f"of at least {show(self.low)}" if math.isfinite(self.low) else "that is finite"
        return f"from {show(self.low)} to {show(self.high)}"


def helped(default: Any, help: str, *, low: float | None = None, high: float | None = None) -> Any:
    """A dataclass field with its help text (shown in the app and the CLI) and, for a number, the
    least and largest value it may take (checked by `checked`, offered by the app's widgets)."""
    meta: dict[str, Any] = {"help": help}
    if low is not None or high is not None:
        meta["bounds"] = (low, high)
    return field(default=default, metadata=meta)


def bounds_of(cls: type, name: str) -> Bounds:
    """The declared bounds of a numeric field (an end it does not declare is unbounded)."""
    for f in fields(cls):
        if f.name == name:
            low, high = f.metadata.get("bounds", (None, None))
            return Bounds(_UNDECLARED[0] if low is None else low, _UNDECLARED[1] if high is None else high,
                          "bounds" in f.metadata)
    raise KeyError(name)


def optional(tp: Any) -> bool:
    """`int | None` and the like: None is one of the values."""
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def value_type(tp: Any) -> Any:
    """The type a field's values have apart from None (`int | None` → int)."""
    if optional(tp):
        rest = [a for a in get_args(tp) if a is not type(None)]
        return rest[0] if len(rest) == 1 else tp
    return tp


def _kind(value: Any) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number", str: "text", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def value_problem(cls: type, name: str, tp: Any, value: Any) -> str:
    """Why `value` cannot be the field `name` of `cls` ('' when it can)."""
    if value is None and optional(tp):
        return ""
    base = value_type(tp)
    if get_origin(base) is Literal:
        options = get_args(base)
        return "" if value in options and type(value) in {type(o) for o in options} else \
            f"must be one of {', '.join(map(repr, options))} (got {str(value)[:40]!r})"
    if base is bool:
        return "" if isinstance(value, bool) else f"must be true or false (got {_kind(value)})"
    if base in (int, float):
        whole = base is int
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            return f"must be {'a whole number' if whole else 'a number'}{' or null' if optional(tp) else ''} " \
                   f"(got {_kind(value)} {str(value)[:40]})"
        bounds = bounds_of(cls, name)
        # Compared as given: a 400-digit integer does not fit a float, NaN fails every comparison.
        if not (bounds.low <= value <= bounds.high) or (isinstance(value, float) and not math.isfinite(value)):
            return f"must be {'a whole number' if whole else 'a number'} {bounds.text(whole)} (got {str(value)[:40]})"
        return ""
    if base is str:
        return "" if isinstance(value, str) else f"must be text (got {_kind(value)})"
    return ""  # another kind (a path, a nested object): its own code checks it


def checked(cls: type, data: Any = None, renamed: dict[str, str] | None = None, *, what: str = "") -> Any:
    """THE parameter validator: an instance of the dataclass `cls` from a dict of field values (old
    names in `renamed` accepted), or an instance of `cls` checked as it stands. Unknown names, values
    of the wrong kind and numbers outside their declared bounds are refused: one ValueError naming
    every problem (`what` names the set in it, e.g. the method)."""
    what = what or cls.__name__
    if is_dataclass(data) and not isinstance(data, type):
        if not isinstance(data, cls):
            raise ValueError(f"{what} parameters must be a {cls.__name__}, got a {type(data).__name__}")
        values = {f.name: getattr(data, f.name) for f in fields(cls)}
    else:
        values = from_mapping(cls, data, renamed, what)
    hints = get_type_hints(cls)
    problems = [f"{name} {problem}" for name, value in values.items()
                if (problem := value_problem(cls, name, hints[name], value))]
    if problems:
        raise ValueError(f"invalid {what} parameters: " + "; ".join(problems))
    if isinstance(data, cls):
        return data
    return cls(**{k: (float(v) if value_type(hints[k]) is float and isinstance(v, int) else v)
                  for k, v in values.items()})


def from_mapping(cls: type, data: Any, renamed: dict[str, str] | None, what: str) -> dict[str, Any]:
    """The field values a dict gives (old names renamed, unknown names refused), not yet checked."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{what} parameters must be an object of names and values "
                         f'(like {{"{fields(cls)[0].name}": ...}}), got {_kind(data)}')
    data = dict(data)
    for old, new in (renamed or {}).items():
        if old in data:
            if new in data:
                raise ValueError(f"{what}: both {old!r} (its old name) and {new!r} given")
            data[new] = data.pop(old)
    names = {f.name for f in fields(cls)}
    unknown = sorted(str(k)[:40] for k in set(data) - names)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} parameter(s): {', '.join(unknown)}")
    return data


def help_of(cls: type, name: str) -> str:
    for f in fields(cls):
        if f.name == name:
            return f.metadata.get("help", "")
    raise KeyError(name)


def params_dict(obj: Any) -> dict[str, Any]:
    d = asdict(obj)
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in d.items()}


def from_dict(cls: type, data: dict[str, Any] | None, renamed: dict[str, str] | None = None) -> Any:
    """Build a params dataclass from a dict, checked by `checked` (unknown keys refused: no silently
    ignored parameters). `renamed` maps an old key to its new name: files and commands written before
    a rename still read."""
    return checked(cls, data, renamed)
