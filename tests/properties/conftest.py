"""One Memory per adapter for the property tests, opened once per session (as the
conformance suite does); every example works in a fresh tenant."""

from __future__ import annotations

import uuid

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.storage.sqlite.store import SqliteStore

LIMITS = Limits(delete_batch=3, max_page_size=1000)


@pytest.fixture(scope="session")
async def sqlite_memory(tmp_path_factory):
    store = SqliteStore(tmp_path_factory.mktemp("properties") / "memoryd.db")
    await store.open()
    yield Memory(store, LIMITS)
    await store.close()


@pytest.fixture(scope="session")
async def mongo_memory(mongo_uri):
    from memoryd.storage.mongo.store import MongoStore

    store = MongoStore(mongo_uri, database=f"memoryd_properties_{uuid.uuid4().hex[:8]}")
    await store.open()
    yield Memory(store, LIMITS)
    await store.close()
