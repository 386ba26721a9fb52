"""The event log after ForgetUser and retention (domain/erasure.py), on every adapter: events
about the forgotten user are redacted in place (same seqs, same types, personal fields
emptied, no owner stamp), the other users' events are untouched."""

from __future__ import annotations

import json

from memoryd.domain import erasure, published
from memoryd.domain.entries import Entries
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.models import EventDraft, EventType, now_ms
from memoryd.domain.retention import DAY_MS, Policy, Retention, Settings
from memoryd.domain.sessions import SessionAttributes, SessionUpdate
from memoryd.domain.summaries import Summaries
from tests.conformance.test_messages import msg
from tests.conformance.test_metadata_events import events_of

T = EventType


async def fill(memory: Memory, store, tenant: str, user: str, mark: str) -> None:
    """Everything of `user` that writes events with personal fields, each holding `mark`."""
    for n in range(2):
        sid = f"{mark}-sid{n}"  # (session ids stay: rows keep their counters, events their key)
        attributes = SessionAttributes(user, f"agent-{mark}", {"topic": f"label-{mark}"})
        await memory.save_messages(tenant, sid, [msg(f"text-{mark}", 10 + n)], "", attributes)
        await published.publish(
            store, tenant, T.COMPRESS_REQUESTED, sid, {"requested_by": f"by-{mark}", "reason": f"why-{mark}"}
        )
        await published.publish(
            store, tenant, T.COMPRESS_PROGRESS, sid, {"phase": f"phase-{mark}", "progress": 0.5, "error": f"err-{mark}"}
        )
        await Summaries(store, memory.limits).save(tenant, sid, 1, 1, f"recap-{mark}", {})
        await memory.save_metadata(tenant, "notes", sid, {"n": n})
    await memory.save_metadata(tenant, f"users/{user}/prefs", f"key-{mark}", {"x": 1})
    await Entries(store, memory.limits).save(tenant, user, f"entry-{mark}", [])
    # Formed memory about the user (formation/): tenant-wide events that name it.
    profile = EventDraft(T.MEMORY_FORMED, "", {"kind": "profile", "id": user, "user_id": user})
    await store.publish(tenant, profile, now_ms())


def text_of(events) -> str:
    return json.dumps([(e.session_id, e.user_id, e.payload) for e in events])


async def test_forget_user_redacts_the_users_events_in_place_and_leaves_the_others(store, tenant):
    memory = Memory(store, Limits(delete_batch=3))
    await fill(memory, store, tenant, "u2zz", "mark2")
    await fill(memory, store, tenant, "u1zz", "mark1")
    before = await events_of(store, tenant)
    assert "u2zz" in text_of(before) and "label-mark2" in text_of(before)

    forgotten, _, _ = await memory.forget_user(tenant, "u2zz")
    assert forgotten.complete

    after = await events_of(store, tenant)
    assert [e.seq for e in after] == list(range(1, len(after) + 1))  # no holes: resuming streams go on
    assert [(e.seq, e.type, e.session_id, e.time) for e in after[: len(before)]] == [
        (e.seq, e.type, e.session_id, e.time) for e in before
    ]
    text = text_of(after)
    for personal in (
        "u2zz",
        "label-mark2",
        "agent-mark2",
        "by-mark2",
        "why-mark2",
        "phase-mark2",
        "err-mark2",
        "key-mark2",
    ):
        assert personal not in text, personal
    for kept in (
        "u1zz",
        "label-mark1",
        "agent-mark1",
        "by-mark1",
        "why-mark1",
        "phase-mark1",
        "err-mark1",
        "key-mark1",
    ):
        assert kept in text, kept
    # The other user's events are exactly as they were.
    theirs = [e for e in before if e.user_id == "u1zz" or "u1zz" in json.dumps(e.payload)]
    assert theirs and all(after[e.seq - 1] == e for e in theirs)
    # What stays of a redacted event: its type, numbers and message refs.
    progress = [e for e in after[: len(before)] if e.type == T.COMPRESS_PROGRESS and e.session_id.startswith("mark2")]
    assert [e.payload for e in progress] == [{"progress": 0.5}] * 2
    updated = [e for e in after[: len(before)] if e.type == T.SESSION_UPDATED and e.session_id.startswith("mark2")]
    assert updated and all(e.payload == {"attributes": {}} and e.user_id == "" for e in updated)
    appended = [e for e in after if e.type == T.MESSAGES_APPENDED and e.session_id.startswith("mark2")]
    assert appended and all(e.user_id == "" and e.payload["messages"][0]["id"] for e in appended)
    formed = [e.payload for e in after if e.type == T.MEMORY_FORMED]
    assert sorted(formed, key=len) == [{"kind": "profile"}, {"kind": "profile", "id": "u1zz", "user_id": "u1zz"}]

    # Again: nothing left to redact, nothing changes.
    await memory.forget_user(tenant, "u2zz")
    again = await events_of(store, tenant)
    assert again[: len(after)] == after


async def test_the_redaction_rule_is_what_the_stores_select(store, tenant):
    """The stores select by index what erasure's rules say (session_event_erasable, UserRedaction)."""
    memory = Memory(store, Limits(delete_batch=3))
    await fill(memory, store, tenant, "u2zz", "mark2")
    await memory.save_metadata(tenant, "users/u2zzz/prefs", "k", {})  # another user whose id starts with u2zz's
    redaction = erasure.UserRedaction(namespace_prefixes=("users/u2zz/",), entry_scopes=("u2zz",))
    wanted = [e.seq for e in await events_of(store, tenant) if redaction.matches(e)]
    assert len(wanted) == 2  # the prefs record, the entry (the entry's own record is in memoryd.entries/u2zz)

    assert await store.redact_events(tenant, redaction, 1) == 1  # bounded by its limit
    assert await store.redact_events(tenant, redaction, 10) == 1
    assert await store.redact_events(tenant, redaction, 10) == 0
    events = await events_of(store, tenant)
    assert [e.seq for e in events if redaction.matches(e)] == []
    assert [e.payload for e in events if e.seq in wanted] == [
        {"namespace": "", "key": "", "deleted": False},
        {"scope": "", "entry_id": "", "deleted": False},
    ]
    assert any(e.payload.get("namespace") == "users/u2zzz/prefs" for e in events)


async def test_retention_redacts_the_events_of_the_sessions_it_deletes(store, tenant):
    t0 = 1_700_000_000_000
    update = SessionUpdate(SessionAttributes("u3zz", "", {"topic": "label-old"}))
    await store.append(tenant, "old", [msg("hello", t0)], None, t0, update)
    await store.publish(tenant, EventDraft(T.COMPRESS_REQUESTED, "old", {"requested_by": "by-old"}), t0)
    update = SessionUpdate(SessionAttributes("u3zz", "", {"topic": "label-new"}))
    await store.append(tenant, "new", [msg("hello", t0)], None, t0 + 29 * DAY_MS, update)
    retention = Retention(store, MessageHooks(), Settings(Policy(30)), clock=lambda: t0 + 31 * DAY_MS)

    assert (await retention.sweep(tenant)).deleted == 1

    events = await events_of(store, tenant)
    old = [e for e in events if e.session_id == "old"]
    assert old and all(e.user_id == "" for e in old)
    assert "label-old" not in text_of(events) and "by-old" not in text_of(events)
    assert "label-new" in text_of(events) and any(e.user_id == "u3zz" for e in events if e.session_id == "new")
