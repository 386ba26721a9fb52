"""The cross-tenant matrix: tenant A calls every RPC against tenant B's sessions, metadata,
events, vectors, summaries and memory entries (same session ids, namespaces, keys, message
ids, timestamps, idempotency keys, model ids, scopes, entry ids) and must read nothing and
change nothing. Every ordered pair of three tenants, on SQLite and MongoDB.
"""

from __future__ import annotations

import itertools
import uuid

import grpc
import pytest
from google.protobuf import struct_pb2

from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.conftest import BACKENDS, mongo_uri_for
from tests.security.conftest import TENANTS
from tests.security.harness import Caller, new_token, snapshot, start_app

PAIRS = list(itertools.permutations(TENANTS, 2))
ALL_ROLES = ["user", "assistant", "system", "tool", "notice"]
ALL_TARGETS = [mem.CLEAR_TARGET_MESSAGES, mem.CLEAR_TARGET_METADATA, mem.CLEAR_TARGET_VECTORS]
FAR_FUTURE = 1 << 62


@pytest.fixture(scope="module", params=BACKENDS)
async def matrix(request, tmp_path_factory):
    tokens = {tenant: new_token() for tenant in TENANTS}
    uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    app = await start_app(tmp_path_factory.mktemp("matrix"), tokens, mongodb_uri=uri)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    yield request.param, app, {t: Caller(channel, tok, t) for t, tok in tokens.items()}
    await channel.close()
    await app.stop(0)


def _struct(**fields) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


async def _next_event(stream) -> event_pb2.Event:
    while True:
        response = await stream.read()
        assert response is not grpc.aio.EOF
        if response.HasField("event"):
            return response.event


async def _events_until(stream, marker_session: str) -> list[event_pb2.Event]:
    events = []
    while True:
        event = await _next_event(stream)
        events.append(event)
        if event.session_id == marker_session:
            return events


@pytest.mark.parametrize(("attacker", "victim"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
async def test_tenant_reads_nothing_and_changes_nothing_of_another(matrix, attacker, victim):
    backend, app, callers = matrix
    a, b = callers[attacker], callers[victim]
    tag = uuid.uuid4().hex[:8]
    session, namespace, key, idem = f"shared-{tag}", f"ns-{tag}", "k", f"idem-{tag}"
    scope, model, owner = f"scope-{tag}", f"test:model-{tag}", f"user-{tag}"
    secret = f"victim-secret-{tag}"

    # -- the victim's data --------------------------------------------------------------
    saved = await b.call(
        "memory",
        "SaveMessages",
        mem.SaveMessagesRequest(
            session_id=session,
            idempotency_key=idem,
            session_attributes=message_pb2.SessionAttributes(user_id=owner),
            messages=[
                message_pb2.Message(
                    role=role, content=f"{secret} {i}", timestamp=10_000 + i, kind="chat", metadata=_struct(platform="qq")
                )
                for i, role in enumerate(ALL_ROLES)
            ],
        ),
    )
    ids = [m.id for m in saved.messages]
    timestamps = [m.timestamp for m in saved.messages]
    await b.call("metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=namespace, key=key, data=_struct(secret=secret)))
    await b.call(
        "events", "PublishEvent", ev.PublishEventRequest(session_id=session, compress_requested=event_pb2.CompressRequested())
    )
    points = [
        vec.VectorPoint(
            model_id=model, vector=[1.0, 0.5 * i, 0.25], session_id=session, message_id=m.id, timestamp=m.timestamp,
            role=m.role, text=m.content, sender_id=f"user-{tag}",
        )
        for i, m in enumerate(saved.messages)
    ]
    await b.call("vectors", "UpsertVectors", vec.UpsertVectorsRequest(points=points))
    await b.call("summaries", "SaveSummary", summ.SaveSummaryRequest(session_id=session, from_seq=1, to_seq=3, text=secret))
    entry = (await b.call("entries", "SaveEntry", ent.SaveEntryRequest(scope=scope, text=secret, tags=["t"]))).entry
    victim_watch = b.watch(ev.WatchRequest())
    await victim_watch.initial_metadata()
    before = await snapshot(app, b, (namespace,), (scope,))
    assert before["vectors"] and before["summaries"][session] and before["entries"][scope]
    attacker_watch = a.watch(ev.WatchRequest(after_seq=0))

    # -- reads see nothing -----------------------------------------------------------------
    assert not (await a.call("memory", "GetHistory", mem.GetHistoryRequest(session_id=session, limit=1000))).messages
    assert not (await a.call("memory", "GetFullHistory", mem.GetFullHistoryRequest(session_id=session))).messages
    in_range = await a.call(
        "memory", "ListMessagesInRange", mem.ListMessagesInRangeRequest(session_id=session, from_ts=0, to_ts=FAR_FUTURE)
    )
    assert not in_range.messages
    recent = await a.call("memory", "GetRecentAcrossSessions", mem.GetRecentAcrossSessionsRequest(limit=1000, roles=ALL_ROLES))
    assert not {m.message.id for m in recent.messages} & set(ids)
    assert all(secret not in m.message.content for m in recent.messages)
    sessions = await a.call("memory", "ListSessions", mem.ListSessionsRequest(page_size=1000))
    assert session not in {s.session_id for s in sessions.sessions}
    assert not (await a.call("metadata", "GetMetadata", meta.GetMetadataRequest(namespace=namespace, key=key))).found
    assert not (await a.call("metadata", "ListMetadata", meta.ListMetadataRequest(namespace=namespace))).entries
    for recall_scope, extra in (
        (vec.RECALL_SCOPE_ALL, {}),
        (vec.RECALL_SCOPE_SESSION, {"session_id": session}),
        (vec.RECALL_SCOPE_USER, {"speaker_ids": [f"user-{tag}"]}),
        (vec.RECALL_SCOPE_PLATFORM, {"platform": "qq"}),
    ):
        found = await a.call(
            "vectors",
            "SearchMemory",
            vec.SearchMemoryRequest(query_vector=[1.0, 0.5, 0.25], model_id=model, top_k=100, min_score=-1, scope=recall_scope, **extra),
        )
        assert not found.hits
    # Keyword recall (the victim's messages have keyword points too) finds none of them.
    by_words = await a.call("vectors", "SearchMemory", vec.SearchMemoryRequest(query_text=secret, top_k=100))
    assert all(secret not in h.text for h in by_words.hits)
    stats = await a.call("vectors", "GetVectorStats", vec.GetVectorStatsRequest())
    assert model not in {m.model_id for m in stats.models}  # the attacker's own vectors are other models
    # The dense collections count the attacker's vectors only (the keyword index is dimension 0).
    assert sum(c.count for c in stats.collections if c.dimension) == sum(m.count for m in stats.models)
    assert not (await a.call("summaries", "ListSummaries", summ.ListSummariesRequest(session_id=session))).summaries
    cursor = await a.call("summaries", "GetSummaryCursor", summ.GetSummaryCursorRequest(session_id=session))
    assert cursor.cursor == 0 and cursor.summary_count == 0 and cursor.last_seq == 0
    assembled = await a.call(
        "summaries",
        "AssembleContext",
        summ.AssembleContextRequest(
            session_id=session, budget_chars=100_000, include_recall=True, recall_query_vector=[1.0, 0.5, 0.25], recall_model_id=model
        ),
    )
    assert not assembled.messages and not assembled.recalled and not assembled.summary.text
    assert not (await a.call("entries", "ListEntries", ent.ListEntriesRequest(scope=scope))).entries
    assert not (await a.call("entries", "SearchEntries", ent.SearchEntriesRequest(scope=scope, query=secret))).hits

    # -- mutations aimed at the victim's records change nothing of theirs ----------------------
    assert (await a.call("memory", "TrimHistory", mem.TrimHistoryRequest(session_id=session, keep_recent=0))).archived_count == 0
    update = mem.UpdateMessageContentRequest(session_id=session, old_text=secret, new_text="pwned", recent_limit=1000)
    assert (await a.call("memory", "UpdateMessageContent", update)).changed_count == 0
    by_ts = mem.DeleteMessagesByTimestampsRequest(session_id=session, timestamps=timestamps)
    assert (await a.call("memory", "DeleteMessagesByTimestamps", by_ts)).deleted_count == 0
    assert (await a.call("memory", "DeleteMessages", mem.DeleteMessagesRequest(session_id=session, ids=ids))).deleted_count == 0
    cleared = await a.call("memory", "ClearSession", mem.ClearSessionRequest(session_id=session, targets=ALL_TARGETS))
    assert [r.removed_count for r in cleared.results] == [0, 0, 0]
    assert not (await a.call("metadata", "DeleteMetadata", meta.DeleteMetadataRequest(namespace=namespace, key=key))).deleted
    for selector in (
        {"session": vec.DeleteVectorsRequest.BySession(session_id=session)},
        {"timestamps": vec.DeleteVectorsRequest.ByTimestamps(session_id=session, timestamps=timestamps)},
        {"model": vec.DeleteVectorsRequest.ByModel(model_id=model)},
    ):
        assert (await a.call("vectors", "DeleteVectors", vec.DeleteVectorsRequest(**selector))).deleted_count == 0
    assert not (await a.call("entries", "ForgetEntry", ent.ForgetEntryRequest(scope=scope, entry_id=entry.id))).deleted
    for user in (owner, scope):  # the victim's session owner, the victim's entry scope
        forgotten = await a.call("memory", "ForgetUser", mem.ForgetUserRequest(user_id=user))
        assert (forgotten.sessions_forgotten, forgotten.messages_deleted, forgotten.entries_deleted) == (0, 0, 0)
    mine = await a.call("entries", "SaveEntry", ent.SaveEntryRequest(scope=scope, text=secret))
    assert not mine.deduplicated and mine.scope_count == 1
    replaced = await a.call(
        "memory", "ReplaceHistory", mem.ReplaceHistoryRequest(session_id=session, messages=[message_pb2.Message(role="user", content="mine")])
    )
    assert replaced.removed_count == 0
    # The victim's idempotency key means nothing in another tenant: a new message is stored.
    own = await a.call(
        "memory",
        "SaveMessage",
        mem.SaveMessageRequest(session_id=session, idempotency_key=idem, message=message_pb2.Message(role="user", content="mine")),
    )
    assert not own.deduplicated and own.message.id not in ids
    await a.call("metadata", "SaveMetadata", meta.SaveMetadataRequest(namespace=namespace, key=key, data=_struct(secret="mine")))
    await a.call("events", "PublishEvent", ev.PublishEventRequest(session_id=session, compress_requested=event_pb2.CompressRequested()))
    await a.call(
        "vectors", "UpsertVectors", vec.UpsertVectorsRequest(points=[vec.VectorPoint(model_id=model, vector=[0.0, 1.0, 0.0], session_id=session, timestamp=5)])
    )
    await a.call("memory", "ClearAll", mem.ClearAllRequest(targets=ALL_TARGETS))
    await a.call("vectors", "DeleteVectors", vec.DeleteVectorsRequest(all=vec.DeleteVectorsRequest.All()))
    marker = f"marker-{tag}"
    await a.call("events", "PublishEvent", ev.PublishEventRequest(session_id=marker, compress_requested=event_pb2.CompressRequested()))

    # -- the victim's data and event log are untouched ----------------------------------------
    assert await snapshot(app, b, (namespace,), (scope,)) == before
    got = await b.call("metadata", "GetMetadata", meta.GetMetadataRequest(namespace=namespace, key=key))
    assert got.found and got.entry.data["secret"] == secret
    await b.call("events", "PublishEvent", ev.PublishEventRequest(session_id=marker, compress_requested=event_pb2.CompressRequested()))
    first = await _next_event(victim_watch)
    assert first.session_id == marker and first.seq == before["events"][1] + 1
    victim_watch.cancel()
    search = vec.SearchMemoryRequest(query_vector=[1.0, 0.5, 0.25], model_id=model, top_k=100, min_score=-1, context_window=0)
    assert {h.message_id for h in (await b.call("vectors", "SearchMemory", search)).hits} == set(ids)

    # -- the attacker's own log never carried the victim's events -------------------------------
    seen = await _events_until(attacker_watch, marker)
    attacker_watch.cancel()
    for event in seen:
        raw = event.SerializeToString()
        assert not any(i.encode() in raw for i in ids) and secret.encode() not in raw

