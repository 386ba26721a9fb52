"""How a stored message becomes a point's payload (VectorRecord): shared by the synchronizer
(vectors/sync.py) and the recall logic."""

from __future__ import annotations

from typing import Any

from memoryd.domain.models import Message
from memoryd.domain.vectors import VectorRecord


def _first_str(*values: Any) -> str:
    return next((v for v in values if isinstance(v, str) and v), "")


def message_text(message: Message) -> str:
    """What gets embedded: the visible text when the stored content is an envelope."""
    visible = (message.metadata or {}).get("visibleContent")
    return visible if isinstance(visible, str) and visible.strip() else message.content


def record_of_message(session_id: str, message: Message, model_id: str | None) -> VectorRecord:
    """Source fields from the message's metadata (`senderId`, `mentions`, `senderLabel`, ...)."""
    md = message.metadata or {}
    sender = md.get("sender") if isinstance(md.get("sender"), dict) else {}
    mentions: list[str] = []
    for item in md.get("mentions") or md.get("mentionedIds") or ():
        value = _first_str(item.get("id"), item.get("userId"), item.get("user_id")) if isinstance(item, dict) else item
        if isinstance(value, str) and value:
            mentions.append(value)
    for segment in message.segments or ():
        data = segment.get("data") or {}
        if segment.get("type") == "mention" and isinstance(data, dict):
            value = _first_str(data.get("user_id"), data.get("userId"), data.get("id"))
            if value:
                mentions.append(value)
    return VectorRecord(
        session_id=session_id,
        timestamp=message.timestamp,
        model_id=model_id,
        message_id=message.id,
        role=message.role,
        platform=message.platform or "",
        sender_id=_first_str(md.get("senderId"), md.get("sender_id"), md.get("userId"), sender.get("id")),
        mentioned_ids=tuple(dict.fromkeys(mentions)),
        speaker_label=_first_str(md.get("senderLabel"), md.get("speakerLabel"), sender.get("label"), sender.get("name")),
        text=message_text(message),
    )
