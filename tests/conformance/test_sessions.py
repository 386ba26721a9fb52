"""PopMessages and session attributes (owner, labels, ListSessions filters), on every adapter."""

from __future__ import annotations

import asyncio
import random

import pytest

from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearTarget, EventType
from memoryd.domain.sessions import SessionAttributes, SessionFilter
from tests.conformance.test_messages import contents, msg, save
from tests.conformance.test_metadata_events import events_of

T = EventType


def owner(user: str = "", agent: str = "", **labels: str) -> SessionAttributes:
    return SessionAttributes(user, agent, labels)


async def pop(memory, tenant, session_id, n):
    popped, truncated = await memory.pop_messages(tenant, session_id, n)
    assert not truncated
    return popped


async def listed(memory, tenant, where=SessionFilter(), page_size=0) -> list[str]:
    ids, token = [], ""
    while True:
        page, token = await memory.list_sessions(tenant, page_size, token, where)
        ids += [info.session_id for info in page]
        if not token:
            return ids


# -- PopMessages -------------------------------------------------------------------
async def test_pop_removes_the_newest_unarchived_and_returns_them_oldest_first(memory, store, tenant):
    await save(memory, tenant, "s", *[msg(str(i), 10 + i) for i in range(5)])
    await memory.trim_history(tenant, "s", 4)  # "0" archived: never popped
    await save(memory, tenant, "s", msg("late-but-old", 1))  # oldest timestamp: popped last
    before = len(await events_of(store, tenant))

    popped = await pop(memory, tenant, "s", 2)
    assert contents(popped) == ["3", "4"]
    assert popped[0].metadata == {} and popped[1].id and not popped[1].archived
    assert contents(await memory.get_history(tenant, "s", 0)) == ["late-but-old", "1", "2"]

    events = (await events_of(store, tenant))[before:]
    assert [e.type for e in events] == [T.MESSAGES_DELETED, T.HISTORY_CHANGED]
    assert events[0].payload["ids"] == [m.id for m in popped]
    assert events[0].payload["timestamps"] == [13, 14]
    assert events[0].payload["cause"] == T.MESSAGES_DELETED

    assert contents(await pop(memory, tenant, "s", 0)) == ["2"]  # 0 means 1
    assert contents(await pop(memory, tenant, "s", 10)) == ["late-but-old", "1"]
    assert await pop(memory, tenant, "s", 1) == []
    full, _ = await memory.get_full_history(tenant, "s", 0, "")
    assert contents(full) == ["0"] and full[0].archived
    (info,) = (await memory.list_sessions(tenant, 0, ""))[0]
    assert (info.message_count, info.unarchived_count) == (1, 0)
    assert len(await events_of(store, tenant)) == before + 6  # an empty pop writes nothing


async def test_pop_returns_every_field_as_stored(memory, tenant):
    (saved,) = await save(
        memory, tenant, "s",
        msg("call", 5, role="assistant", kind="", reasoning_content="why",
            tool_calls=[{"id": "c1", "name": "f", "arguments": "{}"}],
            segments=[{"type": "text", "data": {"text": "call"}}], metadata={"platform": "qq"}),
    )  # fmt: skip
    (popped,) = await pop(memory, tenant, "s", 1)
    assert popped == saved


async def test_a_pop_keeps_to_the_response_byte_bound(store, tenant):
    memory = Memory(store, Limits(max_response_bytes=2500))
    await save(memory, tenant, "s", *[msg(c * 1000, i + 1) for i, c in enumerate("abcd")])
    popped, truncated = await memory.pop_messages(tenant, "s", 3)
    assert contents(popped) == ["c" * 1000, "d" * 1000] and truncated  # a third would pass 2500 bytes
    assert contents(await memory.get_history(tenant, "s", 0)) == ["a" * 1000, "b" * 1000]
    tiny = Memory(store, Limits(max_response_bytes=10))
    popped, truncated = await tiny.pop_messages(tenant, "s", 2)
    assert contents(popped) == ["b" * 1000] and truncated  # always one, so popping progresses
    popped, truncated = await tiny.pop_messages(tenant, "s", 1)
    assert contents(popped) == ["a" * 1000] and not truncated


async def test_pops_racing_appends_always_take_the_newest(memory, store, tenant):
    """Replaying the event log (commit order) proves each pop removed the newest messages
    of that instant, and that nothing was lost or popped twice."""
    rng = random.Random(7)
    appended: list[str] = []

    async def appender(worker: int) -> None:
        for i in range(12):
            stored = await save(memory, tenant, "s", *[msg(f"{worker}-{i}-{j}", 0) for j in range(rng.randint(1, 3))])
            appended.extend(m.id for m in stored)

    async def popper() -> list[list[str]]:
        pops = []
        for _ in range(10):
            pops.append([m.id for m in await pop(memory, tenant, "s", rng.randint(1, 2))])
            await asyncio.sleep(0)
        return pops

    *_, pops_a, pops_b = await asyncio.gather(appender(1), appender(2), popper(), popper())
    popped = [i for pop in pops_a + pops_b for i in pop]
    remaining = [m.id for m in await memory.get_history(tenant, "s", 1000)]
    assert len(popped) == len(set(popped)) and not set(popped) & set(remaining)
    assert sorted(popped + remaining) == sorted(appended)

    history: list[tuple[int, int, str]] = []  # (timestamp, seq, id) as a model of the session
    deletions = 0
    for event in await events_of(store, tenant):
        if event.type == T.MESSAGES_APPENDED:
            history += [(r["timestamp"], r["seq"], r["id"]) for r in event.payload["messages"]]
        elif event.type == T.MESSAGES_DELETED:
            newest = sorted(history)[-len(event.payload["ids"]) :]
            assert [i for _, _, i in newest] == event.payload["ids"]
            history = [m for m in history if m[2] not in set(event.payload["ids"])]
            deletions += 1
    assert deletions == sum(1 for pop in pops_a + pops_b if pop)
    assert [i for _, _, i in sorted(history)] == remaining


# -- attributes --------------------------------------------------------------------
async def test_attributes_are_saved_with_messages_and_merge(memory, store, tenant):
    await memory.save_messages(tenant, "s", [msg("a", 1)], attributes=owner("u1", "app", topic="tea"))
    info = await memory.get_session(tenant, "s")
    assert info.attributes == owner("u1", "app", topic="tea") and info.message_count == 1

    # Empty owner fields leave the stored ones; labels merge key by key.
    await memory.save_messages(tenant, "s", [msg("b", 2)], attributes=owner(lang="en", topic="coffee"))
    assert (await memory.get_session(tenant, "s")).attributes == owner("u1", "app", lang="en", topic="coffee")
    updated = await memory.update_session(tenant, "s", owner(mood="ok"), ["topic", "unknown"])
    assert updated.attributes == owner("u1", "app", lang="en", mood="ok") and updated.message_count == 2
    assert updated == await memory.get_session(tenant, "s")

    events = [e for e in await events_of(store, tenant) if e.type == T.SESSION_UPDATED]
    assert [e.payload["attributes"]["labels"] for e in events] == [
        {"topic": "tea"}, {"lang": "en", "topic": "coffee"}, {"lang": "en", "mood": "ok"}
    ]
    assert all(e.session_id == "s" and e.payload["attributes"]["user_id"] == "u1" for e in events)
    count = len(await events_of(store, tenant))
    await memory.update_session(tenant, "s", owner("u1", mood="ok"), [])  # no change: no event
    await memory.save_messages(tenant, "s", [msg("c", 3)], attributes=owner("u1"))
    assert [e.type for e in (await events_of(store, tenant))[count:]] == [T.MESSAGES_APPENDED]


async def test_the_owner_is_set_once_and_a_mismatch_stores_nothing(memory, store, tenant):
    await memory.save_messages(tenant, "s", [msg("a", 1)], attributes=owner("u1"))
    await memory.update_session(tenant, "s", owner(agent="app"), [])  # agent_id was unset: set now
    count = len(await events_of(store, tenant))
    for attempt in (owner("u2"), owner("u1", "other-app"), owner(agent="other-app", x="1")):
        with pytest.raises(FailedPrecondition) as caught:
            await memory.save_messages(tenant, "s", [msg("intruder", 2)], attributes=attempt)
        assert caught.value.reason == "SESSION_OWNER_MISMATCH"
        with pytest.raises(FailedPrecondition):
            await memory.update_session(tenant, "s", attempt, [])
    assert contents(await memory.get_history(tenant, "s", 0)) == ["a"]
    assert (await memory.get_session(tenant, "s")).attributes == owner("u1", "app")
    assert len(await events_of(store, tenant)) == count


async def test_an_idempotent_retry_with_attributes_stores_once(memory, tenant):
    first = await memory.save_messages(tenant, "s", [msg("a", 1)], "key-1", owner("u1", k="v"))
    again = await memory.save_messages(tenant, "s", [msg("a", 1)], "key-1", owner("u2", k="w"))
    assert again.deduplicated and again.messages == first.messages
    assert (await memory.get_session(tenant, "s")).attributes == owner("u1", k="v")


async def test_labels_per_session_are_capped(memory, tenant):
    cap = memory.limits.max_filter_items
    await memory.update_session(tenant, "s", owner(**{f"k{i}": "v" for i in range(cap)}), [])
    with pytest.raises(FailedPrecondition) as caught:
        await memory.update_session(tenant, "s", owner(one_more="v"), [])
    assert caught.value.reason == "SESSION_LABELS_FULL"
    swapped = await memory.update_session(tenant, "s", owner(one_more="v"), ["k0"])  # net zero: fine
    assert len(swapped.attributes.labels) == cap and "one_more" in swapped.attributes.labels


async def test_update_creates_a_listed_session_without_messages(memory, tenant):
    assert await memory.get_session(tenant, "new") is None
    info = await memory.update_session(tenant, "new", owner("u1"), [])
    assert (info.message_count, info.attributes.user_id) == (0, "u1") and info.last_activity > 0
    assert await listed(memory, tenant) == ["new"]
    assert (await memory.get_session(tenant, "new")).attributes == owner("u1")


async def test_clearing_metadata_clears_attributes_but_the_owner(memory, store, tenant):
    await memory.save_messages(tenant, "s", [msg("a", 1)], attributes=owner("u1", tag="x"))
    await memory.save_messages(tenant, "t", [msg("b", 1)], attributes=owner("u1"))
    await save(memory, tenant, "plain", msg("c", 1))
    await memory.clear(tenant, "s", [ClearTarget.MESSAGES])
    await memory.clear(tenant, "plain", [ClearTarget.MESSAGES])
    assert await listed(memory, tenant) == ["s", "t"]  # "s" keeps its owner with no messages
    assert (await memory.get_session(tenant, "s")).message_count == 0
    assert await memory.get_session(tenant, "plain") is None

    count = len(await events_of(store, tenant))
    await memory.clear(tenant, "s", [ClearTarget.METADATA])
    (cleared,) = [e for e in (await events_of(store, tenant))[count:] if e.type == T.SESSION_UPDATED]
    # The agent and labels go; the owner stays (a session belongs to its user for good).
    assert cleared.payload["attributes"] == {"user_id": "u1", "agent_id": "", "labels": {}}
    assert (await memory.get_session(tenant, "s")).attributes == owner("u1")
    assert await listed(memory, tenant) == ["s", "t"]
    with pytest.raises(FailedPrecondition) as caught:
        await memory.update_session(tenant, "s", owner("u2"), [])  # never another user's
    assert caught.value.reason == "SESSION_OWNER_MISMATCH"
    await memory.clear(tenant, None, [ClearTarget.MESSAGES, ClearTarget.METADATA])
    assert await listed(memory, tenant) == ["s", "t"]  # empty, each still u1's
    assert await listed(memory, tenant, SessionFilter(user_id="u1")) == ["s", "t"]
    assert [(await memory.get_session(tenant, s)).attributes for s in ("s", "t")] == [owner("u1"), owner("u1")]
    assert (await store.get_session(tenant, "plain")).owner == ""  # the tenant's, listed or not


# -- ListSessions filters -----------------------------------------------------------
async def test_list_sessions_filters_by_owner_and_labels_and_pages(memory, tenant):
    layout = {
        "s01": owner("ann", "chat", plan="pro", lang="en"),
        "s02": owner("ann", "chat", plan="free"),
        "s03": owner("ann", "mail", plan="pro"),
        "s04": owner("bob", "chat", plan="pro", lang="en"),
        "s05": owner("bob", lang="en"),
        "s06": owner(agent="chat", plan="pro"),
        "s07": owner(),
    }
    for session_id, attributes in layout.items():
        await memory.save_messages(tenant, session_id, [msg(session_id, 1)], attributes=attributes or None)
    cases = [
        (SessionFilter(), list(layout)),
        (SessionFilter(user_id="ann"), ["s01", "s02", "s03"]),
        (SessionFilter(agent_id="chat"), ["s01", "s02", "s04", "s06"]),
        (SessionFilter(user_id="ann", agent_id="chat"), ["s01", "s02"]),
        (SessionFilter(labels={"plan": "pro"}), ["s01", "s03", "s04", "s06"]),
        (SessionFilter(labels={"plan": "pro", "lang": "en"}), ["s01", "s04"]),
        (SessionFilter(user_id="bob", labels={"lang": "en"}), ["s04", "s05"]),
        (SessionFilter(agent_id="chat", labels={"plan": "pro", "lang": "en"}), ["s01", "s04"]),
        (SessionFilter(user_id="nobody"), []),
        (SessionFilter(labels={"plan": "enterprise"}), []),
    ]
    for where, expected in cases:
        for page_size in (0, 1, 2):
            assert await listed(memory, tenant, where, page_size) == expected, (where, page_size)
    infos, _ = await memory.list_sessions(tenant, 0, "", SessionFilter(user_id="bob", labels={"lang": "en"}))
    assert [i.attributes for i in infos] == [layout["s04"], layout["s05"]]
    assert all(i.message_count == 1 for i in infos)


async def test_a_page_token_belongs_to_its_filter(memory, tenant):
    from memoryd.domain.errors import InvalidArgument

    for session_id in ("a", "b"):
        await memory.save_messages(tenant, session_id, [msg("x", 1)], attributes=owner("ann"))
    _, token = await memory.list_sessions(tenant, 1, "", SessionFilter(user_id="ann"))
    with pytest.raises(InvalidArgument):
        await memory.list_sessions(tenant, 1, token, SessionFilter(user_id="bob"))


async def test_popping_and_deleting_keep_an_owned_session_listed(memory, tenant):
    await memory.save_messages(tenant, "s", [msg("a", 1)], attributes=owner("ann"))
    await pop(memory, tenant, "s", 1)
    assert await listed(memory, tenant, SessionFilter(user_id="ann")) == ["s"]
