"""Erasure of the event log: what ForgetUser and retention leave of a user in the events.

The log is what Watch replays from seq 0 (for the event retention, 7 days by default), so
forgetting a user must reach it too. Events are *redacted in place*, never removed: seqs
have no holes (watch.WatchHub.read_after reads a gap as compaction), and every consumer
(Watch streams resuming with after_seq, the recall index's synchronizer) keeps its cursor.
A redacted event keeps its seq, time, type and session id (sessions are keys the tenant
chose; their rows stay, with counters only, so seqs are never reused) and loses:

- the end user it was stamped with (Event.user_id): a Watch bound to that user no longer
  sees it, and no event names the user;
- the personal fields of its payload (`redacted_payload`): a session's attributes (labels,
  owner, agent) in session-updated, the free text of the compress events callers publish
  (requested_by, reason, phase, error), the namespace and key of metadata-changed and the
  scope and entry id of entry-changed (the user's namespaces and entry scope hold the user
  id). Message refs (ids, seqs, timestamps, roles), counts and summary ids carry no content
  and stay: the index synchronizer still applies deletions from them.

Which events are redacted:
- forgetting a session (ForgetUser, retention: domain/forget.py) redacts, in the same store
  transaction as the clear (Clearing.redact_events), every event of the session that is
  stamped with an owner or is of a type with personal fields (SESSION_EVENT_TYPES);
- ForgetUser then redacts the tenant-wide events about the user's own records
  (`user_redaction`: metadata-changed of the user's namespaces, entry-changed and the
  entry records of the user's entry scope) with Store.redact_events. Both are idempotent:
  a ForgetUser that stopped before them does them on the next call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memoryd.domain.models import Event, EventType

# Types whose payload names a person or carries caller text, for an event of one session.
SESSION_EVENT_TYPES = (EventType.COMPRESS_REQUESTED, EventType.COMPRESS_PROGRESS, EventType.SESSION_UPDATED)
# Tenant-wide types whose payload names a record (a user's namespace, an entry scope).
RECORD_EVENT_TYPES = (EventType.METADATA_CHANGED, EventType.ENTRY_CHANGED)
# Formed memory's events (formation/): their payload names the user the record is about.
MEMORY_EVENT_TYPES = (EventType.MEMORY_FORMED, EventType.MEMORY_SUPERSEDED, EventType.MEMORY_REMOVED)


def redacted_payload(event_type: EventType, payload: Mapping[str, Any]) -> dict[str, Any]:
    """The payload with its personal fields emptied (the rest as it was)."""
    match event_type:
        case EventType.SESSION_UPDATED:
            return {"attributes": {}}
        case EventType.COMPRESS_REQUESTED:
            return {}
        case EventType.COMPRESS_PROGRESS:
            return {k: v for k, v in payload.items() if k in ("progress", "done")}
        case EventType.METADATA_CHANGED:
            return {"namespace": "", "key": "", "deleted": bool(payload.get("deleted"))}
        case EventType.ENTRY_CHANGED:
            return {"scope": "", "entry_id": "", "deleted": bool(payload.get("deleted"))}
        case EventType.MEMORY_FORMED | EventType.MEMORY_SUPERSEDED | EventType.MEMORY_REMOVED:
            # The record's id is the user id for a profile: ids go with the user.
            return {k: v for k, v in payload.items() if k in ("kind", "reason")}
    return dict(payload)


@dataclass(frozen=True, slots=True)
class UserRedaction:
    """The tenant-wide events about a user's own records (Store.redact_events): metadata-changed
    of a namespace starting with one of `namespace_prefixes`, or equal to one of `namespaces`,
    or of one of the (namespace, key) `records`; entry-changed of one of `entry_scopes`; the
    formed-memory events (MEMORY_EVENT_TYPES) about `memory_user`."""

    namespace_prefixes: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    records: tuple[tuple[str, str], ...] = ()
    entry_scopes: tuple[str, ...] = ()
    memory_user: str = ""

    def matches(self, event: Event) -> bool:
        """Whether `event` is one of them (the stores select by index; this is the rule)."""
        payload = event.payload
        if event.type is EventType.METADATA_CHANGED:
            namespace, key = str(payload.get("namespace") or ""), str(payload.get("key") or "")
            return (
                any(namespace.startswith(prefix) for prefix in self.namespace_prefixes)
                or namespace in self.namespaces
                or (namespace, key) in self.records
            )
        if event.type is EventType.ENTRY_CHANGED:
            return str(payload.get("scope") or "") in self.entry_scopes
        if event.type in MEMORY_EVENT_TYPES:
            return bool(self.memory_user) and payload.get("user_id") == self.memory_user
        return False


def session_event_erasable(event: Event) -> bool:
    """Whether forgetting the event's session redacts it (Clearing.redact_events)."""
    return bool(event.user_id) or event.type in SESSION_EVENT_TYPES
