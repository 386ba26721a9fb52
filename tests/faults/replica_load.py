"""Writers on one tenant through several `memoryd serve` replicas, as a client with retries sees them.

Each writer owns a session and saves one message at a time with an idempotency key; a
write that fails (UNAVAILABLE, DEADLINE_EXCEEDED, ...) is sent again, to the next replica
in the list (the client-side round robin), until it is acknowledged or its own deadline
(`WRITE_DEADLINE` after its first try) passes. `audit` then reads back what the store
holds: each session's history and the tenant's event log. Used by tests/faults/
test_replica_load.py (bounded runs) and tests/load/bench_replicas.py (the ratios).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc

from memoryd.domain.models import DEFAULT_TENANT, EventType, Message, Position, RangeQuery
from memoryd.storage.mongo.store import MongoStore
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2

WRITE_DEADLINE = 10.0
ATTEMPT_TIMEOUT = 5.0
RETRY_PAUSE = 0.05


@dataclass
class LoadResult:
    acknowledged: dict[str, list[int]] = field(default_factory=dict)  # session -> message numbers
    unacknowledged: list[str] = field(default_factory=list)  # idempotency keys given up on
    failed_attempts: Counter = field(default_factory=Counter)  # status code name -> count
    seconds: float = 0.0

    @property
    def writes(self) -> int:
        return sum(len(v) for v in self.acknowledged.values())


async def run(
    targets: Sequence[str],
    writers: int,
    duration: float,
    *,
    during: Callable[[float], None] | None = None,
    prefix: str = "w",
) -> LoadResult:
    """`writers` writers for `duration` seconds; `during(elapsed)` is called every 0.1 s
    (a test kills a replica from it). A write started before the end finishes or gives up."""
    result = LoadResult()
    channels = {t: grpc.aio.insecure_channel(t) for t in targets}
    start = time.monotonic()
    stop = start + duration

    async def writer(n: int) -> None:
        session = f"{prefix}{n}"
        acked = result.acknowledged.setdefault(session, [])
        order = itertools.cycle(range(len(targets)))
        for _ in range(n % len(targets)):
            next(order)
        i = 0
        while time.monotonic() < stop:
            key = f"{session}-{i}"
            request = mem.SaveMessageRequest(
                session_id=session,
                idempotency_key=key,
                message=message_pb2.Message(role="user", content=f"{session}:{i}"),
            )
            give_up = time.monotonic() + WRITE_DEADLINE
            target = targets[next(order)]
            while True:
                left = give_up - time.monotonic()
                if left <= 0:
                    result.unacknowledged.append(key)
                    break
                try:
                    stub = memory_service_pb2_grpc.MemoryServiceStub(channels[target])
                    await stub.SaveMessage(request, timeout=min(left, ATTEMPT_TIMEOUT))
                    acked.append(i)
                    break
                except grpc.aio.AioRpcError as exc:
                    result.failed_attempts[exc.code().name] += 1
                    target = targets[next(order)]
                    await asyncio.sleep(RETRY_PAUSE)
            i += 1

    async def watch() -> None:
        while time.monotonic() < stop:
            if during is not None:
                during(time.monotonic() - start)
            await asyncio.sleep(0.1)

    try:
        await asyncio.gather(watch(), *(writer(n) for n in range(writers)))
    finally:
        for channel in channels.values():
            await channel.close()
    result.seconds = time.monotonic() - start
    return result


@dataclass
class Audit:
    lost: list[str]  # acknowledged, not in the history
    duplicated: list[str]  # in the history more than once
    unexpected: list[str]  # in the history, never sent
    seq_gaps: int  # event seqs missing between the first and the last
    appended_twice: list[str]  # message ids in more than one MESSAGES_APPENDED event
    appended_missing: int  # stored messages no MESSAGES_APPENDED event names
    events: int


async def audit(store: MongoStore, result: LoadResult, tenant: str = DEFAULT_TENANT) -> Audit:
    lost, duplicated, unexpected, ids = [], [], [], set()
    for session, acked in result.acknowledged.items():
        history = await _history(store, tenant, session)
        contents = Counter(m.content for m in history)
        ids |= {m.id for m in history}
        sent = {f"{session}:{i}" for i in acked}
        lost += sorted(sent - set(contents))
        duplicated += sorted(c for c, k in contents.items() if k > 1)
        # A write given up on may still have landed (once): only never-sent content is unexpected.
        tried = max(acked, default=-1) + 2
        unexpected += sorted(c for c in contents if c not in sent and c not in {f"{session}:{i}" for i in range(tried)})
    events, after = [], 0
    while True:
        page = await store.read_events(tenant, after, 1000)
        if not page:
            break
        events += page
        after = page[-1].seq
    seqs = [e.seq for e in events]
    gaps = (seqs[-1] - seqs[0] + 1 - len(seqs)) if seqs else 0
    appended = Counter(m["id"] for e in events if e.type == EventType.MESSAGES_APPENDED for m in e.payload["messages"])
    return Audit(
        lost=lost,
        duplicated=duplicated,
        unexpected=unexpected,
        seq_gaps=gaps,
        appended_twice=sorted(i for i, k in appended.items() if k > 1),
        appended_missing=len(ids - set(appended)),
        events=len(events),
    )


async def _history(store: MongoStore, tenant: str, session: str) -> list[Message]:
    messages: list[Message] = []
    after: Position | None = None
    while True:
        page = await store.range(tenant, RangeQuery(session, 1000, after=after))
        if not page:
            return messages
        messages += page
        after = Position(page[-1].timestamp, page[-1].seq)
