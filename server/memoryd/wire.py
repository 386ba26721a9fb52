"""The contract's binary encoding for what both the transport and a store handle as bytes.

A message's body fields (segments, metadata, reasoning_content, tool_calls, tool_call_id)
travel as a `memoryd.v1.Message` holding only those fields: the transport takes them out
of a write request as bytes (`message_from_pb`), the SQLite store writes those bytes and
reads them back, and responses copy them in (one C call) instead of walking dicts into
Structs; walking them was about 40% of GetHistory's CPU and a third of what SaveMessage
added over gRPC's own cost (docs/PERFORMANCE.md). The body is decoded only when domain
code reads a body field (image downgrade, the embedder). An idempotent append's first
result is kept in the same encoding (`encode_messages`).

Struct <-> dict is done by hand: these run for every message of every call and are about a
fifth cheaper than json_format.MessageToDict / Struct.update, which do the same walk through
more layers. Same results: numbers stay floats.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import struct_pb2

from memoryd.domain.models import EncodedBodyMessage, Message
from memoryd.v1 import memory_service_pb2, message_pb2

# The fields a store keeps outside the body (columns / document fields of their own).
HEAD_FIELDS = ("id", "seq", "role", "content", "kind", "timestamp", "archived")


def _value_to_py(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return struct_to_dict(value.struct_value)
    if kind == "list_value":
        return [_value_to_py(item) for item in value.list_value.values]
    if kind is None or kind == "null_value":
        return None
    return getattr(value, kind)


def struct_to_dict(value: struct_pb2.Struct) -> dict[str, Any]:
    return {key: _value_to_py(item) for key, item in value.fields.items()}


def _fill_value(target: struct_pb2.Value, value: Any) -> None:
    if value is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif value is True or value is False:
        target.bool_value = value
    elif isinstance(value, (int, float)):
        target.number_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, dict):
        target.struct_value.SetInParent()
        dict_to_struct(value, target.struct_value)
    else:
        items = target.list_value
        items.SetInParent()
        for item in value:
            _fill_value(items.values.add(), item)


def dict_to_struct(value: dict[str, Any], target: struct_pb2.Struct) -> None:
    fields = target.fields
    for key, item in value.items():
        _fill_value(fields[key], item)


def body_from_proto(pb: message_pb2.Message) -> dict[str, Any]:
    """The body fields of `pb` as the domain holds them."""
    return {
        "segments": [{"type": s.type, "data": struct_to_dict(s.data)} for s in pb.segments],
        "metadata": struct_to_dict(pb.metadata),
        "reasoning_content": pb.reasoning_content,
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in pb.tool_calls],
        "tool_call_id": pb.tool_call_id,
    }


def body_lookup(data: bytes, keys: Iterable[str], segment_type: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """From an encoded body, the metadata entries of `keys` and the segments of `segment_type`,
    as body_from_proto gives them, without converting the rest."""
    pb = message_pb2.Message.FromString(data)
    fields = pb.metadata.fields
    metadata = {key: _value_to_py(fields[key]) for key in keys if key in fields}
    segments = [{"type": s.type, "data": struct_to_dict(s.data)} for s in pb.segments if s.type == segment_type]
    return metadata, segments


def fill_body(msg: Message, pb: message_pb2.Message) -> None:
    """Set the body fields of `pb` from `msg`: its encoded body when it still has one."""
    encoded = msg.encoded_body
    if encoded is not None:
        pb.MergeFromString(encoded)
        return
    # Only non-default fields are set: each assignment is a call into the protobuf runtime.
    for segment in msg.segments:
        seg = pb.segments.add(type=segment.get("type", ""))
        data = segment.get("data")
        if data:
            dict_to_struct(data, seg.data)
    if msg.metadata:
        dict_to_struct(msg.metadata, pb.metadata)
    if msg.reasoning_content:
        pb.reasoning_content = msg.reasoning_content
    for call in msg.tool_calls:
        pb.tool_calls.add(id=call.get("id", ""), name=call.get("name", ""), arguments=call.get("arguments", ""))
    if msg.tool_call_id:
        pb.tool_call_id = msg.tool_call_id


def encode_body(msg: Message) -> bytes:
    encoded = msg.encoded_body
    if encoded is not None:
        return encoded
    pb = message_pb2.Message()
    fill_body(msg, pb)
    return pb.SerializeToString()


def decode_body(data: bytes) -> dict[str, Any]:
    return body_from_proto(message_pb2.Message.FromString(data))


def _platform(pb: message_pb2.Message) -> str | None:
    fields = pb.metadata.fields
    if "platform" not in fields:
        return None
    value = fields["platform"]
    return value.string_value if value.WhichOneof("kind") == "string_value" else None


def _body_bytes(pb: message_pb2.Message) -> bytes:
    body = message_pb2.Message()
    body.CopyFrom(pb)
    for name in HEAD_FIELDS:
        body.ClearField(name)
    return body.SerializeToString()


def _kind(pb: message_pb2.Message) -> str | None:
    return pb.kind if pb.HasField("kind") else None


def message_from_pb(pb: message_pb2.Message) -> Message:
    """A message to store, from a request: head fields read, the body kept encoded.

    Server-assigned fields of `pb` are ignored; `pb` itself is left as it was.
    """
    return EncodedBodyMessage.incoming(
        pb.role, pb.content, _kind(pb), pb.timestamp, _body_bytes(pb), decode_body, _platform(pb)
    )


def message_head_to_pb(msg: Message, pb: message_pb2.Message) -> message_pb2.Message:
    """Set the head fields of `pb` from `msg` (what a response carries of an omitted body)."""
    # Only non-default fields are set: each assignment is a call into the protobuf runtime.
    pb.id = msg.id
    pb.seq = msg.seq
    pb.role = msg.role
    if msg.kind is not None:
        pb.kind = msg.kind
    pb.timestamp = msg.timestamp
    if msg.archived:
        pb.archived = True
    return pb


def message_to_pb(msg: Message, pb: message_pb2.Message | None = None) -> message_pb2.Message:
    pb = message_head_to_pb(msg, pb if pb is not None else message_pb2.Message())
    if msg.content:
        pb.content = msg.content
    fill_body(msg, pb)
    return pb


def encode_messages(messages: list[Message]) -> bytes:
    """Whole stored messages as the contract's SaveMessagesResponse.messages."""
    result = memory_service_pb2.SaveMessagesResponse()
    for msg in messages:
        message_to_pb(msg, result.messages.add())
    return result.SerializeToString()


def decode_messages(data: bytes) -> list[Message]:
    """What encode_messages wrote, bodies still encoded."""
    messages: list[Message] = []
    for pb in memory_service_pb2.SaveMessagesResponse.FromString(data).messages:
        messages.append(
            EncodedBodyMessage.stored(
                pb.id, pb.seq, pb.role, pb.content, _kind(pb), pb.timestamp, pb.archived, _body_bytes(pb), decode_body
            )
        )
    return messages
