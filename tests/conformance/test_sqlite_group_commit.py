"""SQLite group commit: concurrent writes share a transaction, yet each stands or falls alone."""

from __future__ import annotations

import asyncio

import pytest

from memoryd.domain.models import Message, RecentQuery
from memoryd.storage.sqlite.store import SqliteStore


class Boom(Exception):
    pass


async def test_a_failing_write_rolls_back_alone(tmp_path):
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    try:

        def failing(conn):
            store._insert_messages(conn, "t", "bad", [Message(role="user", content="never")], 1)
            raise Boom()

        writes = [store.append("t", f"s{i}", [Message(role="user", content=f"m{i}", timestamp=i + 1)], None, 1)
                  for i in range(20)]
        results = await asyncio.gather(*writes[:10], store._write(failing), *writes[10:], return_exceptions=True)
        assert isinstance(results[10], Boom)
        assert all(not isinstance(r, BaseException) for r in results[:10] + results[11:])
        stored = await store.recent_across_sessions("t", RecentQuery(limit=100))
        assert sorted(r.message.content for r in stored) == sorted(f"m{i}" for i in range(20))
        assert await store.history("t", "bad", 10) == []
        events = await store.read_events("t", 0, 100)
        assert [e.seq for e in events] == list(range(1, 21))  # no seq taken by the rolled-back write
    finally:
        await store.close()


async def test_writes_after_close_are_refused(tmp_path):
    from memoryd.domain.errors import StorageUnavailable

    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    await store.close()
    with pytest.raises(StorageUnavailable):
        await store.append("t", "s", [Message(role="user")], None, 1)
