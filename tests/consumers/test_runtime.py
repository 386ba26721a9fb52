"""The log-consumer runtime (server/memoryd/consumers/runtime.py) on real stores: cursors and
their fingerprints, rebuilds, batches, per-tenant retries and turns, leases, positions.

The consumer here derives the simplest state there is from the log (the seqs of the
appended events it saw, per tenant), so what the runtime did is exactly what it recorded."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Sequence

import pytest

from memoryd.consumers.lease import KEY, namespace_of
from memoryd.consumers.runtime import Consumer, Runtime
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import SYSTEM_TENANT, Event, EventType, Message
from tests.conftest import BACKENDS, StoreTarget

WAIT_SECONDS = 60.0  # a stall detector, never a pace


class Seen(Consumer):
    """Records the seqs of the messages-appended events it is given, per tenant."""

    event_types = (EventType.MESSAGES_APPENDED,)

    def __init__(self, name: str, *, version: str = "1", batch: int = 500, per_apply: int = 0) -> None:
        self.name = name
        self.version = version
        self.batch = batch
        self.per_apply = per_apply  # events per apply (0: all read)
        self.seen: dict[str, list[int]] = {}
        self.batches: list[tuple[str, int]] = []  # (tenant, events) per apply, in order
        self.rebuilt: list[str] = []
        self.down: set[str] = set()  # tenants whose applies fail
        self.refused: list[tuple[str, int]] = []  # (tenant, events) of each failed apply

    def fingerprint(self) -> str:
        return f"seen/{self.version}"

    def take(self, events: Sequence[Event]) -> int:
        return self.per_apply or len(events)

    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        if tenant in self.down:
            self.refused.append((tenant, len(events)))
            raise StorageUnavailable("down")
        assert all(e.type is EventType.MESSAGES_APPENDED for e in events)
        self.batches.append((tenant, len(events)))
        seen = self.seen.setdefault(tenant, [])
        seen.extend(e.seq for e in events if e.seq not in seen)  # idempotent

    async def rebuild(self, tenant: str) -> int | None:
        self.rebuilt.append(tenant)
        self.seen[tenant] = []
        return None


@pytest.fixture(params=BACKENDS)
async def store(request, tmp_path):
    """A store of its own: compaction and leases are store-wide."""
    store = await StoreTarget(request.param, request, tmp_path, "memoryd_consumers").open()
    yield store
    await store.close()


def message(text: str, timestamp: int) -> Message:
    return Message(role="user", content=text, timestamp=timestamp)


async def save(store, tenant: str, count: int, session: str = "s") -> list[int]:
    """`count` SaveMessage calls; the seqs of their events."""
    memory = Memory(store, Limits())
    for i in range(count):
        await memory.save_messages(tenant, session, [message(f"m{i}", 1000 * (i + 1))])
    return [e.seq for e in await store.read_events(tenant, 0, 10_000) if e.type is EventType.MESSAGES_APPENDED]


def name() -> str:
    return f"test.seen-{uuid.uuid4().hex[:8]}"


async def test_applies_each_log_in_order_and_persists_the_cursor(store):
    a, b = "ta", "tb"
    seqs_a, seqs_b = await save(store, a, 5), await save(store, b, 3)
    consumer = Seen(name(), per_apply=2)
    runtime = Runtime(store, [consumer])
    assert await runtime.apply_all() == 8
    assert consumer.seen == {a: seqs_a, b: seqs_b}
    assert [n for t, n in consumer.batches if t == a] == [2, 2, 1]
    track = runtime.track(consumer.name)
    latest = (await store.event_bounds(a))[1]
    assert track.position(a) == latest and track.status(a).lag == 0
    await runtime.close()
    cursor = await store.get_metadata(SYSTEM_TENANT, consumer.name, a)
    assert cursor.data == {"seq": latest, "fingerprint": "seen/1"}

    # Another process (a restart) continues from the cursor: nothing is applied again.
    again = Seen(consumer.name)
    more = await save(store, a, 1, session="s2")
    assert await Runtime(store, [again]).apply_all() == 1
    assert again.seen == {a: more[-1:]} and again.rebuilt == []


async def test_a_new_fingerprint_or_a_compacted_log_rebuilds(store):
    tenant = "t"
    await save(store, tenant, 3)
    first = Seen(name())
    runtime = Runtime(store, [first])
    await runtime.apply_all()
    await runtime.close()

    changed = Seen(first.name, version="2")
    runtime = Runtime(store, [changed])
    await runtime.apply_all()
    assert changed.rebuilt == [tenant] and changed.seen == {tenant: []}  # the log goes on after the rebuild
    track = runtime.track(changed.name)
    assert track.position(tenant) == (await store.event_bounds(tenant))[1] and not track.status(tenant).rebuilding
    await runtime.close()

    # The log compacted past a cursor: the events it never applied are gone.
    behind = Seen(name())
    await store.save_metadata(SYSTEM_TENANT, behind.name, tenant, {"seq": 1, "fingerprint": "seen/1"}, 1)
    await save(store, tenant, 2, session="s2")
    assert await store.compact_events(older_than=None, keep_last=1) > 0
    await Runtime(store, [behind]).apply_all()
    assert behind.rebuilt == [tenant]


async def test_one_tenants_failure_never_holds_another_and_nothing_is_skipped(store):
    good, bad = "good", "bad"
    await save(store, bad, 2)
    consumer = Seen(name())
    consumer.down.add(bad)
    runtime = Runtime(
        store, [consumer], poll_seconds=0.05, linger_seconds=0, min_backoff_seconds=0.05, max_backoff_seconds=0.1
    )
    track = runtime.track(consumer.name)
    running = asyncio.create_task(runtime.run())
    try:
        seqs = await save(store, good, 3)
        async with asyncio.timeout(WAIT_SECONDS):
            await track.wait_for(good, seqs[-1])
            while track.status(bad) is None or track.status(bad).retries < 2:
                await asyncio.sleep(0.01)
        assert consumer.seen.get(good) == seqs
        status = track.status(bad)
        assert status.position == 0 and status.last_error == "STORAGE_UNAVAILABLE" and status.lag > 0
        assert track.last_error == "STORAGE_UNAVAILABLE" and track.retries >= 2

        # A retry reads the log again: what it gained meanwhile joins the batch.
        await save(store, bad, 2, session="s2")
        async with asyncio.timeout(WAIT_SECONDS):
            while (bad, 4) not in consumer.refused:
                await asyncio.sleep(0.01)

        consumer.down.clear()
        latest = (await store.event_bounds(bad))[1]
        async with asyncio.timeout(WAIT_SECONDS):
            await track.wait_for(bad, latest)
        assert len(consumer.seen[bad]) == 4 and track.status(bad).last_error == ""
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await runtime.close()


async def test_a_backlog_takes_turns_with_the_other_tenants(store):
    big, small = "big", "small"
    await save(store, big, 6)
    await save(store, small, 1)
    consumer = Seen(name(), per_apply=1)
    # No time for a turn: each tenant gets one batch, then the next tenant its own.
    runtime = Runtime(store, [consumer], turn_seconds=0.0, linger_seconds=0)
    running = asyncio.create_task(runtime.run())
    try:
        async with asyncio.timeout(WAIT_SECONDS):
            await runtime.track(consumer.name).wait_for(big, (await store.event_bounds(big))[1])
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    order = [t for t, _ in consumer.batches]
    assert order.index(small) < 2 and order.count(big) == 6


async def test_one_process_applies_under_the_lease_and_the_other_follows(store):
    tenant = "t"
    seqs = await save(store, tenant, 4)
    holder, follower = Seen(name()), None
    first = Runtime(store, [holder], lease=True)
    assert await first.apply_all() == 4
    await first.flush_cursors()
    follower = Seen(holder.name)
    second = Runtime(store, [follower], lease=True, poll_seconds=0.05)
    running = asyncio.create_task(second.run())
    try:
        track = second.track(follower.name)
        async with asyncio.timeout(WAIT_SECONDS):
            await track.wait_for(tenant, seqs[-1])
        assert follower.seen == {}  # positions from the holder's cursor, nothing applied here
        lease = await store.get_metadata(SYSTEM_TENANT, namespace_of(holder.name), KEY)
        assert lease.data["holder"] == first.track(holder.name).lease.holder

        await first.close()  # a graceful stop hands the lease on
        more = await save(store, tenant, 1, session="s2")
        async with asyncio.timeout(WAIT_SECONDS):
            await track.wait_for(tenant, more[-1])
            while not follower.seen:
                await asyncio.sleep(0.01)
        assert follower.seen == {tenant: more[-1:]}
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await second.close()


async def test_consumers_keep_cursors_of_their_own(store):
    tenant = "t"
    seqs = await save(store, tenant, 2)
    one, two = Seen(name()), Seen(name(), version="x")
    runtime = Runtime(store, [one, two])
    await runtime.sync_tenant(tenant, one.name)
    assert one.seen == {tenant: seqs} and two.seen == {}
    assert runtime.snapshot()[one.name]["tenants"][tenant][0] == (await store.event_bounds(tenant))[1]
    await runtime.sync_tenant(tenant)
    assert two.seen == {tenant: seqs}
    with pytest.raises(ValueError):
        runtime.add(Seen(one.name))


async def test_with_quiet_seconds_a_burst_of_commits_is_served_first(store):
    """Work that can wait (memory formation): no pass while local commits keep coming; once
    they pause, one pass takes the burst; a waiter starts a pass at once; defer_seconds bounds
    the wait under commits that never pause."""
    tenant = f"t-{uuid.uuid4().hex[:6]}"
    memory = Memory(store, Limits())

    async def commit(i: int) -> None:
        await memory.save_messages(tenant, "s", [message(f"m{i}", 1000 * (i + 1))])

    async def saver(stop: asyncio.Event, count: list[int]) -> None:
        while not stop.is_set() and count[0] < 5000:
            count[0] += 1
            await commit(count[0])
            await asyncio.sleep(0.01)

    async def run(runtime: Runtime, body) -> None:
        task = asyncio.create_task(runtime.run())
        try:
            await body()
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await runtime.close()

    consumer = Seen(name())
    runtime = Runtime(store, [consumer], poll_seconds=0.05, quiet_seconds=5.0, defer_seconds=WAIT_SECONDS)

    async def burst() -> None:
        # The runtime's first pass runs at once (a backlog found at start is not deferred):
        # let it take one commit, then start the burst.
        await commit(0)
        first = (await store.event_bounds(tenant))[1]
        async with asyncio.timeout(WAIT_SECONDS):
            while runtime.track(consumer.name).position(tenant) < first:
                await asyncio.sleep(0.05)
        consumer.batches.clear()
        for i in range(1, 21):
            await commit(i)
        # Commits kept coming: no new pass started. A pass already running when the burst
        # began (a turn that ended with work left goes on at once, e.g. on a loaded machine)
        # may take what it read then: at most one batch, never a pass per commit.
        assert len(consumer.batches) <= 1
        early = sum(n for _, n in consumer.batches)
        latest = (await store.event_bounds(tenant))[1]
        async with asyncio.timeout(WAIT_SECONDS):
            while runtime.track(consumer.name).position(tenant) < latest:
                await asyncio.sleep(0.05)
        # Then one pass took the (rest of the) burst.
        assert consumer.batches[-1] == (tenant, 20 - early) and len(consumer.batches) == (2 if early else 1)

        # A waiter does not wait for the commits to pause.
        stop, count = asyncio.Event(), [0]
        saving = asyncio.create_task(saver(stop, count))
        while count[0] < 3:
            await asyncio.sleep(0.01)
        async with asyncio.timeout(WAIT_SECONDS):
            await runtime.track(consumer.name).wait_for(tenant, (await store.event_bounds(tenant))[1])
        assert not saving.done()  # still saving when the wait returned
        stop.set()
        await saving

    await run(runtime, burst)

    bounded = Seen(name())
    runtime = Runtime(store, [bounded], poll_seconds=0.05, quiet_seconds=WAIT_SECONDS, defer_seconds=0.2)

    async def never_quiet() -> None:
        stop, count = asyncio.Event(), [0]
        saving = asyncio.create_task(saver(stop, count))
        async with asyncio.timeout(WAIT_SECONDS):
            while not bounded.batches:
                await asyncio.sleep(0.05)
        assert not saving.done()  # applied while the commits went on: the deferral is bounded
        stop.set()
        await saving

    await run(runtime, never_quiet)
