"""Storage outage: the MongoDB-wire server (a private SecantusDB) is stopped during load and
started again on the same port and data directory. Meanwhile calls fail with UNAVAILABLE
(with RetryInfo and a storage reason) and health reports NOT_SERVING; afterwards calls
succeed and health reports SERVING again, without restarting memoryd. Acknowledged writes
are all there exactly once.

What is asserted is the status and reason the server chose, read from its log (`rpc_failed`,
one record per failed call): on a loaded machine its UNAVAILABLE can reach the client after
the client's own clock has run out, which the client reports as DEADLINE_EXCEEDED. A client
may see either; the server must have answered UNAVAILABLE, with a storage reason, every time."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from tests.processes import MemorydServer
from tests.security.harness import error_details, rich_status

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
CALL_DEADLINE = 3.0
WAIT_LIMIT = 60.0
STORAGE_REASONS = {"STORAGE_UNAVAILABLE", "STORAGE_TIMEOUT"}
# What a client may see of a failure the server answered UNAVAILABLE: that status, or its own
# DEADLINE_EXCEEDED when the answer arrived after the client's clock ran out.
CLIENT_SIDE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


def server_failures(server: MemorydServer, method: str) -> Counter:
    """(code, reason) of every failed call of `method` as the server answered it (its log)."""
    answers: Counter = Counter()
    for line in server.log().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event") == "rpc_crashed":
            raise AssertionError(f"the server crashed on a call: {line}")
        if record.get("event") == "rpc_failed" and record.get("method") == method:
            answers[(record["code"], record["reason"])] += 1
    return answers


def assert_unavailable_by_storage(answers: Counter) -> None:
    assert answers and {code for code, _ in answers} == {"UNAVAILABLE"}, answers
    assert {reason for _, reason in answers} <= STORAGE_REASONS, answers


async def server_answered(server: MemorydServer, method: str, at_least: int) -> Counter:
    """Wait (bounded) until the server has answered `at_least` failed calls of `method`."""
    await _until(lambda: _true(sum(server_failures(server, method).values()) >= at_least), f"{method} answers")
    return server_failures(server, method)


def assert_client_saw_unavailable(error: grpc.aio.AioRpcError) -> None:
    """UNAVAILABLE with RetryInfo and a storage reason, or the client's own DEADLINE_EXCEEDED."""
    assert error.code() in CLIENT_SIDE, error
    if error.code() == grpc.StatusCode.UNAVAILABLE:
        assert any("RetryInfo" in d.type_url for d in rich_status(error).details)
        assert error_details(error)[0] in STORAGE_REASONS


async def _health(channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return reply.status


async def _until(predicate, what: str):
    loop = asyncio.get_running_loop()
    give_up = loop.time() + WAIT_LIMIT
    while True:
        result = await predicate()
        if result:
            return result
        assert loop.time() < give_up, f"gave up waiting for {what}"
        await asyncio.sleep(0.2)


def _save(session: str, key: str) -> mem.SaveMessageRequest:
    return mem.SaveMessageRequest(session_id=session, idempotency_key=key, message=message_pb2.Message(role="user", content=key))


@pytest.mark.mongo
async def test_storage_outage_is_unavailable_then_recovers(tmp_path, secantus):
    database = secantus()
    server = MemorydServer(tmp_path, "--mongodb-uri", database.uri, "--health-check-interval-seconds", "0.3")
    server.start()
    acked: dict[str, str] = {}
    attempted: list[str] = []
    failures: Counter = Counter()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            assert await _health(channel) == SERVING
            stop_load = asyncio.Event()

            async def writer(w: int) -> None:
                i = 0
                while not stop_load.is_set():
                    key = f"w{w}-{i}"
                    attempted.append(key)
                    try:
                        response = await stub.SaveMessage(_save("outage", key), timeout=CALL_DEADLINE)
                        acked[key] = response.message.id
                    except grpc.aio.AioRpcError as error:
                        failures[error.code()] += 1
                        assert_client_saw_unavailable(error)
                        await asyncio.sleep(0.05)
                    i += 1

            writers = [asyncio.create_task(writer(w)) for w in range(3)]
            await _until(lambda: _true(len(acked) >= 20), "writes before the outage")

            await asyncio.to_thread(database.stop)
            await _until(lambda: _is(_health(channel), NOT_SERVING), "health NOT_SERVING")
            # A call during the outage: the server answers UNAVAILABLE (RetryInfo, storage reason).
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.GetHistory(mem.GetHistoryRequest(session_id="outage"), timeout=CALL_DEADLINE)
            assert_client_saw_unavailable(caught.value)
            assert_unavailable_by_storage(await server_answered(server, "GetHistory", 1))
            during = sum(server_failures(server, "SaveMessage").values())
            await server_answered(server, "SaveMessage", during + 1)  # the writers' calls fail too

            await asyncio.to_thread(database.start)
            await _until(lambda: _is(_health(channel), SERVING), "health SERVING again")
            recovered = len(acked)
            await _until(lambda: _true(len(acked) >= recovered + 20), "writes after recovery")
            stop_load.set()
            await asyncio.gather(*writers)

            # Writes without an answer are retried with their key; then every acknowledged
            # write is present exactly once.
            for key in attempted:
                response = await stub.SaveMessage(_save("outage", key), timeout=30)
                assert acked.setdefault(key, response.message.id) == response.message.id
            page = await stub.GetFullHistory(mem.GetFullHistoryRequest(session_id="outage", page_size=1000), timeout=30)
            stored = Counter((m.content, m.id) for m in page.messages)
            assert stored == Counter(acked.items())
            assert set(failures) <= CLIENT_SIDE, failures
            assert_unavailable_by_storage(server_failures(server, "SaveMessage"))
        assert server.process.poll() is None  # memoryd was never restarted
        print(f"outage: acked={len(acked)} failures={dict(failures)}")
    finally:
        server.stop()


@pytest.mark.mongo
async def test_hung_storage_answers_unavailable_before_the_deadline(tmp_path, secantus):
    """A MongoDB that stops answering but keeps its connections open (SIGSTOP): calls made
    while it hangs, with deadlines of 2, 3 and 5 s, are answered UNAVAILABLE (STORAGE_TIMEOUT
    or STORAGE_UNAVAILABLE, with RetryInfo) by the server, which stops waiting for storage
    before the caller's deadline instead of letting it pass in silence. Cancelling a pymongo
    transaction that is waiting on the network sends abortTransaction over that network, so
    the store's own timeout has to expire before the server's backstop cancels anything."""
    database = secantus()
    server = MemorydServer(tmp_path, "--mongodb-uri", database.uri)
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            await stub.SaveMessage(_save("hung", "before"), timeout=30)
            database.pause()
            try:
                calls = [stub.SaveMessage(_save("hung", f"k{i}"), timeout=deadline) for i, deadline in enumerate((2.0, 3.0, 5.0))]
                calls += [stub.GetHistory(mem.GetHistoryRequest(session_id="hung"), timeout=2.0)]
                outcomes = await asyncio.gather(*calls, return_exceptions=True)
            finally:
                database.resume()
            assert all(isinstance(o, grpc.aio.AioRpcError) for o in outcomes), outcomes
            for outcome in outcomes:
                assert_client_saw_unavailable(outcome)
            assert_unavailable_by_storage(await server_answered(server, "SaveMessage", 3))
            assert_unavailable_by_storage(await server_answered(server, "GetHistory", 1))
            saved = await stub.SaveMessage(_save("hung", "after"), timeout=30)
            assert saved.message.content == "after"
    finally:
        server.stop()


async def _true(value: bool) -> bool:
    return value


async def _is(awaitable, expected) -> bool:
    return (await awaitable) == expected
