"""A stored message's record (vectors/records.py) as the synchronizer builds it: the same
whether its body is still encoded or decoded, and a message with an empty body is never
decoded (the shortcut that makes most of a bulk import's records cheap)."""

from __future__ import annotations

from google.protobuf import struct_pb2

from memoryd.domain.models import EncodedBodyMessage
from memoryd.v1 import message_pb2
from memoryd.vectors.records import record_of_message
from memoryd.wire import _body_bytes, decode_body


def _stored(pb: message_pb2.Message) -> EncodedBodyMessage:
    """`pb` as the SQLite store reads it back: head fields, the body still encoded."""
    kind = pb.kind if pb.HasField("kind") else None
    return EncodedBodyMessage.stored("m-1", 7, pb.role, pb.content, kind, 1234, False, _body_bytes(pb), decode_body)


def _decoded(pb: message_pb2.Message) -> EncodedBodyMessage:
    message = _stored(pb)
    _ = message.metadata  # decodes the body for good
    assert message.encoded_body is None
    return message


def test_a_plain_message_is_not_decoded():
    pb = message_pb2.Message(role="user", content="the train was late")
    message = _stored(pb)
    record = record_of_message("s", message, None)
    assert message.encoded_body == b""  # still encoded: nothing was decoded
    assert record == record_of_message("s", _decoded(pb), None)
    assert (record.message_id, record.role, record.text, record.timestamp, record.platform) == ("m-1", "user", "the train was late", 1234, "")


def test_metadata_and_segments_give_the_same_record_encoded_or_decoded():
    metadata = struct_pb2.Struct()
    metadata.update({
        "visibleContent": "what the user saw", "senderId": "u-1", "senderLabel": "Ann", "platform": "slack",
        "mentions": [{"id": "u-2"}, "u-3"],
    })  # fmt: skip
    mention = struct_pb2.Struct()
    mention.update({"user_id": "u-4"})
    pb = message_pb2.Message(
        role="assistant", content="<envelope>", metadata=metadata,
        segments=[message_pb2.Segment(type="mention", data=mention)],
    )  # fmt: skip
    record = record_of_message("s", _stored(pb), "model")
    assert record == record_of_message("s", _decoded(pb), "model")
    assert (record.text, record.sender_id, record.speaker_label, record.platform, record.model_id) == (
        "what the user saw", "u-1", "Ann", "slack", "model",
    )  # fmt: skip
    assert record.mentioned_ids == ("u-2", "u-3", "u-4")


def test_an_encoded_body_is_read_only_as_far_as_the_record_needs():
    """The synchronizer's records decode only the metadata entries they read (and mention
    segments); the message keeps its encoded body, and the record equals the decoded one's."""
    metadata = struct_pb2.Struct()
    metadata.update({
        "platform": "load", "sender": {"id": "user-7", "label": "Bo"}, "trace": {"spans": [1, 2, 3]},
        "mentionedIds": ["u-9"], "notes": "not read",
    })  # fmt: skip
    pb = message_pb2.Message(
        role="user", content="hello", metadata=metadata,
        segments=[message_pb2.Segment(type="image"), message_pb2.Segment(type="text")],
    )  # fmt: skip
    message = _stored(pb)
    record = record_of_message("s", message, None)
    assert message.encoded_body == _body_bytes(pb)  # not decoded
    assert record == record_of_message("s", _decoded(pb), None)
    assert (record.platform, record.sender_id, record.speaker_label, record.mentioned_ids) == ("load", "user-7", "Bo", ("u-9",))
