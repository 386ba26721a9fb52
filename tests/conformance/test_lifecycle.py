"""Forgetting a user and session retention (domain/forget.py, domain/retention.py), on every adapter."""

from __future__ import annotations

import json

import pytest

from memoryd.domain import deadline, forget
from memoryd.domain.entries import COUNTER_NAMESPACE, Entries, entries_namespace
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, EventType
from memoryd.domain.retention import DAY_MS, RETENTION_LABEL, Action, Policy, Retention, Settings
from memoryd.domain.sessions import SessionAttributes, SessionFilter, SessionUpdate
from memoryd.domain.store import Clearing, SessionChanged, SessionGuard
from memoryd.domain.summaries import CURSOR_NAMESPACE, Summaries, cursor_key
from tests.conformance.test_messages import msg, save
from tests.conformance.test_metadata_events import events_of

T = EventType
T0 = 1_700_000_000_000  # the retention tests' "long ago"


def owned(user: str, **labels: str) -> SessionAttributes:
    return SessionAttributes(user, "agent", labels)


async def fill_session(memory: Memory, store, tenant: str, session_id: str, user: str) -> None:
    """A session with everything ForgetUser removes: messages (one archived, one deleted),
    an idempotency record, attributes, a record keyed by the session, a summary and its cursor."""
    await memory.save_messages(
        tenant, session_id, [msg(f"{user} secret {session_id} {i}", 10 + i) for i in range(4)], "key-1", owned(user)
    )
    await memory.trim_history(tenant, session_id, 3)
    await memory.delete_by_timestamps(tenant, session_id, [13])
    await memory.save_metadata(tenant, "notes", session_id, {"about": f"{user}'s notes"})
    await Summaries(store, memory.limits).save(tenant, session_id, 1, 2, f"{user} recap", {})


async def state_of(memory: Memory, store, tenant: str, session_id: str) -> tuple:
    """Everything a reader can see of one session."""
    history, _ = await memory.get_full_history(tenant, session_id, 0, "")
    records = await store.list_metadata_by_prefix(tenant, "", None, 1000)
    return (
        [m.to_dict() for m in history],
        await memory.get_session(tenant, session_id),
        [(r.namespace, r.key, r.data) for r in records if session_id in (r.key, r.namespace.rsplit("/", 1)[-1])
         or r.key == cursor_key(session_id)],
    )  # fmt: skip


class Recorded(MessageHooks):
    """Vector hooks that remember what they were asked to clear (no vector store here)."""

    has_vector_store = True

    def __init__(self, fail_after: int | None = None) -> None:
        self.cleared: list[str | None] = []
        self.fail_after = fail_after

    async def clear_vectors(self, tenant, session_id):
        if self.fail_after is not None and len(self.cleared) == self.fail_after:
            raise RuntimeError("the process died here")
        self.cleared.append(session_id)
        return ClearResult(ClearTarget.VECTORS, ClearOutcome.CLEARED, 2)


# -- ForgetUser ---------------------------------------------------------------------
async def test_forget_user_removes_every_session_of_the_user_whole_and_nothing_else(store, tenant):
    hooks = Recorded()
    memory = Memory(store, Limits(delete_batch=7), hooks)
    entries = Entries(store, memory.limits)
    for session_id, user in (("ann-1", "ann"), ("ann-2", "ann"), ("bob-1", "bob")):
        await fill_session(memory, store, tenant, session_id, user)
    await save(memory, tenant, "nobody", msg("unowned", 1))
    await entries.save(tenant, "ann", "ann likes green tea", ["drinks"])
    await entries.save(tenant, "ann", "ann lives in Lyon", [])
    await entries.save(tenant, "bob", "bob likes coffee", [])
    for user in ("ann", "bob"):  # the users' own namespaces (a token bound to one reaches only these)
        await memory.save_metadata(tenant, f"users/{user}/prefs", "theme", {"dark": True})
        await memory.save_metadata(tenant, f"users/{user}/prefs/deeper", "k", {})
    await memory.save_metadata(tenant, "users/anna/prefs", "theme", {})  # another user, "ann" a prefix of the id
    kept = {sid: await state_of(memory, store, tenant, sid) for sid in ("bob-1", "nobody")}
    before = len(await events_of(store, tenant))

    forgotten, vectors, event_seq = await memory.forget_user(tenant, "ann")

    assert (forgotten.sessions, forgotten.messages, forgotten.entries, forgotten.complete) == (2, 6, 2, True)
    assert forgotten.metadata == 2 * 3 + 2  # per session: its notes record, a slice, the cursor; users/ann/...
    assert (vectors.outcome, vectors.removed_count) == (ClearOutcome.CLEARED, 4)
    assert sorted(hooks.cleared) == ["ann-1", "ann-2"]
    for sid in ("ann-1", "ann-2"):
        history, info, records = await state_of(memory, store, tenant, sid)
        assert (history, info, records) == ([], None, [])
        assert await store.get_metadata(tenant, CURSOR_NAMESPACE, cursor_key(sid)) is None
    assert await memory.list_sessions(tenant, 0, "", SessionFilter(user_id="ann")) == ([], "")
    assert await store.list_metadata(tenant, entries_namespace("ann"), None, 10) == []
    left = [(r.namespace, r.key) for r in await store.list_metadata_by_prefix(tenant, "users/", None, 10)]
    assert left == [("users/anna/prefs", "theme"), ("users/bob/prefs", "theme"), ("users/bob/prefs/deeper", "k")]
    assert await store.get_metadata(tenant, COUNTER_NAMESPACE, "count/ann") is None
    assert {sid: await state_of(memory, store, tenant, sid) for sid in kept} == kept
    assert [e.text for e in (await entries.list_entries(tenant, "bob", 0, ""))[0]] == ["bob likes coffee"]

    events = (await events_of(store, tenant))[before:]
    assert event_seq == events[-1].seq
    cleared = [e for e in events if e.type == T.SESSION_CLEARED]
    assert sorted(e.session_id for e in cleared) == ["ann-1", "ann-2"]
    assert all(e.payload["targets"] == list(forget.FORGET_TARGETS) for e in cleared)
    deleted = [e for e in events if e.type == T.MESSAGES_DELETED]
    assert sum(len(e.payload["ids"]) for e in deleted) == 6
    assert {e.type for e in events} == {
        T.MESSAGES_DELETED, T.SESSION_CLEARED, T.HISTORY_CHANGED, T.METADATA_CHANGED, T.SESSION_UPDATED,
        T.ENTRY_CHANGED,
    }  # fmt: skip
    text = json.dumps([e.payload for e in events])
    assert "secret" not in text and "recap" not in text and "tea" not in text  # no content

    again, vectors, _ = await memory.forget_user(tenant, "ann")
    assert (again.sessions, again.messages, again.metadata, again.entries, again.complete) == (0, 0, 0, 0, True)
    assert vectors.outcome == ClearOutcome.CLEARED


async def test_forget_user_pages_past_its_bound_and_a_second_call_finishes_an_interrupted_one(
    store, tenant, monkeypatch
):
    monkeypatch.setattr(forget, "SESSION_PAGE", 3)
    memory = Memory(store, Limits(), Recorded(fail_after=4))  # "dies" after the 4th session's transaction
    sessions = [f"s{i}" for i in range(8)]
    for sid in sessions:
        await save(memory, tenant, sid, msg(f"m {sid}", 1), msg(f"n {sid}", 2))
        await memory.update_session(tenant, sid, owned("ann"), [])
    with pytest.raises(RuntimeError):
        await memory.forget_user(tenant, "ann")
    left = [info.session_id for info in (await memory.list_sessions(tenant, 0, "", SessionFilter(user_id="ann")))[0]]
    assert left == sessions[5:]  # the 5th session's transaction had committed

    memory.hooks = Recorded()
    # Less time left than forget.MIN_RESERVE_SECONDS (raised here, so that the step itself has
    # time on a slow store): one step all the same (every call makes progress), then it stops
    # and says so.
    monkeypatch.setattr(forget, "MIN_RESERVE_SECONDS", 60.0)
    token = deadline.set_remaining(30.0)
    try:
        stopped, _, _ = await memory.forget_user(tenant, "ann")
    finally:
        deadline.reset(token)
    assert (stopped.sessions, stopped.messages, stopped.complete) == (1, 2, False)

    finished, _, _ = await memory.forget_user(tenant, "ann")
    assert (finished.sessions, finished.messages, finished.complete) == (2, 4, True)
    for sid in sessions:
        assert await memory.get_session(tenant, sid) is None
        assert await memory.get_history(tenant, sid, 0) == []


async def test_a_session_guard_that_fails_writes_nothing(memory, store, tenant):
    await save(memory, tenant, "s", msg("a", 1))
    await memory.update_session(tenant, "s", owned("bob"), [])
    before = len(await events_of(store, tenant))
    info = await memory.get_session(tenant, "s")
    for guard in (SessionGuard(user_id="ann"), SessionGuard(idle_before=info.last_activity)):
        with pytest.raises(SessionChanged):
            await store.clear_session(tenant, "s", Clearing(True, True, ["messages"], guard=guard), 0)
        with pytest.raises(SessionChanged):
            await store.trim(tenant, "s", 0, 0, guard)
    with pytest.raises(SessionChanged):
        clearing = Clearing(True, True, ["messages"], guard=SessionGuard(user_id="bob"))
        await store.clear_session(tenant, "never-written", clearing, 0)
    assert len(await events_of(store, tenant)) == before
    assert [m.content for m in await memory.get_history(tenant, "s", 0)] == ["a"]


# -- retention ----------------------------------------------------------------------
async def write(store, tenant: str, session_id: str, at: int, labels: dict[str, str] | None = None) -> None:
    """Two messages written at `at` (the store's `now`), as a session last written then."""
    update = SessionUpdate(owned("ann", **(labels or {})))
    await store.append(tenant, session_id, [msg("hello", at), msg("world", at)], None, at, update)


def sweeper(store, clock: list[int], days: float, action: Action = Action.DELETE, batch: int = 3) -> Retention:
    """Retention with a batch of 3 and the clock `clock[0]`."""
    return Retention(store, MessageHooks(), Settings(Policy(days, action)), batch=batch, clock=lambda: clock[0])


async def test_retention_deletes_sessions_idle_past_their_window_past_the_batch_bound(memory, store, tenant):
    for i in range(8):  # past the batch of 3
        await write(store, tenant, f"old-{i}", T0 + i)
    await write(store, tenant, "recent", T0 + 29 * DAY_MS)
    await write(store, tenant, "kept-by-label", T0, {RETENTION_LABEL: "never"})
    await write(store, tenant, "long-label", T0 + 10 * DAY_MS, {RETENTION_LABEL: "45"})
    await write(store, tenant, "short-label", T0 + 29 * DAY_MS, {RETENTION_LABEL: "1"})
    await store.save_metadata(tenant, "notes", "old-3", {"n": 1}, T0 + 3)  # keyed by the session: written then too
    clock = [T0 + 31 * DAY_MS]
    retention = sweeper(store, clock, 30)
    before = len(await events_of(store, tenant))

    swept = await retention.sweep(tenant)

    assert (swept.deleted, swept.messages, swept.skipped) == (9, 18, 0)
    left = [info.session_id for info in (await memory.list_sessions(tenant, 0, ""))[0]]
    assert left == ["kept-by-label", "long-label", "recent"]
    for sid in left:
        assert [m.content for m in await memory.get_history(tenant, sid, 0)] == ["hello", "world"]
    assert await store.get_metadata(tenant, "notes", "old-3") is None
    events = (await events_of(store, tenant))[before:]
    assert {e.session_id for e in events if e.type == T.SESSION_CLEARED} == {f"old-{i}" for i in range(8)} | {
        "short-label"
    }
    assert await retention.sweep(tenant) == type(swept)()  # nothing more to do

    clock[0] = T0 + 56 * DAY_MS  # "long-label" is now 46 days idle, "recent" 27
    swept = await retention.sweep(tenant)
    assert swept.deleted == 1
    assert [info.session_id for info in (await memory.list_sessions(tenant, 0, ""))[0]] == ["kept-by-label", "recent"]


async def test_retention_archives_when_asked_and_leaves_sessions_written_within_the_window(memory, store, tenant):
    for i in range(4):
        await write(store, tenant, f"old-{i}", T0)
    await write(store, tenant, "recent", T0 + 20 * DAY_MS)
    clock = [T0 + 31 * DAY_MS]
    retention = sweeper(store, clock, 30, Action.ARCHIVE)

    swept = await retention.sweep(tenant)

    assert (swept.archived, swept.messages, swept.deleted) == (4, 8, 0)
    for i in range(4):
        info = await memory.get_session(tenant, f"old-{i}")
        assert (info.message_count, info.unarchived_count) == (2, 0)
        assert await memory.get_history(tenant, f"old-{i}", 0) == []
    assert (await memory.get_session(tenant, "recent")).unarchived_count == 2
    assert await retention.sweep(tenant) == type(swept)()  # archived sessions hold nothing to archive
