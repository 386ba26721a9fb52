"""Client tests run against a real `memoryd serve` process (embedded SQLite)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from memoryd_client import MemoryClient
from tests.clients.live import FaultProxy
from tests.processes import MemorydServer


@pytest.fixture(scope="session")
def memoryd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorydServer]:
    server = MemorydServer(tmp_path_factory.mktemp("memoryd-clients"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def private_memoryd(tmp_path) -> Iterator[MemorydServer]:
    """A server of the test's own, which it may stop and start again."""
    server = MemorydServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def client(memoryd: MemorydServer) -> AsyncIterator[MemoryClient]:
    async with MemoryClient(memoryd.target) as client:
        yield client


@pytest.fixture
async def proxy(memoryd: MemorydServer) -> AsyncIterator[FaultProxy]:
    proxy = FaultProxy(memoryd.target)
    await proxy.start()
    yield proxy
    await proxy.stop()


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"
