"""Message rows of the SQLite store as domain messages: what the store (store.py) and its
export snapshot (snapshot.py) both read, so that neither imports the other for it."""

from __future__ import annotations

import json
from collections.abc import Iterable

from memoryd.domain.models import BODY_FIELDS, EncodedBodyMessage, Message, utf8_len
from memoryd.domain.paging import read_within
from memoryd.wire import decode_body

MESSAGE_COLUMNS = "id, seq, role, content, kind, timestamp, archived, body"


def row_to_message(row: tuple) -> Message:
    msg_id, seq, role, content, kind, timestamp, archived, body = row
    if isinstance(body, bytes):
        # Decoded only if domain code reads it; responses copy the bytes as they are.
        return EncodedBodyMessage.stored(msg_id, seq, role, content, kind, timestamp, bool(archived), body, decode_body)
    # Rows written before bodies were stored in the contract's encoding hold JSON.
    return Message(
        role=role,
        content=content,
        kind=kind,
        timestamp=timestamp,
        id=msg_id,
        seq=seq,
        archived=bool(archived),
        stored_bytes=utf8_len(content) + utf8_len(body),
        **{name: value for name, value in json.loads(body).items() if name in BODY_FIELDS},
    )


def read_messages(rows: Iterable[tuple], max_bytes: int | None) -> list[Message]:
    """Messages of `rows` in their order, stepping the cursor one row at a time and stopping
    after the row that takes the bytes read past `max_bytes` (Store's byte-bounded reads)."""
    return read_within(map(row_to_message, rows), max_bytes, lambda message: message.stored_bytes)
