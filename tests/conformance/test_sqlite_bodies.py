"""SQLite keeps message bodies in the contract's encoding and decodes them only when read."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from memoryd.v1 import message_pb2
from memoryd.domain.models import EncodedBodyMessage, Message
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.transport.convert import message_to_proto

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
