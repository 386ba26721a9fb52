"""Client tests run against a real `memoryd serve` process (embedded SQLite)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from memoryd_client import MemoryClient
from tests.clients.live import FaultProxy, MemorydProcess


@pytest.fixture(scope="session")
def memoryd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemorydProcess]:
    server = MemorydProcess(tmp_path_factory.mktemp("memoryd-clients"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def private_memoryd(tmp_path) -> Iterator[MemorydProcess]:
    """A server of the test's own, which it may stop and start again."""
    server = MemorydProcess(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def client(memoryd: MemorydProcess) -> AsyncIterator[MemoryClient]:
    async with MemoryClient(memoryd.target) as client:
        yield client


@pytest.fixture
async def proxy(memoryd: MemorydProcess) -> AsyncIterator[FaultProxy]:
    proxy = FaultProxy(memoryd.target)
    await proxy.start()
    yield proxy
    await proxy.stop()


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"
