"""memoryd started while its MongoDB is down serves anyway: health NOT_SERVING and calls
UNAVAILABLE until the database comes up, then it connects by itself (no restart). As in
test_outage.py, the status asserted is the one the server chose (its log), whether or not its
answer beat the client's clock."""

from __future__ import annotations

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from tests.processes import MemorydServer
from tests.faults.test_outage import (
    NOT_SERVING,
    SERVING,
    _health,
    _until,
    assert_client_saw_unavailable,
    assert_unavailable_by_storage,
    server_answered,
)


@pytest.mark.mongo
async def test_server_started_during_outage_recovers_by_itself(tmp_path, secantus):
    database = secantus()
    database.stop()
    server = MemorydServer(tmp_path, "--mongodb-uri", database.uri, "--health-check-interval-seconds", "0.3")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
            assert await _health(channel) == NOT_SERVING
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.GetHistory(mem.GetHistoryRequest(session_id="s"), timeout=3)
            assert_client_saw_unavailable(err.value)
            assert_unavailable_by_storage(await server_answered(server, "GetHistory", 1))

            database.start()

            async def serving():
                return await _health(channel) == SERVING

            await _until(serving, "health to report SERVING once the database is up")
            saved = await stub.SaveMessage(
                mem.SaveMessageRequest(session_id="s", message=message_pb2.Message(role="user", content="hi")), timeout=10
            )
            assert saved.message.seq == 1
            history = await stub.GetHistory(mem.GetHistoryRequest(session_id="s"), timeout=10)
            assert [m.content for m in history.messages] == ["hi"]
    finally:
        server.stop()
