"""Conversions between generated protobuf messages and domain types."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2

from memory.v1 import event_pb2, message_pb2, metadata_service_pb2
from memoryd.domain.models import Event, Message, MetadataEntry


def struct_to_dict(value: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(value) if value.fields else {}


def dict_to_struct(value: dict[str, Any], target: struct_pb2.Struct) -> None:
    if value:
        target.update(value)


def message_from_proto(pb: message_pb2.Message) -> Message:
    return Message(
        role=pb.role,
        content=pb.content,
        kind=pb.kind if pb.HasField("kind") else None,
        timestamp=pb.timestamp,
        segments=[{"type": s.type, "data": struct_to_dict(s.data)} for s in pb.segments],
        metadata=struct_to_dict(pb.metadata),
        reasoning_content=pb.reasoning_content,
        tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in pb.tool_calls],
        tool_call_id=pb.tool_call_id,
    )


def message_to_proto(msg: Message, pb: message_pb2.Message | None = None) -> message_pb2.Message:
    pb = pb if pb is not None else message_pb2.Message()
    pb.id = msg.id
    pb.seq = msg.seq
    pb.role = msg.role
    pb.content = msg.content
    if msg.kind is not None:
        pb.kind = msg.kind
    pb.timestamp = msg.timestamp
    for segment in msg.segments:
        seg = pb.segments.add(type=segment.get("type", ""))
        dict_to_struct(segment.get("data") or {}, seg.data)
    dict_to_struct(msg.metadata, pb.metadata)
    pb.reasoning_content = msg.reasoning_content
    for call in msg.tool_calls:
        pb.tool_calls.add(id=call.get("id", ""), name=call.get("name", ""), arguments=call.get("arguments", ""))
    pb.tool_call_id = msg.tool_call_id
    pb.archived = msg.archived
    return pb


def messages_to_proto(messages: list[Message], field) -> None:
    for msg in messages:
        message_to_proto(msg, field.add())


def metadata_to_proto(entry: MetadataEntry, pb: metadata_service_pb2.MetadataEntry) -> None:
    pb.namespace = entry.namespace
    pb.key = entry.key
    dict_to_struct(entry.data, pb.data)
    pb.update_time = entry.update_time


def event_to_proto(event: Event, pb: event_pb2.Event | None = None) -> event_pb2.Event:
    pb = pb if pb is not None else event_pb2.Event()
    pb.seq = event.seq
    pb.time = event.time
    pb.tenant = event.tenant
    pb.session_id = event.session_id
    pb.type = int(event.type)
    # Payload dicts use proto field names, so the proto JSON parser builds the oneof.
    payload = getattr(pb, event.type.payload_field)
    payload.SetInParent()
    json_format.ParseDict(event.payload, payload, ignore_unknown_fields=True)
    return pb
