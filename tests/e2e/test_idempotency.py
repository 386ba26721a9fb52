"""SaveMessages retried with the same idempotency key stores the batch once, on every backend,
over gRPC and HTTP/JSON: the retry answers the first result (same ids and seqs, deduplicated),
concurrent retries store one batch between them, and the key belongs to its session (the
same key in another session, or another key, stores anew). Without the key's check every
test here fails (not only the crash test's)."""

from __future__ import annotations

import asyncio

import httpx

from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import message_pb2
from tests.e2e.conftest import Client


def batch(*contents: str, start: int = 1000) -> list[message_pb2.Message]:
    return [
        message_pb2.Message(role="user", content=content, timestamp=start + i) for i, content in enumerate(contents)
    ]


async def stored(client: Client, session_id: str) -> list[tuple[str, int, str]]:
    response = await client.memory.GetFullHistory(pb.GetFullHistoryRequest(session_id=session_id, page_size=100))
    return [(m.id, m.seq, m.content) for m in response.messages]


async def test_a_retried_batch_is_stored_once_and_answers_the_first_result(client, session_id):
    request = pb.SaveMessagesRequest(
        session_id=session_id, messages=batch("one", "two", "three"), idempotency_key="batch-1"
    )
    first = await client.memory.SaveMessages(request)
    events = await client.app.store.event_bounds("default")
    again = await client.memory.SaveMessages(request)
    assert not first.deduplicated and again.deduplicated
    assert [(m.id, m.seq) for m in again.messages] == [(m.id, m.seq) for m in first.messages]
    assert [content for _, _, content in await stored(client, session_id)] == ["one", "two", "three"]
    assert await client.app.store.event_bounds("default") == events  # the retry wrote no event either
    # The key is the batch's identity: a retry with other contents still stores nothing.
    changed = await client.memory.SaveMessages(
        pb.SaveMessagesRequest(session_id=session_id, messages=batch("other"), idempotency_key="batch-1")
    )
    assert changed.deduplicated and [m.id for m in changed.messages] == [m.id for m in first.messages]
    assert len(await stored(client, session_id)) == 3
    # Another key stores anew, after the first batch.
    second = await client.memory.SaveMessages(
        pb.SaveMessagesRequest(session_id=session_id, messages=batch("four", start=2000), idempotency_key="batch-2")
    )
    assert not second.deduplicated and second.messages[0].seq > first.messages[-1].seq
    assert [content for _, _, content in await stored(client, session_id)] == ["one", "two", "three", "four"]


async def test_concurrent_retries_of_one_batch_store_it_once(client, session_id):
    request = pb.SaveMessagesRequest(session_id=session_id, messages=batch("a", "b"), idempotency_key="raced")
    answers = await asyncio.gather(*(client.memory.SaveMessages(request) for _ in range(8)))
    assert sum(not a.deduplicated for a in answers) == 1
    assert len({tuple(m.id for m in a.messages) for a in answers}) == 1
    assert [content for _, _, content in await stored(client, session_id)] == ["a", "b"]


async def test_the_key_belongs_to_its_session(client, session_id):
    other = session_id + "-other"
    request = pb.SaveMessagesRequest(session_id=session_id, messages=batch("x"), idempotency_key="shared-key")
    first = await client.memory.SaveMessages(request)
    elsewhere = await client.memory.SaveMessages(
        pb.SaveMessagesRequest(session_id=other, messages=batch("x"), idempotency_key="shared-key")
    )
    assert not elsewhere.deduplicated and elsewhere.messages[0].id != first.messages[0].id
    assert len(await stored(client, session_id)) == 1 and len(await stored(client, other)) == 1


async def test_a_batch_retried_over_http_is_stored_once(client, session_id):
    body = {
        "session_id": session_id,
        "messages": [{"role": "user", "content": "over http"}, {"role": "assistant", "content": "reply"}],
        "idempotency_key": "http-1",
    }
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{client.app.http_port}", timeout=30) as http:
        answers = []
        for _ in range(3):
            response = await http.post("/memoryd.v1.MemoryService/SaveMessages", json=body)
            assert response.status_code == 200, response.text
            answers.append(response.json())
    assert [a.get("deduplicated", False) for a in answers] == [False, True, True]
    assert len({tuple(m["id"] for m in a["messages"]) for a in answers}) == 1
    assert [content for _, _, content in await stored(client, session_id)] == ["over http", "reply"]
