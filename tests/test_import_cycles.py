"""No import circles anywhere in `app/`: each module can be read after the ones it imports.

import-linter's layer contracts allow a circle inside one layer; this test does not. It
reads the import graph with grimp (import-linter's own graph builder), `TYPE_CHECKING`
imports included, and names every circle it finds.
"""

from __future__ import annotations

import grimp


def strongly_connected(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Tarjan's algorithm over the package's modules; components of more than one module."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & inside):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_app_has_no_import_cycles() -> None:
    assert strongly_connected(grimp.build_graph("app"), "app") == []


def test_the_check_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert strongly_connected(graph, "pkg") == [["pkg.a", "pkg.b"]]
