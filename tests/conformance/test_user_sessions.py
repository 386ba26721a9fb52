"""What tokens bound to one end user rely on in storage, on every adapter: a claim takes only a
session without an owner, atomically with its write; every event is stamped with its session's owner
when it is written; reads across sessions keep to the sessions they are given, in the query."""

from __future__ import annotations

import pytest

from memoryd.domain.errors import PermissionDenied
from memoryd.domain.models import ClearTarget, EventType, RecentQuery
from tests.conformance.test_messages import contents, msg, save
from tests.conformance.test_metadata_events import events_of
from tests.conformance.test_sessions import owner

T = EventType


async def test_a_claim_takes_a_free_session_and_no_other(memory, store, tenant):
    await memory.save_messages(tenant, "new", [msg("a", 1)], claimed_by="alice")
    assert (await memory.get_session(tenant, "new")).attributes.user_id == "alice"
    await memory.save_messages(tenant, "new", [msg("b", 2)], claimed_by="alice")  # hers: goes on
    await memory.update_session(tenant, "new", owner(agent="app"), [], claimed_by="alice")
    await save(memory, tenant, "plain", msg("tenant's", 1))  # written without an owner
    await memory.update_session(tenant, "bobs", owner("bob"), [])
    count = len(await events_of(store, tenant))
    for session in ("new", "plain", "bobs"):
        claimant = "bob" if session == "new" else "alice"
        with pytest.raises(PermissionDenied) as caught:
            await memory.save_messages(tenant, session, [msg("intruder", 3)], claimed_by=claimant)
        assert caught.value.reason == "USER_ACCESS_DENIED"
        with pytest.raises(PermissionDenied):
            await memory.update_session(tenant, session, owner(), [], claimed_by=claimant)
    assert len(await events_of(store, tenant)) == count  # nothing stored
    assert contents(await memory.get_history(tenant, "plain", 0)) == ["tenant's"]
    assert contents(await memory.get_history(tenant, "new", 0)) == ["a", "b"]

    # A session cleared of everything still has its owner (the tenant): never free again
    # (tests/conformance/test_ownership.py runs every emptying path).
    await memory.clear(tenant, "plain", [ClearTarget.MESSAGES, ClearTarget.METADATA])
    with pytest.raises(PermissionDenied):
        await memory.save_messages(tenant, "plain", [msg("alice's?", 4)], claimed_by="alice")
    assert (await store.get_session(tenant, "plain")).owner == ""


async def test_events_carry_the_owner_their_session_had_when_written(memory, store, tenant):
    await memory.save_messages(tenant, "hers", [msg("a", 1)], claimed_by="alice")
    await save(memory, tenant, "plain", msg("b", 1))
    await memory.save_metadata(tenant, "ns", "k", {"x": 1})
    await memory.update_session(tenant, "plain", owner("bob"), [])  # the tenant gives it to bob
    await save(memory, tenant, "plain", msg("c", 2))
    owners = [(e.type, e.session_id, e.user_id) for e in await events_of(store, tenant)]
    assert owners == [
        (T.SESSION_UPDATED, "hers", "alice"),  # a claim's own events are the new owner's
        (T.MESSAGES_APPENDED, "hers", "alice"),
        (T.MESSAGES_APPENDED, "plain", ""),  # before it had one
        (T.METADATA_CHANGED, "", ""),  # tenant-wide: no one's
        (T.SESSION_UPDATED, "plain", "bob"),
        (T.MESSAGES_APPENDED, "plain", "bob"),
    ]


async def test_recent_across_sessions_keeps_to_the_given_sessions_in_the_query(memory, tenant):
    await save(memory, tenant, "noise", *[msg(f"n{i}", 1000 + i) for i in range(396)])
    await save(memory, tenant, "mine", *[msg(f"m{i}", 100 + i) for i in range(4)])
    await save(memory, tenant, "also-mine", msg("x", 50))
    got = await memory.recent_across_sessions(tenant, RecentQuery(limit=3, session_ids=("mine", "also-mine")))
    assert contents(r.message for r in got) == ["m1", "m2", "m3"]  # a full page, 99% filtered out
    got = await memory.recent_across_sessions(tenant, RecentQuery(limit=10, session_ids=("also-mine",)))
    assert [(r.session_id, r.message.content) for r in got] == [("also-mine", "x")]
    assert await memory.recent_across_sessions(tenant, RecentQuery(limit=10, session_ids=())) == []
