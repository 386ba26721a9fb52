"""`--qdrant-url` listing several nodes of a cluster: a call that one node does not answer moves
the next calls to the next node of the list (the call that failed answers StorageUnavailable,
it is not retried); a node that answers with an error of its own stays the one called. Here the
first "node" is a closed port and the second the test server, on the server's REST port (one
--qdrant-grpc-port serves every node, so this runs over REST). The cluster itself, with a node
killed, is tests/faults/test_qdrant_cluster.py."""

from __future__ import annotations

import grpc
import pytest

from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.vectors import VectorPoint, VectorRecord
from memoryd.storage.qdrant.server import QdrantServerIndex, unreached
from tests.conftest import free_port
from tests.qdrant_server import collection_prefix
from tests.vectors.conftest import unit


async def test_a_failed_call_moves_the_next_calls_to_the_next_node(qdrant):
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    index = QdrantServerIndex(f"{dead}, {qdrant.url}", prefer_grpc=False, prefix=collection_prefix(), timeout=5)
    assert index.urls == [dead, qdrant.url]
    await index.open()
    try:
        with pytest.raises(StorageUnavailable):
            await index.ping()
        await index.ping()  # the next node
        point = VectorPoint("a", unit(0), VectorRecord("s", 1, "m", "m1", "user", text="x"))
        assert await index.upsert([point], 1) == [point.id]
        assert await index.has_point(4, point.id)
    finally:
        await index.close()


async def test_a_single_url_stays_on_its_node(qdrant):
    index = QdrantServerIndex(qdrant.url, prefer_grpc=False, prefix=collection_prefix())
    assert index.urls == [qdrant.url]
    await index.open()
    try:
        await index.ping()
        index._next_node(0)  # one node: nowhere else to go
        assert index._require() is index._clients[0]
    finally:
        await index.close()


async def _grpc_error(target: str, abort: tuple[grpc.StatusCode, str] | None = None) -> grpc.aio.AioRpcError:
    """The error of a call to `target`; with `abort`, a server there answers it with that status."""
    server = None
    if abort is not None:

        async def answer(request, context):
            await context.abort(*abort)

        class Handler(grpc.GenericRpcHandler):
            def service(self, handler_call_details):
                return grpc.unary_unary_rpc_method_handler(answer)

        server = grpc.aio.server()
        server.add_generic_rpc_handlers((Handler(),))
        target = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        await server.start()
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await channel.unary_unary("/qdrant.Points/Query")(b"", timeout=10)
        return caught.value
    finally:
        if server is not None:
            await server.stop(0)


async def test_only_a_node_that_did_not_answer_counts_as_unreached():
    closed = await _grpc_error(f"127.0.0.1:{free_port()}")
    assert closed.code() == grpc.StatusCode.UNAVAILABLE and unreached(closed)
    # A node that answers UNAVAILABLE itself (a lost peer's shard) is alive: memoryd stays on it.
    answered = await _grpc_error("", (grpc.StatusCode.UNAVAILABLE, "Service unavailable: no active replica"))
    assert answered.code() == grpc.StatusCode.UNAVAILABLE and not unreached(answered)
    timed_out = await _grpc_error("", (grpc.StatusCode.DEADLINE_EXCEEDED, "Timeout error: search took too long"))
    assert not unreached(timed_out)
    assert unreached(TimeoutError())
