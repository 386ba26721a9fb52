"""Slow and stalled clients cost nothing but their own connection (issue 44, row 10).

More clients than the server's open-file limit open HTTP/JSON requests and stall mid-body,
with no token; another caller still gets answers over HTTP/JSON and gRPC while they stall,
and every stalled connection is closed by the server (the connection bound makes room for
newer ones; the read bound ends the rest). The server runs under `ulimit -n 1024`, as the
issue's report did; before the bounds, HTTP/JSON stopped answering everyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource

import grpc
import httpx

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import memory_service_pb2_grpc as mem_grpc
from memoryd.v1 import message_pb2
from tests.conftest import free_port
from tests.processes import MemorydServer

OPEN_FILES = 1024
STALLED = 1_200  # past the open-file limit, as in the issue (1,100)
CALL_TIMEOUT = 60.0  # a caller that gets no answer fails the test (no wall-clock assertion)


def limited_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


async def stall(port: int, index: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """A request whose headers promise a body that never fully comes."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /memoryd.v1.MemoryService/SaveMessage HTTP/1.1\r\nHost: memoryd\r\n"
            b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            + b'{"session_id": "stalled-%d", "message": {"role": "user", "content": "' % index
        )
        await writer.drain()
        return reader, writer
    except OSError:  # the listen backlog was full at that instant: the kernel refused it
        return None


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    with contextlib.suppress(OSError):
        while await reader.read(65536):
            pass  # a response (408/503) may come first; the close follows
    return True


async def test_stalled_http_clients_leave_both_transports_answering(tmp_path):
    http_port = free_port()
    server = MemorydServer(
        tmp_path, "--http-listen", f"127.0.0.1:{http_port}", "--vectors-enabled", "false",
        "--http-read-timeout-seconds", "4",
    )  # fmt: skip
    server.preexec_fn = limited_open_files
    server.start()
    stalled: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        for start in range(0, STALLED, 100):
            opened = await asyncio.gather(*(stall(http_port, i) for i in range(start, start + 100)))
            stalled += [pair for pair in opened if pair is not None]
        assert len(stalled) > OPEN_FILES
        # The server never ran out of descriptors: the HTTP listener's bound is half of them.
        assert len(os.listdir(f"/proc/{server.pid}/fd")) < OPEN_FILES

        # Another caller, while they stall: answered over HTTP/JSON and over gRPC.
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}", timeout=CALL_TIMEOUT) as http:
            response = await http.post(
                "/memoryd.v1.MemoryService/SaveMessage",
                json={"session_id": "caller", "message": {"role": "user", "content": "over HTTP"}},
            )
            assert response.status_code == 200, response.text
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = mem_grpc.MemoryServiceStub(channel)
            await stub.SaveMessage(
                mem_pb.SaveMessageRequest(
                    session_id="caller", message=message_pb2.Message(role="user", content="over gRPC")
                ),
                timeout=CALL_TIMEOUT,
            )
            history = await stub.GetFullHistory(mem_pb.GetFullHistoryRequest(session_id="caller"), timeout=CALL_TIMEOUT)
            assert [m.content for m in history.messages] == ["over HTTP", "over gRPC"]

        # Every stalled connection is closed by the server: none holds anything for good.
        closed = await asyncio.wait_for(
            asyncio.gather(*(closed_by_server(reader) for reader, _ in stalled)), CALL_TIMEOUT
        )
        assert all(closed) and len(closed) == len(stalled)
        log = server.log()
        assert "stalled-" not in log  # no stalled request reached a handler that logged its body
    finally:
        for _, writer in stalled:
            writer.close()
        server.stop()


async def test_a_request_trickling_in_is_closed_at_the_read_bound(tmp_path):
    """The bound is on the whole request, not on the pause between bytes: a client sending
    its headers a byte at a time, forever, is closed all the same."""
    http_port = free_port()
    server = MemorydServer(
        tmp_path, "--http-listen", f"127.0.0.1:{http_port}", "--vectors-enabled", "false",
        "--http-read-timeout-seconds", "1",
    )  # fmt: skip
    server.start()
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", http_port)
        request = b"POST /memoryd.v1.MemoryService/SaveMessage HTTP/1.1\r\nHost: memoryd\r\nX-Slow: " + b"a" * 10_000

        async def trickle() -> None:
            for byte in request:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.1)

        sending = asyncio.ensure_future(trickle())
        try:
            assert await asyncio.wait_for(reader.read(65536), CALL_TIMEOUT) == b""  # closed, with no answer
        finally:
            sending.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await sending
    finally:
        if writer is not None:
            writer.close()
        server.stop()


async def test_a_stalled_request_does_not_hold_the_stop(tmp_path):
    """SIGTERM with a request stalled mid-body: the connection is closed at once (nothing of it
    reached a servicer), so the stop neither waits out --grace-seconds for it nor cancels its
    handler with an error (it did both: 'Cancel 1 running task(s), timeout graceful shutdown
    exceeded' and an ASGI traceback, 10 s later)."""
    http_port = free_port()
    server = MemorydServer(
        tmp_path, "--http-listen", f"127.0.0.1:{http_port}", "--vectors-enabled", "false", "--grace-seconds", "60",
    )  # fmt: skip
    server.start()
    writer = None
    try:
        stalled = await stall(http_port, 0)
        assert stalled is not None
        reader, writer = stalled
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_port}", timeout=CALL_TIMEOUT) as http:
            assert (await http.get("/healthz")).status_code == 200  # the stalled request is being read by now
        stopping = asyncio.get_running_loop().run_in_executor(None, server.terminate)
        assert await asyncio.wait_for(closed_by_server(reader), CALL_TIMEOUT)
        assert await stopping == 0
    finally:
        if writer is not None:
            writer.close()
        server.stop()
    log = server.log()
    assert "timeout graceful shutdown exceeded" not in log and '"level": "error"' not in log, log[-3000:]
