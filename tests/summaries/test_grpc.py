"""SummaryService and EntryService over gRPC on a real server, per backend: validation,
error details, AssembleContext responses, events, image downgrade and restarts."""

from __future__ import annotations

import uuid

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from memoryd.v1 import entry_service_pb2 as epb
from memoryd.v1 import entry_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import summary_service_pb2_grpc
from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.models import DEFAULT_TENANT, EventType
from tests.conftest import BACKENDS, mongo_uri_for
from tests.vectors.index_state import drained


class Server:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.app = None
        self.channel = None

    async def start(self) -> None:
        self.app = await start(self.config)
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{self.app.port}")
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        self.summaries = summary_service_pb2_grpc.SummaryServiceStub(self.channel)
        self.entries = entry_service_pb2_grpc.EntryServiceStub(self.channel)

    async def stop(self) -> None:
        await self.channel.close()
        await self.app.stop(0)


@pytest.fixture(scope="module", params=BACKENDS)  # closed with this module, not at session end
async def server(request, tmp_path_factory):
    mongodb_uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("summaries-grpc"),
        mongodb_uri=mongodb_uri,
        mongodb_database=f"memoryd_summaries_grpc_{uuid.uuid4().hex[:8]}",
        downgrade_images=True,
        entry_scope_capacity=3,
    )
    server = Server(config)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def sid() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


def details(error: grpc.aio.AioRpcError) -> tuple[str, dict[str, str], list[str]]:
    status = rpc_status.from_call(error)
    reason, metadata, fields = "", {}, []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return reason, metadata, fields


async def save(server: Server, sid: str, *contents: str, role: str = "user") -> list[message_pb2.Message]:
    messages = [message_pb2.Message(role=role, content=c, timestamp=1000 + i) for i, c in enumerate(contents)]
    return list((await server.memory.SaveMessages(mpb.SaveMessagesRequest(session_id=sid, messages=messages))).messages)


async def test_summary_round_trip_and_errors(server, sid):
    await save(server, sid, "a", "b", "c", "d")
    saved = await server.summaries.SaveSummary(
        spb.SaveSummaryRequest(session_id=sid, from_seq=1, to_seq=2, text="a and b")
    )
    assert saved.cursor == 2 and saved.summary.id and saved.summary.coverage == spb.SUMMARY_COVERAGE_INTACT
    with pytest.raises(grpc.aio.AioRpcError) as overlap:
        await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=2, to_seq=3, text="x"))
    assert overlap.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    reason, metadata, _ = details(overlap.value)
    assert reason == "SUMMARY_RANGE_OVERLAPS" and metadata["cursor"] == "2"
    with pytest.raises(grpc.aio.AioRpcError) as beyond:
        await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=3, to_seq=10, text="x"))
    assert details(beyond.value)[0] == "SUMMARY_RANGE_BEYOND_HISTORY"
    with pytest.raises(grpc.aio.AioRpcError) as invalid:
        await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=0, to_seq=-1, text=" "))
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(details(invalid.value)[2]) == {"from_seq", "to_seq", "text"}

    cursor = await server.summaries.GetSummaryCursor(spb.GetSummaryCursorRequest(session_id=sid))
    assert (cursor.cursor, cursor.summary_count, cursor.last_seq, cursor.latest.text) == (2, 1, 4, "a and b")
    listed = await server.summaries.ListSummaries(spb.ListSummariesRequest(session_id=sid, page_size=10))
    assert [s.id for s in listed.summaries] == [saved.summary.id] and listed.next_page_token == ""
    events = await server.app.store.read_events(DEFAULT_TENANT, 0, 100_000)
    assert any(e.type == EventType.SUMMARY_SAVED and e.session_id == sid for e in events)


async def test_assemble_context_over_grpc(server, sid):
    await save(server, sid, "old question", "old answer", "new question 你好")
    await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=1, to_seq=2, text="S" * 30))
    full = await server.summaries.AssembleContext(spb.AssembleContextRequest(session_id=sid, recent_raw_n=2))
    assert full.summary.text == "S" * 30 and full.cursor == 2
    assert [(m.message.content, m.part) for m in full.messages] == [
        ("old answer", spb.CONTEXT_PART_RECENT),
        ("new question 你好", spb.CONTEXT_PART_TAIL),
    ]
    assert full.used_chars == 30 + 10 + 15 and not full.cuts
    await drained(server.app.vectors)  # recall finds what the index's log consumer has indexed
    tight = await server.summaries.AssembleContext(
        spb.AssembleContextRequest(session_id=sid, budget_chars=20, recent_raw_n=2, include_recall=True)
    )
    assert [m.message.content for m in tight.messages] == ["new question 你好"]
    assert tight.summary.text == "SSSSS" and tight.summary_truncated and tight.used_chars == 20
    # Recall is keyword recall here (no embedder): "old question" is recalled, then cut too.
    assert tight.recall_status == spb.RECALL_STATUS_OK
    assert [(c.part, c.reason, c.truncated) for c in tight.cuts] == [
        (spb.CONTEXT_PART_SUMMARY, spb.CUT_REASON_BUDGET, True),
        (spb.CONTEXT_PART_RECENT, spb.CUT_REASON_BUDGET, False),
        (spb.CONTEXT_PART_RECALL, spb.CUT_REASON_BUDGET, False),
    ]
    with pytest.raises(grpc.aio.AioRpcError) as invalid:
        await server.summaries.AssembleContext(
            spb.AssembleContextRequest(session_id=sid, budget_chars=-1, recall_query_vector=[float("nan")])
        )
    assert set(details(invalid.value)[2]) == {"budget_chars", "recall_query_vector", "recall_model_id"}


async def test_entries_over_grpc(server):
    scope = f"f:{uuid.uuid4().hex[:8]}"
    first = await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text=" likes  tea ", tags=["drink"]))
    assert first.entry.text == "likes tea" and first.scope_count == 1 and first.scope_capacity == 3
    again = await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="likes\ttea"))
    assert again.deduplicated and again.entry.id == first.entry.id
    # 2,000 characters after folding is fine; 2,001 is not.
    folded = await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="x" * 1000 + "  \n\t " + "y" * 999))
    assert len(folded.entry.text) == 2000
    with pytest.raises(grpc.aio.AioRpcError) as too_long:
        await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="z" * 2001))
    assert too_long.value.code() == grpc.StatusCode.INVALID_ARGUMENT and details(too_long.value)[2] == ["text"]
    await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="third", tags=["tea"]))
    with pytest.raises(grpc.aio.AioRpcError) as full:
        await server.entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="fourth"))
    assert full.value.code() == grpc.StatusCode.FAILED_PRECONDITION and details(full.value)[0] == "ENTRY_SCOPE_FULL"
    hits = await server.entries.SearchEntries(epb.SearchEntriesRequest(scope=scope, query="tea"))
    assert [h.entry.text for h in hits.hits] == ["third", "likes tea"] and not hits.semantic
    forgot = await server.entries.ForgetEntry(epb.ForgetEntryRequest(scope=scope, entry_id=first.entry.id))
    assert forgot.deleted
    listed = await server.entries.ListEntries(epb.ListEntriesRequest(scope=scope))
    assert len(listed.entries) == 2
    with pytest.raises(grpc.aio.AioRpcError) as invalid:
        await server.entries.SaveEntry(epb.SaveEntryRequest(scope="", text="x", embedding=[1.0]))
    assert set(details(invalid.value)[2]) == {"scope", "model_id"}


async def test_image_downgrade_flag(server, sid):
    msg = message_pb2.Message(role="user", content="pic", timestamp=1)
    msg.segments.add(type="image").data.update({"url": "data:image/png;base64,iVBORw0KGgo="})
    await server.memory.SaveMessage(mpb.SaveMessageRequest(session_id=sid, message=msg))
    (stored,) = (await server.memory.GetHistory(mpb.GetHistoryRequest(session_id=sid))).messages
    assert stored.segments[0].data["url"].startswith("[image ") and "image_hash" in stored.segments[0].data


async def test_assemble_context_recalls_through_the_vector_service(server, sid):
    from memoryd.v1 import vector_service_pb2 as vpb
    from memoryd.v1 import vector_service_pb2_grpc

    vectors = vector_service_pb2_grpc.VectorServiceStub(server.channel)
    model = f"test:{uuid.uuid4().hex[:6]}"
    old_session = f"{sid}-old"
    (old,) = await save(server, old_session, "my cat is called Miso")
    await vectors.UpsertVectors(
        vpb.UpsertVectorsRequest(
            points=[
                vpb.VectorPoint(model_id=model, vector=[1.0, 0.0, 0.0], session_id=old_session, message_id=old.id,
                                timestamp=old.timestamp, role="user", text=old.content),
            ]
        )
    )
    await save(server, sid, "what is my cat called?")
    request = spb.AssembleContextRequest(session_id=sid, include_recall=True)
    # Without a vector and without an embedder, recall is by keywords ("cat", "called").
    by_keywords = await server.summaries.AssembleContext(request)
    assert by_keywords.recall_status == spb.RECALL_STATUS_OK
    assert [(r.id, r.text) for r in by_keywords.recalled] == [(old.id, "my cat is called Miso")]

    request.recall_query_vector.extend([0.9, 0.1, 0.0])
    request.recall_model_id = model
    recalled = await server.summaries.AssembleContext(request)
    assert recalled.recall_status == spb.RECALL_STATUS_OK
    assert [(r.id, r.session_id, r.text) for r in recalled.recalled] == [(old.id, old_session, "my cat is called Miso")]
    request.budget_chars = len("what is my cat called?") + 6
    tight = await server.summaries.AssembleContext(request)
    assert [r.text for r in tight.recalled] == ["my cat"] and tight.recalled[0].truncated
    assert [(c.part, c.truncated) for c in tight.cuts] == [(spb.CONTEXT_PART_RECALL, True)]


async def test_cursor_survives_a_server_restart(server, sid):
    await save(server, sid, "a", "b", "c")
    await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=1, to_seq=2, text="ab"))
    await server.stop()
    await server.start()
    cursor = await server.summaries.GetSummaryCursor(spb.GetSummaryCursorRequest(session_id=sid))
    assert cursor.cursor == 2
    with pytest.raises(grpc.aio.AioRpcError):
        await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=2, to_seq=3, text="bc"))
    assert (await server.summaries.SaveSummary(spb.SaveSummaryRequest(session_id=sid, from_seq=3, to_seq=3, text="c"))).cursor == 3
