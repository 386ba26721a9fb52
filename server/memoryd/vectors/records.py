"""How a stored message becomes a point's payload (VectorRecord): shared by the synchronizer
(vectors/sync.py) and the recall logic, which reads a hit's text back from the store
(`indexed_text`: the points carry its hash, not the text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoryd.domain.models import Message, platform_of
from memoryd.domain.vectors import VectorRecord, text_hash
from memoryd.wire import body_lookup


def _first_str(*values: Any) -> str:
    return next((v for v in values if isinstance(v, str) and v), "")


# The metadata a record reads (record_of_message), and the segments it reads.
METADATA_KEYS = (
    "platform", "sender", "senderId", "sender_id", "userId", "mentions", "mentionedIds", "senderLabel", "speakerLabel",
    "visibleContent",
)  # fmt: skip
MENTION = "mention"


def _body(message: Message) -> tuple[dict[str, Any], Sequence[dict]]:
    """The message's metadata (what of it a record reads) and mention segments. A stored body
    is decoded only that far: decoding all of it was most of what a record cost; an empty
    one (a message with neither, most imported ones) not at all."""
    encoded = message.encoded_body
    if encoded is not None:
        return body_lookup(encoded, METADATA_KEYS, MENTION) if encoded else ({}, ())
    return message.metadata or {}, message.segments or ()


def _text(message: Message, md: dict[str, Any]) -> str:
    """What gets indexed and embedded: the visible text when the stored content is an envelope."""
    visible = md.get("visibleContent")
    return visible if isinstance(visible, str) and visible.strip() else message.content


def indexed_text(message: Message) -> str:
    """The text a message's points index (record_of_message's), as SearchMemory returns it."""
    encoded = message.encoded_body
    if encoded is not None:
        md = body_lookup(encoded, ("visibleContent",), MENTION)[0] if encoded else {}
    else:
        md = message.metadata or {}
    return _text(message, md)


def record_of_message(session_id: str, message: Message, model_id: str | None) -> VectorRecord:
    """Source fields from the message's metadata (`senderId`, `mentions`, `senderLabel`, ...);
    the text, with its hash (what the points carry instead of it)."""
    md, segments = _body(message)
    if not md and not segments:  # nothing to look up (a plain message)
        return VectorRecord(
            session_id,
            message.timestamp,
            model_id,
            message.id,
            message.role,
            text=message.content,
            text_hash=text_hash(message.content),
        )
    sender: dict[str, Any] = md["sender"] if isinstance(md.get("sender"), dict) else {}
    mentions: list[str] = []
    for item in md.get("mentions") or md.get("mentionedIds") or ():
        value = _first_str(item.get("id"), item.get("userId"), item.get("user_id")) if isinstance(item, dict) else item
        if isinstance(value, str) and value:
            mentions.append(value)
    for segment in segments:
        data = segment.get("data") or {}
        if segment.get("type") == MENTION and isinstance(data, dict):
            value = _first_str(data.get("user_id"), data.get("userId"), data.get("id"))
            if value:
                mentions.append(value)
    return VectorRecord(
        session_id=session_id,
        timestamp=message.timestamp,
        model_id=model_id,
        message_id=message.id,
        role=message.role,
        platform=platform_of(md) or "",  # Message.platform, from the entries read
        sender_id=_first_str(md.get("senderId"), md.get("sender_id"), md.get("userId"), sender.get("id")),
        mentioned_ids=tuple(dict.fromkeys(mentions)),
        speaker_label=_first_str(
            md.get("senderLabel"), md.get("speakerLabel"), sender.get("label"), sender.get("name")
        ),
        text=(text := _text(message, md)),
        text_hash=text_hash(text),
    )
