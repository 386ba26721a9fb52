"""Every RPC through a real server with the generated stubs, on every backend."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from memoryd.v1 import event_pb2, event_service_pb2 as ev_pb
from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import message_pb2, metadata_service_pb2 as md_pb


def message(content: str, ts: int, role: str = "user", **kw) -> message_pb2.Message:
    platform = kw.pop("platform", None)
    msg = message_pb2.Message(role=role, content=content, timestamp=ts, **kw)
    if platform:
        msg.metadata.update({"platform": platform})
    return msg


async def save(client, session_id, *messages):
    response = await client.memory.SaveMessages(pb.SaveMessagesRequest(session_id=session_id, messages=messages))
    return list(response.messages)


async def history(client, session_id, limit=0):
    response = await client.memory.GetHistory(pb.GetHistoryRequest(session_id=session_id, limit=limit))
    return [m.content for m in response.messages]


def bad_request_fields(error: grpc.aio.AioRpcError) -> list[str]:
    status = rpc_status.from_call(error)
    assert status is not None, "the error carries google.rpc.Status details"
    fields = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return fields


async def test_save_message_round_trip_and_idempotency(client, session_id):
    msg = message("hello", 0, role="assistant", kind="", reasoning_content="r", tool_call_id="")
    msg.segments.add(type="image").data.update({"url": "https://example.invalid/a.png"})
    msg.tool_calls.add(id="c1", name="lookup", arguments='{"q": "x"}')
    msg.metadata.update({"platform": "qq", "sender": {"id": "u1"}})
    first = await client.memory.SaveMessage(pb.SaveMessageRequest(session_id=session_id, message=msg, idempotency_key="k"))
    again = await client.memory.SaveMessage(pb.SaveMessageRequest(session_id=session_id, message=msg, idempotency_key="k"))
    assert first.message.id and first.message.seq == 1 and first.message.timestamp > 0
    assert again.deduplicated and again.message.id == first.message.id
    got = (await client.memory.GetHistory(pb.GetHistoryRequest(session_id=session_id))).messages
    assert len(got) == 1
    stored = got[0]
    assert stored.HasField("kind") and stored.kind == ""
    assert stored.segments[0].type == "image" and stored.segments[0].data["url"].endswith("a.png")
    assert stored.tool_calls[0].arguments == '{"q": "x"}' and stored.metadata["sender"]["id"] == "u1"
    plain = await client.memory.SaveMessage(pb.SaveMessageRequest(session_id=session_id, message=message("x", 5)))
    assert not plain.message.HasField("kind")


async def test_history_windows_and_ranges(client, session_id):
    await save(client, session_id, *[message(str(i), 10 + i) for i in range(6)], message("tie", 15))
    assert await history(client, session_id, 2) == ["5", "tie"]
    trimmed = await client.memory.TrimHistory(pb.TrimHistoryRequest(session_id=session_id, keep_recent=3))
    assert trimmed.archived_count == 4
    assert await history(client, session_id) == ["4", "5", "tie"]
    page1 = await client.memory.GetFullHistory(pb.GetFullHistoryRequest(session_id=session_id, page_size=4))
    page2 = await client.memory.GetFullHistory(
        pb.GetFullHistoryRequest(session_id=session_id, page_size=4, page_token=page1.next_page_token)
    )
    assert [m.content for m in [*page1.messages, *page2.messages]] == ["0", "1", "2", "3", "4", "5", "tie"]
    assert page2.next_page_token == "" and page1.messages[0].archived
    ranged = await client.memory.ListMessagesInRange(
        pb.ListMessagesInRangeRequest(session_id=session_id, from_ts=11, to_ts=15)
    )
    assert [m.content for m in ranged.messages] == ["1", "2", "3", "4", "5", "tie"]


async def test_recent_across_sessions(client, session_id):
    other = session_id + "-other"
    await save(client, session_id, message("mine", 100, platform="web"))
    await save(client, other, message("theirs", 101, platform="web"), message("sys", 102, role="system", platform="web"))
    response = await client.memory.GetRecentAcrossSessions(
        pb.GetRecentAcrossSessionsRequest(limit=5, platform="web", exclude_session_ids=[session_id])
    )
    assert [(r.session_id, r.message.content) for r in response.messages] == [(other, "theirs")]


async def test_replace_update_and_deletes(client, session_id):
    stored = await save(client, session_id, message("a old", 1), message("b", 2), message("c", 3), message("d", 3))
    replaced = await client.memory.ReplaceHistory(
        pb.ReplaceHistoryRequest(session_id=session_id, messages=[*stored[:0], message("sum old", 4), message("e", 5)])
    )
    assert replaced.removed_count == 4 and [m.seq for m in replaced.messages] == [5, 6]
    updated = await client.memory.UpdateMessageContent(
        pb.UpdateMessageContentRequest(session_id=session_id, old_text="old", new_text="new")
    )
    assert updated.changed_count == 1 and await history(client, session_id) == ["sum new", "e"]
    more = await save(client, session_id, message("f", 6), message("g", 7))
    by_ts = await client.memory.DeleteMessagesByTimestamps(
        pb.DeleteMessagesByTimestampsRequest(session_id=session_id, timestamps=[4, 6, 999])
    )
    assert by_ts.deleted_count == 2
    by_id = await client.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=[more[1].id, "x"]))
    assert by_id.deleted_count == 1 and await history(client, session_id) == ["e"]


async def test_metadata_service(client, session_id):
    data = struct_pb2.Struct()
    data.update({"summary": "short", "turns": 3})
    saved = await client.metadata.SaveMetadata(md_pb.SaveMetadataRequest(namespace="summary", key=session_id, data=data))
    assert saved.entry.update_time > 0
    got = await client.metadata.GetMetadata(md_pb.GetMetadataRequest(namespace="summary", key=session_id))
    assert got.found and got.entry.data["summary"] == "short"
    missing = await client.metadata.GetMetadata(md_pb.GetMetadataRequest(namespace="summary", key="nope"))
    assert not missing.found
    listed = await client.metadata.ListMetadata(md_pb.ListMetadataRequest(namespace="summary", page_size=1000))
    assert session_id in [e.key for e in listed.entries]
    deleted = await client.metadata.DeleteMetadata(md_pb.DeleteMetadataRequest(namespace="summary", key=session_id))
    assert deleted.deleted


async def test_clear_session_clear_all_and_list_sessions(client, session_id):
    await save(client, session_id, message("a", 1))
    await save(client, session_id + "-2", message("b", 1))
    listed = await client.memory.ListSessions(pb.ListSessionsRequest(page_size=1000))
    assert {session_id, session_id + "-2"} <= {s.session_id for s in listed.sessions}
    cleared = await client.memory.ClearSession(
        pb.ClearSessionRequest(session_id=session_id, targets=[pb.CLEAR_TARGET_MESSAGES, pb.CLEAR_TARGET_VECTORS])
    )
    assert [(r.target, r.outcome, r.removed_count) for r in cleared.results][0] == (
        pb.CLEAR_TARGET_MESSAGES, pb.CLEAR_OUTCOME_CLEARED, 1,
    )
    assert cleared.results[1].target == pb.CLEAR_TARGET_VECTORS
    assert await history(client, session_id) == []
    everything = await client.memory.ClearAll(pb.ClearAllRequest())
    assert everything.results[0].outcome == pb.CLEAR_OUTCOME_CLEARED and everything.results[0].removed_count >= 1
    assert (await client.memory.ListSessions(pb.ListSessionsRequest())).sessions == []


async def test_watch_sees_a_deletion_and_publish(client, session_id):
    stored = await save(client, session_id, message("a", 1), message("b", 2))
    stream = client.events.Watch(
        ev_pb.WatchRequest(session_ids=[session_id], types=[event_pb2.EVENT_TYPE_MESSAGES_DELETED], after_seq=0)
    )
    await client.memory.DeleteMessages(pb.DeleteMessagesRequest(session_id=session_id, ids=[stored[0].id]))
    published = await client.events.PublishEvent(
        ev_pb.PublishEventRequest(session_id=session_id, compress_requested=event_pb2.CompressRequested(reason="long"))
    )
    assert published.event.type == event_pb2.EVENT_TYPE_COMPRESS_REQUESTED and published.event.seq > 0

    async def first_event():
        async for response in stream:
            if response.HasField("event"):
                return response.event

    event = await asyncio.wait_for(first_event(), 10)
    stream.cancel()
    assert event.messages_deleted.ids == [stored[0].id] and list(event.messages_deleted.timestamps) == [1]


INVALID = [
    ("SaveMessage", pb.SaveMessageRequest(session_id="", message=message("x", 1)), "session_id"),
    ("SaveMessage", pb.SaveMessageRequest(session_id="S", message=message("x", 1, role="")), "message.role"),
    ("SaveMessage", pb.SaveMessageRequest(session_id="S", message=message("x", -1)), "message.timestamp"),
    ("SaveMessage", pb.SaveMessageRequest(session_id="S"), "message"),
    ("SaveMessage", pb.SaveMessageRequest(session_id="x" * 300, message=message("x", 1)), "session_id"),
    ("SaveMessage", pb.SaveMessageRequest(session_id="S", message=message("x" * (1 << 20 + 1), 1)), "message.content"),
    ("SaveMessages", pb.SaveMessagesRequest(session_id="S", messages=[message("ok", 1), message("bad", 1, role="")]),
     "messages[1].role"),
    ("SaveMessages", pb.SaveMessagesRequest(session_id="S"), "messages"),
    ("GetHistory", pb.GetHistoryRequest(session_id="S", limit=-1), "limit"),
    ("GetFullHistory", pb.GetFullHistoryRequest(session_id="S", page_token="garbage"), "page_token"),
    ("GetFullHistory", pb.GetFullHistoryRequest(session_id="S", page_size=-5), "page_size"),
    ("ListMessagesInRange", pb.ListMessagesInRangeRequest(session_id="S", from_ts=10, to_ts=5), "to_ts"),
    ("GetRecentAcrossSessions", pb.GetRecentAcrossSessionsRequest(limit=0), "limit"),
    ("GetRecentAcrossSessions", pb.GetRecentAcrossSessionsRequest(limit=-3), "limit"),
    ("TrimHistory", pb.TrimHistoryRequest(session_id="S", keep_recent=-1), "keep_recent"),
    ("ReplaceHistory", pb.ReplaceHistoryRequest(session_id="S", messages=[message("x", 1, role="")]), "messages[0].role"),
    ("UpdateMessageContent", pb.UpdateMessageContentRequest(session_id="S", old_text=""), "old_text"),
    ("DeleteMessagesByTimestamps", pb.DeleteMessagesByTimestampsRequest(session_id="S"), "timestamps"),
    ("DeleteMessagesByTimestamps",
     pb.DeleteMessagesByTimestampsRequest(session_id="S", timestamps=list(range(10_001))), "timestamps"),
    ("DeleteMessages", pb.DeleteMessagesRequest(session_id="S", ids=[""]), "ids[0]"),
    ("ClearSession", pb.ClearSessionRequest(session_id="S", targets=[42]), "targets[0]"),
    ("ClearAll", pb.ClearAllRequest(targets=[7]), "targets[0]"),
    ("ListSessions", pb.ListSessionsRequest(page_size=-1), "page_size"),
    ("SaveMetadata", md_pb.SaveMetadataRequest(namespace="", key="k"), "namespace"),
    ("GetMetadata", md_pb.GetMetadataRequest(namespace="ns", key=""), "key"),
    ("ListMetadata", md_pb.ListMetadataRequest(namespace="ns", page_size=-1), "page_size"),
    ("DeleteMetadata", md_pb.DeleteMetadataRequest(namespace="n\x00s", key="k"), "namespace"),
    ("PublishEvent", ev_pb.PublishEventRequest(session_id="S"), "payload"),
    ("SaveMetadata", md_pb.SaveMetadataRequest(namespace="memoryd.summary-cursor", key="cursor/S"), "namespace"),
    ("DeleteMetadata", md_pb.DeleteMetadataRequest(namespace="memoryd.entries/x", key="k"), "namespace"),
]


@pytest.mark.parametrize("method,request_message,field", INVALID, ids=[f"{m}-{f}" for m, _, f in INVALID])
async def test_invalid_input_is_rejected_and_nothing_is_stored(client, method, request_message, field):
    await save(client, "S", message("seed", 1))
    before = await client.memory.GetFullHistory(pb.GetFullHistoryRequest(session_id="S", page_size=1000))
    service = {"SaveMetadata": client.metadata, "GetMetadata": client.metadata, "ListMetadata": client.metadata,
               "DeleteMetadata": client.metadata, "PublishEvent": client.events}.get(method, client.memory)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await getattr(service, method)(request_message)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in bad_request_fields(err.value)
    after = await client.memory.GetFullHistory(pb.GetFullHistoryRequest(session_id="S", page_size=1000))
    assert after.messages == before.messages
    await client.memory.ClearSession(pb.ClearSessionRequest(session_id="S"))


def error_reason(error: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(error)
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


async def test_pop_messages_returns_and_watchers_hear_the_deletion(client, session_id):
    saved = await save(client, session_id, message("a", 1), message("b", 2), message("c", 3))
    stream = client.events.Watch(ev_pb.WatchRequest(session_ids=[session_id], types=[event_pb2.EVENT_TYPE_MESSAGES_DELETED]))
    await stream.read()  # the first response says the watch is registered
    popped = await client.memory.PopMessages(pb.PopMessagesRequest(session_id=session_id, n=2))
    assert [m.content for m in popped.messages] == ["b", "c"] and list(popped.messages) == saved[1:]
    assert not popped.truncated
    event = (await stream.read()).event
    assert list(event.messages_deleted.ids) == [m.id for m in saved[1:]]
    stream.cancel()
    assert await history(client, session_id) == ["a"]
    one = await client.memory.PopMessages(pb.PopMessagesRequest(session_id=session_id))  # n 0 means 1
    assert [m.content for m in one.messages] == ["a"]


async def test_session_attributes_over_grpc(client, session_id):
    attributes = message_pb2.SessionAttributes(user_id="ann", agent_id="app", labels={"plan": "pro"})
    await client.memory.SaveMessage(
        pb.SaveMessageRequest(session_id=session_id, message=message("hi", 1), session_attributes=attributes)
    )
    found = await client.memory.GetSession(pb.GetSessionRequest(session_id=session_id))
    assert found.found and found.session.attributes == attributes and found.session.message_count == 1
    assert not (await client.memory.GetSession(pb.GetSessionRequest(session_id=session_id + "-none"))).found

    updated = await client.memory.UpdateSession(
        pb.UpdateSessionRequest(
            session_id=session_id, attributes=message_pb2.SessionAttributes(labels={"lang": "en"}), remove_labels=["plan"]
        )
    )
    assert dict(updated.session.attributes.labels) == {"lang": "en"} and updated.session.attributes.user_id == "ann"
    listed = await client.memory.ListSessions(pb.ListSessionsRequest(user_id="ann", agent_id="app", labels={"lang": "en"}))
    assert session_id in [s.session_id for s in listed.sessions]

    with pytest.raises(grpc.aio.AioRpcError) as err:
        await client.memory.SaveMessage(
            pb.SaveMessageRequest(
                session_id=session_id, message=message("x", 2), session_attributes=message_pb2.SessionAttributes(user_id="bob")
            )
        )
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_reason(err.value) == "SESSION_OWNER_MISMATCH"
    assert await history(client, session_id) == ["hi"]


async def test_session_updated_events_carry_the_attributes(client, session_id):
    first = (await client.memory.UpdateSession(pb.UpdateSessionRequest(session_id=session_id))).session
    assert first.message_count == 0  # created, not yet listed: no attributes
    assert not (await client.memory.GetSession(pb.GetSessionRequest(session_id=session_id))).found
    stream = client.events.Watch(ev_pb.WatchRequest(session_ids=[session_id], types=[event_pb2.EVENT_TYPE_SESSION_UPDATED]))
    await stream.read()
    await client.memory.UpdateSession(
        pb.UpdateSessionRequest(session_id=session_id, attributes=message_pb2.SessionAttributes(user_id="u", labels={"a": "1"}))
    )
    event = (await stream.read()).event
    stream.cancel()
    assert event.type == event_pb2.EVENT_TYPE_SESSION_UPDATED and event.session_id == session_id
    assert event.session_updated.attributes == message_pb2.SessionAttributes(user_id="u", labels={"a": "1"})


async def test_metadata_by_prefix_and_namespaces_over_grpc(client, session_id):
    for namespace in (f"{session_id}/a", f"{session_id}/b", f"{session_id}/b/c"):
        await client.metadata.SaveMetadata(md_pb.SaveMetadataRequest(namespace=namespace, key="k", data={"n": namespace}))
    listed = await client.metadata.ListMetadata(md_pb.ListMetadataRequest(namespace_prefix=f"{session_id}/b", page_size=1))
    assert [e.namespace for e in listed.entries] == [f"{session_id}/b"] and listed.next_page_token
    rest = await client.metadata.ListMetadata(
        md_pb.ListMetadataRequest(namespace_prefix=f"{session_id}/b", page_token=listed.next_page_token)
    )
    assert [e.namespace for e in rest.entries] == [f"{session_id}/b/c"] and not rest.next_page_token
    namespaces = await client.metadata.ListNamespaces(md_pb.ListNamespacesRequest(prefix=f"{session_id}/"))
    assert list(namespaces.namespaces) == [f"{session_id}/a", f"{session_id}/b", f"{session_id}/b/c"]
