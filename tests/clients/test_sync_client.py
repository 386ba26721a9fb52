"""memoryd_client.SyncMemoryClient against a live server (through the fault proxy where faults matter).

The proxy runs on the test's event loop, so blocking client code runs in a thread.
"""

from __future__ import annotations

import asyncio
import threading

import grpc
import pytest

from memoryd.v1 import event_service_pb2, memory_service_pb2
from memoryd_client import (
    EventType,
    InvalidArgumentError,
    SyncEventWatch,
    SyncMemoryClient,
    UnavailableError,
    message,
)
from tests.clients.live import Fault, FaultProxy, StreamCut
from tests.processes import MemorydServer

SAVE = "/memoryd.v1.MemoryService/SaveMessage"
SAVE_BATCH = "/memoryd.v1.MemoryService/SaveMessages"
WATCH = "/memoryd.v1.EventService/Watch"


def test_save_read_and_watch_a_deletion(memoryd: MemorydServer, session_id: str):
    with SyncMemoryClient(memoryd.target) as client:
        saved = [client.save_message(session_id, message("user", text)).message for text in ["a", "b", "c"]]
        with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_DELETED]) as events:
            events.started()
            assert client.delete_messages(session_id, [saved[1].id]) == 1
            deletion = next(events)
        history = client.get_history(session_id)

    assert isinstance(events, SyncEventWatch)
    assert list(deletion.messages_deleted.ids) == [saved[1].id]
    assert events.last_seq == deletion.seq
    assert [m.id for m in history] == [saved[0].id, saved[2].id]


def test_invalid_argument_carries_the_details(memoryd: MemorydServer):
    with SyncMemoryClient(memoryd.target) as client, pytest.raises(InvalidArgumentError) as caught:
        client.get_history("", limit=-1)

    assert {v.field for v in caught.value.field_violations} == {"session_id", "limit"}
    assert caught.value.reason


async def test_deadline_token_and_retried_append_with_one_key(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE, grpc.StatusCode.UNAVAILABLE, times=2))

    def run():
        with SyncMemoryClient(proxy.target, token="secret-token", timeout=5) as client:
            saved = client.save_message(session_id, message("user", "once"))
            return saved, client.get_history(session_id, timeout=120)

    saved, history = await asyncio.to_thread(run)

    assert proxy.attempts[SAVE] == 3
    keys = {memory_service_pb2.SaveMessageRequest.FromString(body).idempotency_key for m, body in proxy.requests if m == SAVE}
    assert len(keys) == 1 and next(iter(keys))  # generated once, sent on every attempt
    assert [m.id for m in history] == [saved.message.id]
    assert {m.get("authorization") for m in proxy.metadata} == {"Bearer secret-token"}
    save_deadline, history_deadline = proxy.deadlines[2], proxy.deadlines[3]
    assert save_deadline is not None and 0 < save_deadline < 6
    assert history_deadline is not None and 100 < history_deadline < 130


async def test_a_non_idempotent_call_is_not_retried(proxy: FaultProxy, session_id: str):
    clear = "/memoryd.v1.MemoryService/ClearSession"
    proxy.faults.append(Fault(clear, grpc.StatusCode.UNAVAILABLE, times=1))

    def run():
        with SyncMemoryClient(proxy.target) as client, pytest.raises(UnavailableError):
            client.clear_session(session_id)

    await asyncio.to_thread(run)
    assert proxy.attempts[clear] == 1


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED])
async def test_watch_resumes_from_the_last_seq(proxy: FaultProxy, session_id: str, code: grpc.StatusCode):
    proxy.cuts.append(StreamCut(WATCH, code, after=2))

    def run():
        with SyncMemoryClient(proxy.target) as client:
            with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_APPENDED]) as events:
                events.started()
                saved = [client.save_message(session_id, message("user", f"m{i}")).message for i in range(4)]
                return saved, [next(events) for _ in saved], events.reconnects

    saved, received, reconnects = await asyncio.wait_for(asyncio.to_thread(run), 60)

    assert [e.messages_appended.messages[0].id for e in received] == [m.id for m in saved]
    assert reconnects == 1
    watch_requests = [event_service_pb2.WatchRequest.FromString(body) for m, body in proxy.requests if m == WATCH]
    assert watch_requests[1].after_seq == received[1].seq


def test_close_from_another_thread_ends_the_iteration(memoryd: MemorydServer, session_id: str):
    with SyncMemoryClient(memoryd.target) as client:
        events = client.watch([session_id])
        events.started()
        received = []
        reader = threading.Thread(target=lambda: received.extend(events))
        reader.start()
        events.close()
        reader.join(timeout=30)

    assert not reader.is_alive() and received == []


async def test_batch_appends_get_a_key_too(proxy: FaultProxy, session_id: str):
    proxy.faults.append(Fault(SAVE_BATCH, grpc.StatusCode.UNAVAILABLE, times=1))

    def run():
        with SyncMemoryClient(proxy.target) as client:
            raw = memory_service_pb2.SaveMessagesRequest(session_id=session_id, messages=[message("user", "x")])
            first = client.call(client.memory.SaveMessages, raw)  # the raw stub, through the client's channel
            return raw, first, client.get_history(session_id)

    raw, first, history = await asyncio.to_thread(run)

    assert raw.idempotency_key == ""  # the caller's request is left as it was
    bodies = [memory_service_pb2.SaveMessagesRequest.FromString(b) for m, b in proxy.requests if m == SAVE_BATCH]
    assert len(bodies) == 2 and bodies[0].idempotency_key and bodies[0] == bodies[1]
    assert [m.id for m in history] == [m.id for m in first.messages]
