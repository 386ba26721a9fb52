"""Watching deletions: every structural change reaches a live subscriber with exact ids and timestamps."""

from __future__ import annotations

from memoryd.v1 import event_pb2
from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import message_pb2

T = event_pb2

# What a UI or vector index watches: everything that removes or changes stored history.
STRUCTURAL = [
    T.EVENT_TYPE_MESSAGES_DELETED,
    T.EVENT_TYPE_MESSAGES_REWRITTEN,
    T.EVENT_TYPE_HISTORY_TRIMMED,
    T.EVENT_TYPE_HISTORY_REPLACED,
    T.EVENT_TYPE_SESSION_CLEARED,
    T.EVENT_TYPE_ALL_CLEARED,
    T.EVENT_TYPE_HISTORY_CHANGED,
]


def refs(messages) -> tuple[list[int], list[str]]:
    """(distinct timestamps ascending, ids by (timestamp, seq)) as a messages-deleted event lists them."""
    ordered = sorted(messages, key=lambda m: (m.timestamp, m.seq))
    return sorted({m.timestamp for m in ordered}), [m.id for m in ordered]


async def seeded(client, session_id):
    # Two messages share a timestamp: deleting by timestamp removes both.
    return await client.save(session_id, "alpha", "beta", "gamma", "delta", timestamps=[1000, 2000, 2000, 3000])


async def watch_structural(client, session_id):
    return await client.watch(session_ids=[session_id], types=STRUCTURAL).started()


def kinds(stream) -> list[int]:
    return [e.type for e in stream.events]


def assert_changed(event, session_id, cause):
    assert event.type == T.EVENT_TYPE_HISTORY_CHANGED
    assert event.session_id == session_id
    assert event.history_changed.cause == cause


async def test_delete_by_timestamps(servers, session_id):
    _, client = await servers.start()
    a, b, c, d = await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    deleted = await client.memory.DeleteMessagesByTimestamps(
        pb.DeleteMessagesByTimestampsRequest(session_id=session_id, timestamps=[2000, 3000, 9999])
    )
    assert deleted.deleted_count == 3
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    first, changed = stream.events
    assert first.type == T.EVENT_TYPE_MESSAGES_DELETED and first.session_id == session_id
    assert (list(first.messages_deleted.timestamps), list(first.messages_deleted.ids)) == refs([b, c, d])
    assert list(first.messages_deleted.timestamps) == [2000, 3000]
    assert first.messages_deleted.cause == T.EVENT_TYPE_MESSAGES_DELETED
    assert_changed(changed, session_id, T.EVENT_TYPE_MESSAGES_DELETED)
    assert changed.seq == first.seq + 1
    await stream.close()


async def test_delete_by_ids(servers, session_id):
    _, client = await servers.start()
    a, b, c, d = await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    deleted = await client.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=[d.id, a.id]))
    assert deleted.deleted_count == 2
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    first, changed = stream.events
    assert first.type == T.EVENT_TYPE_MESSAGES_DELETED
    assert list(first.messages_deleted.timestamps) == [1000, 3000]
    assert list(first.messages_deleted.ids) == [a.id, d.id]
    assert_changed(changed, session_id, T.EVENT_TYPE_MESSAGES_DELETED)
    await stream.close()


async def test_clear_session(servers, session_id):
    _, client = await servers.start()
    messages = await seeded(client, session_id)
    await client.memory.TrimHistory(pb.TrimHistoryRequest(session_id=session_id, keep_recent=2))  # archived go too
    stream = await watch_structural(client, session_id)
    await client.memory.ClearSession(pb.ClearSessionRequest(session_id=session_id))
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert kinds(stream) == [T.EVENT_TYPE_MESSAGES_DELETED, T.EVENT_TYPE_SESSION_CLEARED, T.EVENT_TYPE_HISTORY_CHANGED]
    deleted, cleared, changed = stream.events
    assert (list(deleted.messages_deleted.timestamps), list(deleted.messages_deleted.ids)) == refs(messages)
    assert deleted.messages_deleted.cause == T.EVENT_TYPE_SESSION_CLEARED
    assert cleared.session_cleared.removed_count == 4
    assert_changed(changed, session_id, T.EVENT_TYPE_SESSION_CLEARED)
    await stream.close()


async def test_clear_all_reaches_session_watchers(servers, session_id):
    _, client = await servers.start()
    await seeded(client, session_id)
    await client.save("elsewhere", "x")
    stream = await watch_structural(client, session_id)
    await client.memory.ClearAll(pb.ClearAllRequest())
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    # The session's deleted ids and timestamps, then the tenant-wide all-cleared and
    # history-changed, delivered despite the session filter.
    assert kinds(stream) == [T.EVENT_TYPE_MESSAGES_DELETED, T.EVENT_TYPE_ALL_CLEARED, T.EVENT_TYPE_HISTORY_CHANGED]
    deleted, cleared, changed = stream.events
    assert deleted.session_id == session_id and deleted.messages_deleted.cause == T.EVENT_TYPE_ALL_CLEARED
    assert list(deleted.messages_deleted.timestamps) == [1000, 2000, 3000]
    assert len(deleted.messages_deleted.ids) == 4
    assert cleared.session_id == "" and cleared.all_cleared.removed_count == 5
    assert list(cleared.all_cleared.targets) == ["messages"]
    assert_changed(changed, "", T.EVENT_TYPE_ALL_CLEARED)
    await stream.close()


async def test_trim_history(servers, session_id):
    _, client = await servers.start()
    await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    trimmed = await client.memory.TrimHistory(pb.TrimHistoryRequest(session_id=session_id, keep_recent=1))
    assert trimmed.archived_count == 3
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert kinds(stream) == [T.EVENT_TYPE_HISTORY_TRIMMED, T.EVENT_TYPE_HISTORY_CHANGED]
    assert stream.events[0].history_trimmed.archived_count == 3
    assert stream.events[0].history_trimmed.keep_recent == 1
    assert_changed(stream.events[1], session_id, T.EVENT_TYPE_HISTORY_TRIMMED)
    await stream.close()


async def test_replace_history(servers, session_id):
    _, client = await servers.start()
    old = await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    replaced = await client.memory.ReplaceHistory(
        pb.ReplaceHistoryRequest(
            session_id=session_id, messages=[message_pb2.Message(role="system", content="summary", timestamp=500)]
        )
    )
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert kinds(stream) == [T.EVENT_TYPE_MESSAGES_DELETED, T.EVENT_TYPE_HISTORY_REPLACED, T.EVENT_TYPE_HISTORY_CHANGED]
    deleted, swapped, changed = stream.events
    assert (list(deleted.messages_deleted.timestamps), list(deleted.messages_deleted.ids)) == refs(old)
    assert deleted.messages_deleted.cause == T.EVENT_TYPE_HISTORY_REPLACED
    assert swapped.history_replaced.removed_count == 4
    assert [m.id for m in swapped.history_replaced.messages] == [m.id for m in replaced.messages]
    assert_changed(changed, session_id, T.EVENT_TYPE_HISTORY_REPLACED)
    await stream.close()


async def test_update_message_content(servers, session_id):
    _, client = await servers.start()
    a, b, c, d = await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    updated = await client.memory.UpdateMessageContent(
        pb.UpdateMessageContentRequest(session_id=session_id, old_text="ta", new_text="TA")
    )
    assert updated.changed_count == 2  # beta, delta
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert kinds(stream) == [T.EVENT_TYPE_MESSAGES_REWRITTEN, T.EVENT_TYPE_HISTORY_CHANGED]
    assert sorted(m.id for m in stream.events[0].messages_rewritten.messages) == sorted([b.id, d.id])
    assert_changed(stream.events[1], session_id, T.EVENT_TYPE_MESSAGES_REWRITTEN)
    await stream.close()


async def test_a_change_without_effect_writes_no_event(servers, session_id):
    _, client = await servers.start()
    await seeded(client, session_id)
    stream = await watch_structural(client, session_id)
    await client.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=["missing"]))
    await client.memory.DeleteMessagesByTimestamps(pb.DeleteMessagesByTimestampsRequest(session_id=session_id, timestamps=[1000]))
    await stream.wait_for_type(T.EVENT_TYPE_HISTORY_CHANGED)
    assert kinds(stream) == [T.EVENT_TYPE_MESSAGES_DELETED, T.EVENT_TYPE_HISTORY_CHANGED]
    await stream.close()

