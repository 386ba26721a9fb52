"""Durability: a concurrent write load with idempotency keys through a real `memoryd serve`,
`kill -9` mid-load, restart on the same data, client retries of every attempted write.
Every acknowledged write is present exactly once, with the id it was acknowledged with;
batches are all-or-nothing.

SQLite runs with WAL and synchronous=NORMAL (the default): a commit is in the WAL (the
OS page cache) before it is acknowledged, so killing the process loses nothing; only an
OS crash or power cut may lose the last commits, which synchronous=FULL closes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from tests.conftest import mongo_uri_for
from tests.processes import MemorydServer

WRITERS = 8
SESSIONS = 4
BATCH = 3
RETRY_BUDGET_SECONDS = 120.0
RETRIES = [0]


def _request(session: str, key: str, batch: bool):
    if batch:
        messages = [message_pb2.Message(role="user", content=f"{key}/{i}") for i in range(BATCH)]
        return mem.SaveMessagesRequest(session_id=session, idempotency_key=key, messages=messages)
    return mem.SaveMessageRequest(session_id=session, idempotency_key=key, message=message_pb2.Message(role="user", content=key))


def _ids(response) -> list[str]:
    return [m.id for m in response.messages] if hasattr(response, "messages") else [response.message.id]


async def _save(stub, session: str, key: str, batch: bool):
    method = stub.SaveMessages if batch else stub.SaveMessage
    return await method(_request(session, key, batch), timeout=20)


async def _retry(stub, session: str, key: str, batch: bool, budget: float = RETRY_BUDGET_SECONDS):
    """A client's retry loop: UNAVAILABLE is retried with backoff (e.g. MongoDB still holds
    the killed server's open transactions until they expire)."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + budget
    delay = 0.1
    while True:
        try:
            return await _save(stub, session, key, batch)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or loop.time() > give_up:
                raise
            RETRIES[0] += 1
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


async def _contents(stub, sessions) -> Counter:
    seen: Counter = Counter()
    for session in sessions:
        token = ""
        while True:
            page = await stub.GetFullHistory(
                mem.GetFullHistoryRequest(session_id=session, page_size=1000, page_token=token), timeout=30
            )
            seen.update((m.content, m.id) for m in page.messages)
            token = page.next_page_token
            if not token:
                break
    return seen


@pytest.mark.parametrize(("backend", "rounds", "acks_per_round"), [("sqlite", 3, 150), ("mongo", 1, 40)])
async def test_acknowledged_writes_survive_kill9(request, tmp_path, backend, rounds, acks_per_round):
    args: tuple[str, ...] = ()
    if backend == "mongo":
        uri = mongo_uri_for("mongo", request)
        args = ("--mongodb-uri", uri, "--mongodb-database", f"memoryd_crash_{uuid.uuid4().hex[:8]}")
    server = MemorydServer(tmp_path, *args)
    server.start()
    sessions = [f"crash-{i}" for i in range(SESSIONS)]
    attempted: dict[str, tuple[str, bool]] = {}  # key -> (session, batch)
    acked: dict[str, list[str]] = {}  # key -> message ids it was acknowledged with
    try:
        for round_no in range(rounds):
            channel = grpc.aio.insecure_channel(server.target)
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            kill_now = asyncio.Event()
            acked_before = len(acked)

            async def writer(w: int) -> None:
                i = 0
                while True:
                    key, batch = f"r{round_no}-w{w}-{i}", (w % 2 == 1)
                    session = sessions[(w + i) % SESSIONS]
                    attempted[key] = (session, batch)
                    try:
                        response = await _save(stub, session, key, batch)
                    except grpc.aio.AioRpcError as error:
                        assert error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), error
                        kill_now.set()
                        return
                    acked[key] = _ids(response)
                    if len(acked) - acked_before >= acks_per_round:
                        kill_now.set()
                    i += 1

            tasks = [asyncio.create_task(writer(w)) for w in range(WRITERS)]
            await kill_now.wait()
            server.kill()  # with requests in flight
            await asyncio.gather(*tasks)
            await channel.close()
            assert len(acked) - acked_before >= acks_per_round
            acked_at_kill = len(acked)
            server.start()

            # The client retries every write it attempted, with the same key.
            async with grpc.aio.insecure_channel(server.target) as channel:
                stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
                for key, (session, batch) in attempted.items():
                    response = await _retry(stub, session, key, batch)
                    if key in acked:
                        assert response.deduplicated and _ids(response) == acked[key], key
                    else:
                        acked[key] = _ids(response)

        async with grpc.aio.insecure_channel(server.target) as channel:
            seen = await _contents(memory_service_pb2_grpc.MemoryServiceStub(channel), sessions)
        expected = Counter()
        for key, (_, batch) in attempted.items():
            contents = [f"{key}/{i}" for i in range(BATCH)] if batch else [key]
            expected.update(zip(contents, acked[key]))
        lost = [pair for pair in expected if seen[pair] == 0]
        duplicated = [pair for pair, n in seen.items() if n > 1]
        assert not lost and not duplicated
        assert seen == expected  # nothing else either: no write stored under a second id
        print(
            f"crash[{backend}]: rounds={rounds} writes attempted={len(attempted)} "
            f"acknowledged before the last kill={acked_at_kill} messages={sum(seen.values())} lost={len(lost)} "
            f"retried UNAVAILABLE={RETRIES[0]}"
        )
    finally:
        server.stop()
