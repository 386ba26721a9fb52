"""Store.write_metadata_guarded with several guards, on every adapter: the write happens only
when every guard holds, read in its transaction; otherwise nothing is written (no record, no
event). Writers on separate connections to one database (as two processes are) that read the
same versions never both commit. Formation's extraction guards its batch this way on every
fact it changes (formation/records.py), so a caller's correction is not overwritten."""

from __future__ import annotations

import asyncio

from memoryd.domain.models import EventType
from memoryd.domain.store import MetadataGuard, MetadataWrite

NS = "guarded-test"


def versioned(key: str, version: int, text: str = "") -> MetadataWrite:
    return MetadataWrite(NS, key, {"version": version, "text": text or f"{key} v{version}"})


async def data(store, tenant: str, key: str) -> dict | None:
    entry = await store.get_metadata(tenant, NS, key)
    return dict(entry.data) if entry is not None else None


async def metadata_events(store, tenant: str) -> int:
    return len(await store.read_events(tenant, 0, 1000, types=[EventType.METADATA_CHANGED], through_seq=2**62))


async def test_a_write_happens_only_when_every_guard_holds(store, tenant):
    assert await store.write_metadata_guarded(tenant, [versioned("a", 1), versioned("b", 1)], None, [], 1000)
    events = await metadata_events(store, tenant)

    # b moved on (v2): a write that read b at v1 writes nothing, a's record neither.
    assert await store.write_metadata_guarded(
        tenant, [versioned("b", 2)], MetadataGuard(NS, "b", "version", 1), [], 1001
    )
    stale = [MetadataGuard(NS, "a", "version", 1), MetadataGuard(NS, "b", "version", 1)]
    assert not await store.write_metadata_guarded(
        tenant, [versioned("a", 2, "lost"), versioned("b", 3, "lost")], None, [], 1002, guards=stale
    )
    assert await data(store, tenant, "a") == {"version": 1, "text": "a v1"}
    assert await data(store, tenant, "b") == {"version": 2, "text": "b v2"}
    assert await metadata_events(store, tenant) == events + 1

    # The same with `guard` and `guards` together: both must hold.
    progress = MetadataGuard(NS, "p", "version", None)  # absent
    assert not await store.write_metadata_guarded(
        tenant, [versioned("p", 1), versioned("a", 2)], progress, [], 1003, guards=stale[:1] + stale[1:]
    )
    assert await data(store, tenant, "p") is None
    fresh = [MetadataGuard(NS, "a", "version", 1), MetadataGuard(NS, "b", "version", 2)]
    assert await store.write_metadata_guarded(
        tenant, [versioned("p", 1), versioned("a", 2), versioned("b", 3)], progress, [], 1004, guards=fresh
    )
    assert [await data(store, tenant, k) for k in ("p", "a", "b")] == [
        {"version": 1, "text": "p v1"},
        {"version": 2, "text": "a v2"},
        {"version": 3, "text": "b v3"},
    ]

    # A guard on a record that must be absent fails once it exists; a deleted one holds again.
    absent = [MetadataGuard(NS, "c", "version", None)]
    assert await store.write_metadata_guarded(tenant, [versioned("c", 1)], None, [], 1005, guards=absent)
    assert not await store.write_metadata_guarded(tenant, [versioned("c", 1, "again")], None, [], 1006, guards=absent)
    deleted = [MetadataGuard(NS, "c", "version", 1)]
    assert await store.write_metadata_guarded(tenant, [MetadataWrite(NS, "c", None)], None, [], 1007, guards=deleted)
    assert not await store.write_metadata_guarded(tenant, [versioned("c", 2)], None, [], 1008, guards=deleted)
    assert await data(store, tenant, "c") is None


async def test_writers_on_separate_connections_never_both_commit(store, store_target, tenant):
    """Two store instances (separate connections, as two processes have) race rounds of
    guarded writes over the same two records: in each round exactly one writer commits."""
    other = await store_target.open()
    try:
        assert await store.write_metadata_guarded(tenant, [versioned("x", 1), versioned("y", 1)], None, [], 1)
        for round_ in range(1, 6):
            guards = [MetadataGuard(NS, "x", "version", round_), MetadataGuard(NS, "y", "version", round_)]

            async def write(st, who: str, guards=guards, round_=round_) -> bool:
                writes = [versioned("x", round_ + 1, who), versioned("y", round_ + 1, who)]
                return await st.write_metadata_guarded(tenant, writes, None, [], 10 + round_, guards=guards)

            won = await asyncio.gather(write(store, "first"), write(other, "second"))
            assert sorted(won) == [False, True]
            winner = "first" if won[0] else "second"
            assert await data(store, tenant, "x") == {"version": round_ + 1, "text": winner}
            assert await data(other, tenant, "y") == {"version": round_ + 1, "text": winner}
    finally:
        await other.close()
