"""The rules inside a store's transactions, written once for every adapter.

An adapter's transaction reads rows, hands them to these pure functions and writes what
they return: which seqs, ids and timestamps an append assigns, what a deletion does to the
session counters, which records a session clear removes and which events it writes, where
event compaction moves the floor, whether a guarded write may go ahead. The adapters
(memoryd.storage.sqlite, memoryd.storage.mongo) keep only their queries and transactions;
tests/conformance runs every case against both, tests/properties against a reference model.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from memoryd.domain import events as ev
from memoryd.domain import paging
from memoryd.domain.models import Event, EventDraft, Message, SessionInfo, SessionRecord, new_message_id
from memoryd.domain.sessions import (
    TENANT,
    SessionAttributes,
    SessionUpdate,
    apply,
    check_claim,
    owned_attributes,
    owner_after,
)


class ImportConflict(Exception):
    """An import meets data the target holds otherwise than the export (another message under
    an id or at a seq), or a batch that holds one id or one seq twice: the target is not this
    export's copy, or the export is not one memoryd wrote, so nothing of the batch is written.
    `index` is the position in the batch of the message that clashed (the importer names its
    line with it)."""

    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.index = index


def server_timestamp(messages: Sequence[Message], now: int) -> int:
    """What an append raises its session's timestamp high-water mark to: `now` or a later
    caller-supplied timestamp of the batch. Messages of the batch with timestamp 0 get
    max(this, the mark before), so they never sort before anything the session held."""
    return max([now, *(m.timestamp for m in messages)])


def stored_messages(messages: Sequence[Message], last_seq: int, stamp: int) -> list[Message]:
    """The messages as an append stores them, given the session's last seq after the append
    reserved len(messages) seqs and its timestamp mark `stamp`: a new id each, consecutive
    seqs, unarchived, `stamp` where the caller left the timestamp 0. New objects: the
    caller's messages are left as they were."""
    first = last_seq - len(messages) + 1
    return [m.stored_as(new_message_id(), first + offset, m.timestamp or stamp) for offset, m in enumerate(messages)]


def event_sessions(drafts: Sequence[EventDraft]) -> list[str]:
    """The sessions the drafts are about, whose owners the store reads in the same
    transaction (after the change: a claim's own events are the new owner's)."""
    return sorted({d.session_id for d in drafts if d.session_id})


def numbered_events(
    tenant: str, drafts: Sequence[EventDraft], last_seq: int, now: int, owners: Mapping[str, str] | None = None
) -> list[Event]:
    """The drafts as events, given the tenant's last event seq after reserving len(drafts),
    each stamped with its session's owner (`owners`: session id -> user id), or, for an
    event of no session, with the user it names (EventDraft.user_id; "" when tenant-wide)."""
    first = last_seq - len(drafts) + 1
    owners = owners or {}
    return [
        Event(
            first + i,
            now,
            tenant,
            d.session_id,
            d.type,
            d.payload,
            owners.get(d.session_id, "") if d.session_id else d.user_id,
        )
        for i, d in enumerate(drafts)
    ]


def removal_counts(removed: Sequence[Message]) -> tuple[int, int]:
    """How much a deletion lowers the session's (message_count, unarchived_count)."""
    return message_counts(removed)


def message_counts(messages: Sequence[Message]) -> tuple[int, int]:
    """(messages, unarchived ones): what they add to or take from a session's counts."""
    return len(messages), sum(1 for m in messages if not m.archived)


def by_session(rows: Iterable[tuple[str, Message]]) -> dict[str, list[Message]]:
    """(session_id, message) rows grouped per session, in row order (what ClearAll reports)."""
    grouped: dict[str, list[Message]] = {}
    for session_id, message in rows:
        grouped.setdefault(session_id, []).append(message)
    return grouped


def session_record_selectors(
    session_id: str, session_records: Sequence[tuple[str, str | None]]
) -> list[tuple[str | None, str | None]]:
    """The metadata a session clear removes, as (namespace, key) selectors where None
    matches any: every record keyed by the session id, in any namespace, plus memoryd's own
    per-session records (`session_records`: a (namespace, key), or a whole namespace)."""
    return [(None, session_id), *session_records]


def session_cleared_events(
    session_id: str,
    removed: Sequence[Message] | None,
    targets: Sequence[str],
    records: Sequence[tuple[str, str]],
    attributes_before: SessionAttributes | None,
    attributes_after: SessionAttributes | None = None,
) -> list[EventDraft]:
    """A session clear's events, in order: the messages' (None: messages were not a
    target), one metadata-changed per removed record, session-updated when the session's
    attributes changed (None: metadata was not a target, or the session has no row;
    `attributes_after`: what cleared_attributes left)."""
    drafts: list[EventDraft] = []
    if removed is not None:
        drafts += ev.session_cleared(session_id, removed, targets)
    for namespace, key in sorted(records):
        drafts += ev.metadata_changed(namespace, key, deleted=True)
    if attributes_before is not None:
        drafts += ev.session_updated(session_id, attributes_before, attributes_after or SessionAttributes())
    return drafts


def cleared_attributes(session: SessionInfo, release_owner: bool) -> tuple[SessionAttributes, str | None]:
    """A session's (attributes, owner) after a clear of its metadata: the owner stays (and
    a user owner stays its user_id: sessions.owned_attributes), unless the clear forgets the
    session (`release_owner`: ForgetUser, retention), which leaves it no owner at all."""
    if release_owner:
        return SessionAttributes(), None
    return owned_attributes(session.owner, session.attributes), session.owner


def updated_session(current: SessionInfo, update: SessionUpdate, now: int) -> tuple[SessionInfo, list[EventDraft]]:
    """The session after merging `update` (sessions.apply; a claim only where
    sessions.check_claim lets it), and its session-updated event when the attributes
    changed; the store writes the attributes only then."""
    check_claim(current.session_id, current.owner, update)
    after = apply(current.session_id, current.attributes, update)
    owner = owner_after(current.session_id, current.owner, after)
    if owner != TENANT and after.user_id != owner:  # a user's session keeps its user_id
        after = replace(after, user_id=owner)
    drafts = ev.session_updated(current.session_id, current.attributes, after)
    last_activity = now if drafts else current.last_activity
    info = SessionInfo(
        current.session_id, current.message_count, current.unarchived_count, last_activity, after, owner=owner
    )
    return info, drafts


def popped(newest_first: Sequence[Message], n: int, max_bytes: int | None) -> tuple[list[Message], bool]:
    """What PopMessages removes of GetHistory's selection read newest first: the newest that
    paging.fit keeps, oldest first, and whether the byte bound kept fewer than `n` of them."""
    kept, more = paging.fit(newest_first, n, max_bytes)
    return kept[::-1], more and len(kept) < n


def rewritten(content: str, old_text: str, new_text: str) -> str | None:
    """UpdateMessageContent's new content for a message, None when it does not change."""
    result = content.replace(old_text, new_text)
    return result if result != content else None


def compaction_floor(floor: int, last_seq: int, keep_last: int | None, newest_aged_seq: int | None) -> int:
    """The tenant's new compaction floor: events at or below it go. Retention keeps the
    newest `keep_last` events and drops every event up to `newest_aged_seq` (the newest one
    older than the age limit); the floor never moves back."""
    new_floor = floor
    if keep_last is not None:
        new_floor = max(new_floor, last_seq - keep_last)
    return max(new_floor, newest_aged_seq or 0)


def imported_attributes(
    session_id: str, current: SessionAttributes, incoming: SessionAttributes
) -> tuple[SessionAttributes, list[EventDraft]]:
    """An imported session's attributes merged into the target's (sessions.apply: a different
    owner is refused; the export's labels are all kept, whatever the target's label limit),
    and its session-updated event when they changed."""
    after = apply(session_id, current, SessionUpdate(incoming, max_labels=sys.maxsize))
    return after, ev.session_updated(session_id, current, after)


def imported_owner(session_id: str, current: str | None, after: SessionAttributes, record: SessionRecord) -> str | None:
    """An imported session's owner: the one its export states, exactly (no owner included: a
    forgotten session stays claimable), where the target's row has none or the same one; the
    tenant's session goes to the user the export names (as the tenant would give it); another
    user's is refused (SESSION_OWNER_MISMATCH). An export without owners: owner_after, as a
    write leaving `after` would (its user_id, else the tenant)."""
    if not record.owner_stated:
        return owner_after(session_id, current, after)
    if record.owner is None:
        return current
    return owner_after(session_id, current, SessionAttributes(user_id=record.owner))


def importable(
    session_id: str,
    messages: Sequence[Message],
    held_ids: Mapping[str, tuple[str, int]],
    held_seqs: Mapping[int, str],
) -> list[Message]:
    """The exported messages an import inserts, given where the target holds their ids
    ((session, seq) by id) and what it holds at their seqs (id by seq): those it lacks. One it
    holds as exported is skipped (the import ran before); any other clash, and an id or a seq
    the batch holds twice, is an ImportConflict naming the message's index in the batch."""
    new = []
    ids: dict[str, int] = {}
    seqs: dict[int, str] = {}
    for index, m in enumerate(messages):
        if m.id in ids:
            raise ImportConflict(
                f"message {m.id!r} appears twice in session {session_id!r} of the export (at seq {ids[m.id]} "
                f"and at seq {m.seq})",
                index,
            )
        if m.seq in seqs:
            raise ImportConflict(
                f"session {session_id!r} of the export holds two messages at seq {m.seq} "
                f"({seqs[m.seq]!r} and {m.id!r})",
                index,
            )
        ids[m.id], seqs[m.seq] = m.seq, m.id
        held = held_ids.get(m.id)
        if held == (session_id, m.seq):
            continue
        if held is not None:
            raise ImportConflict(
                f"message {m.id!r} is at seq {held[1]} of session {held[0]!r} here, "
                f"at seq {m.seq} of session {session_id!r} in the export",
                index,
            )
        if held_seqs.get(m.seq, m.id) != m.id:
            raise ImportConflict(f"session {session_id!r} holds another message at seq {m.seq} here", index)
        new.append(m)
    return new


def counted_write(
    existing: Mapping[str, object] | None, count: int, put: bool, capacity: int, replace: bool
) -> tuple[bool, int]:
    """Store.write_metadata_counted's decision, given the record under the key (None: none)
    and the namespace's record count: (apply the write, the count after it).

    A delete applies when the record exists; a put over an existing record applies only
    with `replace` (the count stays); a put of a new record applies while count < capacity.
    """
    if not put:
        return (True, count - 1) if existing is not None else (False, count)
    if existing is not None:
        return replace, count
    return (True, count + 1) if count < capacity else (False, count)
