#!/usr/bin/env python3
"""The import graph of server/memoryd by floor: its import circles and its upward arrows.

Every `import` and `from ... import` of the package counts, at module level or inside a
function (lazy), under `if TYPE_CHECKING:` too. A module's floor comes from its path:

    5 composition   app, cli, lifecycle, workers, engine, __main__
    4 transport     transport/, config (settings: the composition and the health probe read them)
    3 consumers     vectors/, consumers/, formation/
    2 storage       storage/
    1 domain        domain/, wire (the contract's encoding of the domain's messages)
    0 base          shutdown, logs, allocator, addresses, bm25, observability/, v1 (generated)

An arrow from a module to one on a higher floor is upward. A circle is a strongly connected
set of two or more modules (Tarjan), reported per scope (a folder such as `vectors`).

    python3 tools/import_graph.py            # every circle and upward arrow; exit 1 if any
    python3 tools/import_graph.py --scope vectors --scope storage
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "server"
PACKAGE = "memoryd"

FLOORS: list[tuple[int, str, tuple[str, ...]]] = [
    (5, "composition", ("app", "cli", "lifecycle", "workers", "engine", "__main__")),
    (4, "transport", ("transport", "config")),
    (3, "consumers", ("vectors", "consumers", "formation")),
    (2, "storage", ("storage",)),
    (1, "domain", ("domain", "wire")),
    (0, "base", ("shutdown", "logs", "allocator", "addresses", "bm25", "observability", "v1")),
]


def floor_of(module: str) -> tuple[int, str]:
    """(floor, its name) of a dotted module name of the package."""
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    for number, name, heads in FLOORS:
        if head in heads:
            return number, name
    return 0, "base"


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted name -> file of every module of the package (packages by their __init__)."""
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `module` imports (a `from x import y` of a submodule y: x.y)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        names: Iterable[str] = ()
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node)
            names = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names]
        for name in names:
            # The nearest module of the package that the name is, or is inside.
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and name.startswith(PACKAGE + "."):
                found.add(name)
    return found


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {module: imports(module, path, known) for module, path in known.items()}


def circles(edges: dict[str, set[str]], scope: str | None = None) -> list[list[str]]:
    """Strongly connected sets of 2+ modules among those under `scope` (e.g. "vectors";
    None: the whole package), each sorted; arrows leaving the scope do not count."""
    prefix = f"{PACKAGE}.{scope}" if scope else PACKAGE
    inside = {m for m in edges if m == prefix or m.startswith(prefix + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node] & inside):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(inside):
        if node not in index:
            visit(node)
    return sorted(found)


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) where the imported module is on a higher floor."""
    return sorted((a, b) for a, targets in edges.items() for b in targets if floor_of(b)[0] > floor_of(a)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scope", action="append", help="a folder of the package (default: the whole package)")
    args = parser.parse_args(argv)
    edges = graph()
    bad = 0
    for scope in args.scope or [None]:
        found = circles(edges, scope)
        print(f"circles in {scope or PACKAGE}: {len(found)}")
        for component in found:
            print("  " + " <-> ".join(component))
        bad += len(found)
    arrows = upward(edges)
    print(f"upward arrows: {len(arrows)}")
    for a, b in arrows:
        print(f"  {a} ({floor_of(a)[1]}) -> {b} ({floor_of(b)[1]})")
    return 1 if bad or arrows else 0


if __name__ == "__main__":
    sys.exit(main())
