"""Byte-bounded reads, the server timestamp rule and the JSON keys every backend stores:
identical on every adapter."""

from __future__ import annotations

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import Message, RangeQuery, RecentQuery, now_ms

BOUND = 10_000
BIG = 3_000  # content bytes of one message: three fit the bound, the fourth does not


def _memory(store) -> Memory:
    return Memory(store, Limits(max_response_bytes=BOUND, max_page_size=1000))


async def _save_big(memory, tenant, session, count, size=BIG):
    messages = [Message(role="user", content=f"{i:04d}" + "x" * (size - 4), timestamp=100 + i) for i in range(count)]
    return (await memory.save_messages(tenant, session, messages)).messages


async def test_full_history_pages_end_at_the_byte_bound_and_progress(store, tenant):
    memory = _memory(store)
    saved = await _save_big(memory, tenant, "s", 12)
    pages, token = [], ""
    while True:
        page, token = await memory.get_full_history(tenant, "s", 1000, token)
        assert page and sum(m.stored_bytes for m in page) <= BOUND
        pages.append([m.seq for m in page])
        if not token:
            break
    assert [seq for page in pages for seq in page] == [m.seq for m in saved]
    assert len(pages) == 4  # 3 per page


async def test_a_message_over_the_bound_still_makes_a_page(store, tenant):
    memory = _memory(store)
    await _save_big(memory, tenant, "s", 1, size=3 * BOUND)
    await _save_big(memory, tenant, "s", 2)
    first, token = await memory.list_in_range(tenant, "s", 0, 10**9, [], [], 0, "")
    assert len(first) == 1 and token
    rest, token = await memory.list_in_range(tenant, "s", 0, 10**9, [], [], 0, token)
    assert len(rest) == 2 and not token


async def test_stores_stop_reading_at_the_bound(store, tenant):
    memory = _memory(store)
    await _save_big(memory, tenant, "s", 12)
    for size in (2 * BIG, 3 * BIG):
        await memory.save_metadata(tenant, "ns", f"k{size}", {"blob": "m" * size})
    # The row that crosses the bound is the last one read: never the whole `limit`.
    assert len(await store.range(tenant, RangeQuery("s", 1000, max_bytes=BOUND))) == 4
    assert len(await store.history(tenant, "s", 1000, BOUND)) == 4
    recent = await store.recent_across_sessions(tenant, RecentQuery(limit=1000, roles=("user",), max_bytes=BOUND))
    assert len(recent) == 4
    assert len(await store.list_metadata(tenant, "ns", None, 1000, 2 * BIG + 500)) == 2
    assert len(await store.range(tenant, RangeQuery("s", 1000))) == 12  # no bound: every row


async def test_history_and_recent_keep_the_newest_that_fit(store, tenant):
    memory = _memory(store)
    saved = await _save_big(memory, tenant, "s", 12)
    history, truncated = await memory.history_window(tenant, "s", 50)
    assert truncated and [m.seq for m in history] == [m.seq for m in saved[-3:]]
    recent, truncated = await memory.recent_window(tenant, RecentQuery(limit=50, roles=("user",)))
    assert truncated and [r.message.seq for r in recent] == [m.seq for m in saved[-3:]]
    small, truncated = await memory.history_window(tenant, "s", 2)
    assert not truncated and len(small) == 2


async def test_list_metadata_pages_end_at_the_byte_bound(store, tenant):
    memory = _memory(store)
    for i in range(5):
        await memory.save_metadata(tenant, "ns", f"k{i}", {"blob": "m" * 4000})
    keys, token = [], ""
    while True:
        page, token = await memory.list_metadata(tenant, "ns", 100, token)
        assert 1 <= len(page) <= 2
        keys += [e.key for e in page]
        if not token:
            break
    assert keys == [f"k{i}" for i in range(5)]


async def test_server_timestamps_never_go_below_the_sessions_newest(store, tenant):
    memory = Memory(store, Limits())
    future = now_ms() + 10**7  # a caller's clock far ahead of the server's

    async def save(*timestamps):
        return (await memory.save_messages(tenant, "s", [Message(role="user", timestamp=t) for t in timestamps])).messages

    (ahead,) = await save(future)
    (stamped,) = await save(0)
    assert stamped.timestamp >= future
    mixed = await save(0, future + 5)  # a later caller timestamp in the same batch
    assert mixed[0].timestamp >= future + 5
    await memory.delete_by_ids(tenant, "s", [m.id for m in (ahead, stamped, *mixed)])
    (after_delete,) = await save(0)
    assert after_delete.timestamp >= future + 5  # the session's high-water mark, not its present newest
    replaced, _ = await memory.replace_history(tenant, "s", [Message(role="user")])
    assert replaced[0].timestamp >= after_delete.timestamp
    history, _ = await memory.get_full_history(tenant, "s", 0, "")
    assert [m.seq for m in history] == sorted(m.seq for m in history)  # history order is insertion order


async def test_keys_every_backend_stores_round_trip(store, tenant):
    memory = Memory(store, Limits())
    data = {"a.b": 1, "": 2, "a$": 3, "ünï code": 4, "_id": 5, "nested": {"x.y": {"": [1, {"z.$": None}]}}}
    entry = await memory.save_metadata(tenant, "ns", "k", data)
    assert (await memory.get_metadata(tenant, "ns", "k")).data == data == entry.data
    message = Message(role="user", timestamp=5, metadata=data, segments=[{"type": "text", "data": data}])
    await memory.save_messages(tenant, "s", [message])
    (read,) = await memory.get_history(tenant, "s", 1)
    assert read.metadata == data and read.segments[0]["data"] == data
