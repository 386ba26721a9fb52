"""Metadata and the event log written with each change (docs/EVENTS.md), on every adapter."""

from __future__ import annotations

import pytest

from memoryd.domain.models import ClearTarget, EventDraft, EventType, Message

from tests.conformance.test_messages import msg, save


async def test_metadata_crud_and_namespace_isolation(memory, tenant):
    assert await memory.get_metadata(tenant, "ns", "k") is None
    saved = await memory.save_metadata(tenant, "ns", "k", {"a": [1, 2], "b": {"c": None}})
    assert saved.update_time > 0
    await memory.save_metadata(tenant, "ns", "k", {"a": 3})
    await memory.save_metadata(tenant, "other", "k", {"z": True})
    assert (await memory.get_metadata(tenant, "ns", "k")).data == {"a": 3}
    assert (await memory.get_metadata(tenant, "other", "k")).data == {"z": True}
    assert await memory.delete_metadata(tenant, "ns", "k") is True
    assert await memory.delete_metadata(tenant, "ns", "k") is False
    assert await memory.get_metadata(tenant, "ns", "k") is None
    assert (await memory.get_metadata(tenant, "other", "k")) is not None


async def test_list_metadata_pages_by_key(memory, tenant):
    for key in ["k3", "k1", "k2", "k5", "k4"]:
        await memory.save_metadata(tenant, "ns", key, {"key": key})
    await memory.save_metadata(tenant, "elsewhere", "k0", {})
    first, token = await memory.list_metadata(tenant, "ns", 3, "")
    rest, token2 = await memory.list_metadata(tenant, "ns", 3, token)
    assert [e.key for e in first + rest] == ["k1", "k2", "k3", "k4", "k5"] and token2 == ""
    assert rest[0].data == {"key": "k4"}


async def events_of(store, tenant, after=0):
    return await store.read_events(tenant, after, 10_000)


async def test_every_mutation_writes_its_events(memory, store, tenant):
    a, b, c = await save(memory, tenant, "s", msg("a", 1), msg("b", 2), msg("c", 2))
    await memory.delete_by_timestamps(tenant, "s", [2])
    await memory.update_message_content(tenant, "s", "a", "A", 0)
    await save(memory, tenant, "s", msg("d", 3), msg("e", 4))
    await memory.trim_history(tenant, "s", 1)
    await memory.replace_history(tenant, "s", [msg("r", 9)])
    await memory.delete_by_ids(tenant, "s", ["missing"])  # no change, no event
    await memory.save_metadata(tenant, "ns", "k", {})
    await memory.delete_metadata(tenant, "ns", "k")
    await memory.clear(tenant, "s", [ClearTarget.MESSAGES])
    await memory.clear(tenant, None, [ClearTarget.MESSAGES, ClearTarget.METADATA])
    events = await events_of(store, tenant)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(e.tenant == tenant and e.time > 0 for e in events)
    T = EventType
    assert [e.type for e in events] == [
        T.MESSAGES_APPENDED,
        T.MESSAGES_DELETED, T.HISTORY_CHANGED,
        T.MESSAGES_REWRITTEN, T.HISTORY_CHANGED,
        T.MESSAGES_APPENDED,
        T.HISTORY_TRIMMED, T.HISTORY_CHANGED,
        T.MESSAGES_DELETED, T.MESSAGES_APPENDED, T.HISTORY_REPLACED, T.HISTORY_CHANGED,
        T.METADATA_CHANGED, T.METADATA_CHANGED,
        T.MESSAGES_DELETED, T.SESSION_CLEARED, T.HISTORY_CHANGED,
        T.ALL_CLEARED, T.HISTORY_CHANGED,
    ]
    appended = events[0].payload["messages"]
    assert [(r["id"], r["seq"], r["timestamp"]) for r in appended] == [(m.id, m.seq, m.timestamp) for m in (a, b, c)]
    deleted = events[1].payload
    assert deleted["ids"] == [b.id, c.id] and deleted["timestamps"] == [2]
    assert deleted["cause"] == T.MESSAGES_DELETED
    assert events[2].payload == {"cause": int(T.MESSAGES_DELETED)}
    assert events[3].payload["messages"][0]["id"] == a.id
    assert events[6].payload == {"archived_count": 2, "keep_recent": 1}
    assert events[8].payload["cause"] == T.HISTORY_REPLACED and len(events[8].payload["ids"]) == 1
    assert events[10].payload["removed_count"] == 1
    assert events[12].payload == {"namespace": "ns", "key": "k", "deleted": False}
    assert events[13].payload == {"namespace": "ns", "key": "k", "deleted": True}
    assert events[14].payload["cause"] == T.SESSION_CLEARED and len(events[14].payload["ids"]) == 3  # archived too
    assert events[15].payload == {"removed_count": 3, "targets": ["messages"]}
    assert events[17].session_id == "" and events[17].payload["targets"] == ["messages", "metadata"]
    assert {e.session_id for e in events[:17] if e.type != T.METADATA_CHANGED} == {"s"}


async def test_publish_and_read_after(store, tenant):
    first = await store.publish(tenant, EventDraft(EventType.COMPRESS_REQUESTED, "s", {"requested_by": "me"}), 5)
    second = await store.publish(tenant, EventDraft(EventType.COMPRESS_PROGRESS, "s", {"progress": 0.5}), 6)
    assert (first.seq, second.seq) == (1, 2)
    assert [e.seq for e in await store.read_events(tenant, 1, 10)] == [2]
    assert await store.read_events(tenant + "-x", 0, 10) == []
    assert await store.event_bounds(tenant) == (0, 2)


async def test_events_read_by_type_up_to_a_bound(memory, store, tenant):
    await save(memory, tenant, "s", msg("a", 1), msg("b", 2), msg("c", 3))
    await memory.delete_by_timestamps(tenant, "s", [1])
    await save(memory, tenant, "s", msg("d", 4))
    await memory.delete_by_timestamps(tenant, "s", [2])
    every = await events_of(store, tenant)
    deleted = [e.seq for e in every if e.type == EventType.MESSAGES_DELETED]
    assert len(deleted) == 2
    latest = every[-1].seq
    typed = await store.read_events(tenant, 0, 10, types=(EventType.MESSAGES_DELETED,), through_seq=latest)
    assert [e.seq for e in typed] == deleted
    assert typed == [e for e in every if e.seq in deleted]
    assert [e.seq for e in await store.read_events(tenant, 0, 1, types=(EventType.MESSAGES_DELETED,), through_seq=latest)] == deleted[:1]
    assert await store.read_events(tenant, 0, 10, types=(EventType.MESSAGES_DELETED,), through_seq=deleted[0] - 1) == []
    assert [e.seq for e in await store.read_events(tenant, deleted[0], 10, through_seq=deleted[0] + 1)] == [deleted[0] + 1]
    with pytest.raises(ValueError):
        await store.read_events(tenant, 0, 10, types=(EventType.MESSAGES_DELETED,))


async def test_compaction_by_count_and_age(store, tenant):
    for i in range(6):
        await store.publish(tenant, EventDraft(EventType.COMPRESS_PROGRESS, "s", {"progress": i / 10}), 1000 + i)
    await store.compact_events(older_than=None, keep_last=4)
    floor, latest = await store.event_bounds(tenant)
    assert (floor, latest) == (2, 6)
    assert [e.seq for e in await store.read_events(tenant, 0, 10)] == [3, 4, 5, 6]
    await store.compact_events(older_than=1004, keep_last=None)
    assert await store.event_bounds(tenant) == (4, 6)
    assert [e.seq for e in await store.read_events(tenant, 0, 10)] == [5, 6]


async def test_large_clear_reports_every_deleted_id(memory, store, tenant):
    from memoryd.domain import events as ev

    stored = await save(memory, tenant, "s", *[Message(role="user", content=str(i), timestamp=i + 1) for i in range(25)])
    original = ev.DELETED_CHUNK
    ev.DELETED_CHUNK = 10
    try:
        await memory.clear(tenant, "s", [])
    finally:
        ev.DELETED_CHUNK = original
    deleted = [e for e in await events_of(store, tenant) if e.type == EventType.MESSAGES_DELETED]
    assert [len(e.payload["ids"]) for e in deleted] == [10, 10, 5]
    assert [i for e in deleted for i in e.payload["ids"]] == [m.id for m in stored]


async def test_event_tenants_lists_every_log(memory, store, tenant):
    await save(memory, tenant, "s", msg("a", 1))
    await memory.save_metadata(tenant + "-b", "ns", "k", {})
    tenants = await store.event_tenants()
    assert {tenant, tenant + "-b"} <= set(tenants) and tenants == sorted(tenants)


async def test_clear_all_reports_deleted_ids_per_session(memory, store, tenant):
    a = await save(memory, tenant, "a", msg("a1", 1), msg("a2", 2))
    b = await save(memory, tenant, "b", msg("b1", 3))
    after = (await store.event_bounds(tenant))[1]
    await memory.clear(tenant, None, [])
    events = await store.read_events(tenant, after, 100)
    assert [(e.type, e.session_id) for e in events] == [
        (EventType.MESSAGES_DELETED, "a"),
        (EventType.MESSAGES_DELETED, "b"),
        (EventType.ALL_CLEARED, ""),
        (EventType.HISTORY_CHANGED, ""),
    ]
    assert events[0].payload == {"timestamps": [1, 2], "ids": [m.id for m in a], "cause": int(EventType.ALL_CLEARED)}
    assert events[1].payload["ids"] == [b[0].id] and events[2].payload["removed_count"] == 3
