"""Semantic recall with VectorService: index messages, search across sessions, read hits
with their context windows, delete a message and see its vector go.

    .venv/bin/python examples/vector_recall.py                    # starts an embedded server
    .venv/bin/python examples/vector_recall.py --target 127.0.0.1:50051

The agent brings its own embeddings here (UpsertVectors with `model_id`). A toy
bag-of-words embedding stands in for a real model so the script runs offline; with
MEMORYD_EMBEDDER_URL set, the server embeds saved messages itself and SearchMemory
takes `query_text` instead.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import tempfile
from pathlib import Path

import grpc

from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc

MODEL = "example:bag-of-words-64"
DIMS = 64


def embed(text: str) -> list[float]:
    """Stand-in for an embedding model: hashed bag of words, normalized."""
    vector = [0.0] * DIMS
    for word in text.lower().replace(",", " ").replace(".", " ").split():
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


CHATS = {
    "dm-alice": [
        ("user", "alice", "I am planning a hiking trip to the Alps in July"),
        ("assistant", "", "Nice! Chamonix has great trails in July."),
        ("user", "alice", "My knee hurts on long descents, though"),
        ("assistant", "", "Trekking poles help a lot on descents."),
    ],
    "group-climbers": [
        ("user", "bob", "Anyone up for bouldering on Saturday?"),
        ("user", "alice", "Me! But no hiking, my knee needs rest"),
        ("assistant", "", "I will remind you both on Friday."),
    ],
}


async def run(target: str) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        vectors = vector_service_pb2_grpc.VectorServiceStub(channel)

        # 1. Save the chats and index each message under its id.
        ts = 1_700_000_000_000
        for session, rows in CHATS.items():
            messages = []
            for role, sender, text in rows:
                ts += 60_000
                m = message_pb2.Message(role=role, content=text, timestamp=ts)
                m.metadata.update({"platform": "example", "senderId": sender} if sender else {"platform": "example"})
                messages.append(m)
            saved = (await memory.SaveMessages(mpb.SaveMessagesRequest(session_id=session, messages=messages))).messages
            points = [
                vpb.VectorPoint(
                    model_id=MODEL, vector=embed(m.content), session_id=session, message_id=m.id,
                    timestamp=m.timestamp, role=m.role, platform="example",
                    sender_id=m.metadata["senderId"] if "senderId" in m.metadata else "", text=m.content,
                )
                for m in saved
            ]
            await vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=points))

        # 2. Alice talks in the group; recall what she said anywhere, boosted for her.
        response = await vectors.SearchMemory(
            vpb.SearchMemoryRequest(
                query_vector=embed("how is alice knee for hiking"),
                model_id=MODEL,
                top_k=2,
                scope=vpb.RECALL_SCOPE_USER,
                session_id="group-climbers",
                speaker_ids=["alice"],
                context_window=1,
                per_item_max_chars=40,
            )
        )
        print("SearchMemory (user scope, speaker alice, window 1):")
        for hit in response.hits:
            print(f"  [{hit.session_id} {hit.role}{' boosted' if hit.boosted else ''}] "
                  f"score={hit.score:.3f} semantic={hit.semantic_score:.3f}  {hit.text}")
            for c in hit.before:
                print(f"      before: {c.message.role}: {c.message.content}")
            for c in hit.after:
                print(f"      after:  {c.message.role}: {c.message.content}")

        # 3. Deleting a message deletes its vector too.
        stats = await vectors.GetVectorStats(vpb.GetVectorStatsRequest())
        print("vectors before delete:", [(m.model_id, m.count) for m in stats.models])
        top = response.hits[0]
        await memory.DeleteMessages(mpb.DeleteMessagesRequest(session_id=top.session_id, ids=[top.message_id]))
        stats = await vectors.GetVectorStats(vpb.GetVectorStatsRequest())
        print("vectors after deleting that message:", [(m.model_id, m.count) for m in stats.models])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="host:port of a running memoryd; default: start an embedded one")
    args = parser.parse_args()
    if args.target:
        await run(args.target)
        return
    from memoryd import logs
    from memoryd.app import start
    from memoryd.config import Config

    logs.configure("warning")  # the embedded server's log lines: only what needs attention

    with tempfile.TemporaryDirectory() as data_dir:
        app = await start(Config(listen="127.0.0.1:0", data_dir=Path(data_dir), log_level="warning"))
        try:
            await run(f"127.0.0.1:{app.port}")
        finally:
            await app.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
