"""Summaries, context assembly and long-term entries on every storage adapter.

Like the conformance suite: one store per adapter per test session, a fresh tenant per
test. `reopen` closes a store and opens a new one on the same data (a restart).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from memoryd.domain.entries import Entries
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.summaries import Summaries
from memoryd.storage.sqlite.store import SqliteStore

BACKENDS = ["sqlite", "mongo"] + (["mongo-external"] if os.environ.get("MEMORYD_TEST_MONGODB_URI") else [])
LIMITS = Limits()


class Target:
    """How to open (and re-open) the store of one backend."""

    def __init__(self, backend: str, sqlite_path: Path | None, mongo_uri: str | None) -> None:
        self.backend = backend
        self.sqlite_path = sqlite_path
        self.mongo_uri = mongo_uri
        self.database = f"memoryd_summaries_{uuid.uuid4().hex[:8]}"

    async def open(self):
        if self.backend == "sqlite":
            store = SqliteStore(self.sqlite_path)
        else:
            from memoryd.storage.mongo.store import MongoStore

            store = MongoStore(self.mongo_uri, database=self.database)
        await store.open()
        return store


@pytest.fixture(scope="session", params=BACKENDS)
def target(request, tmp_path_factory) -> Target:
    if request.param == "sqlite":
        return Target("sqlite", tmp_path_factory.mktemp("summaries") / "memoryd.db", None)
    uri = os.environ["MEMORYD_TEST_MONGODB_URI"] if request.param == "mongo-external" else request.getfixturevalue("mongo_uri")
    return Target(request.param, None, uri)


@pytest.fixture(scope="session")
async def store(target):
    store = await target.open()
    yield store
    await store.close()


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def memory(store) -> Memory:
    return Memory(store, LIMITS)


@pytest.fixture
def summaries(store) -> Summaries:
    return Summaries(store, LIMITS)


@pytest.fixture
def entries(store) -> Entries:
    return Entries(store, LIMITS, capacity=5)
