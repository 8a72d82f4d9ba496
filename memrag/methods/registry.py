"""The one list of retrieval methods. The app, the CLI, compare mode and the evaluation read it.

Adding a method means one wing, memrag/methods/<name>/ (a package whose `SPEC` is a
`memrag.methods.spec.MethodSpec`), and one line in SPECS below — or one `register()` call for a
method that lives outside memrag. Each wing's package module is light (its parameters and spec);
its search, picture and views load on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from memrag.fields import checked
from memrag.methods.spec import MethodSpec, resolve

# Run order: dense first, so a live ask shows the baseline while the graph methods still work.
SPECS: list[str] = [
    "memrag.methods.dense:SPEC",
    "memrag.methods.neuropath:SPEC",
    "memrag.methods.ecphory:SPEC",
    "memrag.methods.hipporag2:SPEC",
]

Method = MethodSpec  # the older name


def register(target: str) -> MethodSpec:
    """Add a method by its spec's 'module:SPEC' name (after the built-in ones); returns the spec."""
    spec = resolve(target)
    if not isinstance(spec, MethodSpec):
        raise TypeError(f"{target} is not a MethodSpec")
    if spec.name in {s.name for s in _specs()}:
        raise ValueError(f"a method named {spec.name!r} is already registered")
    SPECS.append(target)
    _specs.cache_clear()
    return spec


def unregister(name: str) -> None:
    """Remove a method registered with `register` (tests)."""
    SPECS[:] = [t for t in SPECS if resolve(t).name != name]
    _specs.cache_clear()


@lru_cache(maxsize=1)
def _specs() -> tuple[MethodSpec, ...]:
    return tuple(resolve(t) for t in SPECS)


def methods() -> tuple[MethodSpec, ...]:
    return _specs()


def names() -> tuple[str, ...]:
    return tuple(s.name for s in _specs())


def display_order() -> tuple[str, ...]:
    """The graph methods side by side in registry order, the baseline(s) after them."""
    specs = _specs()
    return tuple(s.name for s in specs if not s.baseline) + tuple(s.name for s in specs if s.baseline)


def labels() -> dict[str, str]:
    by = {s.name: s.label for s in _specs()}
    return {name: by[name] for name in display_order()}


def label_of(name: str) -> str:
    """A method's display name (its spec's label: "NeuroPath"), for every chart and table; a name no
    registered method has (an old run file's) is shown as written."""
    return next((s.label for s in _specs() if s.name == name), name)


def get(name: str) -> MethodSpec:
    for s in _specs():
        if s.name == name:
            return s
    raise ValueError(f"unknown method {name!r}; choose from {', '.join(names())}")


def baseline() -> str | None:
    """The reference method's name (dense), if one is registered."""
    return next((s.name for s in _specs() if s.baseline), None)


class _LiveView(Mapping[str, Any]):
    """A mapping read from the registry on every access: a module constant made of it still sees a
    method registered after that module was imported."""

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self._read = read

    def __getitem__(self, key: str) -> Any:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


LIVE_LABELS: Mapping[str, str] = _LiveView(labels)  # name → label, in display order
LIVE_PARAMS: Mapping[str, type] = _LiveView(lambda: {s.name: s.params for s in _specs()})


def __getattr__(attr: str) -> Any:
    """The older constants (METHODS, BY_NAME, NAMES, DISPLAY_ORDER, LABELS), read now, so a method
    registered later is in them."""
    if attr == "METHODS":
        return _specs()
    if attr == "BY_NAME":
        return {s.name: s for s in _specs()}
    if attr == "NAMES":
        return names()
    if attr == "DISPLAY_ORDER":
        return display_order()
    if attr == "LABELS":
        return labels()
    raise AttributeError(attr)


def paper_params(name: str) -> Any:
    """The method's parameters as its paper wrote them (defaults with its paper settings)."""
    spec = get(name)
    return spec.params(**spec.paper_settings)


def settings_preset(preset: str, methods: tuple[str, ...] | list[str]) -> dict[str, dict[str, Any]]:
    """Named parameter sets for every method: 'paper' (each spec's paper settings: every memrag
    deviation with a switch turned off) or 'defaults' (none). Read by Compare mode's preset and by
    `eval --params paper`."""
    if preset == "paper":
        return {m: dict(get(m).paper_settings) for m in methods}
    if preset == "defaults":
        return {m: {} for m in methods}
    raise ValueError(f"unknown preset {preset!r}: choose 'paper' or 'defaults'")


def params_of(name: str, params: Any = None) -> Any:
    """The method's parameters from None (its defaults), its dataclass or a dict (old key names
    accepted), checked by the one validator (`memrag.fields.checked`: unknown names, wrong kinds and
    numbers outside a field's declared bounds are a ValueError naming them)."""
    spec = get(name)
    if params is None:
        return spec.params()
    return checked(spec.params, params, spec.renamed, what=spec.label)


def params_map(params: Any) -> dict[str, Any]:
    """Parameters for several methods as `ask`, `eval --params` and the app give them — an object of
    method names, each with its parameters (a dict or its dataclass) — every shape and value checked:
    a ValueError naming what is wrong (`--params '[1]'`, `{"neuropath": [1]}`, an unknown method)."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ValueError(f'parameters must be an object of method names, like {{"{names()[0]}": {{...}}}}; '
                         f"got {type(params).__name__.replace('NoneType', 'null')}")
    out = {}
    for method, values in params.items():
        if not isinstance(method, str) or method not in names():
            raise ValueError(f"parameters name an unknown method {str(method)[:40]!r}; choose from {', '.join(names())}")
        out[method] = params_of(method, values)
    return out
