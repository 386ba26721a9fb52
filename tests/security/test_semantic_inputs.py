"""The bad-input corpus, part 2: rules a descriptor cannot tell (cross-field rules such as
inverted ranges, required choices, bounds of one field), hand-listed; part 1, every field
of every request mutated, is generated from the descriptors in test_bad_inputs.py.

Each case asserts the status code, the field named in the google.rpc.BadRequest details,
and that the tenant's stored state (sessions, full histories, metadata, event log bounds)
is byte-for-byte unchanged. Inputs target the seeded session, so a missing check would
visibly change data (a negative keep_recent would archive it, an unknown ClearAll target
would clear it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.security.conftest import CORPUS_LIMITS as L
from tests.security.harness import error_details, snapshot

SEEDED = "seeded"
NS = "corpus-ns"
SCOPE = "corpus-scope"
MODEL = "test:model-3d"
LONG_ID = "x" * (L.max_id_length + 1)
INVALID = grpc.StatusCode.INVALID_ARGUMENT


def msg(role: str = "user", content: str = "hello", **kw) -> message_pb2.Message:
    return message_pb2.Message(role=role, content=content, **kw)


def struct(**fields) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


def nan_struct() -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.fields["score"].number_value = math.nan
    return s


def nested_inf_struct() -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.fields["a"].list_value.values.add().struct_value.fields["b"].number_value = math.inf
    return s


def save(message=None, session=SEEDED, **kw) -> mem.SaveMessageRequest:
    request = mem.SaveMessageRequest(session_id=session, **kw)
    if message is not None:
        request.message.CopyFrom(message)
    return request


def point(**kw) -> vec.VectorPoint:
    fields = dict(model_id=MODEL, vector=[0.1, 0.2, 0.3], session_id=SEEDED, timestamp=1000, role="user", text="hello")
    fields.update(kw)
    return vec.VectorPoint(**fields)


def upsert(*points) -> vec.UpsertVectorsRequest:
    return vec.UpsertVectorsRequest(points=list(points))


def search(**kw) -> vec.SearchMemoryRequest:
    fields = dict(query_vector=[0.1, 0.2, 0.3], model_id=MODEL)
    fields.update(kw)
    return vec.SearchMemoryRequest(**fields)


@dataclass(frozen=True)
class Case:
    name: str
    service: str
    method: str
    request: object
    field: str | None
    code: grpc.StatusCode = INVALID


CASES = [
    # -- SaveMessage ---------------------------------------------------------------
    Case("save-empty-session", "memory", "SaveMessage", save(msg(), session=""), "session_id"),
    Case("save-long-session", "memory", "SaveMessage", save(msg(), session=LONG_ID), "session_id"),
    Case("save-nul-session", "memory", "SaveMessage", save(msg(), session="a\x00b"), "session_id"),
    Case("save-newline-session", "memory", "SaveMessage", save(msg(), session="a\nb"), "session_id"),
    Case("save-no-message", "memory", "SaveMessage", save(None), "message"),
    Case("save-empty-role", "memory", "SaveMessage", save(msg(role="")), "message.role"),
    Case("save-long-role", "memory", "SaveMessage", save(msg(role=LONG_ID)), "message.role"),
    Case("save-negative-ts", "memory", "SaveMessage", save(msg(timestamp=-1)), "message.timestamp"),
    Case("save-big-content", "memory", "SaveMessage", save(msg(content="é" * L.max_content_bytes)), "message.content"),
    Case(
        "save-big-reasoning",
        "memory",
        "SaveMessage",
        save(msg(reasoning_content="r" * (L.max_content_bytes + 1))),
        "message.reasoning_content",
    ),
    Case("save-control-kind", "memory", "SaveMessage", save(msg(kind="a\x01")), "message.kind"),
    Case("save-long-kind", "memory", "SaveMessage", save(msg(kind=LONG_ID)), "message.kind"),
    Case(
        "save-segment-no-type",
        "memory",
        "SaveMessage",
        save(msg(segments=[message_pb2.Segment(type="", data=struct(text="hi"))])),
        "message.segments[0].type",
    ),
    Case(
        "save-tool-call-no-name",
        "memory",
        "SaveMessage",
        save(msg(tool_calls=[message_pb2.ToolCall(id="c1", name="", arguments="{}")])),
        "message.tool_calls[0].name",
    ),
    Case(
        "save-tool-call-long-id",
        "memory",
        "SaveMessage",
        save(msg(tool_calls=[message_pb2.ToolCall(id=LONG_ID, name="f")])),
        "message.tool_calls[0].id",
    ),
    Case("save-long-tool-call-id", "memory", "SaveMessage", save(msg(tool_call_id=LONG_ID)), "message.tool_call_id"),
    Case("save-nan-metadata", "memory", "SaveMessage", save(msg(metadata=nan_struct())), "message.metadata"),
    Case("save-inf-nested-metadata", "memory", "SaveMessage", save(msg(metadata=nested_inf_struct())), "message.metadata"),
    Case(
        "save-nan-segment-data",
        "memory",
        "SaveMessage",
        save(msg(segments=[message_pb2.Segment(type="image", data=nan_struct())])),
        "message.segments[0].data",
    ),
    Case(
        "save-message-too-big",
        "memory",
        "SaveMessage",
        save(msg(metadata=struct(blob="m" * L.max_message_bytes))),
        "message",
    ),
    Case("save-long-idempotency-key", "memory", "SaveMessage", save(msg(), idempotency_key=LONG_ID), "idempotency_key"),
    Case("save-control-idempotency-key", "memory", "SaveMessage", save(msg(), idempotency_key="k\x7f"), "idempotency_key"),
    # -- SaveMessages ----------------------------------------------------------------
    Case("batch-empty", "memory", "SaveMessages", mem.SaveMessagesRequest(session_id=SEEDED), "messages"),
    Case(
        "batch-too-many",
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(session_id=SEEDED, messages=[msg()] * (L.max_batch_messages + 1)),
        "messages",
    ),
    Case(
        "batch-one-bad-role",
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(session_id=SEEDED, messages=[msg(), msg(role="")]),
        "messages[1].role",
    ),
    Case(
        "batch-one-negative-ts",
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(session_id=SEEDED, messages=[msg(timestamp=-5), msg()]),
        "messages[0].timestamp",
    ),
    Case("batch-empty-session", "memory", "SaveMessages", mem.SaveMessagesRequest(messages=[msg()]), "session_id"),
    Case(
        "batch-long-idempotency-key",
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(session_id=SEEDED, messages=[msg()], idempotency_key=LONG_ID),
        "idempotency_key",
    ),
    # -- reads -------------------------------------------------------------------------
    Case("history-negative-limit", "memory", "GetHistory", mem.GetHistoryRequest(session_id=SEEDED, limit=-1), "limit"),
    Case("history-empty-session", "memory", "GetHistory", mem.GetHistoryRequest(), "session_id"),
    Case(
        "full-negative-page",
        "memory",
        "GetFullHistory",
        mem.GetFullHistoryRequest(session_id=SEEDED, page_size=-1),
        "page_size",
    ),
    Case(
        "full-garbage-token",
        "memory",
        "GetFullHistory",
        mem.GetFullHistoryRequest(session_id=SEEDED, page_token="%%%not-a-token"),
        "page_token",
    ),
    Case(
        "range-negative-from",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, from_ts=-1, to_ts=10),
        "from_ts",
    ),
    Case(
        "range-inverted",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, from_ts=10, to_ts=9),
        "to_ts",
    ),
    Case(
        "range-too-many-roles",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, roles=["user"] * (L.max_filter_items + 1)),
        "roles",
    ),
    Case(
        "range-empty-role",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, roles=[""]),
        "roles[0]",
    ),
    Case(
        "range-too-many-exclude-kinds",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, exclude_kinds=["k"] * (L.max_filter_items + 1)),
        "exclude_kinds",
    ),
    Case(
        "range-long-exclude-kind",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, exclude_kinds=[LONG_ID]),
        "exclude_kinds[0]",
    ),
    Case(
        "range-negative-page",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, page_size=-3),
        "page_size",
    ),
    Case(
        "range-garbage-token",
        "memory",
        "ListMessagesInRange",
        mem.ListMessagesInRangeRequest(session_id=SEEDED, to_ts=10, page_token="eyJxIjoxfQ"),
        "page_token",
    ),
    Case("recent-zero-limit", "memory", "GetRecentAcrossSessions", mem.GetRecentAcrossSessionsRequest(), "limit"),
    Case(
        "recent-negative-limit",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=-10),
        "limit",
    ),
    Case(
        "recent-negative-since",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, since_ts=-1),
        "since_ts",
    ),
    Case(
        "recent-long-platform",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, platform=LONG_ID),
        "platform",
    ),
    Case(
        "recent-too-many-excluded",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, exclude_session_ids=["s"] * (L.max_filter_items + 1)),
        "exclude_session_ids",
    ),
    Case(
        "recent-empty-excluded",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, exclude_session_ids=["ok", ""]),
        "exclude_session_ids[1]",
    ),
    Case(
        "recent-control-role",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, roles=["us\ter"]),
        "roles[0]",
    ),
    Case(
        "recent-too-many-kinds",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, kinds=["k"] * (L.max_filter_items + 1)),
        "kinds",
    ),
    Case(
        "recent-long-kind",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, kinds=[LONG_ID]),
        "kinds[0]",
    ),
    Case(
        "recent-too-many-exclude-kinds",
        "memory",
        "GetRecentAcrossSessions",
        mem.GetRecentAcrossSessionsRequest(limit=5, exclude_kinds=["k"] * (L.max_filter_items + 1)),
        "exclude_kinds",
    ),
    Case("sessions-negative-page", "memory", "ListSessions", mem.ListSessionsRequest(page_size=-1), "page_size"),
    Case("sessions-garbage-token", "memory", "ListSessions", mem.ListSessionsRequest(page_token="!!"), "page_token"),
    Case(
        "sessions-too-many-labels",
        "memory",
        "ListSessions",
        mem.ListSessionsRequest(labels={f"k{i}": "v" for i in range(L.max_filter_items + 1)}),
        "labels",
    ),
    Case("sessions-long-label-value", "memory", "ListSessions", mem.ListSessionsRequest(labels={"k": LONG_ID}), "labels"),
    Case(
        "sessions-negative-since", "memory", "ListSessions", mem.ListSessionsRequest(active_since=-1), "active_since"
    ),
    Case("sessions-zero-before", "memory", "ListSessions", mem.ListSessionsRequest(active_before=0), "active_before"),
    Case(
        "sessions-empty-time-range",
        "memory",
        "ListSessions",
        mem.ListSessionsRequest(active_since=2000, active_before=2000),
        "active_before",
    ),
    Case("get-session-empty", "memory", "GetSession", mem.GetSessionRequest(), "session_id"),
    # -- session attributes --------------------------------------------------------------
    Case(
        "save-control-owner",
        "memory",
        "SaveMessage",
        save(msg(), session_attributes=message_pb2.SessionAttributes(user_id="a\nb")),
        "session_attributes.user_id",
    ),
    Case(
        "saves-empty-label-key",
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(
            session_id=SEEDED, messages=[msg()], session_attributes=message_pb2.SessionAttributes(labels={"": "v"})
        ),
        "session_attributes.labels",
    ),
    Case(
        "save-too-many-labels",
        "memory",
        "SaveMessage",
        save(msg(), session_attributes=message_pb2.SessionAttributes(labels={f"k{i}": "" for i in range(L.max_filter_items + 1)})),
        "session_attributes.labels",
    ),
    Case(
        "update-session-empty",
        "memory",
        "UpdateSession",
        mem.UpdateSessionRequest(attributes=message_pb2.SessionAttributes(user_id="u")),
        "session_id",
    ),
    Case(
        "update-session-set-and-remove",
        "memory",
        "UpdateSession",
        mem.UpdateSessionRequest(
            session_id=SEEDED, attributes=message_pb2.SessionAttributes(labels={"k": "v"}), remove_labels=["k"]
        ),
        "remove_labels[0]",
    ),
    Case(
        "update-session-too-many-removals",
        "memory",
        "UpdateSession",
        mem.UpdateSessionRequest(session_id=SEEDED, remove_labels=["k"] * (L.max_filter_items + 1)),
        "remove_labels",
    ),
    Case(
        "update-session-bad-retention",
        "memory",
        "UpdateSession",
        mem.UpdateSessionRequest(
            session_id=SEEDED, attributes=message_pb2.SessionAttributes(labels={"memoryd.retention-days": "0"})
        ),
        "attributes.labels",
    ),
    Case("forget-user-empty", "memory", "ForgetUser", mem.ForgetUserRequest(), "user_id"),
    Case("forget-user-long", "memory", "ForgetUser", mem.ForgetUserRequest(user_id=LONG_ID), "user_id"),
    Case("forget-user-bidi", "memory", "ForgetUser", mem.ForgetUserRequest(user_id="ann\u202e"), "user_id"),
    # -- mutations -----------------------------------------------------------------------
    Case("pop-negative", "memory", "PopMessages", mem.PopMessagesRequest(session_id=SEEDED, n=-1), "n"),
    Case("pop-over-page", "memory", "PopMessages", mem.PopMessagesRequest(session_id=SEEDED, n=L.max_page_size + 1), "n"),
    Case("pop-empty-session", "memory", "PopMessages", mem.PopMessagesRequest(n=1), "session_id"),
    Case("trim-negative", "memory", "TrimHistory", mem.TrimHistoryRequest(session_id=SEEDED, keep_recent=-1), "keep_recent"),
    Case("trim-empty-session", "memory", "TrimHistory", mem.TrimHistoryRequest(keep_recent=0), "session_id"),
    Case(
        "replace-too-many",
        "memory",
        "ReplaceHistory",
        mem.ReplaceHistoryRequest(session_id=SEEDED, messages=[msg()] * (L.max_batch_messages + 1)),
        "messages",
    ),
    Case(
        "replace-bad-role",
        "memory",
        "ReplaceHistory",
        mem.ReplaceHistoryRequest(session_id=SEEDED, messages=[msg(role="a\x02")]),
        "messages[0].role",
    ),
    Case(
        "replace-big-content",
        "memory",
        "ReplaceHistory",
        mem.ReplaceHistoryRequest(session_id=SEEDED, messages=[msg(), msg(content="c" * (L.max_content_bytes + 1))]),
        "messages[1].content",
    ),
    Case("replace-empty-session", "memory", "ReplaceHistory", mem.ReplaceHistoryRequest(messages=[]), "session_id"),
    Case(
        "update-empty-old",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(session_id=SEEDED, old_text="", new_text="x"),
        "old_text",
    ),
    Case(
        "update-long-old",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(session_id=SEEDED, old_text="o" * (L.max_text_bytes + 1), new_text="x"),
        "old_text",
    ),
    Case(
        "update-long-new",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(session_id=SEEDED, old_text="hello", new_text="n" * (L.max_text_bytes + 1)),
        "new_text",
    ),
    Case(
        "update-negative-limit",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(session_id=SEEDED, old_text="hello", new_text="x", recent_limit=-1),
        "recent_limit",
    ),
    Case(
        "update-limit-over-max",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(
            session_id=SEEDED, old_text="hello", new_text="x", recent_limit=L.max_page_size + 1
        ),
        "recent_limit",
    ),
    Case(
        "update-empty-session",
        "memory",
        "UpdateMessageContent",
        mem.UpdateMessageContentRequest(old_text="hello", new_text="x"),
        "session_id",
    ),
    Case(
        "delete-ts-empty",
        "memory",
        "DeleteMessagesByTimestamps",
        mem.DeleteMessagesByTimestampsRequest(session_id=SEEDED),
        "timestamps",
    ),
    Case(
        "delete-ts-too-many",
        "memory",
        "DeleteMessagesByTimestamps",
        mem.DeleteMessagesByTimestampsRequest(session_id=SEEDED, timestamps=list(range(1, L.max_delete_items + 2))),
        "timestamps",
    ),
    Case(
        "delete-ts-negative",
        "memory",
        "DeleteMessagesByTimestamps",
        mem.DeleteMessagesByTimestampsRequest(session_id=SEEDED, timestamps=[1001, -1]),
        "timestamps[1]",
    ),
    Case(
        "delete-ts-empty-session",
        "memory",
        "DeleteMessagesByTimestamps",
        mem.DeleteMessagesByTimestampsRequest(timestamps=[1001]),
        "session_id",
    ),
    Case("delete-ids-empty", "memory", "DeleteMessages", mem.DeleteMessagesRequest(session_id=SEEDED), "ids"),
    Case(
        "delete-ids-too-many",
        "memory",
        "DeleteMessages",
        mem.DeleteMessagesRequest(session_id=SEEDED, ids=["i"] * (L.max_delete_items + 1)),
        "ids",
    ),
    Case(
        "delete-ids-empty-id",
        "memory",
        "DeleteMessages",
        mem.DeleteMessagesRequest(session_id=SEEDED, ids=["ok", ""]),
        "ids[1]",
    ),
    Case("delete-ids-long-id", "memory", "DeleteMessages", mem.DeleteMessagesRequest(session_id=SEEDED, ids=[LONG_ID]), "ids[0]"),
    Case(
        "clear-session-unknown-target",
        "memory",
        "ClearSession",
        mem.ClearSessionRequest(session_id=SEEDED, targets=[mem.CLEAR_TARGET_MESSAGES, 99]),
        "targets[1]",
    ),
    Case("clear-session-empty-session", "memory", "ClearSession", mem.ClearSessionRequest(), "session_id"),
    Case("clear-all-unknown-target", "memory", "ClearAll", mem.ClearAllRequest(targets=[42]), "targets[0]"),
    Case(
        "clear-all-negative-target",
        "memory",
        "ClearAll",
        mem.ClearAllRequest(targets=[mem.CLEAR_TARGET_METADATA, -1]),
        "targets[1]",
    ),
    # -- metadata ------------------------------------------------------------------------
    Case("meta-save-empty-ns", "metadata", "SaveMetadata", meta.SaveMetadataRequest(key="k"), "namespace"),
    Case("meta-save-empty-key", "metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=NS), "key"),
    Case("meta-save-long-key", "metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=NS, key=LONG_ID), "key"),
    Case("meta-save-control-ns", "metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace="n\x1b", key="k"), "namespace"),
    Case(
        "meta-save-too-big",
        "metadata",
        "SaveMetadata",
        meta.SaveMetadataRequest(namespace=NS, key="k", data=struct(blob="d" * L.max_metadata_bytes)),
        "data",
    ),
    Case(
        "meta-save-nan",
        "metadata",
        "SaveMetadata",
        meta.SaveMetadataRequest(namespace=NS, key="k", data=nan_struct()),
        "data",
    ),
    Case(
        "meta-save-nested-inf",
        "metadata",
        "SaveMetadata",
        meta.SaveMetadataRequest(namespace=NS, key="k", data=nested_inf_struct()),
        "data",
    ),
    Case("meta-get-empty-ns", "metadata", "GetMetadata", meta.GetMetadataRequest(key="k"), "namespace"),
    Case("meta-get-long-key", "metadata", "GetMetadata", meta.GetMetadataRequest(namespace=NS, key=LONG_ID), "key"),
    Case("meta-list-empty-ns", "metadata", "ListMetadata", meta.ListMetadataRequest(), "namespace"),
    Case(
        "meta-list-negative-page",
        "metadata",
        "ListMetadata",
        meta.ListMetadataRequest(namespace=NS, page_size=-1),
        "page_size",
    ),
    Case(
        "meta-list-prefix-and-namespace",
        "metadata",
        "ListMetadata",
        meta.ListMetadataRequest(namespace=NS, namespace_prefix="corpus"),
        "namespace",
    ),
    Case(
        "meta-list-long-prefix",
        "metadata",
        "ListMetadata",
        meta.ListMetadataRequest(namespace_prefix=LONG_ID),
        "namespace_prefix",
    ),
    Case("namespaces-control-prefix", "metadata", "ListNamespaces", meta.ListNamespacesRequest(prefix="a\x00"), "prefix"),
    Case("namespaces-negative-page", "metadata", "ListNamespaces", meta.ListNamespacesRequest(page_size=-1), "page_size"),
    Case("namespaces-garbage-token", "metadata", "ListNamespaces", meta.ListNamespacesRequest(page_token="!!"), "page_token"),
    Case("meta-delete-empty-key", "metadata", "DeleteMetadata", meta.DeleteMetadataRequest(namespace=NS), "key"),
    Case(
        "meta-delete-long-ns",
        "metadata",
        "DeleteMetadata",
        meta.DeleteMetadataRequest(namespace=LONG_ID, key="k"),
        "namespace",
    ),
    # -- events ----------------------------------------------------------------------------
    Case(
        "publish-empty-session",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(compress_requested=event_pb2.CompressRequested()),
        "session_id",
    ),
    Case("publish-no-payload", "events", "PublishEvent", ev.PublishEventRequest(session_id=SEEDED), "payload"),
    Case(
        "publish-progress-over-1",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(session_id=SEEDED, compress_progress=event_pb2.CompressProgress(progress=1.5)),
        "compress_progress.progress",
    ),
    Case(
        "publish-progress-nan",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(session_id=SEEDED, compress_progress=event_pb2.CompressProgress(progress=math.nan)),
        "compress_progress.progress",
    ),
    Case(
        "publish-long-requested-by",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(session_id=SEEDED, compress_requested=event_pb2.CompressRequested(requested_by=LONG_ID)),
        "compress_requested.requested_by",
    ),
    Case(
        "publish-long-reason",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(
            session_id=SEEDED, compress_requested=event_pb2.CompressRequested(reason="r" * (L.max_text_bytes + 1))
        ),
        "compress_requested.reason",
    ),
    Case(
        "publish-long-phase",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(session_id=SEEDED, compress_progress=event_pb2.CompressProgress(phase=LONG_ID)),
        "compress_progress.phase",
    ),
    Case(
        "publish-long-error",
        "events",
        "PublishEvent",
        ev.PublishEventRequest(
            session_id=SEEDED, compress_progress=event_pb2.CompressProgress(error="e" * (L.max_text_bytes + 1))
        ),
        "compress_progress.error",
    ),
    Case(
        "watch-too-many-sessions",
        "events",
        "Watch",
        ev.WatchRequest(session_ids=["s"] * (L.max_filter_items + 1)),
        "session_ids",
    ),
    Case("watch-empty-session", "events", "Watch", ev.WatchRequest(session_ids=[""]), "session_ids[0]"),
    Case("watch-unknown-type", "events", "Watch", ev.WatchRequest(types=[1, 999]), "types[1]"),
    Case("watch-negative-after", "events", "Watch", ev.WatchRequest(after_seq=-1), "after_seq"),
    Case(
        "watch-too-many-types",
        "events",
        "Watch",
        ev.WatchRequest(types=[1] * (L.max_filter_items + 1)),
        "types",
    ),
    # -- vectors -----------------------------------------------------------------------------
    Case("upsert-no-points", "vectors", "UpsertVectors", upsert(), "points"),
    Case("upsert-empty-vector", "vectors", "UpsertVectors", upsert(point(vector=[])), "points[0].vector"),
    Case("upsert-nan-vector", "vectors", "UpsertVectors", upsert(point(), point(vector=[0.1, math.nan, 0.3])), "points[1].vector"),
    Case("upsert-inf-vector", "vectors", "UpsertVectors", upsert(point(vector=[math.inf, 0.0, 0.0])), "points[0].vector"),
    Case("upsert-no-model", "vectors", "UpsertVectors", upsert(point(model_id="")), "points[0].model_id"),
    Case("upsert-legacy-with-model", "vectors", "UpsertVectors", upsert(point(legacy=True)), "points[0].model_id"),
    Case("upsert-no-session", "vectors", "UpsertVectors", upsert(point(session_id="")), "points[0].session_id"),
    Case("upsert-zero-timestamp", "vectors", "UpsertVectors", upsert(point(timestamp=0)), "points[0].timestamp"),
    Case("upsert-long-sender", "vectors", "UpsertVectors", upsert(point(sender_id=LONG_ID)), "points[0].sender_id"),
    Case(
        "upsert-too-many-mentions",
        "vectors",
        "UpsertVectors",
        upsert(point(mentioned_ids=["u"] * (L.max_filter_items + 1))),
        "points[0].mentioned_ids",
    ),
    Case(
        "upsert-big-text",
        "vectors",
        "UpsertVectors",
        upsert(point(text="t" * (L.max_content_bytes + 1))),
        "points[0].text",
    ),
    Case(
        "upsert-dimension-over-limit",
        "vectors",
        "UpsertVectors",
        upsert(point(vector=[0.5] * (L.max_vector_dimension + 1))),
        "points[0].vector",
    ),
    Case("search-dimension-over-limit", "vectors", "SearchMemory", search(query_vector=[0.5] * 9), "query_vector"),
    Case(
        "entry-embedding-over-limit",
        "entries",
        "SaveEntry",
        ent.SaveEntryRequest(scope=SCOPE, text="likes tea", embedding=[0.5] * (L.max_vector_dimension + 1), model_id=MODEL),
        "embedding",
    ),
    Case("search-no-query", "vectors", "SearchMemory", search(query_vector=[]), "query_vector"),
    Case("search-bad-keyword-weight", "vectors", "SearchMemory", search(query_text="hi", keyword_weight=2), "keyword_weight"),
    Case("search-bad-neighbor-weight", "vectors", "SearchMemory", search(query_text="hi", neighbor_weight=2), "neighbor_weight"),
    Case("search-nan-query", "vectors", "SearchMemory", search(query_vector=[math.nan, 0, 0]), "query_vector"),
    Case("search-no-model", "vectors", "SearchMemory", search(model_id=""), "model_id"),
    Case("search-top-k-too-big", "vectors", "SearchMemory", search(top_k=101), "top_k"),
    Case("search-negative-top-k", "vectors", "SearchMemory", search(top_k=-1), "top_k"),
    Case("search-min-score-2", "vectors", "SearchMemory", search(min_score=2.0), "min_score"),
    Case("search-time-weight-nan", "vectors", "SearchMemory", search(time_weight=math.nan), "time_weight"),
    Case("search-negative-boost", "vectors", "SearchMemory", search(user_priority_boost=-1.0), "user_priority_boost"),
    Case("search-unknown-scope", "vectors", "SearchMemory", search(scope=9), "scope"),
    Case("search-unknown-roles", "vectors", "SearchMemory", search(recall_roles=7), "recall_roles"),
    Case("search-session-scope-no-session", "vectors", "SearchMemory", search(scope=vec.RECALL_SCOPE_SESSION), "session_id"),
    Case("search-user-scope-no-speakers", "vectors", "SearchMemory", search(scope=vec.RECALL_SCOPE_USER), "speaker_ids"),
    Case("search-context-window-too-big", "vectors", "SearchMemory", search(context_window=51), "context_window"),
    Case("search-negative-item-chars", "vectors", "SearchMemory", search(per_item_max_chars=-1), "per_item_max_chars"),
    Case("delete-vectors-no-selector", "vectors", "DeleteVectors", vec.DeleteVectorsRequest(), "selector"),
    Case(
        "delete-vectors-empty-session",
        "vectors",
        "DeleteVectors",
        vec.DeleteVectorsRequest(session=vec.DeleteVectorsRequest.BySession()),
        "session.session_id",
    ),
    Case(
        "delete-vectors-no-timestamps",
        "vectors",
        "DeleteVectors",
        vec.DeleteVectorsRequest(timestamps=vec.DeleteVectorsRequest.ByTimestamps(session_id=SEEDED)),
        "timestamps.timestamps",
    ),
    Case(
        "delete-vectors-negative-timestamp",
        "vectors",
        "DeleteVectors",
        vec.DeleteVectorsRequest(timestamps=vec.DeleteVectorsRequest.ByTimestamps(session_id=SEEDED, timestamps=[1000, -1])),
        "timestamps.timestamps",
    ),
    Case(
        "delete-vectors-empty-model",
        "vectors",
        "DeleteVectors",
        vec.DeleteVectorsRequest(model=vec.DeleteVectorsRequest.ByModel()),
        "model.model_id",
    ),
    # -- summaries ------------------------------------------------------------------------------
    Case("summary-zero-from", "summaries", "SaveSummary", summ.SaveSummaryRequest(session_id=SEEDED, to_seq=2, text="s"), "from_seq"),
    Case(
        "summary-inverted",
        "summaries",
        "SaveSummary",
        summ.SaveSummaryRequest(session_id=SEEDED, from_seq=3, to_seq=2, text="s"),
        "to_seq",
    ),
    Case(
        "summary-blank-text",
        "summaries",
        "SaveSummary",
        summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=2, text="  "),
        "text",
    ),
    Case(
        "summary-big-text",
        "summaries",
        "SaveSummary",
        summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=2, text="s" * (L.max_content_bytes + 1)),
        "text",
    ),
    Case(
        "summary-nan-metadata",
        "summaries",
        "SaveSummary",
        summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=2, text="s", metadata=nan_struct()),
        "metadata",
    ),
    Case("summary-empty-session", "summaries", "SaveSummary", summ.SaveSummaryRequest(from_seq=1, to_seq=2, text="s"), "session_id"),
    Case(
        "summaries-negative-page",
        "summaries",
        "ListSummaries",
        summ.ListSummariesRequest(session_id=SEEDED, page_size=-1),
        "page_size",
    ),
    Case("cursor-empty-session", "summaries", "GetSummaryCursor", summ.GetSummaryCursorRequest(), "session_id"),
    Case(
        "assemble-negative-budget",
        "summaries",
        "AssembleContext",
        summ.AssembleContextRequest(session_id=SEEDED, budget_chars=-1),
        "budget_chars",
    ),
    Case(
        "assemble-recent-too-many",
        "summaries",
        "AssembleContext",
        summ.AssembleContextRequest(session_id=SEEDED, recent_raw_n=L.max_page_size + 1),
        "recent_raw_n",
    ),
    Case(
        "assemble-nan-recall-vector",
        "summaries",
        "AssembleContext",
        summ.AssembleContextRequest(session_id=SEEDED, include_recall=True, recall_query_vector=[math.nan], recall_model_id=MODEL),
        "recall_query_vector",
    ),
    Case("summary-vector-without-model", "summaries", "SaveSummary",
         summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=1, text="s", vector=[0.1, 0.2, 0.3]), "model_id"),
    Case("summary-nan-vector", "summaries", "SaveSummary",
         summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=1, text="s", vector=[math.nan], model_id=MODEL), "vector"),
    Case("assemble-unknown-slices", "summaries", "AssembleContext",
         summ.AssembleContextRequest(session_id=SEEDED, include_recall=True, recall_slices=9), "recall_slices"),
    Case("slices-no-query", "summaries", "SearchSummaries", summ.SearchSummariesRequest(), "query_vector"),
    Case("slices-vector-without-model", "summaries", "SearchSummaries",
         summ.SearchSummariesRequest(query_vector=[0.1, 0.2, 0.3]), "model_id"),
    Case("slices-user-scope", "summaries", "SearchSummaries",
         summ.SearchSummariesRequest(query_text="tea", scope=vec.RECALL_SCOPE_USER), "scope"),
    Case("slices-session-scope-no-session", "summaries", "SearchSummaries",
         summ.SearchSummariesRequest(query_text="tea", scope=vec.RECALL_SCOPE_SESSION), "session_id"),
    Case("slices-top-k-too-big", "summaries", "SearchSummaries", summ.SearchSummariesRequest(query_text="tea", top_k=101), "top_k"),
    Case("slices-bad-keyword-weight", "summaries", "SearchSummaries",
         summ.SearchSummariesRequest(query_text="tea", keyword_weight=1.5), "keyword_weight"),
    Case("slices-too-many-messages", "summaries", "SearchSummaries",
         summ.SearchSummariesRequest(query_text="tea", max_messages_per_hit=L.max_page_size + 1), "max_messages_per_hit"),
    Case("search-unknown-slices", "vectors", "SearchMemory", search(query_text="hi", slices=7), "slices"),
    # -- entries ---------------------------------------------------------------------------------
    Case("entry-empty-scope", "entries", "SaveEntry", ent.SaveEntryRequest(text="likes tea"), "scope"),
    Case("entry-blank-text", "entries", "SaveEntry", ent.SaveEntryRequest(scope=SCOPE, text="   "), "text"),
    Case("entry-empty-tag", "entries", "SaveEntry", ent.SaveEntryRequest(scope=SCOPE, text="likes tea", tags=["ok", ""]), "tags[1]"),
    Case(
        "entry-nan-embedding",
        "entries",
        "SaveEntry",
        ent.SaveEntryRequest(scope=SCOPE, text="likes tea", embedding=[math.nan], model_id=MODEL),
        "embedding",
    ),
    Case(
        "entry-embedding-no-model",
        "entries",
        "SaveEntry",
        ent.SaveEntryRequest(scope=SCOPE, text="likes tea", embedding=[0.1, 0.2]),
        "model_id",
    ),
    Case("entries-negative-limit", "entries", "SearchEntries", ent.SearchEntriesRequest(scope=SCOPE, query="tea", limit=-1), "limit"),
    Case(
        "entries-long-query",
        "entries",
        "SearchEntries",
        ent.SearchEntriesRequest(scope=SCOPE, query="q" * (L.max_text_bytes + 1)),
        "query",
    ),
    Case("forget-empty-id", "entries", "ForgetEntry", ent.ForgetEntryRequest(scope=SCOPE), "entry_id"),
    Case("forget-control-scope", "entries", "ForgetEntry", ent.ForgetEntryRequest(scope="s\x00", entry_id="e"), "scope"),
    Case("entries-list-negative-page", "entries", "ListEntries", ent.ListEntriesRequest(scope=SCOPE, page_size=-2), "page_size"),
    # -- request size: grpc's own receive limit ------------------------------------------------
    Case(
        "request-over-max-size",
        "memory",
        "SaveMessage",
        save(msg(content="z" * (L.max_request_bytes + 1))),
        None,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ),
    Case(
        "metadata-request-over-max-size",
        "metadata",
        "SaveMetadata",
        meta.SaveMetadataRequest(namespace=NS, key="k", data=struct(blob="b" * (L.max_request_bytes + 1))),
        None,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ),
]


@pytest.fixture(scope="module")
async def corpus_caller(secured, callers):
    """acme with a seeded session, metadata record and events."""
    caller = callers["acme"]
    await caller.call(
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(
            session_id=SEEDED,
            messages=[msg(content="hello", timestamp=1000 + i, kind="chat") for i in range(3)],
        ),
    )
    await caller.call("metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=NS, key="k", data=struct(v=1)))
    await caller.call(
        "events", "PublishEvent", ev.PublishEventRequest(session_id=SEEDED, compress_requested=event_pb2.CompressRequested())
    )
    await caller.call("vectors", "UpsertVectors", upsert(point(), point(timestamp=1001, vector=[0.3, 0.2, 0.1])))
    await caller.call("summaries", "SaveSummary", summ.SaveSummaryRequest(session_id=SEEDED, from_seq=1, to_seq=2, text="s"))
    await caller.call("entries", "SaveEntry", ent.SaveEntryRequest(scope=SCOPE, text="likes tea", tags=["drink"]))
    return caller


def test_corpus_is_large_enough():
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)
    methods = {(c.service, c.method) for c in CASES}
    expected = {("memory", m) for m in mem.DESCRIPTOR.services_by_name["MemoryService"].methods_by_name}
    expected |= {("metadata", m) for m in meta.DESCRIPTOR.services_by_name["MetadataService"].methods_by_name}
    expected |= {("events", m) for m in ev.DESCRIPTOR.services_by_name["EventService"].methods_by_name}
    expected |= {("vectors", m) for m in vec.DESCRIPTOR.services_by_name["VectorService"].methods_by_name}
    expected |= {("summaries", m) for m in summ.DESCRIPTOR.services_by_name["SummaryService"].methods_by_name}
    expected |= {("entries", m) for m in ent.DESCRIPTOR.services_by_name["EntryService"].methods_by_name}
    expected -= {("vectors", "GetVectorStats"), ("memory", "GetCaller"), ("memory", "GetMemoryStats")}  # no input
    assert expected <= methods, f"RPCs without a bad-input case: {sorted(expected - methods)}"


async def _invoke(caller, case: Case):
    if case.method == "Watch":
        stream = caller.watch(case.request, timeout=10)
        await stream.read()
        stream.cancel()
        return
    await caller.call(case.service, case.method, case.request, timeout=10)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_bad_input_is_rejected_and_stores_nothing(secured, corpus_caller, case):
    app, _ = secured
    before = await snapshot(app, corpus_caller, (NS,), (SCOPE,))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _invoke(corpus_caller, case)
    error = caught.value
    assert error.code() == case.code, error.details()
    if case.field is not None:
        reason, fields = error_details(error)
        assert reason == "INVALID_ARGUMENT"
        assert case.field in fields, fields
    assert await snapshot(app, corpus_caller, (NS,), (SCOPE,)) == before
