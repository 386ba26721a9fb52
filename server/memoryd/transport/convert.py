"""Conversions between generated protobuf messages and domain types."""

from __future__ import annotations

from google.protobuf import json_format

from memoryd.v1 import event_pb2, memory_service_pb2, message_pb2, metadata_service_pb2
from memoryd.domain.models import Event, Message, MetadataEntry, SessionInfo
from memoryd.domain.sessions import SessionAttributes
from memoryd.wire import body_from_proto, dict_to_struct, fill_body, struct_to_dict

__all__ = [
    "attributes_from_proto", "dict_to_struct", "event_to_proto", "message_from_proto", "message_to_proto",
    "messages_to_proto", "metadata_to_proto", "session_to_proto", "struct_to_dict",
]


def message_from_proto(pb: message_pb2.Message) -> Message:
    return Message(
        role=pb.role,
        content=pb.content,
        kind=pb.kind if pb.HasField("kind") else None,
        timestamp=pb.timestamp,
        **body_from_proto(pb),
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
    fill_body(msg, pb)
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


def attributes_from_proto(pb: message_pb2.SessionAttributes) -> SessionAttributes:
    return SessionAttributes(pb.user_id, pb.agent_id, dict(sorted(pb.labels.items())))


def session_to_proto(info: SessionInfo, pb: memory_service_pb2.SessionInfo | None = None) -> memory_service_pb2.SessionInfo:
    pb = pb if pb is not None else memory_service_pb2.SessionInfo()
    pb.session_id = info.session_id
    pb.message_count = info.message_count
    pb.unarchived_count = info.unarchived_count
    pb.last_activity = info.last_activity
    pb.attributes.user_id = info.attributes.user_id
    pb.attributes.agent_id = info.attributes.agent_id
    pb.attributes.labels.update(info.attributes.labels)
    return pb


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
