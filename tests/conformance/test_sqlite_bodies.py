"""SQLite keeps message bodies in the contract's encoding and decodes them only when read."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from memoryd.v1 import message_pb2
from memoryd.domain.models import EncodedBodyMessage, Message, RecentQuery
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.transport.convert import message_to_proto
from memoryd.wire import message_from_pb

BODY = dict(
    segments=[{"type": "image", "data": {"url": "https://x/y.png", "size": 3.0}}],
    metadata={"platform": "tg", "sender": {"id": "u1", "tags": ["a", None, True]}},
    reasoning_content="because",
    tool_calls=[{"id": "c1", "name": "lookup", "arguments": '{"q": 1}'}],
    tool_call_id="",
)


async def _saved_and_read(tmp_path) -> tuple[Message, Message]:
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    try:
        saved = (await store.append("t", "s", [Message(role="user", content="hi", timestamp=5, **BODY)], None, 9)).messages[0]
        (read,) = await store.history("t", "s", 10)
        return saved, read
    finally:
        await store.close()


async def test_a_read_message_copies_its_stored_bytes_into_the_response(tmp_path):
    saved, read = await _saved_and_read(tmp_path)
    assert isinstance(read, EncodedBodyMessage) and read.encoded_body
    from_bytes = message_to_proto(read)
    assert read.encoded_body is not None  # the response did not decode it
    assert from_bytes == message_to_proto(saved)
    assert from_bytes.metadata["sender"]["tags"][0] == "a"


async def test_reading_or_setting_a_body_field_decodes_it_and_drops_the_bytes(tmp_path):
    saved, read = await _saved_and_read(tmp_path)
    assert read == saved  # equality reads every field
    assert read.encoded_body is None
    read.metadata["platform"] = "changed"  # so a changed body is never answered from stale bytes
    assert message_to_proto(read).metadata["platform"] == "changed"

    _, other = await _saved_and_read(tmp_path / "b")
    other.tool_call_id = "set"
    assert other.encoded_body is None and other.metadata == BODY["metadata"]
    assert dataclasses.replace(other, content="new").tool_calls == BODY["tool_calls"]


async def test_rows_with_json_bodies_still_read(tmp_path):
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    await store.close()
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute(
            "INSERT INTO messages (tenant, session_id, seq, id, role, content, kind, timestamp, platform, body)"
            " VALUES ('t', 'old', 1, 'id1', 'user', 'hello', NULL, 7, 'tg', ?)",
            (json.dumps(BODY),),
        )
        conn.execute("INSERT INTO sessions (tenant, session_id, last_seq, message_count, unarchived_count, last_activity)"
                     " VALUES ('t', 'old', 1, 1, 1, 7)")
    await store.open()
    try:
        (read,) = await store.history("t", "old", 10)
        assert read == Message(role="user", content="hello", timestamp=7, id="id1", seq=1, **BODY)
        assert message_to_proto(read).tool_calls[0] == message_pb2.ToolCall(id="c1", name="lookup", arguments='{"q": 1}')
    finally:
        await store.close()


async def test_a_written_body_goes_from_request_to_storage_to_response_without_decoding(tmp_path):
    request = message_to_proto(Message(role="user", content="hi", timestamp=5, **BODY))
    incoming = message_from_pb(request)
    assert incoming.platform == "tg" and incoming.encoded_body is not None  # platform read without decoding
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    try:
        first = await store.append("t", "s", [incoming], "key", 9)
        (stored,) = first.messages
        assert stored.encoded_body == incoming.encoded_body and incoming.seq == 0  # a copy, nothing decoded
        assert message_to_proto(stored).metadata["sender"]["id"] == "u1"
        (retried,) = (await store.append("t", "s", [message_from_pb(request)], "key", 10)).messages
        assert retried.encoded_body is not None and message_to_proto(retried) == message_to_proto(stored)
        (recent,) = await store.recent_across_sessions("t", RecentQuery(limit=5, platform="tg"))
        assert recent.message.id == stored.id  # the platform column was filled
    finally:
        await store.close()
    assert incoming.encoded_body is not None and request.content == "hi"


async def test_idempotency_results_stored_as_json_still_replay(tmp_path):
    store = SqliteStore(tmp_path / "m.db")
    await store.open()
    await store.close()
    first = Message(role="user", content="hello", timestamp=7, id="id1", seq=1, **BODY)
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute(
            "INSERT INTO idempotency (tenant, session_id, key, result, created) VALUES ('t', 's', 'k', ?, 7)",
            (json.dumps([first.to_dict()]),),
        )
    await store.open()
    try:
        result = await store.append("t", "s", [Message(role="user", content="again")], "k", 9)
        assert result.deduplicated and result.messages == [first] and result.messages[0].stored_bytes > 0
    finally:
        await store.close()
