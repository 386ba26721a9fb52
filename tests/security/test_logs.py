"""No message text, token or personal data in logs above debug: a real `memoryd serve` at
log level info gets RPCs carrying distinctive strings in every free-text field (and a
wrong token, and rejected requests); none of those strings may appear in its stderr."""

from __future__ import annotations

import uuid

import grpc
from google.protobuf import struct_pb2

from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.faults.proc import Server
from tests.security.harness import Caller, new_token


def _struct(**fields) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


async def test_info_logs_carry_no_content_tokens_or_personal_data(tmp_path):
    token, wrong = new_token(), new_token()
    mark = uuid.uuid4().hex[:10]
    secrets = {name: f"{name}-{mark}" for name in (
        "content", "reasoning", "sender", "visible", "segment", "toolargs", "metadata", "summary",
        "entry", "query", "newtext", "compress", "pointtext", "speaker",
    )}
    server = Server(tmp_path, "--log-level", "info", env={"MEMORYD_TOKENS": f"acme: {token}"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            caller = Caller(channel, token, "acme")
            message = message_pb2.Message(
                role="user",
                content=secrets["content"],
                reasoning_content=secrets["reasoning"],
                metadata=_struct(sender={"name": secrets["sender"]}, visibleContent=secrets["visible"], platform="qq"),
                segments=[message_pb2.Segment(type="text", data=_struct(text=secrets["segment"]))],
                tool_calls=[message_pb2.ToolCall(id="c1", name="search", arguments=f'{{"q": "{secrets["toolargs"]}"}}')],
            )
            saved = await caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message))
            await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s"))
            await caller.call(
                "memory",
                "UpdateMessageContent",
                mem.UpdateMessageContentRequest(session_id="s", old_text=secrets["content"], new_text=secrets["newtext"]),
            )
            await caller.call(
                "metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace="n", key="k", data=_struct(v=secrets["metadata"]))
            )
            await caller.call(
                "events",
                "PublishEvent",
                ev.PublishEventRequest(session_id="s", compress_requested=event_pb2.CompressRequested(reason=secrets["compress"])),
            )
            await caller.call(
                "summaries",
                "SaveSummary",
                summ.SaveSummaryRequest(session_id="s", from_seq=1, to_seq=saved.message.seq, text=secrets["summary"]),
            )
            await caller.call("entries", "SaveEntry", ent.SaveEntryRequest(scope="u", text=secrets["entry"]))
            await caller.call("entries", "SearchEntries", ent.SearchEntriesRequest(scope="u", query=secrets["query"]))
            point = vec.VectorPoint(
                model_id="m:x", vector=[1, 0, 0], session_id="s", timestamp=5, text=secrets["pointtext"], speaker_label=secrets["speaker"]
            )
            await caller.call("vectors", "UpsertVectors", vec.UpsertVectorsRequest(points=[point]))
            await caller.call("vectors", "SearchMemory", vec.SearchMemoryRequest(query_vector=[1, 0, 0], model_id="m:x"))
            # Failures are logged too: a wrong token, rejected input carrying the secrets.
            for bad in (
                Caller(channel, wrong, "acme").call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s")),
                caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message_pb2.Message(content=secrets["content"]))),
                caller.call("memory", "UpdateMessageContent", mem.UpdateMessageContentRequest(session_id="s", old_text=secrets["content"] * 9999)),
                caller.call("vectors", "SearchMemory", vec.SearchMemoryRequest(query_text=secrets["query"])),
            ):
                try:
                    await bad
                except grpc.aio.AioRpcError:
                    pass
        assert server.terminate() == 0
    finally:
        server.stop()
    log = server.log()
    assert '"serving"' in log and '"rpc_failed"' in log  # the log was captured, failures included
    leaked = [name for name, value in {**secrets, "token": token, "wrong token": wrong}.items() if value in log]
    assert not leaked, f"found in info logs: {leaked}"
