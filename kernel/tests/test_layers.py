"""The kernel's layers read top-down: a module imports only from its own package or from a
layer below it, and no chain of imports comes back to where it started. Every import
counts, the ones inside functions and under TYPE_CHECKING too: a lazy import still ties
the two modules together."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

KERNEL = Path(__file__).resolve().parents[1] / "src" / "hermes_kernel"

LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"cli"}),
    frozenset({"runtime"}),
    frozenset({"learning", "memory", "tooling"}),
    frozenset({"app"}),
    frozenset({"foreign_homes"}),
    frozenset({"providers", "safety"}),
    frozenset({"engine"}),
    frozenset({"plugins"}),
    frozenset({"config"}),
    frozenset({"store"}),
    frozenset({"log", "__init__"}),
    frozenset({"redact", "files", "_version", "process"}),
)
"""Top first. Packages on one line are peers: neither imports the other."""


def module_name(path: Path) -> str:
    parts = path.relative_to(KERNEL.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def kernel_imports(path: Path, modules: set[str]) -> Iterator[tuple[int, str]]:
    """(line, module) for each import of a kernel module in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                qualified = f"{node.module}.{alias.name}"
                target = qualified if qualified in modules else node.module
                if target in modules:
                    yield node.lineno, target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield node.lineno, alias.name


def graph() -> dict[str, dict[str, int]]:
    paths = {module_name(path): path for path in KERNEL.rglob("*.py")}
    modules = set(paths)
    edges: dict[str, dict[str, int]] = {}
    for name, path in paths.items():
        edges[name] = {
            target: line for line, target in kernel_imports(path, modules) if target != name
        }
    return edges


def layer_of(module: str) -> tuple[int, str]:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for index, layer in enumerate(LAYERS):
        if top in layer:
            return index, top
    raise AssertionError(f"{module}: its package {top!r} is in no layer of LAYERS")


def upward_imports(edges: dict[str, dict[str, int]]) -> list[str]:
    found = []
    for source, targets in sorted(edges.items()):
        source_layer, source_top = layer_of(source)
        for target, line in sorted(targets.items()):
            target_layer, target_top = layer_of(target)
            if target_top == source_top:
                continue
            if target_layer <= source_layer:
                found.append(f"{source}:{line} imports {target}")
    return found


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def test_every_kernel_package_has_a_layer():
    for module in graph():
        layer_of(module)


def test_no_kernel_module_imports_a_layer_above_its_own():
    assert upward_imports(graph()) == []


def test_the_kernel_has_no_import_cycles():
    assert cycles(graph()) == []


def test_the_checks_catch_an_upward_import_and_a_cycle():
    edges = {
        "hermes_kernel.store.db": {"hermes_kernel.cli.main": 3},
        "hermes_kernel.cli.main": {"hermes_kernel.store.db": 1},
    }
    assert upward_imports(edges) == ["hermes_kernel.store.db:3 imports hermes_kernel.cli.main"]
    assert cycles(edges) == [["hermes_kernel.cli.main", "hermes_kernel.store.db"]]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("hermes_kernel.newthing.x")
