"""VectorService over gRPC against a running memoryd (in-process app, real Qdrant, real SQLite)."""

from __future__ import annotations

import functools
import math

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc
from memoryd.app import start
from memoryd.config import Config
from tests.qdrant_server import SERVER_TARGETS, running
from tests.vectors.conftest import on_recall_targets, unit
from tests.vectors.index_state import drained

MODEL = "test:grpc"


def server_config(target: str, data_dir, **overrides) -> Config:
    # A fresh Edge shard takes seconds to create on a loaded test machine, and the first write
    # of a test may wait for the synchronizer's (the keyword shard): a generous call timeout.
    settings = dict(listen="127.0.0.1:0", data_dir=data_dir, vector_sync_poll_seconds=0.05,
                    vector_sync_max_backoff_seconds=0.2, qdrant_timeout_seconds=30.0)
    if target in SERVER_TARGETS:
        settings.update(running().settings(target))
    settings.update(overrides)
    return Config(**settings)


class Client:
    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(self.channel)
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self.channel)

    async def save(self, session: str, *messages: message_pb2.Message) -> list[message_pb2.Message]:
        response = await self.memory.SaveMessages(mem_pb.SaveMessagesRequest(session_id=session, messages=messages))
        return list(response.messages)

    async def index(self, session: str, stored: list[message_pb2.Message], angles: list[float], model=MODEL):
        points = [
            pb.VectorPoint(model_id=model, vector=unit(a), session_id=session, message_id=m.id,
                           timestamp=m.timestamp, role=m.role, text=m.content)
            for m, a in zip(stored, angles)
        ]
        return await self.vectors.UpsertVectors(pb.UpsertVectorsRequest(points=points))

    async def count(self) -> int:
        """The tenant's vectors (dense points; the keyword index is dimension 0)."""
        stats = await self.vectors.GetVectorStats(pb.GetVectorStatsRequest())
        return sum(c.count for c in stats.collections if c.dimension)

    async def keyword_points(self) -> int:
        return (await self.vectors.GetVectorStats(pb.GetVectorStatsRequest())).keyword_points


@pytest.fixture
async def client(target, tmp_path):
    app = await start(server_config(target, tmp_path))
    client = Client(app.port)
    client.indexed = functools.partial(drained, app.vectors)  # the background (keyword) indexing is done
    yield client
    await client.channel.close()
    await app.stop(0)


def violations(error: grpc.aio.AioRpcError) -> list[str]:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad = error_details_pb2.BadRequest()
                    detail.Unpack(bad)
                    return [v.field for v in bad.field_violations]
    return []


def user(content: str, ts: int) -> message_pb2.Message:
    return message_pb2.Message(role="user", content=content, timestamp=ts)


@on_recall_targets
async def test_upsert_and_search_over_grpc_with_context(client):
    stored = await client.save("s1", user("before", 1000), user("the hit", 2000), user("after", 3000))
    upserted = await client.index("s1", stored[1:2], [10])
    assert len(upserted.point_ids) == 1
    response = await client.vectors.SearchMemory(
        pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=3, context_window=1)
    )
    [hit] = response.hits
    assert hit.text == "the hit" and hit.message_id == stored[1].id and hit.session_id == "s1"
    assert hit.semantic_score == pytest.approx(math.cos(math.radians(10)), abs=1e-4)
    assert [c.message.content for c in hit.before] == ["before"]
    assert [c.message.content for c in hit.after] == ["after"]
    assert response.model_id == MODEL


@on_recall_targets
async def test_stats_count_per_model_and_per_collection(client):
    stored = await client.save("s1", user("a", 1000), user("b", 2000))
    await client.index("s1", stored, [1, 2])
    await client.vectors.UpsertVectors(pb.UpsertVectorsRequest(points=[
        pb.VectorPoint(model_id="test:wide", vector=[0.1] * 8, session_id="s1", timestamp=5),
        pb.VectorPoint(legacy=True, vector=[0.2] * 4, session_id="s1", timestamp=6),
    ]))
    stats = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert {(m.model_id, m.count, m.dimension) for m in stats.models} == {(MODEL, 2, 4), ("test:wide", 1, 8), ("", 1, 4)}
    # Never mixed dimensions; the keyword index (dimension 0) holds the two messages with text.
    assert {(c.dimension, c.count) for c in stats.collections} == {(0, 2), (4, 3), (8, 1)}
    assert stats.keyword_points == 2
    assert stats.embedder_configured is False and stats.index_queue_length == 0
    assert stats.indexed_through_seq == stats.event_seq > 0 and not stats.rebuilding


@pytest.fixture(scope="module")
async def edge_client(tmp_path_factory):
    """One server on Edge for the validation cases: each checks that its refused call changed
    nothing, so they need no server of their own (one engine process for the module)."""
    app = await start(server_config("edge", tmp_path_factory.mktemp("validation")))
    client = Client(app.port)
    yield client
    await client.channel.close()
    await app.stop(0)


# Validation comes before any storage: one target is enough (what the adapter answers for
# it, a model's dimensions, is in the conformance suite).
@pytest.mark.parametrize(
    "request_, field",
    [
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, vector=[1, float("nan"), 0, 0], session_id="s",
                                                        timestamp=1)]), "points[0].vector"),
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, vector=[1, float("inf"), 0, 0], session_id="s",
                                                        timestamp=1)]), "points[0].vector"),
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(vector=[1, 0, 0, 0], session_id="s", timestamp=1)]),
         "points[0].model_id"),
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, vector=[1, 0, 0, 0], timestamp=1)]),
         "points[0].session_id"),
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, vector=[], session_id="s", timestamp=1)]),
         "points[0].vector"),
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, legacy=True, vector=[1, 0], session_id="s",
                                                        timestamp=1)]), "points[0].model_id"),
        (pb.UpsertVectorsRequest(), "points"),
        # A model's dimension is fixed by the vectors already stored (4 in this test).
        (pb.UpsertVectorsRequest(points=[pb.VectorPoint(model_id=MODEL, vector=[1, 0, 0], session_id="s",
                                                        timestamp=1)]), "points[0].vector"),
        (pb.SearchMemoryRequest(query_vector=[1, 0, 0], model_id=MODEL), "query_vector"),
        (pb.SearchMemoryRequest(query_vector=[1, float("nan"), 0, 0], model_id=MODEL), "query_vector"),
        (pb.SearchMemoryRequest(query_vector=unit(0)), "model_id"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=101), "top_k"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=-1), "top_k"),
        (pb.SearchMemoryRequest(model_id=MODEL), "query_vector"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, time_weight=1.5), "time_weight"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, scope=pb.RECALL_SCOPE_SESSION), "session_id"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, scope=pb.RECALL_SCOPE_USER), "speaker_ids"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, scope=pb.RECALL_SCOPE_PLATFORM), "platform"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, scope=42), "scope"),
        (pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, context_window=-1), "context_window"),
        (pb.SearchMemoryRequest(query_text="x", keyword_weight=1.01), "keyword_weight"),
        (pb.SearchMemoryRequest(query_text="x", keyword_weight=float("nan")), "keyword_weight"),
        (pb.SearchMemoryRequest(query_text="x", neighbor_weight=1.5), "neighbor_weight"),
        (pb.SearchMemoryRequest(query_text="x", neighbor_weight=-0.1), "neighbor_weight"),
        (pb.SearchMemoryRequest(query_text="x", neighbor_weight=float("inf")), "neighbor_weight"),
        (pb.SearchMemoryRequest(query_text="x", date_weight=1.5), "date_weight"),
        (pb.SearchMemoryRequest(query_text="x", date_weight=float("nan")), "date_weight"),
        (pb.SearchMemoryRequest(query_text="x", fusion=9), "fusion"),
        (pb.SearchMemoryRequest(query_text="x", reference_time=0), "reference_time"),
        (pb.SearchMemoryRequest(query_text="x", reference_time=-5), "reference_time"),
        (pb.SearchMemoryRequest(query_text="x", half_life_hours=0), "half_life_hours"),
        (pb.SearchMemoryRequest(query_text="x", half_life_hours=87_601), "half_life_hours"),
        (pb.SearchMemoryRequest(query_text="x", half_life_hours=float("inf")), "half_life_hours"),
        (pb.DeleteVectorsRequest(), "selector"),
        (pb.DeleteVectorsRequest(model=pb.DeleteVectorsRequest.ByModel()), "model.model_id"),
        (pb.DeleteVectorsRequest(timestamps=pb.DeleteVectorsRequest.ByTimestamps(session_id="s")),
         "timestamps.timestamps"),
    ],
)
async def test_invalid_input_names_the_field_and_stores_nothing(edge_client, request_, field):
    client = edge_client
    stored = await client.save("s1", user("x", 1000))
    await client.index("s1", stored, [1])
    before = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    method = {
        pb.UpsertVectorsRequest: client.vectors.UpsertVectors,
        pb.SearchMemoryRequest: client.vectors.SearchMemory,
        pb.DeleteVectorsRequest: client.vectors.DeleteVectors,
    }[type(request_)]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await method(request_)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert field in violations(caught.value)
    after = await client.vectors.GetVectorStats(pb.GetVectorStatsRequest())
    assert after.models == before.models and after.legacy_model == before.legacy_model


@on_recall_targets
async def test_query_text_without_an_embedder_is_a_keyword_search(client):
    await client.save("trip", user("We went hiking in the Alps", 1000), user("The lake was cold", 2000))
    await client.save("zh", user("我昨天和我的狗去山里徒步旅行", 3000))
    await client.indexed()
    response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="hiking trip", context_window=1))
    [hit] = response.hits
    assert hit.text == "We went hiking in the Alps" and [c.message.content for c in hit.after] == ["The lake was cold"]
    assert hit.keyword_match and not hit.semantic_match and hit.keyword_score > 0 and hit.relevance == 1
    assert response.retrieval == pb.RECALL_RETRIEVAL_KEYWORD and response.model_id == ""
    # Chinese is segmented into words: one word of the sentence finds it.
    chinese = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="徒步"))
    assert [h.text for h in chinese.hits] == ["我昨天和我的狗去山里徒步旅行"]
    # A semantic-only search needs a vector: FAILED_PRECONDITION without an embedder.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_text="hello", keyword_weight=0))
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION


@on_recall_targets
async def test_dates_in_the_query_lift_what_was_said_then_and_the_response_says_the_weights(client):
    day = 86_400_000
    dec_29 = 1_703_808_000_000  # 2023-12-29 UTC
    stored = await client.save(
        "chat",
        user("Made pasta with ham and peas, so good", dec_29 - 20 * day),
        user("Made pasta with ham and peas again", dec_29 + 3_600_000),
        user("Pasta night with friends", dec_29 - 40 * day),
    )
    await client.index("chat", stored, [10, 10, 20])  # the first two: the same meaning
    request = pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, query_text="pasta ham peas on 29 Dec 2023",
                                     top_k=3, time_weight=0, neighbor_weight=0, reference_time=dec_29 + 30 * day)  # fmt: skip
    response = await client.vectors.SearchMemory(request)
    assert response.retrieval == pb.RECALL_RETRIEVAL_HYBRID and response.semantic_weight == pytest.approx(0.5)
    first, *others = response.hits
    assert first.message_id == stored[1].id and first.date_lift > 0 and all(h.date_lift == 0 for h in others)
    assert first.score == pytest.approx(first.relevance + first.date_lift)
    request.date_weight = 0
    undated = await client.vectors.SearchMemory(request)
    assert all(h.date_lift == 0 for h in undated.hits)
    request.keyword_weight = 1
    assert (await client.vectors.SearchMemory(request)).semantic_weight == 0
    request.keyword_weight = 0
    assert (await client.vectors.SearchMemory(request)).semantic_weight == 1


@on_recall_targets
async def test_small_talk_said_in_many_sessions_is_one_hit(client):
    for day in range(4):
        await client.save(f"week-{day}", user("The train was late again.", 1000 + day))
    await client.save("sport", user("These days my training is all about fencing.", 500))
    await client.indexed()
    request = pb.SearchMemoryRequest(query_text="training", top_k=3, context_window=0)
    collapsed = await client.vectors.SearchMemory(request)
    assert sorted((h.text, h.repeats) for h in collapsed.hits) == [
        ("The train was late again.", 3), ("These days my training is all about fencing.", 0)
    ]  # fmt: skip
    request.keep_repeated_texts = True
    kept = await client.vectors.SearchMemory(request)
    assert len(kept.hits) == 3 and all(h.repeats == 0 for h in kept.hits)
    assert len({h.message_id for h in kept.hits}) == 3


@on_recall_targets
async def test_deleting_messages_removes_their_vectors(client):
    stored = await client.save("s1", *(user(f"m{i}", 1000 * (i + 1)) for i in range(6)))
    await client.index("s1", stored, [1, 2, 3, 4, 5, 6])
    # A point stored without a message id goes with its (session, timestamp).
    await client.vectors.UpsertVectors(pb.UpsertVectorsRequest(points=[
        pb.VectorPoint(model_id=MODEL, vector=unit(7), session_id="s1", timestamp=stored[0].timestamp, text="no id")
    ]))
    await client.indexed()
    assert await client.count() == 7
    assert await client.keyword_points() == 7  # six messages, and the point without an id

    deleted = await client.memory.DeleteMessagesByTimestamps(
        mem_pb.DeleteMessagesByTimestampsRequest(session_id="s1", timestamps=[stored[0].timestamp, stored[1].timestamp])
    )
    assert deleted.deleted_count == 2
    assert await client.count() == 4 and await client.keyword_points() == 4
    await client.memory.DeleteMessages(mem_pb.DeleteMessagesRequest(session_id="s1", ids=[stored[2].id]))
    assert await client.count() == 3 and await client.keyword_points() == 3
    response = await client.vectors.SearchMemory(
        pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=10, context_window=0)
    )
    assert sorted(h.text for h in response.hits) == ["m3", "m4", "m5"]

    cleared = await client.memory.ClearSession(
        mem_pb.ClearSessionRequest(session_id="s1", targets=[mem_pb.CLEAR_TARGET_VECTORS])
    )
    [result] = cleared.results
    assert result.outcome == mem_pb.CLEAR_OUTCOME_CLEARED and result.removed_count == 3
    assert await client.count() == 0 and await client.keyword_points() == 0


@on_recall_targets
async def test_delete_vectors_by_each_selector(client):
    a = await client.save("a", user("a0", 1000), user("a1", 2000))
    b = await client.save("b", user("b0", 1000))
    await client.index("a", a, [1, 2])
    await client.index("b", b, [3])
    await client.index("b", b, [3], model="test:other")
    await client.indexed()
    by_ts = await client.vectors.DeleteVectors(pb.DeleteVectorsRequest(
        timestamps=pb.DeleteVectorsRequest.ByTimestamps(session_id="a", timestamps=[1000])))
    assert (by_ts.deleted_count, by_ts.keyword_points_deleted) == (1, 1)
    by_model = await client.vectors.DeleteVectors(pb.DeleteVectorsRequest(
        model=pb.DeleteVectorsRequest.ByModel(model_id="test:other")))
    assert (by_model.deleted_count, by_model.keyword_points_deleted) == (1, 0)  # keywords have no model
    by_session = await client.vectors.DeleteVectors(pb.DeleteVectorsRequest(
        session=pb.DeleteVectorsRequest.BySession(session_id="a")))
    assert (by_session.deleted_count, by_session.keyword_points_deleted) == (1, 1)
    everything = await client.vectors.DeleteVectors(pb.DeleteVectorsRequest(all=pb.DeleteVectorsRequest.All()))
    assert (everything.deleted_count, everything.keyword_points_deleted) == (1, 1)
    assert await client.count() == 0 and await client.keyword_points() == 0


@on_recall_targets
async def test_replacing_history_removes_the_replaced_messages_vectors(client):
    stored = await client.save("s1", user("old-0", 1000), user("old-1", 2000))
    await client.index("s1", stored, [1, 2])
    archived = await client.save("s2", user("archived", 1000), user("recent", 2000))
    await client.index("s2", archived, [3, 4])
    await client.memory.TrimHistory(mem_pb.TrimHistoryRequest(session_id="s2", keep_recent=1))
    await client.indexed()
    assert await client.count() == 4  # archiving keeps vectors: the messages still exist
    assert await client.keyword_points() == 4

    replaced = await client.memory.ReplaceHistory(
        mem_pb.ReplaceHistoryRequest(session_id="s1", messages=[user("summary of the chat", 3000)])
    )
    assert replaced.removed_count == 2
    await client.indexed()
    assert await client.count() == 2
    assert await client.keyword_points() == 3  # the replacement is indexed for keywords


@on_recall_targets
async def test_popping_messages_removes_their_vectors(client):
    stored = await client.save("s1", *(user(f"m{i}", 1000 * (i + 1)) for i in range(3)))
    await client.index("s1", stored, [1, 2, 3])
    await client.indexed()
    assert await client.count() == 3 and await client.keyword_points() == 3
    popped = await client.memory.PopMessages(mem_pb.PopMessagesRequest(session_id="s1", n=2))
    assert [m.content for m in popped.messages] == ["m1", "m2"]
    assert await client.count() == 1 and await client.keyword_points() == 1
    response = await client.vectors.SearchMemory(pb.SearchMemoryRequest(query_vector=unit(0), model_id=MODEL, top_k=10))
    assert [h.text for h in response.hits] == ["m0"]
