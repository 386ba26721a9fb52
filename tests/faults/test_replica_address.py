"""Replicas behind one address: the Python client, given both replicas' addresses (one target,
`ipv4:a,b`; the contract's service config balances round_robin and retries UNAVAILABLE), keeps
succeeding after a kill -9 of one replica (every call, none failed). A Watch read from one replica and resumed
on the other with `after_seq` delivers every event of the log once, in order."""

from __future__ import annotations

import uuid

import grpc

from memoryd.v1 import event_service_pb2 as epb
from memoryd.v1 import event_service_pb2_grpc, message_pb2
from memoryd_client import MemoryClient
from tests.processes import MemorydServer

BEFORE = 20
AFTER = 20


async def _watch(target: str, after_seq: int, count: int) -> list[int]:
    """The seqs of the next `count` events after `after_seq`, from one replica."""
    seqs: list[int] = []
    async with grpc.aio.insecure_channel(target) as channel:
        stream = event_service_pb2_grpc.EventServiceStub(channel).Watch(
            epb.WatchRequest(after_seq=after_seq), timeout=60
        )
        async for reply in stream:
            if reply.HasField("event"):
                seqs.append(reply.event.seq)
                if len(seqs) == count:
                    stream.cancel()
                    break
    return seqs


async def test_round_robin_over_two_replicas_survives_a_kill_and_watch_resumes_on_the_other(tmp_path, mongo_uri):
    database = f"memoryd_rr_{uuid.uuid4().hex[:8]}"
    flags = ("--mongodb-uri", mongo_uri, "--mongodb-database", database, "--vectors-enabled", "false")
    replicas = [MemorydServer(tmp_path / name, *flags) for name in "ab"]
    try:
        for replica in replicas:
            replica.start()
        target = "ipv4:" + ",".join(r.target for r in replicas)
        async with MemoryClient(target, timeout=20) as client:
            seqs = []
            for i in range(BEFORE):
                saved = await client.save_message("rr", message_pb2.Message(role="user", content=f"before {i}"))
                seqs.append(saved.message.seq)
            # Half the log from replica a, then a dies; the rest from b, resumed after the last seq read.
            first = await _watch(replicas[0].target, 0, BEFORE // 2)
            replicas[0].kill()
            for i in range(AFTER):
                saved = await client.save_message("rr", message_pb2.Message(role="user", content=f"after {i}"))
                seqs.append(saved.message.seq)
            rest = await _watch(replicas[1].target, first[-1], BEFORE + AFTER - len(first))
            history = await client.get_full_history("rr")
    finally:
        for replica in replicas:
            replica.stop()
    assert seqs == list(range(1, BEFORE + AFTER + 1))
    assert [m.content for m in history.messages] == [f"before {i}" for i in range(BEFORE)] + [
        f"after {i}" for i in range(AFTER)
    ]
    events = first + rest
    assert events == list(range(events[0], events[0] + len(events)))  # every event once, in order
    assert len(events) == BEFORE + AFTER  # one messages-appended event per save
