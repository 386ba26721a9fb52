"""Rules about the server's own source that a reviewer would otherwise have to remember."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server" / "memoryd"


def test_no_asyncio_wait_for_in_the_server():
    # Python 3.11's wait_for swallows a cancellation that arrives in the loop iteration in
    # which the awaited work completes (fixed in 3.12). A background loop that lost its
    # cancellation never ends, and App.stop() waited on one forever (a 1-in-10 hang at
    # shutdown in tests/events). asyncio.timeout() has no such window.
    offenders = [
        f"{path.relative_to(SERVER)}:{number}"
        for path in sorted(SERVER.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "asyncio.wait_for(" in line
    ]
    assert offenders == [], offenders


def _import_graph():
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_graph", SERVER.parents[1] / "tools" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circles_in_consumers_vectors_and_storage():
    # Lazy imports and TYPE_CHECKING ones count (tools/import_graph.py): a circle there is
    # one knot however it is tied.
    graph = _import_graph()
    edges = graph.graph()
    found = {scope: graph.circles(edges, scope) for scope in ("consumers", "vectors", "storage")}
    assert found == {"consumers": [], "vectors": [], "storage": []}, found


def test_no_module_imports_a_higher_floor():
    # transport -> vectors/consumers -> storage -> domain (docs/ARCHITECTURE.md, "Layers").
    graph = _import_graph()
    assert graph.upward(graph.graph()) == []


def test_the_domain_and_the_storage_adapters_import_what_they_may():
    graph = _import_graph()
    edges = graph.graph()
    # No storage adapter imports anything above storage (the engine's consumers come in
    # through memoryd/engine.py, not an import string).
    storage = [(a, targets) for a, targets in edges.items() if a.startswith("memoryd.storage.")]
    above = sorted((a, b) for a, targets in storage for b in targets if graph.floor_of(b)[0] > graph.floor_of(a)[0])
    assert above == []
    # The domain imports no driver, no grpc, no generated service.
    drivers = ("grpc", "qdrant_edge", "qdrant_client", "pymongo", "sqlite3", "aiohttp", "memoryd.v1")
    offenders = []
    for path in sorted((SERVER / "domain").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if any(n == d or n.startswith(d + ".") for d in drivers)]
    assert offenders == [], offenders
