"""Background indexing and message deletes: a batch reads its messages back from the store
(to take back the points of messages deleted while it was indexed) only for sessions that had a
delete since shortly before the job was queued; on a shared Qdrant server always."""

from __future__ import annotations

import pytest

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.app import start
from memoryd.domain.models import DEFAULT_TENANT, Message, now_ms
from memoryd.vectors import recall as recall_module
from tests.vectors.test_service import Client, server_config


def message(content: str, ts: int) -> message_pb2.Message:
    return message_pb2.Message(role="user", content=content, timestamp=ts)


@pytest.fixture
async def app(target, tmp_path):
    app = await start(server_config(target, tmp_path))
    yield app
    await app.stop(0)


async def test_only_sessions_with_a_delete_are_read_back(app):
    client = Client(app.port)
    vectors = app.vectors
    await client.save("quiet", message("alpine lakes", 1000), message("glacier walks", 1001))
    [doomed, _] = await client.save("busy", message("desert roads", 1000), message("canyon rims", 1001))
    await vectors.indexer.drained()
    assert vectors.read_backs == (2 if vectors.index.shared else 0)
    await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="busy", ids=[doomed.id]))
    before = vectors.read_backs
    await client.save("busy", message("salt flats", 1002))
    await client.save("quiet", message("fjord ferries", 1002))
    await vectors.indexer.drained()
    assert vectors.read_backs - before == (2 if vectors.index.shared else 1)  # "busy" only on Edge
    assert await client.keyword_points() == 5
    await client.channel.close()


async def test_a_delete_just_before_the_save_hook_still_takes_the_points_back(app):
    """A delete can commit between a save's commit and its hook (a concurrent PopMessages):
    the job queued after it still reads back and drops the points of the deleted message."""
    client = Client(app.port)
    vectors, store = app.vectors, app.vectors.store
    result = await store.append(DEFAULT_TENANT, "race", [Message("user", "popped at once", timestamp=1000)], None, now_ms())
    removed = await store.delete_by_ids(DEFAULT_TENANT, "race", [m.id for m in result.messages], now_ms())
    await vectors.messages_deleted(DEFAULT_TENANT, "race", removed)  # the pop's hook runs first
    await vectors.messages_saved(DEFAULT_TENANT, "race", result.messages)  # then the save's
    await vectors.indexer.drained()
    assert vectors.read_backs == 1
    assert await client.keyword_points() == 0
    await client.channel.close()


async def test_past_the_bound_the_delete_record_starts_afresh_and_earlier_jobs_read_back(app, monkeypatch):
    client = Client(app.port)
    vectors = app.vectors
    monkeypatch.setattr(vectors, "_deletes_remembered", 2)
    stored = {}
    for session in ("s1", "s2", "s3"):
        stored[session] = await client.save(session, message(f"{session} one", 1000), message(f"{session} two", 1001))
    await vectors.indexer.drained()
    for session in ("s1", "s2", "s3"):  # the third delete clears the record of the first two
        await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id=session, ids=[stored[session][0].id]))
    assert len(vectors._deleted_at) == 1
    before = vectors.read_backs
    await client.save("s1", message("s1 three", 1002))  # s1's delete was forgotten: read back anyway
    await vectors.indexer.drained()
    assert vectors.read_backs - before == 1
    # Once the clearing is older than the grace, a session without a delete is not read back.
    vectors._deletes_forgotten_at -= recall_module.DELETE_GRACE_SECONDS + 1
    before = vectors.read_backs
    await client.save("s4", message("s4 one", 1000))
    await vectors.indexer.drained()
    assert vectors.read_backs - before == (1 if vectors.index.shared else 0)
    await client.channel.close()
