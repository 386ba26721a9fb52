"""The MongoDB adapter's context windows (storage/mongo/windows.py): every window of a call in
one aggregate whose first stage an index serves, on SecantusDB and on mongod, and more reads
only for windows whose sides reach past their first span. What the windows hold is checked
against the domain's definition by test_context_windows.py on every adapter."""

from __future__ import annotations

import uuid

import pytest
from pymongo import AsyncMongoClient, monitoring

from memoryd.domain import windows
from memoryd.domain.models import Message
from memoryd.domain.windows import WindowRequest
from memoryd.storage.mongo import windows as mongo_windows
from memoryd.storage.mongo.store import MongoStore
from tests.conftest import mongo_targets, mongo_uri_for


class Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names.append(event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture(scope="module", params=mongo_targets())
async def opened(request):
    uri, database = mongo_uri_for(request.param, request), f"memoryd_windows_{uuid.uuid4().hex[:8]}"
    store = MongoStore(uri, database)
    await store.open()
    listener = Commands()
    client: AsyncMongoClient = AsyncMongoClient(uri, event_listeners=[listener])
    yield store, client[database], listener
    await client.close()
    await store.close()


async def _save(store: MongoStore, tenant: str, session: str, stamps: list[int]) -> list[Message]:
    rows = [
        Message(role=("user", "assistant", "system")[i % 3], content=f"{session} {i}", timestamp=ts)
        for i, ts in enumerate(stamps)
    ]
    return (await store.append(tenant, session, rows, None, 1)).messages


def _ids(found: list[windows.Window]) -> list[tuple]:
    return [(w.message.id if w.message else None, [m.id for m in w.before], [m.id for m in w.after]) for w in found]


async def test_fifty_windows_over_many_sessions_are_one_aggregate(opened):
    store, db, listener = opened
    tenant = f"t{uuid.uuid4().hex[:8]}"
    requests = []
    day, now = 86_400_000, 1_700_000_000_000
    for s in range(10):  # days of history, then messages seconds apart: the windows are in those
        stamps = [now - (10 - i) * day for i in range(10)] + [now + i * 3_000 for i in range(30)]
        saved = await _save(store, tenant, f"s{s}", stamps)
        requests += [WindowRequest(f"s{s}", m.timestamp, m.id, m.role, 2) for m in saved[14:37:4]]
    assert len(requests) >= 50
    listener.names.clear()
    found = await mongo_windows.read_windows(db, tenant, requests)
    assert sorted(listener.names) == ["aggregate", "find"]  # the windows, and the sessions' sizes

    async def read(query):
        return await store.range(tenant, query)

    assert _ids(found) == _ids(await windows.read_windows(read, requests))
    assert all(w.message is not None and len(w.before) == len(w.after) == 2 for w in found)


async def test_a_window_reaching_past_its_span_is_widened_until_it_is_exact(opened):
    store, db, listener = opened
    tenant = f"t{uuid.uuid4().hex[:8]}"
    day = 86_400_000
    # Neighbours days and years away, and one side that ends: the first span holds none of them.
    saved = await _save(store, tenant, "w", [1_000, 2 * day, 3 * day, 3 * day + 5, 900 * day, 901 * day, 5_000 * day])
    requests = [WindowRequest("w", m.timestamp, m.id, m.role, 2) for m in saved[3:5]]
    listener.names.clear()
    found = await mongo_windows.read_windows(db, tenant, requests)
    assert sorted(listener.names) == ["aggregate"] * mongo_windows.ROUNDS + ["find"]

    async def read(query):
        return await store.range(tenant, query)

    assert _ids(found) == _ids(await windows.read_windows(read, requests))
    assert [len(w.before) for w in found] == [2, 2]


async def test_a_short_session_is_read_whole_in_one_aggregate(opened):
    store, db, listener = opened
    tenant = f"t{uuid.uuid4().hex[:8]}"
    day = 86_400_000
    saved = await _save(store, tenant, "w", [1_000, 2 * day, 3 * day, 3 * day + 5, 900 * day, 901 * day, 5_000 * day])
    requests = [WindowRequest("w", m.timestamp, m.id, m.role, 2) for m in saved]
    listener.names.clear()
    found = await mongo_windows.read_windows(db, tenant, requests)
    assert sorted(listener.names) == ["aggregate", "find"]

    async def read(query):
        return await store.range(tenant, query)

    assert _ids(found) == _ids(await windows.read_windows(read, requests))
    assert [len(w.before) for w in found] == [0, 1, 2, 2, 2, 2, 2]


def test_a_sessions_overlapping_spans_are_one_range():
    spans = [("a", 0, 10), ("b", None, 5), ("a", 5, 20), ("a", 30, None), ("a", 21, 28), ("b", 3, 4), ("c", 1, 2)]
    assert mongo_windows.merged(spans) == [("a", 0, 28), ("a", 30, None), ("b", None, 5), ("c", 1, 2)]


async def test_the_first_stage_is_served_by_an_index(opened):
    store, db, _ = opened
    tenant = f"t{uuid.uuid4().hex[:8]}"
    await _save(store, tenant, "a", [1, 2, 3])
    pipeline = mongo_windows.windows_pipeline(tenant, [("a", 0, 10), ("b", None, 5)])
    explained = await db.command("explain", {"aggregate": "messages", "pipeline": pipeline, "cursor": {}})
    text = repr(explained)
    assert "IXSCAN" in text and "COLLSCAN" not in text, explained
