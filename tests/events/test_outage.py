"""A MongoDB outage under a live watch: the stream fails with UNAVAILABLE, the client resumes, nothing is lost."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import message_pb2
from memoryd.app import start
from memoryd.config import Config
from memoryd_client import MemoryClient

from tests.events.conftest import WAIT, Client


def save_request(i: int) -> pb.SaveMessageRequest:
    return pb.SaveMessageRequest(
        session_id="outage", idempotency_key=f"k{i}", message=message_pb2.Message(role="user", content=f"m{i}")
    )


@pytest.mark.mongo
async def test_watch_survives_a_database_outage(tmp_path, secantus):
    database = secantus()
    app = await start(
        Config(listen="127.0.0.1:0", data_dir=tmp_path, mongodb_uri=database.uri, mongodb_database=f"outage_{uuid.uuid4().hex[:8]}")
    )
    raw = Client.connect(app.port)
    received: list[int] = []
    try:
        async with MemoryClient(f"127.0.0.1:{app.port}") as client:
            async with client.watch(after_seq=0, initial_backoff=0.1, max_backoff=0.5) as watch:

                async def consume() -> None:
                    async for event in watch:
                        received.append(event.seq)

                consumer = asyncio.create_task(consume())
                for i in range(5):
                    await raw.memory.SaveMessage(save_request(i))

                await asyncio.to_thread(database.stop)
                with pytest.raises(grpc.aio.AioRpcError) as failed:
                    await raw.memory.SaveMessage(save_request(99), timeout=10)
                assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
                await asyncio.to_thread(database.start)

                async with asyncio.timeout(WAIT):
                    while True:  # writes succeed again once the driver reconnects
                        try:
                            await raw.memory.SaveMessage(save_request(5), timeout=5)
                            break
                        except grpc.aio.AioRpcError:
                            await asyncio.sleep(0.2)
                for i in range(6, 10):
                    await raw.memory.SaveMessage(save_request(i))
                async with asyncio.timeout(WAIT):
                    while len(received) < 10:
                        await asyncio.sleep(0.05)
                consumer.cancel()
        assert received == list(range(1, 11))
    finally:
        await raw.channel.close()
        await app.stop(0)
