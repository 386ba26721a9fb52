"""Retention's idle through the API (issue 44 row 7): SaveSummary, UpsertVectors, PublishEvent
and a SaveMetadata keyed by the session each count as a write to the session, so a sweep
right after keeps it; a session nobody wrote to goes."""

from __future__ import annotations

import grpc

from memoryd.domain.hooks import MessageHooks
from memoryd.domain.models import now_ms
from memoryd.domain.retention import DAY_MS, Policy, Retention, Settings
from memoryd.domain.sessions import SessionAttributes, SessionUpdate
from memoryd.v1 import event_service_pb2 as evpb
from memoryd.v1 import event_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import metadata_service_pb2 as dpb
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import vector_service_pb2 as vpb
from tests.conformance.test_messages import msg
from tests.lifecycle.api import MODEL, unit

TENANT = "default"


async def test_writes_keyed_by_a_session_keep_it_from_retention(serve):
    async with serve("sqlite") as (app, stubs):
        at = now_ms() - 40 * DAY_MS
        kinds = ("summary", "vectors", "event", "metadata")
        for sid in (*kinds, "idle"):
            update = SessionUpdate(SessionAttributes("ann", "", {}))
            await app.store.append(TENANT, sid, [msg("hello", at), msg("world", at)], None, at, update)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        events = event_service_pb2_grpc.EventServiceStub(channel)
        try:
            await events.PublishEvent(
                evpb.PublishEventRequest(session_id="event", compress_requested={"requested_by": "x"})
            )
        finally:
            await channel.close()
        await stubs.summaries.SaveSummary(
            spb.SaveSummaryRequest(session_id="summary", from_seq=1, to_seq=2, text="recap")
        )
        point = vpb.VectorPoint(
            model_id=MODEL, vector=unit(0.0), session_id="vectors", timestamp=at, role="user", text="t"
        )
        await stubs.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=[point]))
        await stubs.metadata.SaveMetadata(dpb.SaveMetadataRequest(namespace="notes", key="metadata", data={"n": 1}))

        swept = await Retention(app.store, app.vectors or MessageHooks(), Settings(Policy(30))).sweep(TENANT)

        assert swept.deleted == 1
        listed = await stubs.memory.ListSessions(mpb.ListSessionsRequest(page_size=10))
        assert sorted(s.session_id for s in listed.sessions) == sorted(kinds)
        history = await stubs.memory.GetHistory(mpb.GetHistoryRequest(session_id="vectors", limit=10))
        assert [m.content for m in history.messages] == ["hello", "world"]
