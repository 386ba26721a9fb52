"""Fixtures of the vector recall tests: a real Qdrant (Qdrant Edge in-process always; a real
Qdrant server, tests/qdrant_server.py, over gRPC and over REST when the run has one) over a
real SQLite message store. No mocks.

Edge is one process per folder, so every test gets its own folder. Against a server,
every test gets its own collection prefix.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message
from memoryd.domain.vectors import VectorIndex
from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.qdrant.edge_process import EdgeProcessIndex
from memoryd.storage.qdrant.server import QdrantServerIndex
from memoryd.vectors.recall import VectorRecall
from tests.conftest import BACKENDS, StoreTarget
from tests.qdrant_server import SERVER_TARGETS, collection_prefix, running, unavailable

TARGETS = ["edge", *SERVER_TARGETS]
# The vector-index conformance cases also run Edge behind its process boundary (the server's
# default). Without a real server, the server adapter runs them against qdrant-client's
# in-process imitation of the server API ("server-memory"), so its code runs in every run;
# with one, the imitation adds nothing (docs/VECTORS.md lists where the two differ).
INDEX_TARGETS = ["edge", "edge-process", *SERVER_TARGETS, *(["server-memory"] if unavailable() else [])]
SERVER_INDEX_TARGETS = [t for t in INDEX_TARGETS if t.startswith("server")]  # the server adapter's
# Suites above the index adapter (VectorRecall's ranking, the VectorService, the embedder):
# Edge and the server over gRPC, memoryd's default transport. Over REST the same adapter
# calls run; the adapter-facing suites (INDEX_TARGETS, TARGETS) cover both transports.
RECALL_TARGETS = ["edge", "server-grpc"]
on_recall_targets = pytest.mark.parametrize("target", RECALL_TARGETS, indirect=True)


def make_index(target: str, folder: Path, prefix: str | None = None, **edge) -> VectorIndex:
    """The index of a target; a server target needs the session's server (the `target` and
    `index` fixtures start it)."""
    if target in SERVER_TARGETS:
        server = running()
        return QdrantServerIndex(
            server.url, grpc_port=server.grpc_port, prefer_grpc=target == "server-grpc",
            prefix=prefix or collection_prefix(),
        )  # fmt: skip
    if target == "server-memory":
        return QdrantServerIndex(":memory:", prefix=prefix or "memoryd")
    if target == "edge-process":
        return EdgeProcessIndex(folder / "vectors", prefix=prefix or "memoryd", **edge)
    return EdgeIndex(folder / "vectors", prefix=prefix or "memoryd", **edge)


def serve(request: pytest.FixtureRequest, target: str) -> str:
    """For a server target: the session's Qdrant server (started on first use, or the test
    skipped without one), its collections of this test dropped after it."""
    if target in SERVER_TARGETS:
        request.getfixturevalue("qdrant")
    return target


def unit(angle_degrees: float, dims: int = 4) -> list[float]:
    """A unit vector whose cosine similarity to unit(0) is cos(angle)."""
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a)] + [0.0] * (dims - 2)


def sim(angle_degrees: float) -> float:
    return math.cos(math.radians(angle_degrees))


@pytest.fixture(params=INDEX_TARGETS)
async def index(request, tmp_path):
    """An open vector index on each conformance target (INDEX_TARGETS)."""
    index = make_index(serve(request, request.param), tmp_path)
    await index.open()
    yield index
    await index.close()


@pytest.fixture(params=TARGETS)
def target(request) -> str:
    """A vector store target; parametrize it `indirect=True` for another list of targets."""
    return serve(request, request.param)


@pytest.fixture(params=BACKENDS)
async def store(request, tmp_path):
    """The message store under VectorRecall, on every backend. Its own per test (not the
    session's shared one): the index consumer's cursors and lease are store-wide."""
    store = await StoreTarget(request.param, request, tmp_path, "memoryd_vectors").open()
    yield store
    await store.close()


@pytest.fixture(params=RECALL_TARGETS)
async def vectors(request, tmp_path, store):
    vm = VectorRecall(make_index(serve(request, request.param), tmp_path), store, sync_poll_seconds=0.05, sync_max_backoff_seconds=0.2)
    await vm.open()
    yield vm
    await vm.close()


@pytest.fixture
def memory(store, vectors) -> Memory:
    return Memory(store, Limits(delete_batch=3), hooks=vectors)


def msg(role: str, content: str, timestamp: int, kind: str | None = None, **metadata) -> Message:
    return Message(role=role, content=content, timestamp=timestamp, kind=kind, metadata=metadata)
