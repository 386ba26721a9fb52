"""The storage conformance suite: every case runs against every adapter.

Adapters are opened once per test session; each test works in a fresh tenant, so
tests never see each other's data and no cleanup is needed between them.
"""

from __future__ import annotations

import os
import uuid

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.storage.sqlite.store import SqliteStore

BACKENDS = ["sqlite", "mongo"] + (["mongo-external"] if os.environ.get("MEMORYD_TEST_MONGODB_URI") else [])


async def _open_store(backend: str, request, tmp_path_factory):
    if backend == "sqlite":
        store = SqliteStore(tmp_path_factory.mktemp("sqlite") / "memoryd.db")
    else:
        from memoryd.storage.mongo.store import MongoStore

        uri = os.environ["MEMORYD_TEST_MONGODB_URI"] if backend == "mongo-external" else request.getfixturevalue("mongo_uri")
        store = MongoStore(uri, database=f"memoryd_conformance_{uuid.uuid4().hex[:8]}")
    await store.open()
    return store


@pytest.fixture(scope="session", params=BACKENDS)
async def store(request, tmp_path_factory):
    store = await _open_store(request.param, request, tmp_path_factory)
    yield store
    await store.close()


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory(store) -> Memory:
    # Small batches so the batching paths run with modest data (SecantusDB is slow).
    return Memory(store, Limits(delete_batch=7, max_page_size=1000, max_recent_limit=1000))
