"""The session retention task of a running server (the rules are tested with a clock the test
holds in tests/conformance/test_lifecycle.py): a session whose window passes goes whole, its
vectors and keyword points with it; a bad retention label is refused."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import message_pb2
from tests.lifecycle.api import INDEXED_PER_SESSION, WAIT_SECONDS, fill_user, indexed
from tests.security.harness import error_details

# About 1.7 seconds, as a retention label states it.
WINDOW_DAYS = "0.00002"


async def test_the_retention_task_expires_a_session_whose_window_passed(serve, backend):
    async with serve(backend, session_retention_interval_seconds=0.2) as (app, stubs):
        ann = await fill_user(stubs, "ann", "zebra", 90.0, sessions=1)
        bob = await fill_user(stubs, "bob", "walrus", 0.0, sessions=1)
        await indexed(stubs, 2 * INDEXED_PER_SESSION)
        labels = message_pb2.SessionAttributes(labels={"memoryd.retention-days": WINDOW_DAYS})
        await stubs.memory.UpdateSession(mpb.UpdateSessionRequest(session_id=ann.sessions[0], attributes=labels))

        until = time.monotonic() + WAIT_SECONDS
        while (await stubs.memory.GetSession(mpb.GetSessionRequest(session_id=ann.sessions[0]))).found:
            assert time.monotonic() < until, "the session outlived its window"
            await asyncio.sleep(0.1)

        history = await stubs.memory.GetFullHistory(mpb.GetFullHistoryRequest(session_id=ann.sessions[0]))
        assert list(history.messages) == []
        await indexed(stubs, INDEXED_PER_SESSION)  # its keyword points went with it
        kept = await stubs.memory.GetSession(mpb.GetSessionRequest(session_id=bob.sessions[0]))
        assert kept.found and kept.session.message_count == 6  # the tenant keeps sessions (no policy)


async def test_a_retention_label_that_is_not_a_window_is_refused(serve):
    async with serve("sqlite") as (_, stubs):
        for value in ("soon", "0", "-1", "nan", "inf"):
            labels = message_pb2.SessionAttributes(labels={"memoryd.retention-days": value})
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stubs.memory.UpdateSession(mpb.UpdateSessionRequest(session_id="s", attributes=labels))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "attributes.labels" in error_details(refused.value)[1]
        for value in ("never", "30", "0.5"):
            labels = message_pb2.SessionAttributes(labels={"memoryd.retention-days": value})
            await stubs.memory.UpdateSession(mpb.UpdateSessionRequest(session_id="s", attributes=labels))
