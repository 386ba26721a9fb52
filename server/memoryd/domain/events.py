"""Pure builders of the events each mutation writes in its own transaction.

Both storage adapters call these, so the event vocabulary lives in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memoryd.domain.models import EventDraft, EventType, Message
from memoryd.domain.sessions import SessionAttributes

# Large deletions are reported in several messages-deleted events of this many ids,
# so no single event approaches gRPC's message size limit.
DELETED_CHUNK = 1000


def appended(session_id: str, messages: Sequence[Message]) -> list[EventDraft]:
    if not messages:
        return []
    return [EventDraft(EventType.MESSAGES_APPENDED, session_id, {"messages": [m.ref() for m in messages]})]


def _changed(session_id: str, cause: EventType) -> EventDraft:
    return EventDraft(EventType.HISTORY_CHANGED, session_id, {"cause": int(cause)})


def _deleted_chunks(session_id: str, removed: Sequence[Message], cause: EventType) -> list[EventDraft]:
    drafts = []
    ordered = sorted(removed, key=lambda m: (m.timestamp, m.seq))
    for start in range(0, len(ordered), DELETED_CHUNK):
        chunk = ordered[start : start + DELETED_CHUNK]
        drafts.append(
            EventDraft(
                EventType.MESSAGES_DELETED,
                session_id,
                {
                    "timestamps": sorted({m.timestamp for m in chunk}),
                    "ids": [m.id for m in chunk],
                    "cause": int(cause),
                },
            )
        )
    return drafts


def deleted(session_id: str, removed: Sequence[Message]) -> list[EventDraft]:
    if not removed:
        return []
    return [
        *_deleted_chunks(session_id, removed, EventType.MESSAGES_DELETED),
        _changed(session_id, EventType.MESSAGES_DELETED),
    ]


def rewritten(session_id: str, changed: Sequence[Message]) -> list[EventDraft]:
    if not changed:
        return []
    return [
        EventDraft(EventType.MESSAGES_REWRITTEN, session_id, {"messages": [m.ref() for m in changed]}),
        _changed(session_id, EventType.MESSAGES_REWRITTEN),
    ]


def trimmed(session_id: str, archived_count: int, keep_recent: int) -> list[EventDraft]:
    if not archived_count:
        return []
    return [
        EventDraft(
            EventType.HISTORY_TRIMMED, session_id, {"archived_count": archived_count, "keep_recent": keep_recent}
        ),
        _changed(session_id, EventType.HISTORY_TRIMMED),
    ]


def replaced(session_id: str, removed: Sequence[Message], added: Sequence[Message]) -> list[EventDraft]:
    return [
        *_deleted_chunks(session_id, removed, EventType.HISTORY_REPLACED),
        *appended(session_id, added),
        EventDraft(
            EventType.HISTORY_REPLACED,
            session_id,
            {"removed_count": len(removed), "messages": [m.ref() for m in added]},
        ),
        _changed(session_id, EventType.HISTORY_REPLACED),
    ]


def session_cleared(session_id: str, removed: Sequence[Message], targets: Sequence[str]) -> list[EventDraft]:
    return [
        *_deleted_chunks(session_id, removed, EventType.SESSION_CLEARED),
        EventDraft(EventType.SESSION_CLEARED, session_id, {"removed_count": len(removed), "targets": list(targets)}),
        _changed(session_id, EventType.SESSION_CLEARED),
    ]


def all_cleared(removed: Mapping[str, Sequence[Message]], targets: Sequence[str]) -> list[EventDraft]:
    """Per session, the ids and timestamps that went (so deletion watchers filtered by
    session learn of it), then one tenant-wide all-cleared and history-changed."""
    drafts = []
    for session_id in sorted(removed):
        drafts += _deleted_chunks(session_id, removed[session_id], EventType.ALL_CLEARED)
    total = sum(len(messages) for messages in removed.values())
    return [
        *drafts,
        EventDraft(EventType.ALL_CLEARED, "", {"removed_count": total, "targets": list(targets)}),
        _changed("", EventType.ALL_CLEARED),
    ]


def metadata_changed(namespace: str, key: str, *, deleted: bool) -> list[EventDraft]:
    return [EventDraft(EventType.METADATA_CHANGED, "", {"namespace": namespace, "key": key, "deleted": deleted})]


def summary_saved(session_id: str, summary_id: str, from_seq: int, to_seq: int) -> list[EventDraft]:
    payload = {"summary_id": summary_id, "from_seq": from_seq, "to_seq": to_seq}
    return [EventDraft(EventType.SUMMARY_SAVED, session_id, payload)]


def entry_changed(scope: str, entry_id: str, *, deleted: bool) -> list[EventDraft]:
    # Tenant-wide like metadata-changed: entries belong to scopes, not sessions.
    return [EventDraft(EventType.ENTRY_CHANGED, "", {"scope": scope, "entry_id": entry_id, "deleted": deleted})]


def session_updated(session_id: str, before: SessionAttributes, after: SessionAttributes) -> list[EventDraft]:
    if before == after:
        return []
    return [EventDraft(EventType.SESSION_UPDATED, session_id, {"attributes": after.to_dict()})]


def memory_changed(
    kind: EventType,
    what: str,
    record_id: str,
    user_id: str,
    session_id: str = "",
    *,
    superseded_by: str = "",
    reason: str = "",
) -> EventDraft:
    """Memory formation (docs/MEMORY.md) formed, superseded or removed a record: `kind` is
    MEMORY_FORMED, MEMORY_SUPERSEDED or MEMORY_REMOVED, `what` "summary", "fact" or "profile".
    A fact's or profile's event (no session) is keyed by its user, so only the tenant's
    tokens and that user's own receive it; a slice's goes with its session."""
    payload = {"kind": what, "id": record_id, "user_id": user_id}
    if superseded_by:
        payload["superseded_by"] = superseded_by
    if reason:
        payload["reason"] = reason
    return EventDraft(kind, session_id, payload, user_id)


def vectors_cleared(session_id: str | None) -> EventDraft:
    """A clear of the vectors target alone (no messages or metadata went): the session-cleared
    (all-cleared, session_id None) event that tells the index synchronizer."""
    payload = {"removed_count": 0, "targets": ["vectors"]}
    if session_id is None:
        return EventDraft(EventType.ALL_CLEARED, "", payload)
    return EventDraft(EventType.SESSION_CLEARED, session_id, payload)
