"""MongoDB collections and indexes. Every index starts with `tenant`, so tenancy never needs a migration.

The layout mirrors the SQLite schema (storage/sqlite/schema.py), one collection per table.
In a sharded cluster, shard `messages`, `sessions` and `idempotency` on (tenant, session_id).
MongoDB refuses to shard a collection with a unique index the shard key does not prefix, so
before sharding `messages`, recreate `messages_id` without `unique` (uuid4 ids need no
enforcement); `open()` keeps an existing index whose options differ and logs a warning.
"""

from __future__ import annotations

from pymongo import ASCENDING as ASC
from pymongo import IndexModel

MESSAGES = "messages"
SESSIONS = "sessions"
IDEMPOTENCY = "idempotency"
METADATA = "metadata"
EVENTS = "events"
EVENT_LOG = "event_log"


def _index(name: str, *fields: str, unique: bool = False) -> IndexModel:
    return IndexModel([(f, ASC) for f in fields], name=name, unique=unique)


INDEXES: dict[str, list[IndexModel]] = {
    MESSAGES: [
        # The session's seq is its primary key: seqs are never reused.
        _index("messages_seq", "tenant", "session_id", "seq", unique=True),
        # GetHistory: newest unarchived of one session (walked backwards).
        _index("messages_history", "tenant", "session_id", "archived", "timestamp", "seq"),
        # GetFullHistory / ListMessagesInRange / DeleteMessagesByTimestamps / UpdateMessageContent.
        _index("messages_range", "tenant", "session_id", "timestamp", "seq"),
        _index("messages_id", "tenant", "id", unique=True),
        # GetRecentAcrossSessions: unfiltered and by platform (a top-level copy of metadata.platform).
        _index("messages_recent", "tenant", "archived", "timestamp", "session_id", "seq"),
        _index("messages_recent_platform", "tenant", "archived", "platform", "timestamp", "session_id", "seq"),
        _index("messages_recent_kind", "tenant", "archived", "kind", "timestamp", "session_id", "seq"),
    ],
    SESSIONS: [
        _index("sessions_id", "tenant", "session_id", unique=True),
        # ListSessions by owner and by label, in session id order (label_pairs is multikey).
        _index("sessions_user", "tenant", "user_id", "session_id"),
        _index("sessions_agent", "tenant", "agent_id", "session_id"),
        _index("sessions_agent_user", "tenant", "agent_id", "user_id", "session_id"),
        _index("sessions_labels", "tenant", "label_pairs", "session_id"),
        # Retention: the sessions idle longest first, and those with a retention label of their own.
        _index("sessions_activity", "tenant", "last_activity", "session_id"),
        _index("sessions_retention", "tenant", "retention_label", "session_id"),
    ],
    IDEMPOTENCY: [_index("idempotency_key", "tenant", "session_id", "key", unique=True)],
    METADATA: [
        _index("metadata_id", "tenant", "namespace", "key", unique=True),
        # ClearSession(targets=metadata): records whose key is the session id, in any namespace.
        _index("metadata_key", "tenant", "key"),
    ],
    EVENTS: [
        _index("events_seq", "tenant", "seq", unique=True),
        _index("events_time", "tenant", "time"),
        # Erasure (domain/erasure.py): a forgotten session's events, and the tenant-wide ones
        # about a user's records by namespace and by entry scope. (Not partial indexes on the
        # type, as SQLite's are: SecantusDB, which the tests run, dies on range reads of those.)
        _index("events_session", "tenant", "session_id", "seq"),
        _index("events_record_namespace", "tenant", "type", "payload.namespace"),
        _index("events_entry_scope", "tenant", "type", "payload.scope"),
        _index("events_memory_user", "tenant", "type", "payload.user_id"),
    ],
    EVENT_LOG: [_index("event_log_tenant", "tenant", unique=True)],
}
