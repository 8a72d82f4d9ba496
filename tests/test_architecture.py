"""The layering the folders promise, read from the source with `ast` (every import, also those
inside functions): only memrag/app/ touches Streamlit, nothing below app/ and cli/ imports them,
and no memrag module reaches itself through its imports."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memrag"
TOP_LAYERS = ("memrag.app", "memrag.cli")
ENTRY_POINT = "memrag.__main__"  # `python -m memrag`: it exists to call the CLI


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name: str) -> str:
    """The memrag module a dotted import name loads (a name inside a module counts as that module)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in the file; `from a import b` names a.b when b is a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if f"{node.module}.{alias.name}" in MODULES)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            found.add("__import__")
    return found


GRAPH = {name: {_target(i) for i in imports_of(path) if i == "memrag" or i.startswith("memrag.")} - {name}
         for name, path in MODULES.items()}


def _registry_targets() -> set[str]:
    """The modules the method registry names as 'module:function' strings (imported on first use)."""
    from memrag.methods import registry

    return {at.partition(":")[0] for m in registry.METHODS for at in (m.retrieve_at, m.renderer_at) if at}


# The registry's lazy imports are imports too: the rules below see them.
GRAPH["memrag.methods.registry"] |= _registry_targets()


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_the_scan_sees_the_package():
    # A scan that found nothing would pass every rule below.
    assert "memrag.app.memory_state" in MODULES and "memrag.index.store" in MODULES
    assert "memrag.index.store" in GRAPH["memrag.app.memory_state"]
    assert any(i.startswith("streamlit") for i in imports_of(MODULES["memrag.app.memory_state"]))


def test_only_the_app_imports_streamlit():
    offenders = sorted(name for name, path in MODULES.items() if not _in(name, "memrag.app")
                       and any(i == "streamlit" or i.startswith("streamlit.") for i in imports_of(path)))
    assert offenders == []


def test_nothing_below_app_and_cli_imports_them():
    offenders = []
    for name, targets in GRAPH.items():
        for layer in TOP_LAYERS:
            if not _in(name, layer) and name != ENTRY_POINT:
                offenders += [f"{name} -> {t}" for t in targets
                              if _in(t, layer) and not (_in(name, "memrag.cli") and layer == "memrag.app")]
    # The app may not import the CLI; the CLI may use the app's page check (it sits above both).
    assert sorted(offenders) == []


def test_no_module_loads_another_by_a_computed_name():
    assert sorted(name for name, path in MODULES.items() if "__import__" in imports_of(path)) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_memrag_modules():
    # Package __init__ files re-export their own modules; an edge into an __init__ is not a loop.
    graph = {name: {t for t in targets if not MODULES[t].name == "__init__.py"}
             for name, targets in GRAPH.items()}
    assert _cycles(graph) == []


def test_every_registry_entry_names_a_real_function():
    from memrag.methods import registry

    assert _registry_targets() <= set(MODULES)
    for m in registry.METHODS:
        assert callable(m.retrieve) and (m.renderer is None or callable(m.renderer)), m.name


# ------------------------------------------------------------------ the package order
# memrag's top-level modules and packages, lowest first: each may import only from its own line and
# the lines above it (the README's "How it works" shows the same order, checked below). Within a line, the loop
# test above keeps them apart.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("memrag.durable", "memrag.jsonsafe", "memrag.textsafe", "memrag.assets", "memrag.prompts",
     "memrag.fields", "memrag.trace_legacy", "memrag.plain_text", "memrag.words", "memrag.sample",
     "memrag.filesafe"),
    ("memrag.config",),
    ("memrag.trace", "memrag.picture"),
    ("memrag.llm",),
    ("memrag.served_embedders", "memrag.embed"),
    ("memrag.index",),
    ("memrag.methods",),
    ("memrag.ask", "memrag.tracefile"),
    ("memrag.demo",),
    ("memrag.eval",),
    ("memrag.explain",),
    ("memrag.viz",),
    ("memrag.app",),
    ("memrag.cli", "memrag.deviations", "memrag.__main__"),
)
# Steps up the order that another change removes, each with who removes it. The test below fails
# when one of them no longer happens, so the list cannot outlive its reason.
PENDING: dict[tuple[str, str], str] = {}


def _part(name: str) -> str:
    """The top-level module or package `name` belongs to ("memrag" for the package's own face)."""
    parts = name.split(".")
    return ".".join(parts[:2])


LEVEL = {part: i for i, line in enumerate(LAYERS) for part in line}


def _steps_up() -> dict[tuple[str, str], list[str]]:
    """(importer's part, imported part) → the module imports that go up the order."""
    found: dict[tuple[str, str], list[str]] = {}
    for name, targets in GRAPH.items():
        for t in targets:
            a, b = _part(name), _part(t)
            if b == "memrag" or a == b:  # the package face re-exports on first use: no layer of its own
                continue
            if LEVEL[b] > LEVEL[a]:
                found.setdefault((a, b), []).append(f"{name} -> {t}")
    return found


def test_the_order_names_every_part_once():
    parts = {_part(n) for n in MODULES} - {"memrag"}
    listed = [p for line in LAYERS for p in line]
    assert len(listed) == len(set(listed))
    assert parts == set(listed), f"not in LAYERS: {sorted(parts - set(listed))}; gone: {sorted(set(listed) - parts)}"


def test_the_order_check_sees_a_step_up():
    # a rule that found nothing would pass: the app imports nearly everything below it
    assert LEVEL["memrag.app"] > LEVEL["memrag.viz"] > LEVEL["memrag.methods"] > LEVEL["memrag.llm"]
    assert any(_part(t) == "memrag.methods" for t in GRAPH["memrag.app.ask_views"])


def test_packages_import_only_down_the_order():
    up = _steps_up()
    unexplained = {k: v[:3] for k, v in up.items() if k not in PENDING}
    assert unexplained == {}, "imports up the package order (README 'How it works'): " + repr(unexplained)


def test_every_pending_step_up_still_happens():
    # a pending exception whose import is gone must leave the list
    assert sorted(set(PENDING) - set(_steps_up())) == []


def test_no_cycle_between_top_level_parts():
    graph: dict[str, set[str]] = {}
    for name, targets in GRAPH.items():
        for t in targets:
            a, b = _part(name), _part(t)
            if a != b and b != "memrag":
                graph.setdefault(a, set()).add(b)
    cycles = _cycles(graph)
    pending_only = all(any((a, b) in PENDING for a in c for b in c if b in graph.get(a, ())) for c in cycles)
    assert cycles == [] or pending_only, cycles


README = PACKAGE.parent / "README.md"
_NAME = re.compile(r"^([a-z_]+)(\.py|/)$")


def readme_order() -> list[str]:
    """The parts the README's "How it works" tree names, in its order: the names in the left column
    of each line of the block under `memrag/` (a continuation line, indented further, names none)."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## How it works"):]
    block = block[block.index("```\nmemrag/\n") + len("```\nmemrag/\n"):]
    block = block[:block.index("```")]
    parts = []
    for line in block.splitlines():
        if not line.startswith("  ") or line.startswith("   "):
            continue  # outside memrag/ (app.py, assets/) or a continuation
        names = re.split(r"\s{2,}", line.strip())[0].split(" ")
        parts += [f"memrag.{m.group(1)}" for m in map(_NAME.match, names) if m]
    return parts


def test_the_readme_shows_the_package_order():
    shown = readme_order()
    assert sorted(shown) == sorted(p for line in LAYERS for p in line), "README's tree and LAYERS name other parts"
    levels = [LEVEL[p] for p in shown]
    assert levels == sorted(levels), [p for p, a, b in zip(shown[1:], levels, levels[1:]) if b < a]
