"""Conversions between generated protobuf messages and domain types."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

from google.protobuf import descriptor, message

from memoryd.domain.models import Event, Message, MetadataEntry, SessionInfo
from memoryd.domain.sessions import SessionAttributes
from memoryd.v1 import event_pb2, memory_service_pb2, message_pb2, metadata_service_pb2
from memoryd.wire import dict_to_struct, message_from_pb, message_head_to_pb, message_to_pb, struct_to_dict

__all__ = [
    "attributes_from_proto",
    "dict_to_struct",
    "event_to_proto",
    "fill_payload",
    "message_from_proto",
    "message_head_to_proto",
    "message_to_proto",
    "messages_to_proto",
    "metadata_to_proto",
    "payload_from_proto",
    "session_to_proto",
    "struct_to_dict",
]


message_from_proto = message_from_pb
message_to_proto = message_to_pb
message_head_to_proto = message_head_to_pb


def messages_to_proto(messages: list[Message], field, whole: int | None = None) -> None:
    """Append `messages` to a repeated Message field; past the first `whole`, heads only."""
    whole = len(messages) if whole is None else whole
    for msg in messages[:whole]:
        message_to_pb(msg, field.add())
    for msg in messages[whole:]:
        message_head_to_pb(msg, field.add())


def metadata_to_proto(entry: MetadataEntry, pb: metadata_service_pb2.MetadataEntry) -> None:
    pb.namespace = entry.namespace
    pb.key = entry.key
    dict_to_struct(entry.data, pb.data)
    pb.update_time = entry.update_time


def attributes_from_proto(pb: message_pb2.SessionAttributes) -> SessionAttributes:
    return SessionAttributes(pb.user_id, pb.agent_id, dict(sorted(pb.labels.items())))


def session_to_proto(
    info: SessionInfo, pb: memory_service_pb2.SessionInfo | None = None
) -> memory_service_pb2.SessionInfo:
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
    pb.type = cast(event_pb2.EventType, int(event.type))  # the domain enum has the contract numbers
    payload = getattr(pb, event.type.payload_field)
    payload.SetInParent()
    fill_payload(payload, event.payload)
    return pb


@functools.cache
def _field_kinds(message_type: descriptor.Descriptor) -> dict[str, str]:
    kinds = {}
    for field in message_type.fields:
        repeated = field.is_repeated
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            kinds[field.name] = "map"
        elif field.message_type is not None:
            kinds[field.name] = "messages" if repeated else "message"
        else:
            kinds[field.name] = "list" if repeated else "scalar"
    return kinds


def fill_payload(pb: message.Message, payload: Mapping[str, Any]) -> None:
    """Set `pb` from an event payload (proto field names; memoryd.domain.events builds them).

    By hand rather than json_format.ParseDict, which cost ~12 µs an event (most of a Watch
    replay) and, told to ignore unknown fields, dropped a misspelt key without a word: a key
    `pb` has no field for raises ValueError here, so it fails the tests that build it.
    """
    kinds = _field_kinds(pb.DESCRIPTOR)
    for key, value in payload.items():
        kind = kinds.get(key)
        if kind is None:
            raise ValueError(f"{pb.DESCRIPTOR.full_name} has no field {key!r}")
        if kind == "scalar":
            setattr(pb, key, value)
        elif kind == "list":
            getattr(pb, key).extend(value)
        elif kind == "map":
            getattr(pb, key).update(value)
        elif kind == "message":
            fill_payload(getattr(pb, key), value)
        else:
            target = getattr(pb, key)
            for item in value:
                fill_payload(target.add(), item)


def payload_from_proto(pb: message.Message) -> dict[str, Any]:
    """The payload dict of an event message (what fill_payload reads): its set fields."""
    payload: dict[str, Any] = {}
    for field, value in pb.ListFields():
        kind = _field_kinds(pb.DESCRIPTOR)[field.name]
        if kind == "message":
            value = payload_from_proto(value)
        elif kind == "messages":
            value = [payload_from_proto(item) for item in value]
        elif kind in ("list", "map"):
            value = list(value) if kind == "list" else dict(value)
        payload[field.name] = value
    return payload
