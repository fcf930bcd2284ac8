"""The renderer's shape: no import cycles, no upward imports, small modules.

`literate/` has three layers. The core (`literate/*.py`: the pipeline, its
stages and what decides what a page may show) imports only itself; the
translators' tools (`literate/translations/`) import the core; the adapters
(`literate/mkdocs/`, the command line `literate/__main__.py`) import both.
Every import counts, those inside functions too, and the graph they make
has no cycle. A module mixing concerns grows past a few hundred lines: none
may pass MAX_LINES.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "literate"
MAX_LINES = 550
# What each layer may import (besides itself, and anything outside literate).
MAY_IMPORT = {
    "core": {"core"},
    "tools": {"core", "tools"},
    "adapter": {"core", "tools", "adapter"},
}


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[1:2] == ["translations"]:
        return "tools"
    if parts[1:2] in (["mkdocs"], ["__main__"]):
        return "adapter"
    return "core"


def in_package(path: Path) -> bool:
    """A module of the package: every folder between it and `literate/` is a
    package (a `build/` tree that a wheel build leaves is not)."""
    folders = path.relative_to(PACKAGE).parents
    return all((PACKAGE / f / "__init__.py").is_file() for f in folders)


MODULES = {module_of(p): p for p in sorted(PACKAGE.rglob("*.py")) if in_package(p)}


def imports(module: str) -> set[str]:
    """The modules of `literate` that `module` imports, anywhere in it."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up level - 1
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in MODULES}
    return found - {module}


GRAPH = {module: imports(module) for module in MODULES}


def test_the_graph_is_read_from_every_module():
    assert len(MODULES) > 30
    assert "literate.render" in GRAPH["literate.pipeline"]
    assert "literate.pipeline" in GRAPH["literate.__main__"]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (module -> the modules it imports), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other]
            if other not in state and (cycle := visit(other)):
                return cycle
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle():
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_import(module):
    upward = {
        other
        for other in GRAPH[module]
        if layer(other) not in MAY_IMPORT[layer(module)]
    }
    assert upward == set(), f"{module} ({layer(module)}) imports {sorted(upward)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_long(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines"
