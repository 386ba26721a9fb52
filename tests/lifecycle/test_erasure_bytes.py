"""ForgetUser reaches every byte (issue 44 row 2): after it, the erasure bound
(docs/OPERATIONS.md, "Erasure") and a clean stop, no file under the data dir holds the
forgotten user's text, labels or id (SQLite with its WAL, the Qdrant Edge shards with their
WALs, segments and operation logs), while every marker of the other user is still there;
and Watch from seq 0 no longer returns anything of the user."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import grpc

from memoryd.app import start
from memoryd.config import Config
from memoryd.v1 import entry_service_pb2 as epb
from memoryd.v1 import event_service_pb2 as evpb
from memoryd.v1 import event_service_pb2_grpc, message_pb2
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import metadata_service_pb2 as dpb
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import vector_service_pb2 as vpb
from tests.lifecycle.api import MODEL, Stubs, unit

# Each marker of a user names what holds it; the user id is a marker too.
KINDS = ("msg", "summary", "label", "vectext", "event", "meta", "usermeta", "entry", "agent")


def markers(tag: str) -> dict[str, str]:
    return {kind: f"{kind}{tag}" for kind in KINDS} | {"user": f"uid{tag}"}


async def fill(stubs: Stubs, events, m: dict[str, str], prefix: str, sessions: int) -> None:
    user = m["user"]
    await stubs.metadata.SaveMetadata(
        dpb.SaveMetadataRequest(namespace=f"users/{user}/prefs", key="theme", data={"v": m["usermeta"]})
    )
    for n in range(sessions):
        sid = f"{prefix}{n}"  # session ids are the tenant's keys (they stay): no marker in them
        attributes = message_pb2.SessionAttributes(user_id=user, agent_id=m["agent"], labels={"topic": m["label"]})
        messages = [message_pb2.Message(role="user", content=f"{m['msg']} number {n} {i}") for i in range(6)]
        saved = await stubs.memory.SaveMessages(
            mpb.SaveMessagesRequest(session_id=sid, messages=messages, session_attributes=attributes)
        )
        await stubs.metadata.SaveMetadata(dpb.SaveMetadataRequest(namespace="notes", key=sid, data={"v": m["meta"]}))
        await stubs.summaries.SaveSummary(
            spb.SaveSummaryRequest(session_id=sid, from_seq=1, to_seq=2, text=m["summary"])
        )
        points = [
            vpb.VectorPoint(
                model_id=MODEL, vector=unit(10.0 * i), session_id=sid, message_id=msg.id, timestamp=msg.timestamp,
                role="user", text=f"{m['vectext']} {i}",
            )
            for i, msg in enumerate(saved.messages[:3])
        ]  # fmt: skip
        await stubs.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=points))
        await events.PublishEvent(
            evpb.PublishEventRequest(
                session_id=sid, compress_requested={"requested_by": m["event"], "reason": m["event"]}
            )
        )
    await stubs.entries.SaveEntry(
        epb.SaveEntryRequest(scope=user, text=m["entry"], embedding=unit(45.0), model_id=MODEL)
    )


def hits(root: Path, needles: dict[str, str]) -> dict[str, list[str]]:
    """For each needle, the files under `root` whose raw bytes contain it (UTF-8)."""
    found: dict[str, list[str]] = {kind: [] for kind in needles}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for kind, needle in needles.items():
            if needle.encode() in data:
                found[kind].append(str(path.relative_to(root)))
    return found


def owed(data: Path) -> list[str]:
    """The Qdrant Edge pairs that still owe an erasure rewrite (edge_engine.PairState.purge)."""
    states = {path.parent.name: json.loads(path.read_text()) for path in (data / "vectors").glob("*/state.json")}
    assert states, "no vector shard was written"
    return [name for name, state in states.items() if state.get("purge")]


async def watch_everything(channel: grpc.aio.Channel) -> bytes:
    """Every event Watch from seq 0 returns, serialized."""
    stub = event_service_pb2_grpc.EventServiceStub(channel)
    head = None
    seen = b""
    stream = stub.Watch(evpb.WatchRequest(after_seq=0))
    try:
        async for item in stream:
            if item.HasField("progress"):
                head = item.progress.head_seq if head is None else head
                if item.progress.latest_seq >= head:
                    return seen
            else:
                seen += item.event.SerializeToString()
    finally:
        stream.cancel()
    return seen


async def test_forget_user_leaves_no_byte_of_the_user_under_the_data_dir(tmp_path):
    data = tmp_path / f"data-{uuid.uuid4().hex[:8]}"
    u1, u2 = markers("ONEq7z"), markers("TWOq7z")
    config = Config(
        listen="127.0.0.1:0",
        http_listen="off",
        data_dir=data,
        qdrant_timeout_seconds=30.0,
        vector_erase_seconds=0.5,
    )
    app = await start(config)
    stopped = False
    try:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        stubs = Stubs.on(channel)
        events = event_service_pb2_grpc.EventServiceStub(channel)
        await fill(stubs, events, u1, "a", 2)
        await fill(stubs, events, u2, "b", 3)
        before = await watch_everything(channel)
        assert u2["label"].encode() in before and u2["event"].encode() in before

        forgotten = await stubs.memory.ForgetUser(mpb.ForgetUserRequest(user_id=u2["user"]))
        assert forgotten.complete and forgotten.sessions_forgotten == 3

        after = await watch_everything(channel)
        assert [needle for needle in u2.values() if needle.encode() in after] == []
        assert u1["label"].encode() in after and u1["event"].encode() in after
        # The erasure bound: both shards of every vector pair rewritten (the pair's state says so).
        async with asyncio.timeout(180):
            while owed(data):
                await asyncio.sleep(0.2)
        await channel.close()
        await app.stop(0)
        stopped = True
    finally:
        if not stopped:
            await app.stop(0)

    gone = hits(data, u2)
    assert {kind: files for kind, files in gone.items() if files} == {}
    kept = hits(data, u1)
    missing = [kind for kind, files in kept.items() if not files]
    # The other user's markers are all there (keyword points hold message text, vectors theirs).
    assert missing == [], kept
