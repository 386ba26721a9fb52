"""Watch over HTTP: a Connect server stream of the same events, errors in its end-of-stream message."""

from __future__ import annotations

import asyncio
import json
import struct

import grpc
import httpx
import pytest

from memoryd.v1 import event_service_pb2, event_service_pb2_grpc
from tests.http.calls import grpc_call, grpc_error, http_error, method

END_STREAM = 0x02
WATCH = "/memoryd.v1.EventService/Watch"


def envelope(message: dict) -> bytes:
    data = json.dumps(message).encode()
    return struct.pack(">BI", 0, len(data)) + data


async def frames(response):
    """(flags, JSON) of each envelope of a Connect stream response."""
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        while len(buffer) >= 5:
            flags, length = struct.unpack(">BI", buffer[:5])
            if len(buffer) < 5 + length:
                break
            yield flags, json.loads(buffer[5 : 5 + length])
            buffer = buffer[5 + length :]


def _headers(server, tenant: str) -> dict:
    return {"content-type": "application/connect+json", **server.bearer(tenant)}


async def test_watch_streams_events_after_its_first_progress(server, session_id):
    request = envelope({"session_ids": [session_id], "types": ["EVENT_TYPE_MESSAGES_APPENDED"]})
    async with server.http.stream("POST", WATCH, content=request, headers=_headers(server, "acme")) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/connect+json"
        stream = frames(response)
        flags, first = await anext(stream)
        assert flags == 0 and "progress" in first  # the watch is live from here on
        save = {"session_id": session_id, "message": {"role": "user", "content": "watched"}}
        saved = await grpc_call(server.channel, method("memoryd.v1.MemoryService.SaveMessage"), save, server.bearer("acme"))
        flags, second = await anext(stream)
        assert flags == 0
        event = second["event"]
        assert (event["session_id"], event["type"]) == (session_id, "EVENT_TYPE_MESSAGES_APPENDED")
        assert [ref["id"] for ref in event["messages_appended"]["messages"]] == [saved.message.id]


async def test_watch_fails_like_grpc_in_its_end_of_stream_message(server):
    bad = {"after_seq": "-1", "types": ["EVENT_TYPE_MESSAGES_APPENDED"] * 101}
    async with server.http.stream("POST", WATCH, content=envelope(bad), headers=_headers(server, "acme")) as response:
        assert response.status_code == 200  # Connect streams report errors at their end
        received = [frame async for frame in frames(response)]
    (flags, end), = received
    assert flags == END_STREAM
    async with grpc.aio.insecure_channel(server.grpc_target) as channel:
        call = event_service_pb2_grpc.EventServiceStub(channel).Watch(
            event_service_pb2.WatchRequest(after_seq=-1, types=[1] * 101), metadata=tuple(server.bearer("acme").items())
        )
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            await call.read()
    assert over_grpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert http_error(end["error"]) == grpc_error(over_grpc.value)


async def test_watch_needs_the_token(server):
    async with server.http.stream("POST", WATCH, content=envelope({}), headers={"content-type": "application/connect+json"}) as response:
        (flags, end), = [frame async for frame in frames(response)]
    assert flags == END_STREAM and end["error"]["code"] == "unauthenticated"


async def test_shutdown_ends_http_watch_streams_with_unavailable_to_resume(tmp_path):
    from memoryd.app import start
    from memoryd.config import Config

    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, vectors_enabled=False))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        headers = {"content-type": "application/connect+json"}
        async with http.stream("POST", WATCH, content=envelope({}), headers=headers) as response:
            stream = frames(response)
            flags, first = await anext(stream)
            assert flags == 0 and "progress" in first
            stopping = asyncio.create_task(app.stop(10))
            rest = [frame async for frame in stream]
            await stopping
    flags, end = rest[-1]
    assert flags == END_STREAM  # as over gRPC: UNAVAILABLE, retryable, resume with after_seq
    error = http_error(end["error"])
    assert error["code"] == "unavailable"
    assert {d["type"]: d for d in error["details"]}["google.rpc.ErrorInfo"]["reason"] == "SHUTTING_DOWN"
