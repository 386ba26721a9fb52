"""Builders for the contract's messages from plain Python values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import json_format, struct_pb2

from memoryd.v1 import message_pb2


def to_struct(data: Mapping[str, Any] | None) -> struct_pb2.Struct | None:
    """A JSON-like dict as a google.protobuf.Struct (None stays None)."""
    if data is None:
        return None
    struct = struct_pb2.Struct()
    struct.update(dict(data))
    return struct


def to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A google.protobuf.Struct as a plain dict."""
    return json_format.MessageToDict(struct)


def tool_call(id: str, name: str, arguments: str = "{}") -> message_pb2.ToolCall:
    """A tool call of an assistant message; `arguments` is JSON text."""
    return message_pb2.ToolCall(id=id, name=name, arguments=arguments)


def segment(type: str, data: Mapping[str, Any] | None = None) -> message_pb2.Segment:
    """A structured part of a message ("text", "image", "mention", ...)."""
    return message_pb2.Segment(type=type, data=to_struct(data))


def message(
    role: str,
    content: str = "",
    *,
    kind: str | None = None,
    timestamp: int = 0,
    metadata: Mapping[str, Any] | None = None,
    segments: Iterable[message_pb2.Segment] = (),
    reasoning_content: str = "",
    tool_calls: Iterable[message_pb2.ToolCall] = (),
    tool_call_id: str = "",
) -> message_pb2.Message:
    """A message to save.

    `kind=None` leaves the kind absent (absent differs from ""), `timestamp=0`
    lets the server use its clock. Server-assigned fields (id, seq, archived)
    are not settable here.
    """
    return message_pb2.Message(
        role=role,
        content=content,
        kind=kind,
        timestamp=timestamp,
        metadata=to_struct(metadata),
        segments=list(segments),
        reasoning_content=reasoning_content,
        tool_calls=list(tool_calls),
        tool_call_id=tool_call_id,
    )


def session_attributes(
    user_id: str = "", agent_id: str = "", labels: Mapping[str, str] | None = None
) -> message_pb2.SessionAttributes:
    """A session's owner and labels, to save with messages or by update_session.

    Writes merge: empty fields leave the stored ones, labels set their keys. The owner
    (user_id, agent_id) is set once; a different one fails with FailedPreconditionError.
    """
    return message_pb2.SessionAttributes(user_id=user_id, agent_id=agent_id, labels=dict(labels or {}))
