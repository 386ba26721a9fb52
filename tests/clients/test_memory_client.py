"""memoryd_client.MemoryClient against a live server."""

from __future__ import annotations

import asyncio
import sys

import grpc
import pytest

from memoryd.v1 import event_service_pb2, memory_service_pb2, summary_service_pb2
from memoryd_client import (
    DEFAULT_RETRY,
    EventsCompactedError,
    EventType,
    InvalidArgumentError,
    UnauthenticatedError,
    MemoryClient,
    UnavailableError,
    message,
    retried_methods,
    retry_service_config,
    to_dict,
)
from memoryd_client.example import run as run_example
from tests.clients.live import Fault, FaultProxy, StreamCut
from tests.processes import MemorydServer
from tests import processes

SAVE = "/memoryd.v1.MemoryService/SaveMessage"
WATCH = "/memoryd.v1.EventService/Watch"


async def test_example_scenario(client: MemoryClient, session_id: str):
    outcome = await run_example(client, session_id)

    assert [m.content for m in outcome.history] == [m.content for m in outcome.saved]
    assert [m.id for m in outcome.history] == [m.id for m in outcome.saved]
    seqs = [m.seq for m in outcome.history]
    assert seqs == sorted(set(seqs))
    assert outcome.deleted_count == 1
    gone = outcome.saved[1]
    assert outcome.deletion.type == EventType.EVENT_TYPE_MESSAGES_DELETED
    assert outcome.deletion.session_id == session_id
    assert list(outcome.deletion.messages_deleted.ids) == [gone.id]
    assert list(outcome.deletion.messages_deleted.timestamps) == [gone.timestamp]
    assert [m.id for m in outcome.history_after] == [outcome.saved[0].id, outcome.saved[2].id]


def test_example_runs_as_a_program(memoryd: MemorydServer):
    result = processes.run(
        [sys.executable, "-m", "memoryd_client.example", "--target", memoryd.target],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "deleted 1;" in result.stdout
    assert "history now: ['What is the capital of France?', 'And of Italy?']" in result.stdout


async def test_history_defaults_to_the_contract_limit(client: MemoryClient, session_id: str):
    batch = [message("user", f"m{i}", timestamp=1_000 + i) for i in range(60)]
    saved = (await client.save_messages(session_id, batch)).messages

    history = await client.get_history(session_id)

    assert [m.id for m in history] == [m.id for m in saved[-50:]]


async def test_full_history_pages_through_everything(client: MemoryClient, session_id: str):
    await client.save_messages(session_id, [message("user", f"m{i}", timestamp=1_000 + i) for i in range(7)])
    await client.trim_history(session_id, keep_recent=2)

    contents = [m.content async for m in client.iter_full_history(session_id, page_size=3)]

    assert contents == [f"m{i}" for i in range(7)]


async def test_kind_absent_differs_from_empty(client: MemoryClient, session_id: str):
    await client.save_message(session_id, message("user", "no kind", timestamp=1))
    await client.save_message(session_id, message("user", "empty kind", kind="", timestamp=2))

    absent, empty = await client.get_history(session_id)

    assert not absent.HasField("kind")
    assert empty.HasField("kind") and empty.kind == ""


async def test_metadata_round_trip(client: MemoryClient, session_id: str):
    assert await client.get_metadata("profiles", session_id) is None

    await client.save_metadata("profiles", session_id, {"name": "Ada", "langs": ["en", "fr"]})
    entry = await client.get_metadata("profiles", session_id)

    assert entry is not None and to_dict(entry.data) == {"name": "Ada", "langs": ["en", "fr"]}
    assert await client.delete_metadata("profiles", session_id) is True
    assert await client.get_metadata("profiles", session_id) is None


async def test_invalid_argument_carries_google_rpc_details(client: MemoryClient):
    with pytest.raises(InvalidArgumentError) as caught:
        await client.get_history("", limit=-1)

    error = caught.value
    assert error.code is grpc.StatusCode.INVALID_ARGUMENT
    assert error.status is not None and error.status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert {v.field for v in error.field_violations} == {"session_id", "limit"}
    assert error.reason  # ErrorInfo is present and names a reason


async def test_every_call_has_a_deadline(proxy: FaultProxy, session_id: str):
    async with MemoryClient(proxy.target, timeout=5) as client:
        await client.get_history(session_id)
        await client.save_message(session_id, message("user", "hi"))
        await client.get_history(session_id, timeout=120)  # a per-call timeout wins

    default, also_default, overridden = proxy.deadlines
    assert default is not None and 0 < default < 6  # the wire format rounds up a little
    assert also_default is not None and 0 < also_default < 6
    assert overridden is not None and 100 < overridden < 130


async def test_unavailable_is_retried_by_the_service_config(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE, grpc.StatusCode.UNAVAILABLE, times=2))
    async with MemoryClient(proxy.target) as client:
        saved = await client.save_message(session_id, message("user", "hello"))
        history = await client.get_history(session_id)

    assert proxy.attempts[SAVE] == 3
    # Every attempt carried the same request, idempotency key included.
    assert len({body for method, body in proxy.requests if method == SAVE}) == 1
    assert [m.id for m in history] == [saved.message.id]


async def test_without_retry_policy_unavailable_surfaces(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE, grpc.StatusCode.UNAVAILABLE, times=1))
    async with MemoryClient(proxy.target, retry=None) as client:
        with pytest.raises(UnavailableError):
            await client.save_message(session_id, message("user", "hello"))

    assert proxy.attempts[SAVE] == 1


async def test_bearer_token_is_sent_on_every_call(proxy: FaultProxy, session_id: str):
    async with MemoryClient(proxy.target, token="secret-token") as client:
        await client.get_history(session_id)
        async with client.watch([session_id]) as events:
            await events.started()
    async with MemoryClient(proxy.target) as anonymous:
        await anonymous.get_history(session_id)

    assert [m.get("authorization") for m in proxy.metadata] == [
        "Bearer secret-token",
        "Bearer secret-token",
        None,
    ]


async def test_watch_rejects_invalid_arguments(client: MemoryClient):
    with pytest.raises(InvalidArgumentError) as caught:
        await anext(client.watch(after_seq=-1))
    assert [v.field for v in caught.value.field_violations] == ["after_seq"]


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED])
async def test_watch_resumes_from_the_last_seq(proxy: FaultProxy, session_id: str, code: grpc.StatusCode):
    proxy.cuts.append(StreamCut(WATCH, code, after=2))
    async with MemoryClient(proxy.target) as client:
        async with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_APPENDED]) as events:
            await events.started()
            saved = [(await client.save_message(session_id, message("user", f"m{i}"))).message for i in range(4)]
            received = [await asyncio.wait_for(anext(events), 30) for _ in saved]

    assert [e.messages_appended.messages[0].id for e in received] == [m.id for m in saved]
    assert [e.seq for e in received] == sorted({e.seq for e in received})
    assert events.reconnects == 1
    watch_requests = [event_service_pb2.WatchRequest.FromString(body) for m, body in proxy.requests if m == WATCH]
    assert not watch_requests[0].HasField("after_seq")
    assert watch_requests[1].after_seq == received[1].seq


async def test_watch_from_now_resumes_without_a_gap_before_its_first_event(proxy: FaultProxy, session_id: str):
    # The stream breaks right after the server's join progress, before any event: the
    # watcher resumes from that progress, so a write made meanwhile is not lost.
    proxy.cuts.append(StreamCut(WATCH, grpc.StatusCode.UNAVAILABLE, after=0))
    async with MemoryClient(proxy.target) as client:
        async with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_APPENDED]) as events:
            await events.started()
            saved = (await client.save_message(session_id, message("user", "while reconnecting"))).message
            event = await asyncio.wait_for(anext(events), 30)

    assert event.messages_appended.messages[0].id == saved.id
    assert events.reconnects == 1
    watch_requests = [event_service_pb2.WatchRequest.FromString(body) for m, body in proxy.requests if m == WATCH]
    assert watch_requests[1].HasField("after_seq") and watch_requests[1].after_seq < event.seq


async def _until_reconnected(call):
    """The channel may still be in its reconnect backoff from the stop (UNAVAILABLE at once,
    round_robin): the same idempotent call again until the restarted server answers (bounded)."""
    from memoryd_client.errors import UnavailableError

    async with asyncio.timeout(60):
        while True:
            try:
                return await call()
            except UnavailableError:
                await asyncio.sleep(0.2)


async def test_watch_resumes_across_a_server_restart(private_memoryd: MemorydServer, session_id: str):
    async with MemoryClient(private_memoryd.target) as client:
        async with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_APPENDED]) as events:
            await events.started()
            first = (await client.save_message(session_id, message("user", "before restart"))).message
            before = await asyncio.wait_for(anext(events), 30)

            await asyncio.to_thread(private_memoryd.stop)
            await asyncio.to_thread(private_memoryd.start)
            # Written while the watcher may still be reconnecting: delivered once all the same.
            second = (await _until_reconnected(lambda: client.save_message(session_id, message("user", "after restart")))).message
            after = await asyncio.wait_for(anext(events), 60)

    assert before.messages_appended.messages[0].id == first.id
    assert after.messages_appended.messages[0].id == second.id
    assert after.seq > before.seq
    assert events.reconnects >= 1


async def test_watch_from_a_compacted_seq_raises(tmp_path, session_id: str):
    server = MemorydServer(
        tmp_path,
        env={"MEMORYD_EVENT_RETENTION_COUNT": "2", "MEMORYD_EVENT_COMPACTION_INTERVAL_SECONDS": "0.1"},
    )
    await asyncio.to_thread(server.start)
    try:
        async with MemoryClient(server.target) as client:
            for batch in range(4):  # four events, twice what retention keeps
                await client.save_messages(session_id, [message("user", f"m{batch}.{i}") for i in range(3)])

            async def first_event_from_zero():
                async with client.watch(after_seq=0) as events:
                    return await asyncio.wait_for(anext(events), 10)

            caught = None
            for _ in range(200):  # retention runs in the background: wait until it has
                try:
                    await first_event_from_zero()
                except EventsCompactedError as error:
                    caught = error
                    break
                await asyncio.sleep(0.05)
    finally:
        await asyncio.to_thread(server.stop)

    assert caught is not None, "retention never compacted the log"
    assert caught.reason == "EVENTS_COMPACTED"
    assert caught.oldest_seq is not None and caught.oldest_seq > 1


async def test_bearer_tokens_select_the_tenant(tmp_path, session_id: str):
    server = MemorydServer(tmp_path, env={"MEMORYD_TOKENS": "acme: token-acme-0123456789, globex: token-globex-0123456789"})
    await asyncio.to_thread(server.start)
    try:
        async with (
            MemoryClient(server.target, token="token-acme-0123456789") as acme,
            MemoryClient(server.target, token="token-globex-0123456789") as globex,
            MemoryClient(server.target) as anonymous,
            MemoryClient(server.target, token="wrong") as wrong,
        ):
            saved = (await acme.save_message(session_id, message("user", "acme only"))).message
            acme_history = await acme.get_history(session_id)
            globex_history = await globex.get_history(session_id)
            with pytest.raises(UnauthenticatedError):
                await anonymous.get_history(session_id)
            with pytest.raises(UnauthenticatedError):
                await wrong.get_history(session_id)
    finally:
        await asyncio.to_thread(server.stop)

    assert [m.id for m in acme_history] == [saved.id]
    assert globex_history == []


async def test_call_runs_other_services_with_the_client_defaults(proxy: FaultProxy, session_id: str):
    async with MemoryClient(proxy.target, token="secret-token", timeout=5) as client:
        await client.save_message(session_id, message("user", "hello"))
        cursor = await client.call(
            client.summaries.GetSummaryCursor, summary_service_pb2.GetSummaryCursorRequest(session_id=session_id)
        )
        with pytest.raises(InvalidArgumentError):
            await client.call(client.summaries.GetSummaryCursor, summary_service_pb2.GetSummaryCursorRequest())

    assert cursor.cursor == 0 and cursor.summary_count == 0
    assert proxy.metadata[1]["authorization"] == "Bearer secret-token"
    assert proxy.deadlines[1] is not None and proxy.deadlines[1] < 6


async def test_appends_through_the_raw_stubs_get_a_key_too(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE, grpc.StatusCode.UNAVAILABLE, times=1))
    raw = memory_service_pb2.SaveMessageRequest(session_id=session_id, message=message("user", "raw"))
    async with MemoryClient(proxy.target) as client:
        saved = await client.memory.SaveMessage(raw)  # the generated stub on the client's channel
        history = await client.get_history(session_id)

    assert raw.idempotency_key == ""  # the caller's request is left as it was
    bodies = [memory_service_pb2.SaveMessageRequest.FromString(b) for m, b in proxy.requests if m == SAVE]
    assert len(bodies) == 2 and bodies[0].idempotency_key and bodies[0] == bodies[1]
    assert [m.id for m in history] == [saved.message.id]


async def test_an_explicit_idempotency_key_deduplicates(client: MemoryClient, session_id: str):
    first = await client.save_message(session_id, message("user", "hello"), idempotency_key="turn-1")
    again = await client.save_message(session_id, message("user", "hello"), idempotency_key="turn-1")

    assert (first.deduplicated, again.deduplicated) == (False, True)
    assert again.message.id == first.message.id
    assert len(await client.get_history(session_id)) == 1


@pytest.mark.parametrize("rpc", ["SaveMessage", "SaveMessages"])
async def test_a_retry_after_a_lost_acknowledgement_stores_once(proxy: FaultProxy, session_id: str, rpc: str):
    # The server stores the append, the answer is lost, gRPC retries: the generated key makes
    # the retry a deduplicated no-op instead of a second copy.
    proxy.faults.append(Fault(f"/memoryd.v1.MemoryService/{rpc}", grpc.StatusCode.UNAVAILABLE, times=1, lost_ack=True))
    async with MemoryClient(proxy.target) as client:
        if rpc == "SaveMessage":
            answer = await client.save_message(session_id, message("user", "exactly once"))
        else:
            answer = await client.save_messages(session_id, [message("user", "exactly once")])
        history = await client.get_history(session_id)

    assert proxy.attempts[f"/memoryd.v1.MemoryService/{rpc}"] == 2
    assert answer.deduplicated is True
    assert [m.content for m in history] == ["exactly once"]


async def test_retry_numbers_can_change_but_not_the_classification(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE, grpc.StatusCode.UNAVAILABLE, times=2))
    config = retry_service_config(max_attempts=2, initial_backoff=0.01)
    async with MemoryClient(proxy.target, retry=config) as client:
        with pytest.raises(UnavailableError):
            await client.save_message(session_id, message("user", "hello"))

    assert proxy.attempts[SAVE] == 2
    assert retried_methods(config) == retried_methods(DEFAULT_RETRY)
