"""Event payloads become the Event oneof by hand (transport.convert.fill_payload): every
payload memoryd.domain.events builds converts, and a key the proto lacks is an error."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from memoryd.v1 import event_pb2
from memoryd.domain import events as ev
from memoryd.domain.models import Event, EventDraft, EventType, Message
from memoryd.domain.sessions import SessionAttributes
from memoryd.transport.convert import event_to_proto, payload_from_proto


def ref(seq: int) -> Message:
    return Message(role="user", id=f"id{seq}", seq=seq, timestamp=100 + seq)


def every_builder() -> list[EventDraft]:
    removed = [ref(1), ref(2)]
    return [
        *ev.appended("s", removed),
        *ev.deleted("s", removed),
        *ev.rewritten("s", removed),
        *ev.trimmed("s", 3, 10),
        *ev.replaced("s", removed, [ref(3)]),
        *ev.session_cleared("s", removed, ["messages", "metadata"]),
        *ev.all_cleared({"s": removed}, ["messages"]),
        *ev.metadata_changed("ns", "k", deleted=True),
        *ev.summary_saved("s", "sum-1", 1, 9),
        *ev.entry_changed("scope", "e1", deleted=False),
        *ev.session_updated("s", SessionAttributes(), SessionAttributes("u", "a", {"team": "x"})),
        ev.memory_changed(EventType.MEMORY_FORMED, "fact", "f1", "u"),
        ev.memory_changed(EventType.MEMORY_SUPERSEDED, "fact", "f0", "u", superseded_by="f1"),
        ev.memory_changed(EventType.MEMORY_REMOVED, "summary", "sum-1", "u", "s", reason="sources_gone"),
    ]


def test_every_event_memoryd_writes_converts_with_every_field():
    drafts = every_builder()
    written = {EventType(t) for t in EventType} - {EventType.COMPRESS_REQUESTED, EventType.COMPRESS_PROGRESS}
    assert {d.type for d in drafts} == written
    for seq, draft in enumerate(drafts, start=1):
        pb = event_to_proto(Event(seq, 5, "t", draft.session_id, draft.type, draft.payload))
        assert pb.WhichOneof("payload") == draft.type.payload_field
        # The same as protobuf's own (strict) JSON parser makes of the payload.
        expected = type(getattr(pb, draft.type.payload_field))()
        json_format.ParseDict(draft.payload, expected)
        assert getattr(pb, draft.type.payload_field) == expected


def test_a_misspelt_payload_key_fails_instead_of_vanishing():
    with pytest.raises(ValueError, match="no field 'removed_cuont'"):
        event_to_proto(Event(1, 5, "t", "s", EventType.SESSION_CLEARED, {"removed_cuont": 3}))
    with pytest.raises(ValueError, match="MessageRef has no field 'sequence'"):
        event_to_proto(Event(1, 5, "t", "s", EventType.MESSAGES_APPENDED, {"messages": [{"sequence": 1}]}))


def test_published_payloads_round_trip():
    progress = event_pb2.CompressProgress(phase="summarizing", progress=0.5, done=False, error="")
    payload = payload_from_proto(progress)
    assert payload == {"phase": "summarizing", "progress": 0.5}
    pb = event_to_proto(Event(1, 5, "t", "s", EventType.COMPRESS_PROGRESS, payload))
    assert pb.compress_progress == progress
