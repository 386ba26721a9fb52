"""A session belongs to its owner for good (domain/sessions.py "Ownership"), on every adapter:
the first write fixes the owner; no emptying path (ClearSession of any target, DeleteMessages
of every id, PopMessages of all, ReplaceHistory, TrimHistory, ClearAll) frees it, so a token
bound to another user can never claim it; only forgetting (ForgetUser, retention) leaves it
without one, and then its id may be written anew. Rows and documents written before owners
were kept apart read as their user's, else the tenant's."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import pytest

from memoryd.domain import forget
from memoryd.domain.errors import FailedPrecondition, PermissionDenied
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearTarget, Message
from memoryd.domain.sessions import TENANT, SessionAttributes, SessionFilter
from memoryd.domain.store import Clearing, SessionGuard
from memoryd.storage.sqlite.store import SqliteStore
from tests.conformance.test_messages import contents, msg, save
from tests.conformance.test_metadata_events import events_of
from tests.conformance.test_sessions import owner

M, D = ClearTarget.MESSAGES, ClearTarget.METADATA


# Every way to empty a session: (name, emptying). Each leaves no message and, for those that
# clear metadata, no attribute but the owner.
Emptying = Callable[[Memory, str, str], Awaitable[object]]
EMPTYING: dict[str, Emptying] = {
    "clear-default": lambda memory, t, s: memory.clear(t, s, []),
    "clear-messages-metadata": lambda memory, t, s: memory.clear(t, s, [M, D]),
    "clear-metadata": lambda memory, t, s: memory.clear(t, s, [D]),
    "clear-all-targets": lambda memory, t, s: memory.clear(t, s, [M, D, ClearTarget.VECTORS]),
    "delete-every-id": lambda memory, t, s: _delete_every_id(memory, t, s),
    "delete-every-timestamp": lambda memory, t, s: _delete_every_timestamp(memory, t, s),
    "pop-all": lambda memory, t, s: memory.pop_messages(t, s, 1000),
    "replace-with-one": lambda memory, t, s: memory.replace_history(t, s, [msg("replacement", 9)]),
    "trim-to-none": lambda memory, t, s: memory.trim_history(t, s, 0),
    "clear-all": lambda memory, t, s: memory.clear(t, None, [M, D]),
}


async def _delete_every_id(memory: Memory, tenant: str, session: str) -> None:
    rows, _ = await memory.get_full_history(tenant, session, 1000, "")
    await memory.delete_by_ids(tenant, session, [m.id for m in rows])


async def _delete_every_timestamp(memory: Memory, tenant: str, session: str) -> None:
    rows, _ = await memory.get_full_history(tenant, session, 1000, "")
    await memory.delete_by_timestamps(tenant, session, [m.timestamp for m in rows])


async def _refused_claim(memory: Memory, store, tenant: str, session: str, user: str) -> None:
    """`user`'s claim of `session` (a save and an UpdateSession) is refused and stores nothing."""
    count = len(await events_of(store, tenant))
    with pytest.raises(PermissionDenied) as caught:
        await memory.save_messages(tenant, session, [msg("intruder", 50)], claimed_by=user)
    assert caught.value.reason == "USER_ACCESS_DENIED"
    with pytest.raises(PermissionDenied):
        await memory.update_session(tenant, session, SessionAttributes(), [], claimed_by=user)
    assert len(await events_of(store, tenant)) == count


@pytest.mark.parametrize("emptying", sorted(EMPTYING))
@pytest.mark.parametrize("first", ["tenant", "tenant-naming-u2", "u2"])
async def test_no_emptying_frees_a_session(memory, store, tenant, first, emptying):
    session = "s"
    messages = [msg("one", 1), msg("two", 2)]
    if first == "tenant":
        await save(memory, tenant, session, *messages)
    elif first == "tenant-naming-u2":
        await memory.save_messages(tenant, session, messages, attributes=owner("u2", "app", k="v"))
    else:
        await memory.save_messages(tenant, session, messages, attributes=owner(agent="app", k="v"), claimed_by="u2")
    expected = TENANT if first == "tenant" else "u2"
    assert (await store.get_session(tenant, session)).owner == expected

    await EMPTYING[emptying](memory, tenant, session)

    info = await store.get_session(tenant, session)
    assert info.owner == expected
    assert info.attributes.user_id == expected  # a user's session keeps its user_id
    await _refused_claim(memory, store, tenant, session, "u1")
    assert (await store.get_session(tenant, session)).owner == expected
    if expected != TENANT:  # the owner itself goes on writing it
        await memory.save_messages(tenant, session, [msg("mine again", 60)], claimed_by="u2")
        assert "mine again" in contents(await memory.get_history(tenant, session, 0))
        assert [s.session_id for s in (await memory.list_sessions(tenant, 10, "", SessionFilter(user_id="u2")))[0]] == [
            session
        ]


async def test_the_tenant_gives_its_session_to_one_user_once(memory, store, tenant):
    await save(memory, tenant, "s", msg("a", 1))
    await memory.clear(tenant, "s", [M, D])
    await _refused_claim(memory, store, tenant, "s", "u1")  # emptied: still the tenant's
    await memory.update_session(tenant, "s", owner("u1"), [])  # the tenant's documented power
    assert (await store.get_session(tenant, "s")).owner == "u1"
    await memory.save_messages(tenant, "s", [msg("u1's", 2)], claimed_by="u1")
    with pytest.raises(FailedPrecondition) as caught:
        await memory.update_session(tenant, "s", owner("u2"), [])
    assert caught.value.reason == "SESSION_OWNER_MISMATCH"
    await memory.clear(tenant, "s", [M, D])
    with pytest.raises(FailedPrecondition):  # emptied, still u1's: the tenant cannot move it either
        await memory.update_session(tenant, "s", owner("u2"), [])
    await _refused_claim(memory, store, tenant, "s", "u2")
    assert (await store.get_session(tenant, "s")).owner == "u1"


async def test_a_session_the_tenant_wrote_first_is_never_claimed(memory, store, tenant):
    await memory.update_session(tenant, "labelled", owner(k="v"), [])  # no messages, no user
    await memory.update_session(tenant, "empty", SessionAttributes(), [])  # not even an attribute
    for session in ("labelled", "empty"):
        assert (await store.get_session(tenant, session)).owner == TENANT
        await _refused_claim(memory, store, tenant, session, "u1")


async def test_forgetting_leaves_a_session_without_owner_and_its_id_may_be_taken(memory, store, tenant):
    await memory.save_messages(tenant, "s", [msg("u2's", 1)], claimed_by="u2")
    await memory.clear(tenant, "s", [M, D])  # emptied first: forgetting finds it by its owner
    forgotten, _, _ = await memory.forget_user(tenant, "u2")
    assert forgotten.sessions == 1
    info = await store.get_session(tenant, "s")
    assert (info.owner, info.attributes, info.message_count) == (None, SessionAttributes(), 0)
    assert await memory.get_session(tenant, "s") is None
    await memory.save_messages(tenant, "s", [msg("u1's now", 2)], claimed_by="u1")  # a new conversation
    assert (await store.get_session(tenant, "s")).owner == "u1"
    assert contents(await memory.get_history(tenant, "s", 0)) == ["u1's now"]
    assert (await memory.get_history(tenant, "s", 0))[0].seq == 2  # seqs are never reused


async def test_a_forgotten_session_written_by_the_tenant_becomes_the_tenants(memory, store, tenant):
    await memory.save_messages(tenant, "s", [msg("u2's", 1)], claimed_by="u2")
    guard = SessionGuard(user_id="u2")
    assert await forget.forget_session(store, MessageHooks(), tenant, "s", guard, 10) is not None
    await save(memory, tenant, "s", msg("tenant's", 2))
    assert (await store.get_session(tenant, "s")).owner == TENANT
    await _refused_claim(memory, store, tenant, "s", "u1")


async def test_only_a_clear_that_forgets_releases_the_owner(store, tenant):
    await store.append(tenant, "s", [Message(role="user", content="x", timestamp=1)], None, 1)
    await store.clear_session(tenant, "s", Clearing(True, True, ["messages", "metadata"]), 2)
    assert (await store.get_session(tenant, "s")).owner == TENANT
    await store.clear_session(tenant, "s", Clearing(True, True, ["messages", "metadata"], release_owner=True), 3)
    assert (await store.get_session(tenant, "s")).owner is None


async def test_two_users_racing_for_a_new_session_get_one_owner(memory, store, tenant):
    import asyncio

    async def claim(user: str) -> str | None:
        try:
            await memory.save_messages(tenant, "race", [msg(user, 1)], claimed_by=user)
            return user
        except PermissionDenied:
            return None

    winners = {w for w in await asyncio.gather(*(claim(f"u{i}") for i in range(6))) if w}
    assert len(winners) == 1
    (winner,) = winners
    assert (await store.get_session(tenant, "race")).owner == winner
    assert contents(await memory.get_history(tenant, "race", 0)) == [winner]


# -- data written before owners were kept apart ------------------------------------------------

# The sessions table as it shipped with attributes and before owners (and before labels' index).
ATTRIBUTED_SESSIONS = """
CREATE TABLE sessions (
    tenant TEXT NOT NULL, session_id TEXT NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0, unarchived_count INTEGER NOT NULL DEFAULT 0,
    last_activity INTEGER NOT NULL DEFAULT 0, last_timestamp INTEGER NOT NULL DEFAULT 0,
    user_id TEXT NOT NULL DEFAULT '', agent_id TEXT NOT NULL DEFAULT '', labels TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, session_id));
INSERT INTO sessions VALUES ('t', 'users', 2, 2, 2, 42, 0, 'u2', '', '{}');
INSERT INTO sessions VALUES ('t', 'tenants', 2, 2, 2, 42, 0, '', 'app', '{}');
INSERT INTO sessions VALUES ('t', 'emptied', 2, 0, 0, 42, 0, '', '', '{}');
"""


async def test_a_sqlite_database_of_the_earlier_schema_gets_owners(tmp_path):
    path = tmp_path / "m.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(ATTRIBUTED_SESSIONS)
    for _ in range(2):  # the second open finds the column and changes nothing
        store = SqliteStore(path)
        await store.open()
        try:
            owners = {s: (await store.get_session("t", s)).owner for s in ("users", "tenants", "emptied")}
            assert owners == {"users": "u2", "tenants": TENANT, "emptied": TENANT}
            memory = Memory(store, Limits())
            for session in owners:
                with pytest.raises(PermissionDenied):
                    await memory.save_messages("t", session, [msg("intruder", 1)], claimed_by="u1")
        finally:
            await store.close()


async def test_a_mongodb_document_of_the_earlier_shape_reads_as_its_users(store_target, store, memory, tenant):
    if store_target.backend == "sqlite":
        pytest.skip("MongoDB documents only (SQLite: the migration above)")
    await memory.save_messages(tenant, "users", [msg("a", 1)], attributes=owner("u2"))
    await save(memory, tenant, "tenants", msg("b", 1))
    await store.db["sessions"].update_many({"tenant": tenant}, {"$unset": {"owner": ""}})
    assert (await store.get_session(tenant, "users")).owner == "u2"
    assert (await store.get_session(tenant, "tenants")).owner == TENANT
    for session in ("users", "tenants"):
        await _refused_claim(memory, store, tenant, session, "u1")
    await memory.clear(tenant, "users", [M, D])
    assert (await store.get_session(tenant, "users")).owner == "u2"
