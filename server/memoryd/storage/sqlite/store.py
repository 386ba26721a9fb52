"""SQLite adapter: the embedded default (one WAL file under the data dir).

Every mutation is one `BEGIN IMMEDIATE` transaction that also appends its events, committed
in groups through one queue (commits.py): small appends on the event loop, everything else
on one writer thread, so event seqs commit in order. Reads run on a small pool of threads,
each with its own connection (WAL lets readers proceed while the writer commits), or on the
loop's connection when they are LIMIT-bounded index reads (_query_inline).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import structlog

from memoryd.domain import erasure, prefixes, store_rules
from memoryd.domain import events as ev
from memoryd.domain.erasure import UserRedaction
from memoryd.domain.errors import MemorydError, StorageFull, StorageUnavailable
from memoryd.domain.models import (
    SERVER_NAMESPACE,
    SYSTEM_TENANT,
    AppendResult,
    Event,
    EventDraft,
    EventType,
    Message,
    MetadataEntry,
    RangeQuery,
    RecentQuery,
    SessionInfo,
    SessionMessage,
    SessionRecord,
    utf8_len,
)
from memoryd.domain.paging import read_within
from memoryd.domain.retention import RETENTION_LABEL, active_sessions
from memoryd.domain.sessions import TENANT, SessionAttributes, SessionFilter, SessionTotals, SessionUpdate
from memoryd.domain.store import (
    Clearing,
    CountedOutcome,
    MetadataGuard,
    MetadataWrite,
    SessionGuard,
    Store,
    check_event_filter,
)
from memoryd.domain.windows import Window, WindowRequest
from memoryd.storage.sqlite import reserve, windows
from memoryd.storage.sqlite.commits import GroupCommit
from memoryd.storage.sqlite.rows import MESSAGE_COLUMNS, read_messages, row_to_message
from memoryd.storage.sqlite.schema import INDEXES, MIGRATIONS, PRAGMAS, SCHEMA, redefine_indexes
from memoryd.storage.sqlite.snapshot import SqliteSnapshot
from memoryd.wire import decode_messages, encode_body, encode_messages

T = TypeVar("T")

REF_COLUMNS = "id, seq, role, timestamp, archived"
SESSION_COLUMNS = "session_id, message_count, unarchived_count, last_activity, user_id, agent_id, labels, owner"
# A session ListSessions lists and GetSession finds (memoryd.domain.sessions.listed).
LISTED = "(message_count > 0 OR user_id != '' OR agent_id != '' OR labels != '{}')"
# GetHistory's selection, newest first; PopMessages removes exactly these rows.
NEWEST_UNARCHIVED = (
    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = ? AND session_id = ? AND archived = 0"
    " ORDER BY timestamp DESC, seq DESC LIMIT ?"
)

# Appends of at most this many messages and content bytes commit on the event loop
# (commits.py): a SaveMessage's, not an import's or a 1 MiB message's.
INLINE_APPEND_MESSAGES = 16
INLINE_APPEND_BYTES = 64 << 10

# Reads of at most this many rows by seq run on the event loop's connection (_query_inline).
INLINE_ROWS = 16

# SQLite's default bound-parameter ceiling is high on modern builds, but IN lists are
# kept well under the historical 999 so the same code works on any build.
IN_CHUNK = 500

log = structlog.get_logger("memoryd.storage.sqlite")


def _first_result(result: bytes | str) -> list[Message]:
    """An idempotent append's first result: the stored messages in the contract's encoding
    (wire.encode_messages), or JSON dicts in rows written before."""
    if isinstance(result, bytes):
        return decode_messages(result)
    messages = []
    for data in json.loads(result):
        messages.append(Message.from_dict(data))
        messages[-1].stored_bytes = utf8_len(json.dumps(data))
    return messages


def _row_to_session(row: tuple) -> SessionInfo:
    session_id, message_count, unarchived_count, last_activity, user_id, agent_id, labels, owner = row
    attributes = SessionAttributes(user_id, agent_id, json.loads(labels))
    # What a listing's byte bound counts: the row's text (labels dominate).
    size = utf8_len(session_id) + utf8_len(user_id) + utf8_len(agent_id) + utf8_len(labels)
    return SessionInfo(session_id, message_count, unarchived_count, last_activity, attributes, size, owner)


def _row_to_ref(row: tuple) -> Message:
    msg_id, seq, role, timestamp, archived = row
    return Message(role=role, timestamp=timestamp, id=msg_id, seq=seq, archived=bool(archived))


def _failure(exc: sqlite3.Error) -> MemorydError:
    """SQLite's error as the domain's: a full disk (SQLITE_FULL, which SQLite also reports
    for ENOSPC) is StorageFull, anything else StorageUnavailable."""
    if _is_full(exc):
        return StorageFull(f"SQLite: {exc}", store="messages")
    return StorageUnavailable(f"SQLite: {exc}")


def _is_full(exc: BaseException) -> bool:
    """SQLITE_FULL (the primary code is the low byte of the extended one), or the WAL index
    (-shm) that could not grow for want of space (reserve.py)."""
    if not isinstance(exc, sqlite3.Error):
        return False
    code = exc.sqlite_errorcode or 0
    return code & 0xFF == sqlite3.SQLITE_FULL or code == sqlite3.SQLITE_IOERR_SHMSIZE


def _small(messages: Sequence[Message]) -> bool:
    """An append that may commit on the event loop (commits.py): a few short messages."""
    if len(messages) > INLINE_APPEND_MESSAGES:
        return False
    size = 0
    for m in messages:
        body = m.encoded_body  # read before any body field: reading one decodes it
        if body is None and (m.segments or m.tool_calls or m.metadata):
            return False  # a decoded body of unknown size (the transports' messages arrive encoded)
        size += len(m.content) + (len(body) if body is not None else len(m.reasoning_content))
    return size <= INLINE_APPEND_BYTES


def _insert_rows(conn: sqlite3.Connection, sql: str, rows: Sequence[tuple]) -> None:
    """`sql` for each row: one row through `execute` (what nearly every append writes),
    which costs less than `executemany`'s iteration."""
    if len(rows) == 1:
        conn.execute(sql, rows[0])
    else:
        conn.executemany(sql, rows)


def _write_redacted(conn: sqlite3.Connection, tenant: str, rows: Sequence[tuple[int, int, str]]) -> None:
    """Rewrite (seq, type, payload) event rows as erasure.redacted_payload leaves them, owner unstamped."""
    if rows:
        conn.executemany(
            "UPDATE events SET payload = ?, user_id = '' WHERE tenant = ? AND seq = ?",
            [
                (json.dumps(erasure.redacted_payload(EventType(kind), json.loads(payload))), tenant, seq)
                for seq, kind, payload in rows
            ],
        )


def _touch(conn: sqlite3.Connection, tenant: str, session_ids: Sequence[str], now: int) -> None:
    """A write keyed by these sessions: their last write (retention's idle) is now, never earlier."""
    if session_ids:
        conn.execute(
            "UPDATE sessions SET last_activity = ? WHERE tenant = ?"
            f" AND session_id IN ({_placeholders(len(session_ids))}) AND last_activity < ?",
            (now, tenant, *session_ids, now),
        )


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _kind_filters(kinds: Sequence[str], exclude_kinds: Sequence[str]) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if kinds:
        clauses.append(f"kind IN ({_placeholders(len(kinds))})")
        params.extend(kinds)
    if exclude_kinds:
        # A message without a kind is never excluded.
        clauses.append(f"(kind IS NULL OR kind NOT IN ({_placeholders(len(exclude_kinds))}))")
        params.extend(exclude_kinds)
    return clauses, params


# -- query shapes (module level so tests can EXPLAIN exactly what the store runs) --
def list_sessions_query(
    tenant: str, after_session_id: str | None, limit: int, where: SessionFilter
) -> tuple[str, list[Any]]:
    """ListSessions in session id order, from the index that matches the filter: an owner
    index when an owner is named, else the first label's rows of session_labels (CROSS
    JOIN keeps it the outer loop), else the primary key. Further labels are probed."""
    clauses = ["s.tenant = ?", "s.session_id > ?", LISTED]
    params: list[Any] = [tenant, after_session_id or ""]
    source = "sessions s"
    labels = sorted(where.labels.items())
    if where.user_id:
        clauses.append("s.user_id = ?")
        params.append(where.user_id)
    if where.agent_id:
        clauses.append("s.agent_id = ?")
        params.append(where.agent_id)
    if labels and not (where.user_id or where.agent_id):
        (key, value), labels = labels[0], labels[1:]
        source = "session_labels l CROSS JOIN sessions s ON s.tenant = l.tenant AND s.session_id = l.session_id"
        clauses[:2] = ["l.tenant = ?", "l.key = ?", "l.value = ?", "l.session_id > ?"]
        params[:2] = [tenant, key, value, after_session_id or ""]
    for key, value in labels:
        clauses.append(
            "EXISTS (SELECT 1 FROM session_labels x WHERE x.tenant = s.tenant AND x.key = ? AND x.value = ?"
            " AND x.session_id = s.session_id)"
        )
        params += [key, value]
    # SessionFilter.matches_activity
    if where.active_since is not None:
        clauses.append("s.last_activity >= ?")
        params.append(where.active_since)
    if where.active_before is not None:
        clauses.append("s.last_activity < ?")
        params.append(where.active_before)
    columns = ", ".join(f"s.{c.strip()}" for c in SESSION_COLUMNS.split(","))
    order = "l.session_id" if source != "sessions s" else "s.session_id"
    return f"SELECT {columns} FROM {source} WHERE {' AND '.join(clauses)} ORDER BY {order} LIMIT ?", [*params, limit]


def recent_query(tenant: str, query: RecentQuery) -> tuple[str, list[Any]]:
    """GetRecentAcrossSessions, newest first: messages_recent, or messages_recent_platform /
    messages_recent_kind (partial: rows with a platform / a kind) when that filter is set.
    Every filter is part of the query, so the LIMIT counts only matches: the result is
    exactly min(limit, matches) however selective the filters are."""
    clauses = ["tenant = ?", "archived = 0"]
    params: list[Any] = [tenant]
    if query.platform is not None:
        clauses.append("platform = ?")
        params.append(query.platform)
    if query.since_ts is not None:
        clauses.append("timestamp >= ?")
        params.append(query.since_ts)
    if query.roles:
        clauses.append(f"role IN ({_placeholders(len(query.roles))})")
        params.extend(query.roles)
    if query.exclude_session_ids:
        clauses.append(f"session_id NOT IN ({_placeholders(len(query.exclude_session_ids))})")
        params.extend(query.exclude_session_ids)
    if query.session_ids is not None:
        clauses.append(f"session_id IN ({_placeholders(len(query.session_ids))})")
        params.extend(query.session_ids)
    kind_clauses, kind_params = _kind_filters(query.kinds, query.exclude_kinds)
    clauses += kind_clauses
    params += kind_params
    sql = (
        f"SELECT session_id, {MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)}"
        " ORDER BY timestamp DESC, session_id DESC, seq DESC LIMIT ?"
    )
    params.append(query.limit)
    return sql, params


def idle_sessions_query(
    tenant: str, idle_before: int, after: tuple[int, str] | None, limit: int, *, unarchived: bool
) -> tuple[str, list[Any]]:
    """Retention's walk of idle sessions: a range of sessions_activity, oldest first."""
    clauses = ["tenant = ?", "last_activity < ?", LISTED, "json_extract(labels, ?) IS NULL"]
    params: list[Any] = [tenant, idle_before, "$." + json.dumps(RETENTION_LABEL)]
    if after is not None:
        clauses.append("(last_activity, session_id) > (?, ?)")
        params += after
    if unarchived:
        clauses.append("unarchived_count > 0")
    sql = (
        f"SELECT {SESSION_COLUMNS} FROM sessions INDEXED BY sessions_activity WHERE {' AND '.join(clauses)}"
        " ORDER BY last_activity, session_id LIMIT ?"
    )
    return sql, [*params, limit]


def retention_labelled_query(tenant: str, after: tuple[str, str] | None, limit: int) -> tuple[str, list[Any]]:
    """Sessions carrying the retention label: a range of session_labels' primary key (tenant, key,
    value, session_id)."""
    clauses = ["l.tenant = ?", "l.key = ?"]
    params: list[Any] = [tenant, RETENTION_LABEL]
    if after is not None:
        clauses.append("(l.value, l.session_id) > (?, ?)")
        params += after
    columns = ", ".join(f"s.{c.strip()}" for c in SESSION_COLUMNS.split(","))
    sql = (
        f"SELECT {columns} FROM session_labels l CROSS JOIN sessions s"
        f" ON s.tenant = l.tenant AND s.session_id = l.session_id WHERE {' AND '.join(clauses)}"
        " ORDER BY l.value, l.session_id LIMIT ?"
    )
    return sql, [*params, limit]


def metadata_prefix_query(tenant: str, prefix: str, after: tuple[str, str] | None, limit: int) -> tuple[str, list[Any]]:
    """ListMetadata by prefix: a range of the primary key (tenant, namespace, key)."""
    clauses = ["tenant = ?", "namespace >= ?"]
    params: list[Any] = [tenant, prefix]
    upper = prefixes.upper_bound(prefix)
    if upper is not None:
        clauses.append("namespace < ?")
        params.append(upper)
    if after is not None:
        clauses.append("(namespace, key) > (?, ?)")
        params += after
    sql = (
        f"SELECT namespace, key, data, update_time FROM metadata WHERE {' AND '.join(clauses)}"
        " ORDER BY namespace, key LIMIT ?"
    )
    return sql, [*params, limit]


def next_namespace_query(inclusive: bool) -> str:
    """One step of ListNamespaces' loose index scan: a single seek in the primary key."""
    return f"SELECT min(namespace) FROM metadata WHERE tenant = ? AND namespace {'>=' if inclusive else '>'} ?"


class SqliteStore(Store):
    def __init__(self, path: Path, *, synchronous: str = "NORMAL", readers: int = 2, reserve_bytes: int = 0) -> None:
        """`reserve_bytes`: the size of the file kept beside the database so that a full disk
        still lets it open (reserve.py); 0 keeps none (one found is still used)."""
        super().__init__()
        self._path = Path(path)
        self._reserve_bytes = reserve_bytes
        self._synchronous = synchronous
        self._readers = readers
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._writer: ThreadPoolExecutor | None = None
        self._reader: ThreadPoolExecutor | None = None
        self._commits: GroupCommit | None = None

    # -- plumbing ----------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        """The calling thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        for pragma in PRAGMAS:
            conn.execute(pragma)
        # NORMAL in WAL mode: a committed transaction survives a crash or kill -9 of
        # this process (the WAL is in the OS page cache); only a power loss or OS
        # crash can lose the newest commits. FULL closes that gap at a fsync per commit.
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _read(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(self._conn(), *args)

    async def _run(self, executor: ThreadPoolExecutor | None, job: Callable[..., T], *args: Any) -> T:
        if executor is None:
            raise StorageUnavailable("the SQLite store is not open")
        try:
            return await asyncio.get_running_loop().run_in_executor(executor, job, *args)
        except sqlite3.OperationalError as exc:
            raise _failure(exc) from exc

    async def _write(self, fn: Callable[[sqlite3.Connection], T], *, inline: bool = False) -> T:
        """Run `fn` in a write transaction, committed together with the writes queued beside
        it (commits.py); `inline`: a small write, which may commit on the event loop."""
        if self._commits is None:
            raise StorageUnavailable("the SQLite store is not open")
        result = await self._commits.write(fn, inline=inline)
        self.notifier.notify()
        return result

    async def _query(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._run(self._reader, self._read, fn, *args)

    async def _query_inline(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a LIMIT-bounded index read on the event loop's own connection.

        These reads take tens to hundreds of microseconds from the page cache, less than
        the hop to a reader thread and back (which cost GetHistory(50) ~40% of its
        throughput, docs/PERFORMANCE.md). WAL readers never wait for the writer, so the
        loop cannot stall on a lock. Scans (ranges, lists, clears) stay on the pool.
        """
        if self._reader is None:
            raise StorageUnavailable("the SQLite store is not open")
        try:
            return fn(self._conn(), *args)
        except sqlite3.OperationalError as exc:
            raise _failure(exc) from exc

    # -- lifecycle -----------------------------------------------------------
    async def open(self) -> None:
        if self._writer is not None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        for released in (False, True):
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")
            self._reader = ThreadPoolExecutor(self._readers, thread_name_prefix="sqlite-reader")
            self._commits = GroupCommit(self._writer, self._conn, self._connect, _failure, _is_full)
            try:
                await self._run(self._writer, self._create_schema)
                break
            except StorageFull:
                await self.close()
                if released or not reserve.release(self._path):
                    raise
                log.warning("sqlite_disk_full_reserve_released")
            except BaseException:
                await self.close()  # not open: the next open() (the health task's) tries again
                raise
        await asyncio.to_thread(reserve.keep, self._path, self._reserve_bytes)

    def _create_schema(self) -> None:
        conn = self._conn()
        conn.executescript(SCHEMA)
        for table, column, alter, backfill in MIGRATIONS:
            if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute(alter)
                    if backfill is not None:
                        conn.execute(backfill)
                    conn.execute("COMMIT")
                except sqlite3.Error:
                    conn.execute("ROLLBACK")
                    raise
        conn.executescript(INDEXES)
        if redefined := redefine_indexes(conn):
            log.info("sqlite_indexes_redefined", indexes=redefined)

    async def close(self) -> None:
        if self._commits is not None:
            self._commits.close()
            self._commits = None
        executors, self._writer, self._reader = (self._writer, self._reader), None, None
        for executor in executors:
            if executor is not None:
                # Runs what is queued, off the event loop: a stop that gives up on a stuck
                # statement must still be able to go on (memoryd.shutdown).
                await asyncio.to_thread(executor.shutdown)
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        # The event loop's thread outlives the store: forget its (now closed) connection.
        self._local = threading.local()

    async def ping(self) -> None:
        await self._query(lambda conn: conn.execute("SELECT 1").fetchone())
        await asyncio.to_thread(reserve.keep, self._path, self._reserve_bytes)  # again, once a full disk has room

    async def server_secret(self, name: str, candidate: str) -> str:
        def tx(conn: sqlite3.Connection) -> str:
            conn.execute(
                "INSERT INTO metadata (tenant, namespace, key, data, update_time) VALUES (?, ?, ?, ?, 0)"
                " ON CONFLICT (tenant, namespace, key) DO NOTHING",
                (SYSTEM_TENANT, SERVER_NAMESPACE, name, json.dumps({"value": candidate})),
            )
            (data,) = conn.execute(
                "SELECT data FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?",
                (SYSTEM_TENANT, SERVER_NAMESPACE, name),
            ).fetchone()
            return json.loads(data)["value"]

        return await self._write(tx)

    # -- shared transaction steps ---------------------------------------------
    @staticmethod
    def _append_events(
        conn: sqlite3.Connection,
        tenant: str,
        drafts: Sequence[EventDraft],
        now: int,
        owners: dict[str, str] | None = None,
        *,
        touch: bool = True,
    ) -> list[Event]:
        """Write `drafts` as the tenant's next events. `owners`: session id -> user id as this
        transaction left them, for sessions the caller has just read or written (the others'
        are read here). `touch`: move the last write of the sessions they make active (an
        import does not: it writes each session's last write as exported)."""  # fmt: skip
        if not drafts:
            return []
        # One statement reserves the seqs (the upsert returns the new last seq).
        ((last_seq,),) = conn.execute(
            "INSERT INTO event_log (tenant, last_seq) VALUES (?, ?)"
            " ON CONFLICT (tenant) DO UPDATE SET last_seq = last_seq + excluded.last_seq RETURNING last_seq",
            (tenant, len(drafts)),
        ).fetchall()
        # Each event carries its session's owner, read in this transaction (after the change).
        known = owners or {}
        sessions = [s for s in store_rules.event_sessions(drafts) if s not in known]
        if sessions:
            in_sessions = _placeholders(len(sessions))
            query = f"SELECT session_id, user_id FROM sessions WHERE tenant = ? AND session_id IN ({in_sessions})"
            known = {**known, **dict(conn.execute(query, (tenant, *sessions)).fetchall())}
        events = store_rules.numbered_events(tenant, drafts, last_seq, now, known)
        _insert_rows(
            conn,
            "INSERT INTO events (tenant, seq, time, session_id, type, payload, user_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(tenant, e.seq, e.time, e.session_id, int(e.type), json.dumps(e.payload), e.user_id) for e in events],
        )
        if touch:
            _touch(conn, tenant, active_sessions(drafts), now)
        return events

    @staticmethod
    def _insert_messages(
        conn: sqlite3.Connection, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> tuple[list[Message], dict[str, str]]:
        """The stored messages, and the session's owner ({session id: user id}, for _append_events)."""
        n = len(messages)
        # One statement creates or bumps the session, reserves the seqs and raises the
        # session's timestamp high-water mark (the server stamp, Store.append).
        ((last_seq, stamp, owner),) = conn.execute(
            "INSERT INTO sessions (tenant, session_id, last_seq, message_count, unarchived_count, last_activity,"
            " last_timestamp, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, session_id) DO UPDATE SET"
            " last_seq = last_seq + excluded.last_seq, message_count = message_count + excluded.message_count,"
            " unarchived_count = unarchived_count + excluded.unarchived_count, last_activity = excluded.last_activity,"
            " last_timestamp = max(last_timestamp, excluded.last_timestamp), owner = coalesce(owner, excluded.owner)"
            " RETURNING last_seq, last_timestamp, user_id",
            # A write naming no user (a claim set the owner before) makes a new or
            # ownerless session the tenant's (sessions.owner_after).
            (tenant, session_id, n, n, n, now, store_rules.server_timestamp(messages, now), TENANT),
        ).fetchall()
        stored = store_rules.stored_messages(messages, last_seq, stamp)
        _insert_rows(
            conn,
            "INSERT INTO messages (tenant, session_id, seq, id, role, content, kind, timestamp, platform, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (tenant, session_id, m.seq, m.id, m.role, m.content, m.kind, m.timestamp, m.platform, encode_body(m))
                for m in stored
            ],
        )
        return stored, {session_id: owner}

    @staticmethod
    def _delete_where(
        conn: sqlite3.Connection, tenant: str, session_id: str, clause: str, params: Sequence[Any], now: int
    ) -> list[Message]:
        where = f"tenant = ? AND session_id = ? AND {clause}"
        args = (tenant, session_id, *params)
        removed = [_row_to_ref(r) for r in conn.execute(f"SELECT {REF_COLUMNS} FROM messages WHERE {where}", args)]
        if removed:
            conn.execute(f"DELETE FROM messages WHERE {where}", args)
            conn.execute(
                "UPDATE sessions SET message_count = message_count - ?, unarchived_count = unarchived_count - ?,"
                " last_activity = ? WHERE tenant = ? AND session_id = ?",
                (*store_rules.removal_counts(removed), now, tenant, session_id),
            )
        return removed

    @staticmethod
    def _redact_session_events(conn: sqlite3.Connection, tenant: str, session_id: str) -> None:
        """Redact the session's events that erasure.session_event_erasable selects (by the
        events_erasable index; the WHERE repeats the index's so the planner uses it)."""
        rows = conn.execute(
            "SELECT seq, type, payload FROM events WHERE tenant = ? AND session_id = ?"
            " AND (user_id != '' OR type IN (10, 11, 14))",
            (tenant, session_id),
        ).fetchall()
        _write_redacted(conn, tenant, rows)

    @staticmethod
    def _session_row(conn: sqlite3.Connection, tenant: str, session_id: str) -> SessionInfo | None:
        row = conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant = ? AND session_id = ?", (tenant, session_id)
        ).fetchone()
        return _row_to_session(row) if row else None

    @staticmethod
    def _store_attributes(
        conn: sqlite3.Connection,
        tenant: str,
        session_id: str,
        before: SessionAttributes,
        after: SessionAttributes,
        now: int,
    ) -> None:
        """Store `after` over `before` (the row exists and they differ)."""
        conn.execute(
            "UPDATE sessions SET user_id = ?, agent_id = ?, labels = ?, last_activity = ?"
            " WHERE tenant = ? AND session_id = ?",
            (after.user_id, after.agent_id, json.dumps(dict(after.labels)), now, tenant, session_id),
        )
        if before.labels != after.labels:
            conn.execute("DELETE FROM session_labels WHERE tenant = ? AND session_id = ?", (tenant, session_id))
            conn.executemany(
                "INSERT INTO session_labels (tenant, key, value, session_id) VALUES (?, ?, ?, ?)",
                [(tenant, key, value, session_id) for key, value in after.labels.items()],
            )

    def _update_attributes(
        self, conn: sqlite3.Connection, tenant: str, session_id: str, update: SessionUpdate, now: int
    ) -> tuple[SessionInfo, list[EventDraft]]:
        conn.execute(
            "INSERT INTO sessions (tenant, session_id, last_activity) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            (tenant, session_id, now),
        )
        current = self._session_row(conn, tenant, session_id)
        assert current is not None  # inserted above
        info, drafts = store_rules.updated_session(current, update, now)
        if drafts:
            self._store_attributes(conn, tenant, session_id, current.attributes, info.attributes, now)
        if info.owner != current.owner:
            self._store_owner(conn, tenant, session_id, info.owner)
        return info, drafts

    @staticmethod
    def _store_owner(conn: sqlite3.Connection, tenant: str, session_id: str, owner: str | None) -> None:
        conn.execute("UPDATE sessions SET owner = ? WHERE tenant = ? AND session_id = ?", (owner, tenant, session_id))

    # -- messages ------------------------------------------------------------
    async def append(
        self,
        tenant: str,
        session_id: str,
        messages: Sequence[Message],
        idempotency_key: str | None,
        now: int,
        attributes: SessionUpdate | None = None,
    ) -> AppendResult:
        def tx(conn: sqlite3.Connection) -> AppendResult:
            if idempotency_key:
                row = conn.execute(
                    "SELECT result FROM idempotency WHERE tenant = ? AND session_id = ? AND key = ?",
                    (tenant, session_id, idempotency_key),
                ).fetchone()
                if row:
                    return AppendResult(_first_result(row[0]), deduplicated=True)
            drafts: list[EventDraft] = []
            if attributes:
                drafts += self._update_attributes(conn, tenant, session_id, attributes, now)[1]
            stored, owners = self._insert_messages(conn, tenant, session_id, messages, now)
            if idempotency_key:
                conn.execute(
                    "INSERT INTO idempotency (tenant, session_id, key, result, created) VALUES (?, ?, ?, ?, ?)",
                    (tenant, session_id, idempotency_key, encode_messages(stored), now),
                )
            events = self._append_events(conn, tenant, drafts + ev.appended(session_id, stored), now, owners)
            return AppendResult(stored, event_seq=events[-1].seq if events else 0)

        return await self._write(tx, inline=_small(messages))

    async def history(self, tenant: str, session_id: str, limit: int, max_bytes: int | None = None) -> list[Message]:
        def read(conn: sqlite3.Connection) -> list[Message]:
            return read_messages(conn.execute(NEWEST_UNARCHIVED, (tenant, session_id, limit)), max_bytes)[::-1]

        return await self._query_inline(read)

    async def range(self, tenant: str, query: RangeQuery) -> list[Message]:
        clauses = ["tenant = ?", "session_id = ?"]
        params: list[Any] = [tenant, query.session_id]
        if query.from_ts is not None:
            clauses.append("timestamp >= ?")
            params.append(query.from_ts)
        if query.to_ts is not None:
            clauses.append("timestamp <= ?")
            params.append(query.to_ts)
        if query.after is not None:
            clauses.append("(timestamp, seq) > (?, ?)")
            params.extend((query.after.timestamp, query.after.seq))
        if query.roles:
            clauses.append(f"role IN ({_placeholders(len(query.roles))})")
            params.extend(query.roles)
        kind_clauses, kind_params = _kind_filters((), query.exclude_kinds)
        clauses += kind_clauses
        params += kind_params
        sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE {' AND '.join(clauses)} ORDER BY timestamp, seq LIMIT ?"
        params.append(query.limit)

        def read(conn: sqlite3.Connection) -> list[Message]:
            return read_messages(conn.execute(sql, params), query.max_bytes)

        return await self._query(read)

    async def context_windows(self, tenant: str, requests: Sequence[WindowRequest]) -> list[Window]:
        # One trip to a reader for all windows of a search (storage/sqlite/windows.py).
        return await self._query(windows.read, tenant, requests, MESSAGE_COLUMNS, row_to_message)

    async def recent_across_sessions(self, tenant: str, query: RecentQuery) -> list[SessionMessage]:
        sql, params = recent_query(tenant, query)

        def read(conn: sqlite3.Connection) -> list[SessionMessage]:
            found = (SessionMessage(row[0], row_to_message(row[1:])) for row in conn.execute(sql, params))
            return read_within(found, query.max_bytes, lambda found: found.message.stored_bytes)[::-1]

        return await self._query(read)

    async def trim(
        self, tenant: str, session_id: str, keep_recent: int, now: int, guard: SessionGuard | None = None
    ) -> int:
        def tx(conn: sqlite3.Connection) -> int:
            if guard is not None:
                guard.check(self._session_row(conn, tenant, session_id))
            archived = conn.execute(
                "UPDATE messages SET archived = 1 WHERE tenant = ? AND session_id = ? AND seq IN ("
                " SELECT seq FROM messages WHERE tenant = ? AND session_id = ? AND archived = 0"
                " ORDER BY timestamp DESC, seq DESC LIMIT -1 OFFSET ?)",
                (tenant, session_id, tenant, session_id, keep_recent),
            ).rowcount
            if archived:
                conn.execute(
                    "UPDATE sessions SET unarchived_count = unarchived_count - ?, last_activity = ?"
                    " WHERE tenant = ? AND session_id = ?",
                    (archived, now, tenant, session_id),
                )
                self._append_events(conn, tenant, ev.trimmed(session_id, archived, keep_recent), now)
            return archived

        return await self._write(tx)

    async def replace_history(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> tuple[list[Message], list[Message]]:
        def tx(conn: sqlite3.Connection) -> tuple[list[Message], list[Message]]:
            removed = self._delete_where(conn, tenant, session_id, "archived = 0", (), now)
            stored, owners = self._insert_messages(conn, tenant, session_id, messages, now) if messages else ([], None)
            self._append_events(conn, tenant, ev.replaced(session_id, removed, stored), now, owners)
            return stored, removed

        return await self._write(tx)

    async def update_content(
        self, tenant: str, session_id: str, old_text: str, new_text: str, recent_limit: int, now: int
    ) -> list[Message]:
        def tx(conn: sqlite3.Connection) -> list[Message]:
            rows = conn.execute(
                f"SELECT {REF_COLUMNS}, content FROM messages WHERE tenant = ? AND session_id = ?"
                " ORDER BY timestamp DESC, seq DESC LIMIT ?",
                (tenant, session_id, recent_limit),
            ).fetchall()
            changed = []
            for row in rows:
                rewritten = store_rules.rewritten(row[-1], old_text, new_text)
                if rewritten is not None:
                    ref = _row_to_ref(row[:-1])
                    conn.execute(
                        "UPDATE messages SET content = ? WHERE tenant = ? AND session_id = ? AND seq = ?",
                        (rewritten, tenant, session_id, ref.seq),
                    )
                    changed.append(ref)
            if changed:
                conn.execute(
                    "UPDATE sessions SET last_activity = ? WHERE tenant = ? AND session_id = ?",
                    (now, tenant, session_id),
                )
                self._append_events(conn, tenant, ev.rewritten(session_id, changed), now)
            return changed

        return await self._write(tx)

    async def delete_in(
        self, tenant: str, session_id: str, column: str, values: Sequence[Any], now: int
    ) -> list[Message]:
        def tx(conn: sqlite3.Connection) -> list[Message]:
            removed: list[Message] = []
            for start in range(0, len(values), IN_CHUNK):
                chunk = values[start : start + IN_CHUNK]
                clause = f"{column} IN ({_placeholders(len(chunk))})"
                removed += self._delete_where(conn, tenant, session_id, clause, chunk, now)
            self._append_events(conn, tenant, ev.deleted(session_id, removed), now)
            return removed

        return await self._write(tx)

    async def clear_session(self, tenant: str, session_id: str, clearing: Clearing, now: int) -> tuple[int, int]:
        clauses: list[str] = []
        params: list[Any] = []
        for selector in store_rules.session_record_selectors(session_id, clearing.session_records):
            named = [
                (column, value)
                for column, value in zip(("namespace", "key"), selector, strict=True)
                if value is not None
            ]
            clauses.append("(" + " AND ".join(f"{column} = ?" for column, _ in named) + ")")
            params += [value for _, value in named]
        where = f"tenant = ? AND ({' OR '.join(clauses)})"

        def tx(conn: sqlite3.Connection) -> tuple[int, int]:
            session = self._session_row(conn, tenant, session_id)
            if clearing.guard is not None:
                clearing.guard.check(session)
            removed: list[Message] | None = None
            if clearing.messages:
                removed = self._delete_where(conn, tenant, session_id, "1 = 1", (), now)
                conn.execute("DELETE FROM idempotency WHERE tenant = ? AND session_id = ?", (tenant, session_id))
            records: list[tuple[str, str]] = []
            attributes = None
            after = SessionAttributes()
            if clearing.metadata:
                records = conn.execute(
                    f"SELECT namespace, key FROM metadata WHERE {where}", (tenant, *params)
                ).fetchall()
                conn.execute(f"DELETE FROM metadata WHERE {where}", (tenant, *params))
            if session is not None and (clearing.metadata or clearing.release_owner):
                attributes = session.attributes
                after, owner = store_rules.cleared_attributes(session, clearing.release_owner)
                if after != attributes:
                    self._store_attributes(conn, tenant, session_id, attributes, after, now)
                if owner != session.owner:
                    self._store_owner(conn, tenant, session_id, owner)
            if clearing.redact_events:
                self._redact_session_events(conn, tenant, session_id)
            drafts = store_rules.session_cleared_events(
                session_id, removed, clearing.targets, records, attributes, after
            )
            self._append_events(conn, tenant, drafts, now)
            return len(removed or ()), len(records)

        return await self._write(tx)

    async def clear_all(self, tenant: str, clearing: Clearing, now: int) -> tuple[int, int]:
        def tx(conn: sqlite3.Connection) -> tuple[int, int]:
            removed: dict[str, list[Message]] = {}
            removed_metadata = 0
            if clearing.messages:
                rows = conn.execute(f"SELECT session_id, {REF_COLUMNS} FROM messages WHERE tenant = ?", (tenant,))
                removed = store_rules.by_session((row[0], _row_to_ref(row[1:])) for row in rows)
                conn.execute("DELETE FROM messages WHERE tenant = ?", (tenant,))
                conn.execute("DELETE FROM idempotency WHERE tenant = ?", (tenant,))
                # Sessions keep last_seq so seqs are never reused.
                conn.execute(
                    "UPDATE sessions SET message_count = 0, unarchived_count = 0, last_activity = ? WHERE tenant = ?",
                    (now, tenant),
                )
            if clearing.metadata:
                removed_metadata = conn.execute("DELETE FROM metadata WHERE tenant = ?", (tenant,)).rowcount
                # Every session's attributes go too, but for its owner (a user's session keeps
                # its user_id: sessions.owned_attributes); all-cleared (with its targets) reports it.
                conn.execute(
                    "UPDATE sessions SET user_id = coalesce(owner, ''), agent_id = '', labels = '{}'"
                    " WHERE tenant = ? AND (user_id != coalesce(owner, '') OR agent_id != '' OR labels != '{}')",
                    (tenant,),
                )
                conn.execute("DELETE FROM session_labels WHERE tenant = ?", (tenant,))
            self._append_events(conn, tenant, ev.all_cleared(removed, clearing.targets), now)
            return sum(map(len, removed.values())), removed_metadata

        return await self._write(tx)

    async def list_sessions(
        self,
        tenant: str,
        after_session_id: str | None,
        limit: int,
        where: SessionFilter = SessionFilter(),
        max_bytes: int | None = None,
    ) -> list[SessionInfo]:
        sql, params = list_sessions_query(tenant, after_session_id, limit, where)

        def read(conn: sqlite3.Connection) -> list[SessionInfo]:
            return read_within(map(_row_to_session, conn.execute(sql, params)), max_bytes, lambda s: s.stored_bytes)

        return await self._query(read)

    async def session_totals(self, tenant: str) -> SessionTotals:
        sql = (
            "SELECT COUNT(*), COALESCE(SUM(message_count), 0), COALESCE(SUM(unarchived_count), 0),"
            " COALESCE(SUM(json_extract(labels, ?) IS NOT NULL), 0)"
            f" FROM sessions WHERE tenant = ? AND {LISTED}"
        )
        params = ("$." + json.dumps(RETENTION_LABEL), tenant)
        return await self._query(lambda conn: SessionTotals(*conn.execute(sql, params).fetchone()))

    async def idle_sessions(
        self, tenant: str, idle_before: int, after: tuple[int, str] | None, limit: int, *, unarchived: bool
    ) -> list[SessionInfo]:
        sql, params = idle_sessions_query(tenant, idle_before, after, limit, unarchived=unarchived)
        return await self._query(lambda conn: [_row_to_session(row) for row in conn.execute(sql, params)])

    async def touch_sessions(self, tenant: str, session_ids: Sequence[str], now: int) -> None:
        ids = sorted(set(session_ids))
        await self._write(lambda conn: _touch(conn, tenant, ids, now), inline=True)

    async def retention_labelled(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[SessionInfo]:
        sql, params = retention_labelled_query(tenant, after, limit)
        return await self._query(lambda conn: [_row_to_session(row) for row in conn.execute(sql, params)])

    async def pop_newest(
        self, tenant: str, session_id: str, n: int, now: int, max_bytes: int | None = None
    ) -> tuple[list[Message], bool]:
        def tx(conn: sqlite3.Connection) -> tuple[list[Message], bool]:
            newest = read_messages(conn.execute(NEWEST_UNARCHIVED, (tenant, session_id, n)), max_bytes)
            popped, truncated = store_rules.popped(newest, n, max_bytes)
            if popped:
                seqs = [m.seq for m in popped]
                removed = self._delete_where(
                    conn, tenant, session_id, f"seq IN ({_placeholders(len(seqs))})", seqs, now
                )
                self._append_events(conn, tenant, ev.deleted(session_id, removed), now)
            return popped, truncated

        return await self._write(tx)

    async def get_session(self, tenant: str, session_id: str) -> SessionInfo | None:
        return await self._query_inline(self._session_row, tenant, session_id)

    async def update_session(self, tenant: str, session_id: str, update: SessionUpdate, now: int) -> SessionInfo:
        def tx(conn: sqlite3.Connection) -> SessionInfo:
            info, drafts = self._update_attributes(conn, tenant, session_id, update, now)
            self._append_events(conn, tenant, drafts, now)
            return info

        return await self._write(tx)

    # -- metadata ------------------------------------------------------------
    async def save_metadata(
        self, tenant: str, namespace: str, key: str, data: dict[str, Any], now: int
    ) -> MetadataEntry:
        def tx(conn: sqlite3.Connection) -> MetadataEntry:
            conn.execute(
                "INSERT INTO metadata (tenant, namespace, key, data, update_time) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant, namespace, key) DO UPDATE SET data = excluded.data,"
                " update_time = excluded.update_time",
                (tenant, namespace, key, json.dumps(data), now),
            )
            self._append_events(conn, tenant, ev.metadata_changed(namespace, key, deleted=False), now)
            return MetadataEntry(namespace, key, data, now)

        return await self._write(tx)

    async def get_metadata(self, tenant: str, namespace: str, key: str) -> MetadataEntry | None:
        def read(conn: sqlite3.Connection) -> MetadataEntry | None:
            row = conn.execute(
                "SELECT data, update_time FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?",
                (tenant, namespace, key),
            ).fetchone()
            return MetadataEntry(namespace, key, json.loads(row[0]), row[1]) if row else None

        return await self._query_inline(read)

    async def list_metadata(
        self, tenant: str, namespace: str, after_key: str | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]:
        def read(conn: sqlite3.Connection) -> list[MetadataEntry]:
            rows = conn.execute(
                "SELECT key, data, update_time FROM metadata WHERE tenant = ? AND namespace = ? AND key > ?"
                " ORDER BY key LIMIT ?",
                (tenant, namespace, after_key or "", limit),
            )
            entries = (MetadataEntry(namespace, key, json.loads(data), t, utf8_len(data)) for key, data, t in rows)
            return read_within(entries, max_bytes, lambda entry: entry.stored_bytes)

        return await self._query(read)

    async def delete_metadata(self, tenant: str, namespace: str, key: str, now: int) -> bool:
        def tx(conn: sqlite3.Connection) -> bool:
            deleted = conn.execute(
                "DELETE FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?", (tenant, namespace, key)
            ).rowcount
            if deleted:
                self._append_events(conn, tenant, ev.metadata_changed(namespace, key, deleted=True), now)
            return bool(deleted)

        return await self._write(tx)

    async def list_metadata_by_prefix(
        self, tenant: str, prefix: str, after: tuple[str, str] | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]:
        sql, params = metadata_prefix_query(tenant, prefix, after, limit)

        def read(conn: sqlite3.Connection) -> list[MetadataEntry]:
            entries = (MetadataEntry(n, k, json.loads(d), t, utf8_len(d)) for n, k, d, t in conn.execute(sql, params))
            return read_within(entries, max_bytes, lambda entry: entry.stored_bytes)

        return await self._query(read)

    async def list_namespaces(self, tenant: str, prefix: str, after: str | None, limit: int) -> list[str]:
        def read(conn: sqlite3.Connection) -> list[str]:
            walk = prefixes.namespace_walk(prefix, after, limit)
            try:
                bound, inclusive = next(walk)
                while True:
                    (found,) = conn.execute(next_namespace_query(inclusive), (tenant, bound)).fetchone()
                    bound, inclusive = walk.send(found)
            except StopIteration as page:
                return page.value

        return await self._query(read)

    # -- events --------------------------------------------------------------
    async def publish(self, tenant: str, draft: EventDraft, now: int) -> Event:
        return (await self._write(lambda conn: self._append_events(conn, tenant, [draft], now)))[0]

    async def redact_events(self, tenant: str, redaction: UserRedaction, limit: int) -> int:
        namespace = "json_extract(payload, '$.namespace')"
        selects: list[tuple[str, tuple[Any, ...]]] = []
        for prefix in redaction.namespace_prefixes:
            upper = prefixes.upper_bound(prefix)
            bound = f" AND {namespace} < ?" if upper is not None else ""
            selects.append((f"type = 8 AND {namespace} >= ?{bound}", (prefix,) if upper is None else (prefix, upper)))
        selects += [(f"type = 8 AND {namespace} = ?", (name,)) for name in redaction.namespaces]
        selects += [
            (f"type = 8 AND {namespace} = ? AND json_extract(payload, '$.key') = ?", record)
            for record in redaction.records
        ]
        scope = "type = 13 AND json_extract(payload, '$.scope') = ?"
        selects += [(scope, (name,)) for name in redaction.entry_scopes]
        if redaction.memory_user:
            memory = "type IN (15, 16, 17) AND json_extract(payload, '$.user_id') = ?"
            selects.append((memory, (redaction.memory_user,)))

        def tx(conn: sqlite3.Connection) -> int:
            rows: dict[int, tuple[int, int, str]] = {}
            for where, params in selects:
                sql = f"SELECT seq, type, payload FROM events WHERE tenant = ? AND {where} LIMIT ?"
                for row in conn.execute(sql, (tenant, *params, limit - len(rows))):
                    rows[row[0]] = row
                if len(rows) >= limit:
                    break
            _write_redacted(conn, tenant, list(rows.values()))
            return len(rows)

        return await self._write(tx)

    async def read_events(
        self,
        tenant: str,
        after_seq: int,
        limit: int,
        *,
        types: Sequence[EventType] = (),
        through_seq: int | None = None,
    ) -> list[Event]:
        check_event_filter(types, through_seq)
        where = "tenant = ? AND seq > ?"
        params: list[Any] = [tenant, after_seq]
        if through_seq is not None:
            where += " AND seq <= ?"
            params.append(through_seq)
        if types:
            where += f" AND type IN ({_placeholders(len(types))})"
            params.extend(int(t) for t in types)
        params.append(limit)
        sql = f"SELECT seq, time, session_id, type, payload, user_id FROM events WHERE {where} ORDER BY seq LIMIT ?"

        def read(conn: sqlite3.Connection) -> list[Event]:
            rows = conn.execute(sql, params)
            return [Event(s, t, tenant, sid, EventType(ty), json.loads(p), u) for s, t, sid, ty, p, u in rows]

        # A type filter may pass over many rows: that scan runs on the reader pool.
        return await (self._query(read) if types else self._query_inline(read))

    async def event_bounds(self, tenant: str) -> tuple[int, int]:
        def read(conn: sqlite3.Connection) -> tuple[int, int]:
            row = conn.execute(
                "SELECT compacted_through, last_seq FROM event_log WHERE tenant = ?", (tenant,)
            ).fetchone()
            return (row[0], row[1]) if row else (0, 0)

        return await self._query_inline(read)

    async def event_tenants(self) -> list[str]:
        return await self._query(
            lambda conn: [r[0] for r in conn.execute("SELECT tenant FROM event_log ORDER BY tenant")]
        )

    async def compact_events(self, *, older_than: int | None, keep_last: int | None) -> int:
        def tx(conn: sqlite3.Connection) -> int:
            removed = 0
            for tenant, last_seq, floor in conn.execute(
                "SELECT tenant, last_seq, compacted_through FROM event_log"
            ).fetchall():
                aged = None
                if older_than is not None:
                    (aged,) = conn.execute(
                        "SELECT max(seq) FROM events WHERE tenant = ? AND time < ?", (tenant, older_than)
                    ).fetchone()
                new_floor = store_rules.compaction_floor(floor, last_seq, keep_last, aged)
                if new_floor > floor:
                    removed += conn.execute(
                        "DELETE FROM events WHERE tenant = ? AND seq <= ?", (tenant, new_floor)
                    ).rowcount
                    conn.execute("UPDATE event_log SET compacted_through = ? WHERE tenant = ?", (new_floor, tenant))
            return removed

        return await self._write(tx)

    # -- guarded metadata writes and seq reads (summaries, long-term entries) --
    async def write_metadata_guarded(
        self,
        tenant: str,
        writes: Sequence[MetadataWrite],
        guard: MetadataGuard | None,
        events: Sequence[EventDraft],
        now: int,
        *,
        guards: Sequence[MetadataGuard] = (),
    ) -> bool:
        checks = [*([guard] if guard is not None else []), *guards]

        def tx(conn: sqlite3.Connection) -> bool:
            # BEGIN IMMEDIATE serializes writers, so the guard reads and the writes are atomic.
            for check in checks:
                row = conn.execute(
                    "SELECT data FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?",
                    (tenant, check.namespace, check.key),
                ).fetchone()
                if not check.holds(None if row is None else json.loads(row[0])):
                    return False
            drafts: list[EventDraft] = []
            for write in writes:
                if write.data is None:
                    deleted = conn.execute(
                        "DELETE FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?",
                        (tenant, write.namespace, write.key),
                    ).rowcount
                    if not deleted:
                        continue
                else:
                    conn.execute(
                        "INSERT INTO metadata (tenant, namespace, key, data, update_time) VALUES (?, ?, ?, ?, ?)"
                        " ON CONFLICT (tenant, namespace, key) DO UPDATE SET data = excluded.data,"
                        " update_time = excluded.update_time",
                        (tenant, write.namespace, write.key, json.dumps(write.data), now),
                    )
                drafts += ev.metadata_changed(write.namespace, write.key, deleted=write.data is None)
            self._append_events(conn, tenant, [*drafts, *events], now)
            return True

        return await self._write(tx)

    async def write_metadata_counted(
        self, tenant: str, write: MetadataWrite, capacity: int, replace: bool, events: Sequence[EventDraft], now: int
    ) -> CountedOutcome:
        where = (tenant, write.namespace, write.key)

        def tx(conn: sqlite3.Connection) -> CountedOutcome:
            # BEGIN IMMEDIATE serializes writers: the read, the count and the write are one step.
            row = conn.execute(
                "SELECT data FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?", where
            ).fetchone()
            previous = None if row is None else json.loads(row[0])
            (count,) = conn.execute(
                "SELECT count(*) FROM metadata WHERE tenant = ? AND namespace = ?", where[:2]
            ).fetchone()
            written, after = store_rules.counted_write(previous, count, write.data is not None, capacity, replace)
            if not written:
                return CountedOutcome(False, previous, count)
            if write.data is None:
                conn.execute("DELETE FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?", where)
            else:
                conn.execute(
                    "INSERT INTO metadata (tenant, namespace, key, data, update_time) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (tenant, namespace, key) DO UPDATE SET data = excluded.data,"
                    " update_time = excluded.update_time",
                    (*where, json.dumps(write.data), now),
                )
            drafts = ev.metadata_changed(write.namespace, write.key, deleted=write.data is None)
            self._append_events(conn, tenant, [*drafts, *events], now)
            return CountedOutcome(True, previous, after)

        return await self._write(tx)

    async def messages_by_seq(
        self, tenant: str, session_id: str, from_seq: int, to_seq: int, limit: int, *, newest_first: bool = False
    ) -> list[Message]:
        order = "DESC" if newest_first else "ASC"

        def read(conn: sqlite3.Connection) -> list[Message]:
            rows = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = ? AND session_id = ? AND seq BETWEEN ? AND ?"
                f" ORDER BY seq {order} LIMIT ?",
                (tenant, session_id, from_seq, to_seq, limit),
            ).fetchall()
            messages = [row_to_message(r) for r in rows]
            return messages[::-1] if newest_first else messages

        # A few rows (the synchronizer's reads of a message or two per session, a slice's
        # ends) cost less than the hop to a reader thread: read on the loop, as GetHistory.
        return await (self._query_inline(read) if limit <= INLINE_ROWS else self._query(read))

    async def count_by_seq(self, tenant: str, session_id: str, from_seq: int, to_seq: int) -> tuple[int, int]:
        def read(conn: sqlite3.Connection) -> tuple[int, int]:
            stored, archived = conn.execute(
                "SELECT count(*), coalesce(sum(archived), 0) FROM messages"
                " WHERE tenant = ? AND session_id = ? AND seq BETWEEN ? AND ?",
                (tenant, session_id, from_seq, to_seq),
            ).fetchone()
            return stored, archived

        return await self._query(read)

    async def last_seq(self, tenant: str, session_id: str) -> int:
        def read(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT last_seq FROM sessions WHERE tenant = ? AND session_id = ?", (tenant, session_id)
            ).fetchone()
            return row[0] if row else 0

        return await self._query(read)

    # -- export and import (domain/transfer.py) ---------------------------------
    def snapshot(self) -> SqliteSnapshot:
        return SqliteSnapshot(self._path)

    async def import_session(self, tenant: str, record: SessionRecord, now: int) -> bool:
        sid = record.session_id

        def tx(conn: sqlite3.Connection) -> bool:
            conn.execute(
                "INSERT INTO sessions (tenant, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING", (tenant, sid)
            )
            current = self._session_row(conn, tenant, sid)
            assert current is not None  # inserted above
            attributes, drafts = store_rules.imported_attributes(sid, current.attributes, record.attributes)
            if drafts:
                self._store_attributes(conn, tenant, sid, current.attributes, attributes, now)
            owner = store_rules.imported_owner(sid, current.owner, attributes, record)
            if owner != current.owner:
                self._store_owner(conn, tenant, sid, owner)
            changed = conn.execute(
                "UPDATE sessions SET last_seq = max(last_seq, ?), last_timestamp = max(last_timestamp, ?),"
                " last_activity = ? WHERE tenant = ? AND session_id = ?"
                " AND (last_seq < ? OR last_timestamp < ? OR last_activity != ?)",
                (record.last_seq, record.last_timestamp, max(current.last_activity, record.last_activity), tenant, sid,
                 record.last_seq, record.last_timestamp, max(current.last_activity, record.last_activity)),
            ).rowcount  # fmt: skip
            self._append_events(conn, tenant, drafts, now)
            return bool(drafts or changed or owner != current.owner)

        return await self._write(tx)

    async def import_messages(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> list[Message]:
        # Bodies are encoded here, not on the writer thread, which other writes wait for.
        bodies = {m.id: encode_body(m) for m in messages}

        def tx(conn: sqlite3.Connection) -> list[Message]:
            new = _importable(conn, tenant, session_id, messages)
            if not new:
                return []
            conn.executemany(
                "INSERT INTO messages (tenant, session_id, seq, id, role, content, kind, timestamp, archived, platform,"
                " body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (tenant, session_id, m.seq, m.id, m.role, m.content, m.kind, m.timestamp, int(m.archived),
                     m.platform, bodies[m.id])
                    for m in new
                ],
            )  # fmt: skip
            total, unarchived = store_rules.message_counts(new)
            conn.execute(
                "INSERT INTO sessions (tenant, session_id, last_seq, message_count, unarchived_count, last_timestamp,"
                " owner) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, session_id) DO UPDATE SET"
                " last_seq = max(last_seq, excluded.last_seq), message_count = message_count + excluded.message_count,"
                " unarchived_count = unarchived_count + excluded.unarchived_count,"
                " last_timestamp = max(last_timestamp, excluded.last_timestamp),"
                " owner = coalesce(owner, excluded.owner)",
                (tenant, session_id, max(m.seq for m in new), total, unarchived, max(m.timestamp for m in new), TENANT),
            )
            self._append_events(conn, tenant, ev.appended(session_id, new), now)
            return new

        return await self._write(tx)

    async def importable_messages(self, tenant: str, session_id: str, messages: Sequence[Message]) -> list[Message]:
        return await self._query(_importable, tenant, session_id, messages)

    async def import_metadata(self, tenant: str, records: Sequence[MetadataEntry], now: int) -> int:
        def tx(conn: sqlite3.Connection) -> int:
            drafts: list[EventDraft] = []
            for record in records:
                data = json.dumps(record.data)
                held = conn.execute(
                    "SELECT data, update_time FROM metadata WHERE tenant = ? AND namespace = ? AND key = ?",
                    (tenant, record.namespace, record.key),
                ).fetchone()
                if held is not None and json.loads(held[0]) == record.data and held[1] == record.update_time:
                    continue
                conn.execute(
                    "INSERT INTO metadata (tenant, namespace, key, data, update_time) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (tenant, namespace, key) DO UPDATE SET data = excluded.data,"
                    " update_time = excluded.update_time",
                    (tenant, record.namespace, record.key, data, record.update_time),
                )
                drafts += ev.metadata_changed(record.namespace, record.key, deleted=False)
            self._append_events(conn, tenant, drafts, now, touch=False)
            return len(drafts)

        return await self._write(tx)


def _importable(conn: sqlite3.Connection, tenant: str, session_id: str, messages: Sequence[Message]) -> list[Message]:
    """store_rules.importable of `messages`, given where the target holds their ids and seqs."""
    held_ids: dict[str, tuple[str, int]] = {}
    held_seqs: dict[int, str] = {}
    for start in range(0, len(messages), IN_CHUNK):
        chunk = messages[start : start + IN_CHUNK]
        marks = _placeholders(len(chunk))
        for msg_id, sid, seq in conn.execute(
            f"SELECT id, session_id, seq FROM messages WHERE tenant = ? AND id IN ({marks})",
            (tenant, *(m.id for m in chunk)),
        ):
            held_ids[msg_id] = (sid, seq)
        for seq, msg_id in conn.execute(
            f"SELECT seq, id FROM messages WHERE tenant = ? AND session_id = ? AND seq IN ({marks})",
            (tenant, session_id, *(m.seq for m in chunk)),
        ):
            held_seqs[seq] = msg_id
    return store_rules.importable(session_id, messages, held_ids, held_seqs)
