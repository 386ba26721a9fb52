"""Write responses past the response byte bound: the write is whole, the echo stays readable.

A default gRPC client receives at most 4 MiB. A message near max_message_bytes (4 MiB), or
a large batch, echoed whole would make a response it cannot read although the write
succeeded; past max_response_bytes (3 MiB) the response carries only the messages'
server-assigned fields (SaveMessageResponse.body_omitted, *.omitted_bodies).
"""

from __future__ import annotations

from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import message_pb2

MIB = 1 << 20


def large(tag: str, content_bytes: int, extra_bytes: int = 0) -> message_pb2.Message:
    msg = message_pb2.Message(role="user", content=tag + "c" * (content_bytes - len(tag)))
    if extra_bytes:
        msg.reasoning_content = "r" * min(extra_bytes, MIB - 1)
        msg.segments.add(type="text").data.update({"text": "s" * max(extra_bytes - MIB + 1, 0)})
    return msg


async def full_history(client, session_id) -> list[message_pb2.Message]:
    found, token = [], ""
    while True:
        page = await client.memory.GetFullHistory(
            pb.GetFullHistoryRequest(session_id=session_id, page_size=10, page_token=token)
        )
        found += page.messages
        token = page.next_page_token
        if not token:
            return found


async def test_a_message_larger_than_the_bound_is_stored_whole_and_echoed_without_its_body(client, session_id):
    msg = large("one", MIB - 16, extra_bytes=int(2.6 * MIB))  # ~3.6 MiB stored
    request = pb.SaveMessageRequest(session_id=session_id, message=msg, idempotency_key="big")
    saved = await client.memory.SaveMessage(request)
    assert saved.body_omitted and not saved.deduplicated
    assert saved.message.id and saved.message.seq == 1 and saved.message.timestamp > 0
    assert saved.message.role == "user" and saved.message.content == "" and not saved.message.segments
    retried = await client.memory.SaveMessage(request)
    assert retried.deduplicated and retried.body_omitted and retried.message.id == saved.message.id
    (stored,) = await full_history(client, session_id)
    assert stored.content == msg.content and stored.reasoning_content == msg.reasoning_content
    assert stored.segments[0].data["text"] == msg.segments[0].data["text"]


async def test_a_batch_past_the_bound_echoes_whole_messages_while_they_fit(client, session_id):
    batch = [large(f"m{i}", int(0.9 * MIB)) for i in range(4)]  # 3.6 MiB: the first three fit
    saved = await client.memory.SaveMessages(pb.SaveMessagesRequest(session_id=session_id, messages=batch))
    assert saved.omitted_bodies == 1
    assert [m.content for m in saved.messages[:3]] == [m.content for m in batch[:3]]
    assert saved.messages[3].content == "" and saved.messages[3].seq == 4 and saved.messages[3].id
    replaced = await client.memory.ReplaceHistory(pb.ReplaceHistoryRequest(session_id=session_id, messages=batch))
    assert replaced.omitted_bodies == 1 and replaced.removed_count == 4
    assert [m.seq for m in replaced.messages] == [5, 6, 7, 8] and replaced.messages[3].content == ""
    assert [m.content for m in await full_history(client, session_id)] == [m.content for m in batch]


async def test_small_writes_echo_everything(client, session_id):
    saved = await client.memory.SaveMessage(
        pb.SaveMessageRequest(session_id=session_id, message=message_pb2.Message(role="user", content="hi"))
    )
    assert not saved.body_omitted and saved.message.content == "hi"
    batch = await client.memory.SaveMessages(
        pb.SaveMessagesRequest(session_id=session_id, messages=[message_pb2.Message(role="user", content="a")])
    )
    assert batch.omitted_bodies == 0 and batch.messages[0].content == "a"
