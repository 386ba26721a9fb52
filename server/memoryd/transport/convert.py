"""Conversions between generated protobuf messages and domain types."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2

from memory.v1 import event_pb2, message_pb2, metadata_service_pb2
from memoryd.domain.models import Event, Message, MetadataEntry


# Struct <-> dict by hand: these run for every message of every call, and are about a
# fifth cheaper than json_format.MessageToDict / Struct.update, which do the same walk
# through more layers (docs/PERFORMANCE.md). Same results: numbers stay floats.


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
    # Only non-default fields are set: each assignment is a call into the protobuf runtime.
    pb.id = msg.id
    pb.seq = msg.seq
    pb.role = msg.role
    if msg.content:
        pb.content = msg.content
    if msg.kind is not None:
        pb.kind = msg.kind
    pb.timestamp = msg.timestamp
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
    if msg.archived:
        pb.archived = True
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
