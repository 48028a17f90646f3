"""No import cycle among bspkit's modules, counting the imports inside functions too (an
import moved into a function to dodge a cycle still is one)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import PYDIR

PACKAGE = PYDIR / "bspkit"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PYDIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the bspkit modules it imports (the package bspkit itself included: its
    __init__ imports bspkit.api on first use). `from bspkit import fit` imports the module
    bspkit.model.fit; `from bspkit import NAME` of anything else, the package."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                submodules = [f"{node.module}.{a.name}" for a in node.names]
                candidates = [m if m in modules else node.module for m in submodules]
            else:
                continue
            targets.update(c for c in candidates if c in modules and c != name)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles() -> None:
    assert [sorted(c) for c in cycles(import_graph())] == []


def test_the_check_finds_a_cycle_hidden_in_a_function() -> None:
    graph = import_graph()
    assert "bspkit.model.fit" in graph["bspkit.commands._inputs"]  # load_fit's import inside the function counts
    assert "bspkit.api" in graph["bspkit"]  # so does the package's import of api on first use
    graph["bspkit.model.fit"].add("bspkit.commands._inputs")  # as calibrate -> inputs -> fit -> calibrate was
    assert frozenset({"bspkit.commands._inputs", "bspkit.model.fit"}) in cycles(graph)
