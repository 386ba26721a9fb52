"""Rotation without a restart: the tokens file is re-read when it changes (and at once on
SIGHUP, in one process or forwarded to every worker); a removed token's next call is refused
and its Watch streams end with UNAUTHENTICATED (TOKEN_REVOKED), over gRPC and HTTP, while
the streams of the tokens that stay run on; a stream opened with a JWT ends at the token's
expiry (TOKEN_EXPIRED); a file that no longer parses changes nothing."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
import httpx
import pytest

from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.app import start
from memoryd.config import Config
from tests.http.test_watch import envelope, frames
from tests.processes import MemorydServer
from tests.security.harness import Caller, error_details, new_token
from tests.security.oidc_issuer import AUDIENCE, Issuer

PATIENCE = 60.0  # seconds a test waits for the server to notice a change before it fails


def write_tokens(path: Path, text: str) -> None:
    """Replace the file at once (write, then rename), as secret managers and `mv` do."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


async def until_admitted(caller: Caller) -> None:
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="probe"))
            return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAUTHENTICATED or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.05)


async def refused_reason(caller: Caller) -> str | None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="probe"))
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    return error_details(caught.value)[0]


async def stream_end(stream) -> grpc.aio.AioRpcError:
    """Read a Watch stream until it fails; the error it ended with."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async with asyncio.timeout(PATIENCE):
            while True:
                await stream.read()
    return caught.value


async def _publish(caller: Caller, session: str) -> None:
    await caller.call(
        "events", "PublishEvent", ev.PublishEventRequest(session_id=session, compress_requested=event_pb2.CompressRequested())
    )


async def test_a_removed_token_is_refused_and_its_streams_end_while_the_others_run_on(tmp_path):
    kept, removed, added = new_token(), new_token(), new_token()
    tokens = tmp_path / "tokens"
    write_tokens(tokens, f"acme: {kept}\nacme: {removed}\n")
    config = Config(
        listen="127.0.0.1:0", data_dir=tmp_path / "data", tokens_file=str(tokens), tokens_reload_seconds=0.05, log_level="warning"
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=PATIENCE) as http:
            stay, go = Caller(channel, kept, "acme"), Caller(channel, removed, "acme")
            staying_watch, going_watch = stay.watch(ev.WatchRequest()), go.watch(ev.WatchRequest())
            for stream in (staying_watch, going_watch):
                assert (await stream.read()).HasField("progress")  # live
            headers = {"content-type": "application/connect+json", "authorization": f"Bearer {removed}"}
            async with http.stream("POST", "/memoryd.v1.EventService/Watch", content=envelope({}), headers=headers) as response:
                http_frames = frames(response)
                assert "progress" in (await anext(http_frames))[1]

                write_tokens(tokens, f"acme: {kept}\nacme: {added}\n")

                ended = await stream_end(going_watch)
                assert (ended.code(), error_details(ended)[0]) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
                async with asyncio.timeout(PATIENCE):
                    flags, last = await anext(http_frames)
                assert flags == 0x02 and last["error"]["code"] == "unauthenticated"  # Connect's end-of-stream error
            assert await refused_reason(go) == "TOKEN_INVALID"
            await until_admitted(Caller(channel, added, "acme"))
            await _publish(stay, "after-rotation")  # the kept token's stream saw no interruption
            while not (response := await staying_watch.read()).HasField("event"):
                pass
            assert response.event.session_id == "after-rotation"
            staying_watch.cancel()

            write_tokens(tokens, "acme: short\n")  # malformed: the server keeps the tokens it had
            assert app.authenticator.reload(force=True) is False
            await until_admitted(stay)
            await until_admitted(Caller(channel, added, "acme"))
    finally:
        await channel.close()
        await app.stop(0)


async def test_a_watch_opened_with_a_jwt_ends_at_its_expiry(tmp_path):
    issuer = Issuer()
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        http_listen="off",
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        jwt_leeway_seconds=0,
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        stream = Caller(channel, issuer.token(exp=int(time.time()) + 3), "acme").watch(ev.WatchRequest())
        assert (await stream.read()).HasField("progress")
        ended = await stream_end(stream)
        assert (ended.code(), error_details(ended)[0]) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")
    finally:
        await channel.close()
        await app.stop(0)
        issuer.close()


@pytest.mark.parametrize("workers", [1, 2])
async def test_sighup_rereads_the_tokens_file_at_once(tmp_path, workers):
    """The file is checked only hourly here: only SIGHUP can have made the change visible.
    With workers, the parent forwards it to each, and every connection sees the new tokens."""
    old, new = new_token(), new_token()
    tokens = tmp_path / "tokens"
    write_tokens(tokens, f"acme: {old}\n")
    # (MemorydServer passes --http-listen first; the later one wins.)
    extra = ("--workers", "2", "--vectors-enabled", "false", "--http-listen", "off") if workers > 1 else ()
    server = MemorydServer(tmp_path, "--tokens-file", str(tokens), "--tokens-reload-seconds", "3600", *extra)
    server.start()
    try:
        write_tokens(tokens, f"acme: {new}\n")
        os.kill(server.pid, signal.SIGHUP)
        channels = [grpc.aio.insecure_channel(server.target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(6)]
        try:
            for channel in channels:  # fresh connections: with workers, the kernel spreads them
                await until_admitted(Caller(channel, new, "acme"))
                assert await refused_reason(Caller(channel, old, "acme")) == "TOKEN_INVALID"
        finally:
            for channel in channels:
                await channel.close()
        assert server.process.poll() is None  # SIGHUP did not end it
    finally:
        server.stop()
