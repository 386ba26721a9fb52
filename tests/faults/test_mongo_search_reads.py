"""SearchMemory on MongoDB (SecantusDB) at a large top_k with the conversation lift and context
windows on: it answers within the server's own store budget (`--mongodb-timeout-ms`, 5 s: a
search past it answers UNAVAILABLE), and a stream of such searches beside a stream of saves
does not stall the recall index's synchronizer, which shares the process, its event loop and
its MongoDB client: the index catches up with every save. (The context windows of a search
are read in one aggregate, storage/mongo/windows.py; per-window finds once took 3.7 s at
top_k 10 and held the synchronizer back for over 90 s.)"""

from __future__ import annotations

import asyncio
import uuid

import grpc

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2, vector_service_pb2_grpc
from memoryd.v1 import vector_service_pb2 as vpb
from tests.processes import MemorydServer

WORDS = "apple river mountain coffee garden planet violin harbor lantern meadow".split()
SESSIONS, MESSAGES = 12, 60
# Stall detection for one call (the server's own budget is 5 s), never pacing.
CALL_TIMEOUT = 60


def _batch(s: int, start: int, count: int) -> list[message_pb2.Message]:
    return [
        message_pb2.Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"{WORDS[(s + i) % len(WORDS)]} {WORDS[(s * 3 + i) % len(WORDS)]} note {s}-{i}",
            timestamp=1_700_000_000_000 + s * 10_000_000 + i * 20_000,
        )
        for i in range(start, start + count)
    ]


async def test_top_k_50_with_the_lift_answers_and_searches_do_not_stall_the_index(tmp_path, mongo_uri):
    database = f"search_reads_{uuid.uuid4().hex[:8]}"
    server = MemorydServer(tmp_path / "m", "--mongodb-uri", mongo_uri, "--mongodb-database", database)
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
            vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
            seq = 0
            for s in range(SESSIONS):
                saved = await memory.SaveMessages(
                    mem.SaveMessagesRequest(session_id=f"s{s}", messages=_batch(s, 0, MESSAGES)), timeout=CALL_TIMEOUT
                )
                seq = saved.event_seq
            search = vpb.SearchMemoryRequest(query_text="apple river", top_k=50, context_window=2)
            first = await vectors.SearchMemory(
                vpb.SearchMemoryRequest(query_text="apple river", top_k=50, context_window=2, wait_for_event_seq=seq),
                timeout=CALL_TIMEOUT,
            )
            assert len(first.hits) == 50
            assert any(h.before and h.after for h in first.hits)

            saving = True
            answered = 0

            async def searches() -> None:
                nonlocal answered
                while saving:  # every one must answer OK: UNAVAILABLE would raise here
                    reply = await vectors.SearchMemory(search, timeout=CALL_TIMEOUT)
                    assert len(reply.hits) == 50
                    answered += 1

            streams = [asyncio.create_task(searches()) for _ in range(3)]
            try:
                for round_ in range(6):  # each round a new message with a word no search asks for
                    words = [f"zebra{round_}x{s}" for s in range(SESSIONS)]
                    for s in range(SESSIONS):
                        batch = [message_pb2.Message(role="user", content=f"{words[s]} arrives")]
                        saved = await memory.SaveMessages(
                            mem.SaveMessagesRequest(session_id=f"s{s}", messages=batch), timeout=CALL_TIMEOUT
                        )
                        seq = saved.event_seq
            finally:
                saving = False
                await asyncio.gather(*streams)
            assert answered >= 3

            # The index holds every save (the synchronizer kept up), found by its word.
            caught = await vectors.SearchMemory(
                vpb.SearchMemoryRequest(query_text="zebra5x11", top_k=5, wait_for_event_seq=seq), timeout=CALL_TIMEOUT
            )
            assert [h.text for h in caught.hits][:1] == ["zebra5x11 arrives"]
    finally:
        server.stop()
