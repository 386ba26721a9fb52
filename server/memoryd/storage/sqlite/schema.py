"""SQLite schema. Every table and index starts with `tenant`, so tenancy never needs a migration."""

import sqlite3

# The size a WAL file is truncated to when a commit starts it over (commits.py, the WAL bound).
WAL_LIMIT_BYTES = 16 * 1024 * 1024

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}",
    "PRAGMA foreign_keys=OFF",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA busy_timeout=10000",
    # Deleted rows are overwritten with zeros (ForgetUser, retention: docs/OPERATIONS.md,
    # Erasure): no page of the file keeps them. FAST would leave some in free pages.
    "PRAGMA secure_delete=ON",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    tenant      TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    id          TEXT    NOT NULL,
    role        TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    kind        TEXT,
    timestamp   INTEGER NOT NULL,
    archived    INTEGER NOT NULL DEFAULT 0,
    platform    TEXT,
    -- segments, metadata, reasoning_content, tool_calls, tool_call_id as a memoryd.v1.Message
    -- (memoryd.wire); rows from before that hold the same fields as JSON text.
    body        BLOB    NOT NULL,
    PRIMARY KEY (tenant, session_id, seq)
);
-- GetHistory: newest unarchived of one session.
CREATE INDEX IF NOT EXISTS messages_history
    ON messages (tenant, session_id, archived, timestamp, seq);
-- GetFullHistory / ListMessagesInRange / DeleteMessagesByTimestamps.
CREATE INDEX IF NOT EXISTS messages_range
    ON messages (tenant, session_id, timestamp, seq);
CREATE UNIQUE INDEX IF NOT EXISTS messages_id
    ON messages (tenant, id);
-- GetRecentAcrossSessions: unfiltered, by platform and by a kinds whitelist. The last two
-- are partial (REDEFINED_INDEXES): a filter `platform = ?` / `kind IN (...)` matches only
-- rows where the column is set, and a message without one writes no page of them.
CREATE INDEX IF NOT EXISTS messages_recent
    ON messages (tenant, archived, timestamp, session_id, seq);
CREATE INDEX IF NOT EXISTS messages_recent_platform
    ON messages (tenant, archived, platform, timestamp, session_id, seq) WHERE platform IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_recent_kind
    ON messages (tenant, archived, kind, timestamp, session_id, seq) WHERE kind IS NOT NULL;

CREATE TABLE IF NOT EXISTS sessions (
    tenant            TEXT    NOT NULL,
    session_id        TEXT    NOT NULL,
    last_seq          INTEGER NOT NULL DEFAULT 0,
    message_count     INTEGER NOT NULL DEFAULT 0,
    unarchived_count  INTEGER NOT NULL DEFAULT 0,
    last_activity     INTEGER NOT NULL DEFAULT 0,
    -- the highest timestamp the session has held (server stamps never go below it)
    last_timestamp    INTEGER NOT NULL DEFAULT 0,
    -- SessionAttributes (memoryd.domain.sessions); '' / '{}' when unset.
    user_id           TEXT    NOT NULL DEFAULT '',
    agent_id          TEXT    NOT NULL DEFAULT '',
    labels            TEXT    NOT NULL DEFAULT '{}',
    -- who the session belongs to for good (memoryd.domain.sessions, "Ownership"): a user
    -- id, '' (the tenant), NULL when it has none (forgotten, or a row not yet written)
    owner             TEXT,
    PRIMARY KEY (tenant, session_id)
);

-- ListSessions filtered by label: one row per (session, label), walked in session id order.
CREATE TABLE IF NOT EXISTS session_labels (
    tenant      TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    value       TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    PRIMARY KEY (tenant, key, value, session_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS idempotency (
    tenant      TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    result      TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    PRIMARY KEY (tenant, session_id, key)
);

CREATE TABLE IF NOT EXISTS metadata (
    tenant       TEXT    NOT NULL,
    namespace    TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    data         TEXT    NOT NULL,
    update_time  INTEGER NOT NULL,
    PRIMARY KEY (tenant, namespace, key)
);
CREATE INDEX IF NOT EXISTS metadata_key ON metadata (tenant, key);

CREATE TABLE IF NOT EXISTS events (
    tenant      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    time        INTEGER NOT NULL,
    session_id  TEXT    NOT NULL,
    type        INTEGER NOT NULL,
    payload     TEXT    NOT NULL,
    -- the session's owner when the event was written (a user-bound Watch delivers these)
    user_id     TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (tenant, seq)
);
CREATE INDEX IF NOT EXISTS events_time ON events (tenant, time);

CREATE TABLE IF NOT EXISTS event_log (
    tenant             TEXT    PRIMARY KEY,
    last_seq           INTEGER NOT NULL DEFAULT 0,
    compacted_through  INTEGER NOT NULL DEFAULT 0
);
"""

# Databases created before a column existed get it here (CREATE TABLE IF NOT EXISTS keeps
# the old table): (table, column, ALTER statement, backfill statement or None). ALTER TABLE
# ADD COLUMN with a constant default is instant. INDEXES run after, as they may name them.
MIGRATIONS = (
    (
        "sessions",
        "last_timestamp",
        "ALTER TABLE sessions ADD COLUMN last_timestamp INTEGER NOT NULL DEFAULT 0",
        "UPDATE sessions SET last_timestamp = coalesce((SELECT max(timestamp) FROM messages m"
        " WHERE m.tenant = sessions.tenant AND m.session_id = sessions.session_id), 0)",
    ),
    ("sessions", "user_id", "ALTER TABLE sessions ADD COLUMN user_id TEXT NOT NULL DEFAULT ''", None),
    ("sessions", "agent_id", "ALTER TABLE sessions ADD COLUMN agent_id TEXT NOT NULL DEFAULT ''", None),
    ("sessions", "labels", "ALTER TABLE sessions ADD COLUMN labels TEXT NOT NULL DEFAULT '{}'", None),
    # Events written before owners were stamped belong to no end user.
    ("events", "user_id", "ALTER TABLE events ADD COLUMN user_id TEXT NOT NULL DEFAULT ''", None),
    # Sessions written before owners were kept apart from the attributes: their user_id if
    # they carry one, else the tenant's (a session its user had emptied of its attributes,
    # or one forgotten, becomes the tenant's: no end user can take it).
    ("sessions", "owner", "ALTER TABLE sessions ADD COLUMN owner TEXT", "UPDATE sessions SET owner = user_id"),
)

INDEXES = """
-- ListSessions by owner, in session id order: by user, by agent, by both.
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (tenant, user_id, session_id);
CREATE INDEX IF NOT EXISTS sessions_agent ON sessions (tenant, agent_id, session_id);
CREATE INDEX IF NOT EXISTS sessions_agent_user ON sessions (tenant, agent_id, user_id, session_id);
-- Retention: the sessions idle longest first.
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions (tenant, last_activity, session_id);
-- Erasure (domain/erasure.py): the events a forgotten session's redaction rewrites (stamped
-- with an owner, or of a type with personal fields: compress-requested/-progress,
-- session-updated), and the tenant-wide ones about a user's records, by namespace and by
-- entry scope. Partial: other events cost nothing here.
CREATE INDEX IF NOT EXISTS events_erasable ON events (tenant, session_id, seq)
    WHERE user_id != '' OR type IN (10, 11, 14);
CREATE INDEX IF NOT EXISTS events_namespace ON events (tenant, json_extract(payload, '$.namespace'))
    WHERE type = 8;
CREATE INDEX IF NOT EXISTS events_scope ON events (tenant, json_extract(payload, '$.scope'))
    WHERE type = 13;
CREATE INDEX IF NOT EXISTS events_memory_user ON events (tenant, json_extract(payload, '$.user_id'))
    WHERE type IN (15, 16, 17);
"""

# Indexes whose definition changed since databases were made with them (CREATE INDEX IF NOT
# EXISTS keeps an old one): name -> the definition as SQLite stores it (sqlite_schema.sql,
# without IF NOT EXISTS). One stored otherwise is dropped and made again (redefine_indexes).
# messages_recent_platform/_kind became partial (issue 43: a lone append wrote a page of
# each, 2 of its ~17 WAL frames, for messages that have no platform or kind).
REDEFINED_INDEXES = {
    "messages_recent_platform": "CREATE INDEX messages_recent_platform"
    " ON messages (tenant, archived, platform, timestamp, session_id, seq) WHERE platform IS NOT NULL",
    "messages_recent_kind": "CREATE INDEX messages_recent_kind"
    " ON messages (tenant, archived, kind, timestamp, session_id, seq) WHERE kind IS NOT NULL",
}


def _stale_indexes(conn: sqlite3.Connection) -> list[str]:
    stored = dict(conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"))
    return [
        name
        for name, sql in REDEFINED_INDEXES.items()
        if name in stored and " ".join(stored[name].split()) != " ".join(sql.split())
    ]


def redefine_indexes(conn: sqlite3.Connection) -> list[str]:
    """Drop and make again each index of REDEFINED_INDEXES stored with another definition, in
    one transaction (checked again inside it: another process may have done it meanwhile).
    The names redefined; a database of the current schema costs one read of sqlite_schema."""
    if not _stale_indexes(conn):
        return []
    conn.execute("BEGIN IMMEDIATE")
    try:
        stale = _stale_indexes(conn)
        for name in stale:
            conn.execute(f"DROP INDEX {name}")
            conn.execute(REDEFINED_INDEXES[name])
        conn.execute("COMMIT")
    except sqlite3.Error:
        conn.execute("ROLLBACK")
        raise
    return stale
