"""Retention's idle (domain/retention.py), on every adapter: every write keyed by a session
counts as activity (issue 44 row 7), and a session written between the sweep's idle read
and its delete is left alone (the SessionGuard, row 13)."""

from __future__ import annotations

from memoryd.domain import published
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, EventType, now_ms
from memoryd.domain.retention import DAY_MS, Policy, Retention, Settings
from memoryd.domain.sessions import SessionAttributes, SessionUpdate
from memoryd.domain.summaries import Summaries
from tests.conformance.test_messages import msg

# Each session's one recent write (through the domain, as the RPC does), after messages long ago.
WRITES = ("summary", "vectors", "compress-requested", "compress-progress", "metadata-keyed", "metadata-deleted")


async def write_long_ago(store, tenant: str, session_id: str, days: float = 40) -> None:
    at = now_ms() - int(days * DAY_MS)
    update = SessionUpdate(SessionAttributes("ann", "", {}))
    await store.append(tenant, session_id, [msg("hello", at), msg("world", at)], None, at, update)


async def recent_write(memory, store, tenant: str, kind: str) -> None:
    sid = kind
    if kind == "summary":
        await Summaries(store, memory.limits).save(tenant, sid, 1, 2, "recap", {})
    elif kind == "vectors":  # UpsertVectors: the index holds the points, the store hears of them
        await store.touch_sessions(tenant, [sid], now_ms())
    elif kind == "compress-requested":
        await published.publish(store, tenant, EventType.COMPRESS_REQUESTED, sid, {"requested_by": "x"})
    elif kind == "compress-progress":
        await published.publish(store, tenant, EventType.COMPRESS_PROGRESS, sid, {"phase": "x", "progress": 0.5})
    elif kind == "metadata-keyed":
        await memory.save_metadata(tenant, "notes", sid, {"n": 1})
    elif kind == "metadata-deleted":
        await store.delete_metadata(tenant, "notes", sid, now_ms())
    else:
        raise AssertionError(kind)


async def test_every_write_keyed_by_the_session_counts_as_activity(memory, store, tenant):
    old = now_ms() - 40 * DAY_MS
    for kind in WRITES:
        await write_long_ago(store, tenant, kind)
    await store.save_metadata(tenant, "notes", "metadata-deleted", {"n": 0}, old)  # long ago too
    await store.save_metadata(tenant, "notes", "metadata-deleted", {"n": 0}, old)
    await write_long_ago(store, tenant, "idle")
    await write_long_ago(store, tenant, "other-namespace")
    await memory.save_metadata(tenant, "notes", "not-a-session", {"n": 1})  # keyed by no session
    for kind in WRITES:
        await recent_write(memory, store, tenant, kind)
    for kind in WRITES:
        info = await store.get_session(tenant, kind)
        assert info.last_activity > now_ms() - DAY_MS, kind

    swept = await Retention(store, MessageHooks(), Settings(Policy(30))).sweep(tenant)

    assert (swept.deleted, swept.skipped) == (2, 0)  # "idle" and "other-namespace"
    left = sorted(info.session_id for info in (await memory.list_sessions(tenant, 0, ""))[0])
    assert left == sorted(WRITES)


class WritesToTheNextSession(MessageHooks):
    """Vector hooks that, while the sweep clears the first session of its page, write to the
    second one: a write that lands between the sweep's idle read and that session's delete."""

    has_vector_store = True

    def __init__(self, store, tenant: str, target: str) -> None:
        self.store, self.tenant, self.target = store, tenant, target
        self.cleared: list[str | None] = []

    async def clear_vectors(self, tenant, session_id):
        self.cleared.append(session_id)
        if len(self.cleared) == 1:
            await self.store.append(self.tenant, self.target, [msg("just now", now_ms())], None, now_ms())
        return ClearResult(ClearTarget.VECTORS, ClearOutcome.CLEARED, 0)


async def test_a_session_written_after_the_idle_read_is_left_alone(memory, store, tenant):
    for sid, days in (("idle-a", 50), ("idle-b", 51), ("idle-c", 52)):  # walked oldest first: c, b, a
        await write_long_ago(store, tenant, sid, days)
    hooks = WritesToTheNextSession(store, tenant, "idle-b")
    retention = Retention(store, hooks, Settings(Policy(30)), batch=10)  # one page: read before the write

    swept = await retention.sweep(tenant)

    assert hooks.cleared == ["idle-c", "idle-a"]
    assert (swept.deleted, swept.skipped) == (2, 1)
    history = await memory.get_history(tenant, "idle-b", 0)
    assert [m.content for m in history] == ["hello", "world", "just now"]
    assert (await store.get_session(tenant, "idle-b")).attributes.user_id == "ann"
