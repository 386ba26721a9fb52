"""A replica that stops drains its Watch streams (issue 42): an orderly stop (SIGTERM) of one
of two replicas over one MongoDB-wire server, while writes go on, ends each of its streams
after the events it holds with UNAVAILABLE (reason SHUTTING_DOWN), the status clients resume
on. Python clients watching through one target that names both replicas (round robin) resume
on the other replica with `after_seq`: every watch ends with every event of the log, once, in
order; none ends with an error (a stream cut with CANCELLED would raise in the client)."""

from __future__ import annotations

import asyncio
import time
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from memoryd.v1 import event_service_pb2 as epb
from memoryd.v1 import event_service_pb2_grpc, message_pb2
from memoryd_client import MemoryClient
from tests.processes import MemorydServer

WATCHES = 6  # through the round-robin target: about half of them open on the replica that stops
BEFORE = 15  # saves before the stop
AFTER = 15  # saves once it has stopped
STALL_SECONDS = 60.0  # a watch that does not reach the log's end by then is stuck


def _reason(error: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of the status ("" when it has none: gRPC's own ends carry none)."""
    status = rpc_status.from_call(error)
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


async def _direct(target: str, seqs: list[int]) -> grpc.aio.AioRpcError | None:
    """A raw stream on one replica from the start of the log: the error that ended it."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream = event_service_pb2_grpc.EventServiceStub(channel).Watch(epb.WatchRequest(after_seq=0))
        try:
            async for reply in stream:
                if reply.HasField("event"):
                    seqs.append(reply.event.seq)
        except grpc.aio.AioRpcError as error:
            return error
    return None


async def test_a_stopping_replica_drains_its_watch_streams_and_clients_resume_on_the_other(tmp_path, mongo_uri):
    database = f"memoryd_drain_{uuid.uuid4().hex[:8]}"
    flags = ("--mongodb-uri", mongo_uri, "--mongodb-database", database, "--vectors-enabled", "false")
    stopping, staying = replicas = [MemorydServer(tmp_path / name, *flags) for name in "ab"]
    try:
        for replica in replicas:
            replica.start()
        target = "ipv4:" + ",".join(r.target for r in replicas)
        async with MemoryClient(target, timeout=20) as client:
            watches = [client.watch(after_seq=0) for _ in range(WATCHES)]
            seen: list[list[int]] = [[] for _ in watches]

            async def follow(n: int) -> None:
                async for event in watches[n]:
                    seen[n].append(event.seq)

            async def save(i: int) -> None:
                await client.save_message("drain", message_pb2.Message(role="user", content=f"m{i}"))

            for i in range(BEFORE):  # the channel is connected to both replicas by then
                await save(i)
            followers = []
            for n in range(WATCHES):  # round robin: one call to each replica in turn
                followers.append(asyncio.create_task(follow(n)))
                await asyncio.sleep(0.05)
            direct_seqs: list[int] = []
            direct = asyncio.create_task(_direct(stopping.target, direct_seqs))
            # Every stream is live (it has read what was saved) before the stop begins.
            deadline = time.monotonic() + STALL_SECONDS
            while min(len(s) for s in seen) < BEFORE or len(direct_seqs) < BEFORE:
                assert time.monotonic() < deadline, "the watches did not catch up before the stop"
                await asyncio.sleep(0.05)

            # Saves go on while the replica stops (the client retries UNAVAILABLE on the other).
            stop = asyncio.create_task(asyncio.to_thread(stopping.terminate))
            i = BEFORE
            while not stop.done():
                await save(i)
                i += 1
            assert stop.result() == 0, stopping.log()[-3000:]  # an orderly stop, nothing abandoned
            for _ in range(AFTER):
                await save(i)
                i += 1
            history = await _history(staying.target)
            async with asyncio.timeout(STALL_SECONDS):
                error = await direct
                while min(len(s) for s in seen) < len(history):
                    await asyncio.sleep(0.05)
            for follower in followers:
                follower.cancel()
            await asyncio.gather(*followers, return_exceptions=True)
    finally:
        for replica in replicas:
            replica.stop()

    assert history == list(range(1, len(history) + 1)) and len(history) >= BEFORE + AFTER  # no gaps
    for n, seqs in enumerate(seen):
        assert seqs == history, f"watch {n} (reconnects {watches[n].reconnects})"
    assert any(w.reconnects for w in watches)  # some watched the replica that stopped, and resumed
    # The stream on the stopping replica: what it had, then UNAVAILABLE, never CANCELLED.
    assert error is not None and error.code() == grpc.StatusCode.UNAVAILABLE, error
    assert _reason(error) == "SHUTTING_DOWN"
    assert direct_seqs == history[: len(direct_seqs)] and len(direct_seqs) >= BEFORE
    assert "shutdown_step_abandoned" not in stopping.log()


async def _history(target: str) -> list[int]:
    """Every event seq of the log as it is now, read on `target` from the start (the first
    progress names the log's newest seq)."""
    seqs: list[int] = []
    newest = None
    async with grpc.aio.insecure_channel(target) as channel:
        stream = event_service_pb2_grpc.EventServiceStub(channel).Watch(epb.WatchRequest(after_seq=0))
        async for reply in stream:
            if newest is None and reply.HasField("progress"):
                newest = reply.progress.head_seq
            elif reply.HasField("event"):
                seqs.append(reply.event.seq)
            if newest is not None and (seqs[-1] if seqs else 0) >= newest:
                stream.cancel()
                break
    return seqs
