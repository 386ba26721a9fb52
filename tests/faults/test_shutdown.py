"""SIGTERM: a unary call in flight (held on SQLite's write lock by the test) completes
within the grace period; new calls are refused with UNAVAILABLE; Watch streams end with a
status the client resumes from; the process exits 0; after a restart the drained write is
there and a watcher resuming from its last seq gets every later event exactly once."""

from __future__ import annotations

import asyncio
import signal
import sqlite3

import grpc

from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import event_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from tests.processes import MemorydServer

# Watch ends on shutdown either cleanly after a last progress (the cursor to resume from)
# or with UNAVAILABLE; both tell the client to reconnect with after_seq.
RESUMABLE_END = (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE)


def _save(content: str) -> mem.SaveMessageRequest:
    return mem.SaveMessageRequest(
        session_id="drain", idempotency_key=content, message=message_pb2.Message(role="user", content=content)
    )


async def test_sigterm_drains_unary_calls_and_ends_streams_resumably(tmp_path):
    server = MemorydServer(tmp_path, "--grace-seconds", "20")
    server.start()
    try:
        channel = grpc.aio.insecure_channel(server.target)
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        events = event_service_pb2_grpc.EventServiceStub(channel)
        await memory.SaveMessage(_save("before"), timeout=10)
        watch = events.Watch(ev.WatchRequest(after_seq=0), timeout=60)
        cursor = 0
        while cursor == 0:
            item = await watch.read()
            cursor = item.event.seq if item.HasField("event") else cursor

        # Hold SQLite's write lock so the next write is still in flight at SIGTERM.
        blocker = sqlite3.connect(server.data_dir / "memoryd.db", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        in_flight = asyncio.ensure_future(memory.SaveMessage(_save("in-flight"), timeout=30))
        await asyncio.sleep(0.5)  # lets the request reach the server (not a timing assertion)
        assert not in_flight.done()
        server.process.send_signal(signal.SIGTERM)

        # The stream ends resumably; the last thing it says is where to resume.
        code = None
        try:
            while (item := await watch.read()) is not grpc.aio.EOF:
                if item.HasField("event"):
                    cursor = item.event.seq
                else:
                    cursor = max(cursor, item.progress.latest_seq)
            code = await watch.code()
        except grpc.aio.AioRpcError as error:
            code = error.code()
        print(f"watch ended with {code} at cursor {cursor}")
        assert code in RESUMABLE_END, code

        blocker.execute("ROLLBACK")
        blocker.close()
        drained = await in_flight  # completes within the grace period
        assert drained.message.content == "in-flight"
        await channel.close()
        assert await asyncio.to_thread(server.process.wait, 60) == 0
        assert '"stopped"' in server.log()

        # New calls while down fail with UNAVAILABLE.
        async with grpc.aio.insecure_channel(server.target) as refused:
            try:
                await memory_service_pb2_grpc.MemoryServiceStub(refused).GetHistory(
                    mem.GetHistoryRequest(session_id="drain"), timeout=2
                )
                raise AssertionError("a stopped server answered")
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.UNAVAILABLE

        server.start()
        async with grpc.aio.insecure_channel(server.target) as channel:
            memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
            history = await memory.GetHistory(mem.GetHistoryRequest(session_id="drain"), timeout=10)
            assert [m.content for m in history.messages] == ["before", "in-flight"]
            resumed = event_service_pb2_grpc.EventServiceStub(channel).Watch(ev.WatchRequest(after_seq=cursor), timeout=60)
            await resumed.initial_metadata()
            await memory.SaveMessage(_save("after"), timeout=10)
            seqs = []
            while True:
                item = await resumed.read()
                if item.HasField("event"):
                    seqs.append(item.event.seq)
                    if item.event.messages_appended.messages and item.event.messages_appended.messages[0].seq == 3:
                        break
            resumed.cancel()
            assert seqs == list(range(cursor + 1, seqs[-1] + 1))  # in order, no gap, no repeat
            assert seqs and seqs[0] == cursor + 1
    finally:
        server.stop()
