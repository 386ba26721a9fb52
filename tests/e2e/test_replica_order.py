"""Two replicas on one MongoDB, writers on both letting the server stamp timestamps: history
order is insertion order (the server stamp never goes below the session's newest, and is
taken in the transaction that reserves the seq)."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.app import start
from memoryd.config import Config
from tests.conftest import mongo_targets, mongo_uri_for
from tests.security.harness import Caller

WRITERS_PER_REPLICA = 4
MESSAGES_PER_WRITER = 24


@pytest.mark.parametrize("target", mongo_targets())
async def test_server_stamped_history_is_insertion_order_across_two_replicas(target, request, tmp_path):
    uri = mongo_uri_for(target, request)
    database = f"memoryd_replicas_{uuid.uuid4().hex[:8]}"
    replicas = [
        await start(Config(listen="127.0.0.1:0", data_dir=tmp_path / f"r{i}", mongodb_uri=uri, mongodb_database=database,
                           vectors_enabled=False))
        for i in range(2)
    ]
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") for app in replicas]
    try:
        async def writer(caller: Caller, name: str) -> None:
            for i in range(MESSAGES_PER_WRITER):
                message = message_pb2.Message(role="user", content=f"{name}:{i}")  # timestamp 0: the server stamps
                await caller.call("memory", "SaveMessage", mem.SaveMessageRequest(session_id="s", message=message), timeout=60)

        await asyncio.gather(*(
            writer(Caller(channel), f"r{r}w{w}") for r, channel in enumerate(channels) for w in range(WRITERS_PER_REPLICA)
        ))
        history, token = [], ""
        while True:
            page = await Caller(channels[1]).call(
                "memory", "GetFullHistory", mem.GetFullHistoryRequest(session_id="s", page_size=1000, page_token=token))
            history += page.messages
            token = page.next_page_token
            if not token:
                break
    finally:
        for channel in channels:
            await channel.close()
        for app in replicas:
            await app.stop(0)
    assert len(history) == 2 * WRITERS_PER_REPLICA * MESSAGES_PER_WRITER
    seqs = [m.seq for m in history]
    inversions = sum(1 for a, b in zip(seqs, seqs[1:]) if b < a)
    assert inversions == 0, f"{inversions} messages have a lower seq than the one before"
    for name in {m.content.split(":")[0] for m in history}:  # each writer's own order too
        own = [int(m.content.split(":")[1]) for m in history if m.content.startswith(name + ":")]
        assert own == sorted(own)
