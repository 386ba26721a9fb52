"""Fixtures of the vector recall tests: a real Qdrant (Qdrant Edge in-process always; the
server at $MEMORYD_TEST_QDRANT_URL too when set) over a real SQLite message store. No mocks.

Edge is one process per folder, so every test gets its own folder. Against a server,
every test gets its own collection prefix.
"""

from __future__ import annotations

import math
import os
import uuid
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

SERVER_ENV = "MEMORYD_TEST_QDRANT_URL"
TARGETS = ["edge"] + (["server"] if os.environ.get(SERVER_ENV) else [])
# The vector-index conformance cases also run Edge behind its process boundary (the server's
# default) and the server adapter against qdrant-client's in-process implementation of the
# server API, so its code runs here without a server.
INDEX_TARGETS = ["edge", "edge-process", "server-memory"] + TARGETS[1:]


def make_index(target: str, folder: Path, prefix: str | None = None, **edge) -> VectorIndex:
    if target == "server":
        return QdrantServerIndex(os.environ[SERVER_ENV], prefix=prefix or f"t{uuid.uuid4().hex[:10]}")
    if target == "server-memory":
        return QdrantServerIndex(":memory:", prefix=prefix or "memoryd")
    if target == "edge-process":
        return EdgeProcessIndex(folder / "vectors", prefix=prefix or "memoryd", **edge)
    return EdgeIndex(folder / "vectors", prefix=prefix or "memoryd", **edge)


def unit(angle_degrees: float, dims: int = 4) -> list[float]:
    """A unit vector whose cosine similarity to unit(0) is cos(angle)."""
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a)] + [0.0] * (dims - 2)


def sim(angle_degrees: float) -> float:
    return math.cos(math.radians(angle_degrees))


@pytest.fixture(params=INDEX_TARGETS)
async def index(request, tmp_path):
    """An open vector index on each conformance target (INDEX_TARGETS)."""
    index = make_index(request.param, tmp_path)
    await index.open()
    yield index
    await index.close()


@pytest.fixture(params=TARGETS)
def target(request) -> str:
    return request.param


@pytest.fixture(params=BACKENDS)
async def store(request, tmp_path):
    """The message store under VectorRecall, on every backend. Its own per test (not the
    session's shared one): the outbox and the vector-sync cursors are store-wide."""
    store = await StoreTarget(request.param, request, tmp_path, "memoryd_vectors").open()
    yield store
    await store.close()


@pytest.fixture(params=TARGETS)
async def vectors(request, tmp_path, store):
    vm = VectorRecall(make_index(request.param, tmp_path), store, outbox_poll_seconds=0.05, outbox_max_backoff_seconds=0.2)
    await vm.open()
    yield vm
    await vm.close()


@pytest.fixture
def memory(store, vectors) -> Memory:
    return Memory(store, Limits(delete_batch=3), hooks=vectors)


def msg(role: str, content: str, timestamp: int, kind: str | None = None, **metadata) -> Message:
    return Message(role=role, content=content, timestamp=timestamp, kind=kind, metadata=metadata)
