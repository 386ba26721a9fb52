"""MongoDB adapter, through PyMongo's native async API (`pymongo.AsyncMongoClient`, not Motor).

Every mutation is one multi-document transaction that also appends its events, so a
change and its events commit together or not at all. Seqs come from counter documents
bumped with `$inc` inside the transaction: `sessions` holds each session's last_seq and
`event_log` each tenant's last event seq. Within a process, writers of one tenant take
turns; writers in different replicas conflict on the tenant's counter document, which every
transaction writes first (`_claim`), and the loser backs off (jittered) and retries. Either
way a tenant's event seqs commit in seq order and are never reused. Transactions need a
replica set (or mongos).

Each call runs under a client-side operation timeout (`pymongo.timeout`, which sends the
remaining budget as maxTimeMS / maxCommitTimeMS), cut to the caller's deadline, so an
unreachable server surfaces as StorageUnavailable within `timeout_ms`; a transaction whose
caller gave up is aborted on the server at once (`_release`), not left holding its locks
until the server's transaction lifetime limit reaps it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import random
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import bson
import pymongo
import structlog
from pymongo import DESCENDING, AsyncMongoClient, ReturnDocument, UpdateOne
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    BulkWriteError,
    CollectionInvalid,
    ConfigurationError,
    OperationFailure,
    PyMongoError,
)
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from memoryd.domain import deadline, erasure, prefixes, sessions, store_rules
from memoryd.domain import events as ev
from memoryd.domain.erasure import UserRedaction
from memoryd.domain.errors import FailedPrecondition, StorageUnavailable
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
)
from memoryd.domain.retention import RETENTION_LABEL, active_sessions
from memoryd.domain.sessions import (
    TENANT,
    SessionAttributes,
    SessionFilter,
    SessionTotals,
    SessionUpdate,
)
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
from memoryd.storage.mongo import windows as mongo_windows
from memoryd.storage.mongo.indexes import EVENT_LOG, EVENTS, IDEMPOTENCY, INDEXES, MESSAGES, METADATA, SESSIONS
from memoryd.storage.mongo.orphans import STALL_S, OrphanReaper
from memoryd.storage.mongo.reads import (
    MESSAGE_FIELDS,
    doc_to_message,
    raw_collection,
    read_sized,
    session_doc_attributes,
    sized_message,
    translated_errors,
)
from memoryd.storage.mongo.snapshot import MongoSnapshot

log = structlog.get_logger("memoryd.storage.mongo")

T = TypeVar("T")

# Large $in lists are split like SQLite's IN lists, so no single command grows without bound.
IN_CHUNK = 500

# A unique-index violation inside a transaction means two writers raced to create the same
# counter, metadata or idempotency document; running the transaction again sees the winner's.
DUPLICATE_RETRIES = 3

REPLICA_SET_REQUIRED = "MongoDB transactions need a replica set; start mongod with --replSet or use a sharded cluster"

INT64_MAX = 2**63 - 1

# pymongo.timeout needs a positive budget; an expired deadline still fails fast with it.
MIN_BUDGET = 0.001

REF_FIELDS = {"_id": 0, "id": 1, "seq": 1, "role": 1, "timestamp": 1, "archived": 1}
NEWEST_FIRST = [("timestamp", DESCENDING), ("seq", DESCENDING)]
OLDEST_FIRST = [("timestamp", pymongo.ASCENDING), ("seq", pymongo.ASCENDING)]
RECENT_NEWEST_FIRST = [("timestamp", DESCENDING), ("session_id", DESCENDING), ("seq", DESCENDING)]


_SESSION_EVENT_TYPES = [int(t) for t in erasure.SESSION_EVENT_TYPES]

# Conflict retries between replicas pause a random time up to this bound, growing per attempt.
CONFLICT_BACKOFF_INITIAL = 0.004
CONFLICT_BACKOFF_MAX = 0.2
# An abort runs after its caller may have given up: it has a budget of its own.
ABORT_BUDGET = 2.0


async def _claim(db: AsyncDatabase, s: AsyncClientSession, tenant: str) -> None:
    """A transaction's first statement: write the tenant's counter document, so two replicas'
    writers of one tenant conflict here, before either has done any work (the one that
    holds it commits; the other backs off and retries). Raises the server's WriteConflict.
    A tenant without a counter yet claims nothing: its first writers meet on the counter's
    insert (a duplicate key, retried by the caller)."""
    await db[EVENT_LOG].update_one({"tenant": tenant}, {"$inc": {"claims": 1}}, session=s)


# Sessions whose transaction is being aborted in the background (strong references).
_RETIRING: set[asyncio.Task] = set()


async def _abort_and_end(session: AsyncClientSession) -> None:
    try:
        with pymongo.timeout(ABORT_BUDGET):
            await session.abort_transaction()
    except PyMongoError:
        pass  # unreachable server: it reaps the transaction at its lifetime limit
    finally:
        await session.end_session()


async def _release(session: AsyncClientSession, orphans: OrphanReaper, *, server_aborted: bool) -> None:
    """End a transaction's session. One still in its transaction (it failed, or its caller's
    deadline passed or it was cancelled) is aborted and ended by a task of its own, in a fresh
    context (the caller's pymongo.timeout may be spent) and under its own budget: the server
    forgets the transaction now, and the caller answers without waiting for that. Unless the
    server aborted it itself (a conflict), the session is not pooled again and the reaper may
    kill it later: an abort that never arrived (a hung server) leaves no lock behind."""
    if not session.in_transaction:
        await session.end_session()
        return
    if not server_aborted:
        orphans.abandon(session)
    task = asyncio.get_running_loop().create_task(_abort_and_end(session), context=contextvars.Context())
    _RETIRING.add(task)
    task.add_done_callback(_RETIRING.discard)


async def _backoff(attempt: int, left: float, error: PyMongoError) -> None:
    """Pause before a conflict retry, or raise `error` when the pause would pass the deadline."""
    pause = random.uniform(0, min(CONFLICT_BACKOFF_INITIAL * 2**attempt, CONFLICT_BACKOFF_MAX))  # noqa: S311
    log.debug(
        "mongodb_transaction_retry", attempt=attempt, code=getattr(error, "code", None), pause_ms=round(pause * 1000)
    )
    if pause >= left:
        raise error
    await asyncio.sleep(pause)


async def _touch(
    db: AsyncDatabase, s: AsyncClientSession | None, tenant: str, session_ids: Sequence[str], now: int
) -> None:
    """A write keyed by these sessions: their last write (retention's idle) is now, never earlier."""
    if session_ids:
        await db[SESSIONS].update_many(
            {"tenant": tenant, "session_id": {"$in": list(session_ids)}, "last_activity": {"$lt": now}},
            {"$set": {"last_activity": now}},
            session=s,
        )


async def _write_redacted(
    db: AsyncDatabase, s: AsyncClientSession, tenant: str, docs: Sequence[dict[str, Any]]
) -> None:
    """Rewrite event documents (seq, type, payload) as erasure.redacted_payload leaves them, owner unstamped."""
    if docs:
        await db[EVENTS].bulk_write(
            [
                UpdateOne(
                    {"tenant": tenant, "seq": d["seq"]},
                    {"$set": {"payload": erasure.redacted_payload(EventType(d["type"]), d["payload"]), "user_id": ""}},
                )
                for d in docs
            ],
            ordered=False,
            session=s,
        )


def _first_result_message(data: dict[str, Any]) -> Message:
    """A message of an idempotent append's first result (its to_dict()), sized as stored."""
    message = Message.from_dict(data)
    message.stored_bytes = len(bson.encode(data))
    return message


def _doc_to_ref(doc: dict[str, Any]) -> Message:
    return Message(
        role=doc["role"], timestamp=doc["timestamp"], id=doc["id"], seq=doc["seq"], archived=bool(doc["archived"])
    )


def _message_to_doc(tenant: str, session_id: str, msg: Message) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "tenant": tenant,
        "session_id": session_id,
        "seq": msg.seq,
        "id": msg.id,
        "role": msg.role,
        "content": msg.content,
        "timestamp": msg.timestamp,
        "archived": msg.archived,
        **msg.body(),
    }
    # An absent kind is a missing field, so {kind: {$nin: [...]}} keeps it and
    # {kind: {$in: [...]}} never matches it; "" is a real kind and is stored as "".
    if msg.kind is not None:
        doc["kind"] = msg.kind
    # Only a string platform is filterable (as in SQLite); a top-level copy keeps an
    # array-valued metadata.platform from matching by element.
    if msg.platform is not None:
        doc["platform"] = msg.platform
    return doc


def _kind_filter(kinds: Sequence[str], exclude_kinds: Sequence[str]) -> dict[str, Any]:
    condition: dict[str, Any] = {}
    if kinds:
        condition["$in"] = list(kinds)
    if exclude_kinds:
        # $nin matches documents without the field: a message without a kind is never excluded.
        condition["$nin"] = list(exclude_kinds)
    return {"kind": condition} if condition else {}


# -- query shapes (module level so tests can explain() exactly what the store runs) --
def history_filter(tenant: str, session_id: str) -> dict[str, Any]:
    """GetHistory, sorted NEWEST_FIRST: served by messages_history walked backwards."""
    return {"tenant": tenant, "session_id": session_id, "archived": False}


def range_filter(tenant: str, query: RangeQuery) -> dict[str, Any]:
    """Ranges and full-history pages, sorted OLDEST_FIRST: served by messages_range."""
    where: dict[str, Any] = {"tenant": tenant, "session_id": query.session_id}
    timestamp: dict[str, int] = {}
    if query.from_ts is not None:
        timestamp["$gte"] = query.from_ts
    if query.to_ts is not None and query.to_ts < INT64_MAX:
        # `< to_ts + 1`, not `<= to_ts`: identical for integer timestamps, and SecantusDB
        # 0.7.0b3 drops the boundary of a `$lte` on a compound-index field that is not last.
        timestamp["$lt"] = query.to_ts + 1
    if query.after is not None:
        # (timestamp, seq) > after, written so the timestamp bound stays an index bound.
        timestamp["$gte"] = max(timestamp.get("$gte", query.after.timestamp), query.after.timestamp)
        where["$nor"] = [{"timestamp": query.after.timestamp, "seq": {"$lte": query.after.seq}}]
    if timestamp:
        where["timestamp"] = timestamp
    if query.roles:
        where["role"] = {"$in": list(query.roles)}
    where.update(_kind_filter((), query.exclude_kinds))
    return where


def recent_filter(tenant: str, query: RecentQuery) -> dict[str, Any]:
    """GetRecentAcrossSessions, sorted RECENT_NEWEST_FIRST: served by messages_recent(_platform).

    Every filter is part of the query, so the limit counts only matches: the result is
    exactly min(limit, matches) however selective the filters are.
    """
    where: dict[str, Any] = {"tenant": tenant, "archived": False}
    if query.platform is not None:
        where["platform"] = query.platform
    if query.since_ts is not None:
        where["timestamp"] = {"$gte": query.since_ts}
    if query.roles:
        where["role"] = {"$in": list(query.roles)}
    sessions: dict[str, Any] = {}
    if query.exclude_session_ids:
        sessions["$nin"] = list(query.exclude_session_ids)
    if query.session_ids is not None:
        sessions["$in"] = list(query.session_ids)
    if sessions:
        where["session_id"] = sessions
    where.update(_kind_filter(query.kinds, query.exclude_kinds))
    return where


def sessions_index(where: SessionFilter) -> str:
    """The index ListSessions walks in session_id order (hinted: the listed-condition's $or
    otherwise leaves some servers' planners scanning the collection)."""
    if where.user_id and where.agent_id:
        return "sessions_agent_user"
    if where.user_id or where.agent_id:
        return "sessions_user" if where.user_id else "sessions_agent"
    return "sessions_labels" if where.labels else "sessions_id"


def sessions_filter(tenant: str, after_session_id: str | None, where: SessionFilter) -> dict[str, Any]:
    """ListSessions, sorted by session_id, on the index `sessions_index` names."""
    query: dict[str, Any] = {
        "tenant": tenant,
        "session_id": {"$gt": after_session_id or ""},
        # memoryd.domain.sessions.listed
        "$or": [{"message_count": {"$gt": 0}}, {"attributed": True}],
    }
    if where.user_id:
        query["user_id"] = where.user_id
    if where.agent_id:
        query["agent_id"] = where.agent_id
    pairs = sessions.label_pairs(where.labels)
    if pairs:
        query["label_pairs"] = pairs[0]
        if pairs[1:]:
            query["$and"] = [{"label_pairs": pair} for pair in pairs[1:]]
    activity: dict[str, int] = {}  # SessionFilter.matches_activity
    if where.active_since is not None:
        activity["$gte"] = where.active_since
    if where.active_before is not None:
        activity["$lt"] = where.active_before
    if activity:
        query["last_activity"] = activity
    return query


def idle_sessions_filter(
    tenant: str, idle_before: int, after: tuple[int, str] | None, *, unarchived: bool
) -> dict[str, Any]:
    """Retention's walk of idle sessions, sorted by (last_activity, session_id): a range of
    sessions_activity (hinted)."""
    activity: dict[str, int] = {"$lt": idle_before}
    query: dict[str, Any] = {
        "tenant": tenant,
        "last_activity": activity,
        "$or": [{"message_count": {"$gt": 0}}, {"attributed": True}],  # memoryd.domain.sessions.listed
        "retention_label": None,  # null or missing: the session has no retention label
    }
    if after is not None:
        # (last_activity, session_id) > after, written so the activity bound stays an index bound.
        activity["$gte"] = after[0]
        query["$nor"] = [{"last_activity": after[0], "session_id": {"$lte": after[1]}}]
    if unarchived:
        query["unarchived_count"] = {"$gt": 0}
    return query


def retention_labelled_filter(tenant: str, after: tuple[str, str] | None) -> dict[str, Any]:
    """Sessions carrying the retention label, sorted by (retention_label, session_id): a range
    of sessions_retention (hinted); `$gte ""` matches strings only, never null."""
    value: dict[str, str] = {"$gte": after[0] if after else ""}
    query: dict[str, Any] = {"tenant": tenant, "retention_label": value}
    if after is not None:
        query["$nor"] = [{"retention_label": after[0], "session_id": {"$lte": after[1]}}]
    return query


def metadata_prefix_filter(tenant: str, prefix: str, after: tuple[str, str] | None) -> dict[str, Any]:
    """ListMetadata by prefix, sorted by (namespace, key): a range of metadata_id (hinted,
    as the $nor of a resumed page otherwise leaves some planners scanning)."""
    namespace: dict[str, str] = {"$gte": max(prefix, after[0]) if after else prefix}
    upper = prefixes.upper_bound(prefix)
    if upper is not None:
        namespace["$lt"] = upper
    query: dict[str, Any] = {"tenant": tenant, "namespace": namespace}
    if after is not None:
        # (namespace, key) > after, written so the namespace bound stays an index bound.
        query["$nor"] = [{"namespace": after[0], "key": {"$lte": after[1]}}]
    return query


def _doc_to_session(doc: dict[str, Any], size: int = 0) -> SessionInfo:
    return SessionInfo(
        doc["session_id"],
        doc.get("message_count", 0),
        doc.get("unarchived_count", 0),
        doc.get("last_activity", 0),
        session_doc_attributes(doc),
        size,
        _session_doc_owner(doc),
    )


def _session_doc_owner(doc: Mapping[str, Any]) -> str | None:
    """The session's owner (sessions "Ownership"): its `owner` field, None when it has none;
    a document written before owners were kept apart has no such field: its user_id, else
    the tenant's (what the SQLite store's migration gives such rows)."""
    return doc["owner"] if "owner" in doc else doc.get("user_id", "")


def _attributes_fields(attributes: SessionAttributes) -> dict[str, Any]:
    return {
        "user_id": attributes.user_id,
        "agent_id": attributes.agent_id,
        "label_pairs": attributes.label_pairs(),
        "attributed": bool(attributes),
        # The retention label's value in a field of its own: label_pairs is multikey, so an
        # index on it cannot order the retention walk by value.
        "retention_label": attributes.labels.get(RETENTION_LABEL),
    }


def _write_concern(value: str) -> WriteConcern:
    return WriteConcern(w=int(value) if value.isdigit() else value)


def _is_duplicate_key(exc: PyMongoError) -> bool:
    if isinstance(exc, BulkWriteError):
        return any(e.get("code") == 11000 for e in exc.details.get("writeErrors", []))
    return isinstance(exc, OperationFailure) and exc.code == 11000


class MongoStore(Store):
    def __init__(
        self,
        uri: str,
        database: str = "memoryd",
        *,
        write_concern: str = "majority",
        timeout_ms: int = 5000,
        bulk_timeout_ms: int = 60000,
    ) -> None:
        """`timeout_ms` bounds every call; `bulk_timeout_ms` bounds the calls that may
        touch a whole session or tenant (trim, replace, delete, clear, compaction)."""
        super().__init__()
        self._uri = uri
        self._database = database
        self._write_concern = _write_concern(write_concern)
        self._timeout = timeout_ms / 1000
        self._bulk_timeout = max(bulk_timeout_ms, timeout_ms) / 1000
        self._timeout_ms = timeout_ms
        self._client: AsyncMongoClient | None = None
        self._db: AsyncDatabase | None = None
        # Locks of tenants with a write in flight; idle ones are dropped with their last user.
        self._tenant_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._orphans = OrphanReaper()

    # -- plumbing ----------------------------------------------------------
    @property
    def db(self) -> AsyncDatabase:
        if self._db is None:
            raise StorageUnavailable("the MongoDB store is not open")
        return self._db

    @staticmethod
    def _budget(timeout: float) -> float:
        """Seconds a call may take: its timeout, cut to the caller's remaining deadline."""
        return max(min(timeout, deadline.remaining(timeout)), MIN_BUDGET)

    async def _read(self, job: Callable[[AsyncDatabase], Awaitable[T]]) -> T:
        db = self.db
        with pymongo.timeout(self._budget(self._timeout)), translated_errors():
            return await job(db)

    async def _transaction(
        self, tenant: str, job: Callable[[AsyncDatabase, AsyncClientSession], Awaitable[T]], *, bulk: bool = False
    ) -> T:
        """Run `job` in one transaction; `job` may run more than once (conflict retries).

        Every mutation of a tenant bumps that tenant's event counter, so two of them always
        conflict. Writers of one tenant in this process therefore take turns (as SQLite's
        single writer does); writers in other replicas meet as transaction conflicts. Each
        transaction's first statement claims the tenant's counter document (`_claim`), so a
        conflict between replicas surfaces at that statement, before any work, and the
        loser retries with jittered backoff (`_run_transaction`) instead of redoing its
        whole transaction only to conflict again at commit.

        The whole call, queueing, conflict retries and commit included, is bounded by the
        call's timeout cut to the caller's deadline; every statement carries the remaining
        budget as maxTimeMS and the commit as maxCommitTimeMS, and a transaction that fails
        or outlives its caller (deadline passed, task cancelled) is aborted on the server
        under a budget of its own, so it never holds its locks until the server reaps it.
        """
        db = self.db
        timeout = self._budget(self._bulk_timeout if bulk else self._timeout)
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        lock = self._tenant_locks.get(tenant)
        if lock is None:
            lock = self._tenant_locks[tenant] = asyncio.Lock()
        try:
            async with asyncio.timeout(timeout):
                await lock.acquire()
        except TimeoutError:
            raise StorageUnavailable("MongoDB: writes of this tenant are queued beyond the timeout") from None
        try:
            for attempt in range(1, DUPLICATE_RETRIES + 1):
                try:
                    with translated_errors():
                        return await self._run_transaction(db, tenant, job, until)
                except PyMongoError as exc:
                    if attempt < DUPLICATE_RETRIES and _is_duplicate_key(exc):
                        continue
                    raise
            raise AssertionError("unreachable")
        finally:
            lock.release()

    async def _run_transaction(
        self,
        db: AsyncDatabase,
        tenant: str,
        job: Callable[[AsyncDatabase, AsyncClientSession], Awaitable[T]],
        until: float,
    ) -> T:
        """`with_transaction`'s loop, bounded by `until` (loop time) instead of two minutes.

        TransientTransactionError (a WriteConflict with another replica, a transaction the
        server aborted) runs the transaction again, in a new session, after a jittered,
        growing pause; an UnknownTransactionCommitResult retries the commit. Past `until`
        the last error is raised (pymongo's timeout errors read as StorageUnavailable).
        Conflicts that last STALL_S make the reaper look for a dead replica's transaction."""
        loop = asyncio.get_running_loop()
        attempt = 0
        conflicts_since: float | None = None
        while True:
            left = until - loop.time()
            if left <= 0:
                raise pymongo.errors.ExecutionTimeout("MongoDB: the transaction ran past its deadline")
            if conflicts_since is not None and loop.time() - conflicts_since > STALL_S:
                self._orphans.reap()  # a dead replica's transaction may hold the tenant
            session = db.client.start_session()
            server_aborted = False
            try:
                await self._orphans.register(session, left)
                with pymongo.timeout(left):
                    await session.start_transaction(
                        read_concern=ReadConcern("snapshot"),
                        write_concern=self._write_concern,
                        max_commit_time_ms=max(int(left * 1000), 1),
                    )
                    try:
                        await _claim(db, session, tenant)
                        result = await job(db, session)
                        while True:
                            try:
                                await session.commit_transaction()
                                return result
                            except PyMongoError as exc:
                                unknown = exc.has_error_label("UnknownTransactionCommitResult")
                                retry_commit = unknown and not isinstance(exc, pymongo.errors.ExecutionTimeout)
                                if not (retry_commit and loop.time() < until):
                                    raise
                    except PyMongoError as exc:
                        if not exc.has_error_label("TransientTransactionError"):
                            raise
                        attempt += 1
                        conflicts_since = conflicts_since or loop.time()
                        # A server's answer (a WriteConflict) ended the transaction there; a
                        # network error (labelled transient too) may have left it open.
                        server_aborted, error = isinstance(exc, OperationFailure), exc
            finally:
                await _release(session, self._orphans, server_aborted=server_aborted)
            await _backoff(attempt, until - loop.time(), error)

    async def _write(
        self, tenant: str, job: Callable[[AsyncDatabase, AsyncClientSession], Awaitable[T]], *, bulk: bool = False
    ) -> T:
        result = await self._transaction(tenant, job, bulk=bulk)
        self.notifier.notify()
        return result

    # -- lifecycle -----------------------------------------------------------
    async def open(self) -> None:
        if self._client is not None:
            return
        # The client belongs to the running event loop, so it is created here, not in __init__.
        try:
            client: AsyncMongoClient = AsyncMongoClient(
                self._uri,
                appname="memoryd",
                w=self._write_concern.document.get("w", "majority"),
                serverSelectionTimeoutMS=self._timeout_ms,
                connectTimeoutMS=self._timeout_ms,
            )
        except ConfigurationError as exc:
            raise FailedPrecondition(f"MongoDB configuration: {exc}", reason="MONGODB_BAD_CONFIGURATION") from exc
        try:
            with translated_errors():
                with pymongo.timeout(self._timeout):
                    hello = await client.admin.command("hello")
                if not hello.get("setName") and hello.get("msg") != "isdbgrid":
                    raise FailedPrecondition(REPLICA_SET_REQUIRED, reason="MONGODB_NOT_A_REPLICA_SET")
                db = client[self._database]
                with pymongo.timeout(self._bulk_timeout):
                    await self._create_schema(db)
                await self._orphans.start(db)
        except BaseException:
            await client.close()
            raise
        self._client, self._db = client, db
        # The URI may carry credentials: never logged.
        log.info("mongodb_store_open", database=self._database, replica_set=hello.get("setName", ""))

    @staticmethod
    async def _create_schema(db: AsyncDatabase) -> None:
        # Collections exist before any transaction writes to them (required before MongoDB 4.4,
        # and inside cross-shard transactions still).
        existing = set(await db.list_collection_names())
        for name, indexes in INDEXES.items():
            if name not in existing:
                try:
                    await db.create_collection(name)
                except CollectionInvalid:
                    pass  # another replica created it first
                except OperationFailure as exc:
                    if exc.code != 48:  # NamespaceExists
                        raise
            for index in indexes:
                try:
                    await db[name].create_indexes([index])
                except OperationFailure as exc:
                    # An operator changed this index on purpose (e.g. dropped `unique` to shard).
                    if exc.code not in (85, 86):  # IndexOptionsConflict, IndexKeySpecsConflict
                        raise
                    log.warning("mongodb_index_differs", collection=name, index=index.document["name"])

    async def close(self) -> None:
        if self._client is not None:
            await self._orphans.stop()
        client, self._client, self._db = self._client, None, None
        if client is not None:
            await client.close()

    async def ping(self) -> None:
        await self._read(lambda db: db.command("ping"))

    async def server_secret(self, name: str, candidate: str) -> str:
        record = {"tenant": SYSTEM_TENANT, "namespace": SERVER_NAMESPACE, "key": name}

        async def read(db: AsyncDatabase) -> str:
            for _ in range(DUPLICATE_RETRIES):
                try:
                    # Two replicas may insert at once: the unique index keeps one, both read it.
                    await db[METADATA].update_one(
                        record, {"$setOnInsert": {"data": {"value": candidate}, "update_time": 0}}, upsert=True
                    )
                    break
                except PyMongoError as exc:
                    if not _is_duplicate_key(exc):
                        raise
            doc = await db[METADATA].find_one(record, {"_id": 0, "data": 1})
            assert doc is not None  # written above, in this transaction
            return doc["data"]["value"]

        return await self._read(read)

    # -- shared transaction steps ---------------------------------------------
    @staticmethod
    async def _append_events(
        db: AsyncDatabase,
        s: AsyncClientSession,
        tenant: str,
        drafts: Sequence[EventDraft],
        now: int,
        owners: dict[str, str] | None = None,
        *,
        touch: bool = True,
    ) -> list[Event]:
        """As SqliteStore._append_events (`touch`: an import writes each session's last write
        as exported)."""
        if not drafts:
            return []
        counter = await db[EVENT_LOG].find_one_and_update(
            {"tenant": tenant},
            {"$inc": {"last_seq": len(drafts)}, "$setOnInsert": {"compacted_through": 0}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
            projection={"_id": 0, "last_seq": 1},
            session=s,
        )
        assert counter is not None  # upserted: the document after
        # Each event carries its session's owner, read in this transaction unless the caller
        # already holds it (an append's session update returns it).
        sessions = [sid for sid in store_rules.event_sessions(drafts) if owners is None or sid not in owners]
        owners = dict(owners or {})
        if sessions:
            async for d in db[SESSIONS].find(
                {"tenant": tenant, "session_id": {"$in": sessions}},
                {"_id": 0, "session_id": 1, "user_id": 1},
                session=s,
            ):
                owners[d["session_id"]] = d.get("user_id", "")
        events = store_rules.numbered_events(tenant, drafts, counter["last_seq"], now, owners)
        if touch:
            await _touch(db, s, tenant, active_sessions(drafts), now)
        await db[EVENTS].insert_many(
            [
                {
                    "tenant": tenant,
                    "seq": e.seq,
                    "time": e.time,
                    "session_id": e.session_id,
                    "type": int(e.type),
                    "payload": e.payload,
                    "user_id": e.user_id,
                }
                for e in events
            ],
            ordered=True,
            session=s,
        )
        return events

    @staticmethod
    async def _insert_messages(
        db: AsyncDatabase, s: AsyncClientSession, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> tuple[list[Message], str]:
        """The stored messages, and the session's owner (for the events' stamp)."""
        count = len(messages)
        # The session document is every append's counter: it reserves the seqs and raises
        # the timestamp high-water mark in one update, so the server stamp (Store.append)
        # is serialized with the seqs even across replicas (they conflict on this document).
        counter = await db[SESSIONS].find_one_and_update(
            {"tenant": tenant, "session_id": session_id},
            {
                "$inc": {"last_seq": count, "message_count": count, "unarchived_count": count},
                "$set": {"last_activity": now},
                "$max": {"last_timestamp": store_rules.server_timestamp(messages, now)},
                # A write naming no user (a claim set the owner before) makes a new or
                # ownerless session the tenant's (sessions.owner_after).
                "$setOnInsert": {"owner": TENANT},
            },
            upsert=True,
            return_document=ReturnDocument.AFTER,
            projection={"_id": 0, "last_seq": 1, "last_timestamp": 1, "user_id": 1, "owner": 1},
            session=s,
        )
        assert counter is not None  # upserted
        if "owner" in counter and counter["owner"] is None:
            await db[SESSIONS].update_one(
                {"tenant": tenant, "session_id": session_id}, {"$set": {"owner": TENANT}}, session=s
            )
        stored = store_rules.stored_messages(messages, counter["last_seq"], counter["last_timestamp"])
        if stored:
            await db[MESSAGES].insert_many(
                [_message_to_doc(tenant, session_id, m) for m in stored], ordered=True, session=s
            )
        return stored, counter.get("user_id", "")

    @staticmethod
    async def _delete_where(
        db: AsyncDatabase, s: AsyncClientSession, tenant: str, session_id: str, condition: dict[str, Any], now: int
    ) -> list[Message]:
        where = {"tenant": tenant, "session_id": session_id, **condition}
        cursor = db[MESSAGES].find(where, REF_FIELDS, session=s).sort(OLDEST_FIRST)
        removed = [_doc_to_ref(d) async for d in cursor]
        if removed:
            await db[MESSAGES].delete_many(where, session=s)
            total, unarchived = store_rules.removal_counts(removed)
            await db[SESSIONS].update_one(
                {"tenant": tenant, "session_id": session_id},
                {"$inc": {"message_count": -total, "unarchived_count": -unarchived}, "$set": {"last_activity": now}},
                session=s,
            )
        return removed

    @staticmethod
    async def _store_attributes(
        db: AsyncDatabase, s: AsyncClientSession, tenant: str, session_id: str, after: SessionAttributes, now: int
    ) -> None:
        """Store `after` as the session's attributes (the document exists)."""
        await db[SESSIONS].update_one(
            {"tenant": tenant, "session_id": session_id},
            {"$set": {**_attributes_fields(after), "last_activity": now}},
            session=s,
        )

    async def _update_attributes(
        self, db: AsyncDatabase, s: AsyncClientSession, tenant: str, session_id: str, update: SessionUpdate, now: int
    ) -> tuple[SessionInfo, list[EventDraft]]:
        doc = await db[SESSIONS].find_one_and_update(
            {"tenant": tenant, "session_id": session_id},
            # A new session has no owner until updated_session gives it one (below).
            {"$setOnInsert": {"last_seq": 0, "message_count": 0, "unarchived_count": 0, "last_activity": now,
                              "owner": None}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
            projection={"_id": 0},
            session=s,
        )  # fmt: skip
        assert doc is not None  # upserted: the document after
        current = _doc_to_session(doc)
        info, drafts = store_rules.updated_session(current, update, now)
        if drafts:
            await self._store_attributes(db, s, tenant, session_id, info.attributes, now)
        if info.owner != current.owner:
            await self._store_owner(db, s, tenant, session_id, info.owner)
        return info, drafts

    @staticmethod
    async def _store_owner(
        db: AsyncDatabase, s: AsyncClientSession, tenant: str, session_id: str, owner: str | None
    ) -> None:
        await db[SESSIONS].update_one(
            {"tenant": tenant, "session_id": session_id}, {"$set": {"owner": owner}}, session=s
        )

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
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> AppendResult:
            if idempotency_key:
                first = await db[IDEMPOTENCY].find_one(
                    {"tenant": tenant, "session_id": session_id, "key": idempotency_key}, session=s
                )
                if first:
                    return AppendResult([_first_result_message(d) for d in first["result"]], deduplicated=True)
            drafts: list[EventDraft] = []
            if attributes:
                drafts += (await self._update_attributes(db, s, tenant, session_id, attributes, now))[1]
            stored, owner = await self._insert_messages(db, s, tenant, session_id, messages, now)
            if idempotency_key:
                await db[IDEMPOTENCY].insert_one(
                    {
                        "tenant": tenant,
                        "session_id": session_id,
                        "key": idempotency_key,
                        "result": [m.to_dict() for m in stored],
                        "created": now,
                    },
                    session=s,
                )
            events = await self._append_events(
                db, s, tenant, drafts + ev.appended(session_id, stored), now, {session_id: owner}
            )
            return AppendResult(stored, event_seq=events[-1].seq if events else 0)

        return await self._write(tenant, tx)

    async def history(self, tenant: str, session_id: str, limit: int, max_bytes: int | None = None) -> list[Message]:
        if limit <= 0:
            return []

        async def read(db: AsyncDatabase) -> list[Message]:
            return (await self._newest_unarchived(db, None, tenant, session_id, limit, max_bytes))[::-1]

        return await self._read(read)

    @staticmethod
    async def _newest_unarchived(
        db: AsyncDatabase, s: AsyncClientSession | None, tenant: str, session_id: str, limit: int, max_bytes: int | None
    ) -> list[Message]:
        """GetHistory's selection, newest first, byte-bounded; PopMessages removes these."""
        cursor = (
            raw_collection(db, MESSAGES)
            .find(history_filter(tenant, session_id), MESSAGE_FIELDS, session=s)
            .sort(NEWEST_FIRST)
        )
        return await read_sized(cursor, limit, max_bytes, sized_message)

    async def range(self, tenant: str, query: RangeQuery) -> list[Message]:
        if query.limit <= 0:
            return []

        async def read(db: AsyncDatabase) -> list[Message]:
            cursor = raw_collection(db, MESSAGES).find(range_filter(tenant, query), MESSAGE_FIELDS).sort(OLDEST_FIRST)
            return await read_sized(cursor, query.limit, query.max_bytes, sized_message)

        return await self._read(read)

    async def context_windows(self, tenant: str, requests: Sequence[WindowRequest]) -> list[Window]:
        # Every window of the call in one aggregate, nearly always (storage/mongo/windows.py):
        # SearchMemory reads a window of 1 around each of its best candidates (domain/recall.py,
        # adjacency) besides the hits' windows. Bounded by the call's deadline (`_read`).
        if not requests:
            return []
        return await self._read(lambda db: mongo_windows.read_windows(db, tenant, requests))

    async def recent_across_sessions(self, tenant: str, query: RecentQuery) -> list[SessionMessage]:
        if query.limit <= 0:
            return []

        def build(doc: dict[str, Any], size: int) -> SessionMessage:
            return SessionMessage(doc["session_id"], sized_message(doc, size))

        async def read(db: AsyncDatabase) -> list[SessionMessage]:
            cursor = (
                raw_collection(db, MESSAGES)
                .find(recent_filter(tenant, query), {**MESSAGE_FIELDS, "session_id": 1})
                .sort(RECENT_NEWEST_FIRST)
            )
            return (await read_sized(cursor, query.limit, query.max_bytes, build))[::-1]

        return await self._read(read)

    async def trim(
        self, tenant: str, session_id: str, keep_recent: int, now: int, guard: SessionGuard | None = None
    ) -> int:
        session = {"tenant": tenant, "session_id": session_id}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> int:
            if guard is not None:
                doc = await db[SESSIONS].find_one(session, {"_id": 0}, session=s)
                guard.check(_doc_to_session(doc) if doc is not None else None)
            # The newest unarchived message that is not kept; it and everything older is archived.
            boundary = await db[MESSAGES].find_one(
                {**session, "archived": False},
                {"_id": 0, "timestamp": 1, "seq": 1},
                sort=NEWEST_FIRST,
                skip=max(keep_recent, 0),
                session=s,
            )
            if boundary is None:
                return 0
            ts, seq = boundary["timestamp"], boundary["seq"]
            result = await db[MESSAGES].update_many(
                {
                    **session,
                    "archived": False,
                    "$or": [{"timestamp": {"$lt": ts}}, {"timestamp": ts, "seq": {"$lte": seq}}],
                },
                {"$set": {"archived": True}},
                session=s,
            )
            archived = result.modified_count
            if archived:
                await db[SESSIONS].update_one(
                    session, {"$inc": {"unarchived_count": -archived}, "$set": {"last_activity": now}}, session=s
                )
                await self._append_events(db, s, tenant, ev.trimmed(session_id, archived, keep_recent), now)
            return archived

        return await self._write(tenant, tx, bulk=True)

    async def replace_history(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> tuple[list[Message], list[Message]]:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> tuple[list[Message], list[Message]]:
            removed = await self._delete_where(db, s, tenant, session_id, {"archived": False}, now)
            stored = (await self._insert_messages(db, s, tenant, session_id, messages, now))[0] if messages else []
            await self._append_events(db, s, tenant, ev.replaced(session_id, removed, stored), now)
            return stored, removed

        return await self._write(tenant, tx, bulk=True)

    async def update_content(
        self, tenant: str, session_id: str, old_text: str, new_text: str, recent_limit: int, now: int
    ) -> list[Message]:
        session = {"tenant": tenant, "session_id": session_id}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> list[Message]:
            if recent_limit <= 0:
                return []
            cursor = (
                db[MESSAGES]
                .find(session, {**REF_FIELDS, "content": 1}, session=s)
                .sort(NEWEST_FIRST)
                .limit(recent_limit)
            )
            changed: list[Message] = []
            updates: list[UpdateOne] = []
            async for doc in cursor:
                rewritten = store_rules.rewritten(doc["content"], old_text, new_text)
                if rewritten is not None:
                    ref = _doc_to_ref(doc)
                    updates.append(UpdateOne({**session, "seq": ref.seq}, {"$set": {"content": rewritten}}))
                    changed.append(ref)
            if changed:
                await db[MESSAGES].bulk_write(updates, ordered=False, session=s)
                await db[SESSIONS].update_one(session, {"$set": {"last_activity": now}}, session=s)
                await self._append_events(db, s, tenant, ev.rewritten(session_id, changed), now)
            return changed

        return await self._write(tenant, tx)

    async def delete_in(
        self, tenant: str, session_id: str, field: str, values: Sequence[Any], now: int
    ) -> list[Message]:
        values = list(values)

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> list[Message]:
            removed: list[Message] = []
            for start in range(0, len(values), IN_CHUNK):
                chunk = values[start : start + IN_CHUNK]
                removed += await self._delete_where(db, s, tenant, session_id, {field: {"$in": chunk}}, now)
            await self._append_events(db, s, tenant, ev.deleted(session_id, removed), now)
            return removed

        return await self._write(tenant, tx, bulk=True)

    async def clear_session(self, tenant: str, session_id: str, clearing: Clearing, now: int) -> tuple[int, int]:
        selectors = [
            {name: value for name, value in (("namespace", namespace), ("key", key)) if value is not None}
            for namespace, key in store_rules.session_record_selectors(session_id, clearing.session_records)
        ]
        records_filter = {"tenant": tenant, "$or": selectors}
        session_filter = {"tenant": tenant, "session_id": session_id}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> tuple[int, int]:
            doc = await db[SESSIONS].find_one(session_filter, {"_id": 0}, session=s)
            if clearing.guard is not None:
                clearing.guard.check(_doc_to_session(doc) if doc is not None else None)
            removed: list[Message] | None = None
            if clearing.messages:
                removed = await self._delete_where(db, s, tenant, session_id, {}, now)
                await db[IDEMPOTENCY].delete_many(session_filter, session=s)
            records: list[tuple[str, str]] = []
            attributes = None
            after = SessionAttributes()
            if clearing.metadata:
                found = db[METADATA].find(records_filter, {"_id": 0, "namespace": 1, "key": 1}, session=s)
                records = [(d["namespace"], d["key"]) async for d in found]
                if records:
                    await db[METADATA].delete_many(records_filter, session=s)
            if doc is not None and (clearing.metadata or clearing.release_owner):
                session = _doc_to_session(doc)
                attributes = session.attributes
                after, owner = store_rules.cleared_attributes(session, clearing.release_owner)
                if after != attributes:
                    await self._store_attributes(db, s, tenant, session_id, after, now)
                if owner != session.owner or "owner" not in doc:
                    await self._store_owner(db, s, tenant, session_id, owner)
            if clearing.redact_events:
                erasable = {"$or": [{"user_id": {"$nin": ["", None]}}, {"type": {"$in": _SESSION_EVENT_TYPES}}]}
                fields = {"_id": 0, "seq": 1, "type": 1, "payload": 1}
                found = db[EVENTS].find({**session_filter, **erasable}, fields, session=s)
                await _write_redacted(db, s, tenant, [d async for d in found])
            drafts = store_rules.session_cleared_events(
                session_id, removed, clearing.targets, records, attributes, after
            )
            await self._append_events(db, s, tenant, drafts, now)
            return len(removed or ()), len(records)

        return await self._write(tenant, tx, bulk=True)

    async def clear_all(self, tenant: str, clearing: Clearing, now: int) -> tuple[int, int]:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> tuple[int, int]:
            removed: dict[str, list[Message]] = {}
            removed_metadata = 0
            if clearing.messages:
                found = db[MESSAGES].find({"tenant": tenant}, {**REF_FIELDS, "session_id": 1}, session=s)
                removed = store_rules.by_session([(doc["session_id"], _doc_to_ref(doc)) async for doc in found])
                await db[MESSAGES].delete_many({"tenant": tenant}, session=s)
                await db[IDEMPOTENCY].delete_many({"tenant": tenant}, session=s)
                # Sessions keep last_seq so seqs are never reused.
                await db[SESSIONS].update_many(
                    {"tenant": tenant},
                    {"$set": {"message_count": 0, "unarchived_count": 0, "last_activity": now}},
                    session=s,
                )
            if clearing.metadata:
                removed_metadata = (await db[METADATA].delete_many({"tenant": tenant}, session=s)).deleted_count
                # Every session's attributes go too, but for its owner: a user's session keeps
                # its user_id, which is its owner (sessions.owned_attributes); all-cleared
                # (with its targets) reports it.
                cleared = _attributes_fields(SessionAttributes())
                await db[SESSIONS].update_many(
                    {"tenant": tenant, "attributed": True, "user_id": {"$in": ["", None]}}, {"$set": cleared}, session=s
                )
                kept = {name: value for name, value in cleared.items() if name not in ("user_id", "attributed")}
                await db[SESSIONS].update_many(
                    {"tenant": tenant, "attributed": True, "user_id": {"$nin": ["", None]}}, {"$set": kept}, session=s
                )
            await self._append_events(db, s, tenant, ev.all_cleared(removed, clearing.targets), now)
            return sum(map(len, removed.values())), removed_metadata

        return await self._write(tenant, tx, bulk=True)

    async def list_sessions(
        self,
        tenant: str,
        after_session_id: str | None,
        limit: int,
        where: SessionFilter = SessionFilter(),
        max_bytes: int | None = None,
    ) -> list[SessionInfo]:
        if limit <= 0:
            return []

        async def read(db: AsyncDatabase) -> list[SessionInfo]:
            cursor = (
                raw_collection(db, SESSIONS)
                .find(sessions_filter(tenant, after_session_id, where), {"_id": 0})
                .sort("session_id", pymongo.ASCENDING)
                .hint(sessions_index(where))
            )
            return await read_sized(cursor, limit, max_bytes, _doc_to_session)

        return await self._read(read)

    async def session_totals(self, tenant: str) -> SessionTotals:
        pipeline: list[dict[str, Any]] = [
            {"$match": {"tenant": tenant, "$or": [{"message_count": {"$gt": 0}}, {"attributed": True}]}},
            {
                "$group": {
                    "_id": None,
                    "sessions": {"$sum": 1},
                    "messages": {"$sum": "$message_count"},
                    "unarchived": {"$sum": "$unarchived_count"},
                    # a label value is never empty: a string is true here, null and missing false
                    "labelled": {"$sum": {"$cond": [{"$ifNull": ["$retention_label", False]}, 1, 0]}},
                }
            },
        ]

        async def read(db: AsyncDatabase) -> SessionTotals:
            rows = await (await db[SESSIONS].aggregate(pipeline)).to_list()
            if not rows:
                return SessionTotals()
            row = rows[0]
            return SessionTotals(row["sessions"], row["messages"], row["unarchived"], row["labelled"])

        return await self._read(read)

    async def idle_sessions(
        self, tenant: str, idle_before: int, after: tuple[int, str] | None, limit: int, *, unarchived: bool
    ) -> list[SessionInfo]:
        where = idle_sessions_filter(tenant, idle_before, after, unarchived=unarchived)
        order = [("last_activity", pymongo.ASCENDING), ("session_id", pymongo.ASCENDING)]
        return await self._sessions(where, order, "sessions_activity", limit)

    async def touch_sessions(self, tenant: str, session_ids: Sequence[str], now: int) -> None:
        ids = sorted(set(session_ids))
        if ids:
            await self._write(tenant, lambda db, s: _touch(db, s, tenant, ids, now))

    async def retention_labelled(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[SessionInfo]:
        where = retention_labelled_filter(tenant, after)
        order = [("retention_label", pymongo.ASCENDING), ("session_id", pymongo.ASCENDING)]
        return await self._sessions(where, order, "sessions_retention", limit)

    async def _sessions(self, where: dict[str, Any], order: list, index: str, limit: int) -> list[SessionInfo]:
        if limit <= 0:
            return []

        async def read(db: AsyncDatabase) -> list[SessionInfo]:
            cursor = db[SESSIONS].find(where, {"_id": 0}).sort(order).hint(index).limit(limit)
            return [_doc_to_session(doc) async for doc in cursor]

        return await self._read(read)

    async def pop_newest(
        self, tenant: str, session_id: str, n: int, now: int, max_bytes: int | None = None
    ) -> tuple[list[Message], bool]:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> tuple[list[Message], bool]:
            newest = await self._newest_unarchived(db, s, tenant, session_id, n, max_bytes)
            popped, truncated = store_rules.popped(newest, n, max_bytes)
            if popped:
                seqs = [m.seq for m in popped]
                removed = await self._delete_where(db, s, tenant, session_id, {"seq": {"$in": seqs}}, now)
                await self._append_events(db, s, tenant, ev.deleted(session_id, removed), now)
            return popped, truncated

        return await self._write(tenant, tx)

    async def get_session(self, tenant: str, session_id: str) -> SessionInfo | None:
        async def read(db: AsyncDatabase) -> SessionInfo | None:
            doc = await db[SESSIONS].find_one({"tenant": tenant, "session_id": session_id}, {"_id": 0})
            return _doc_to_session(doc) if doc else None

        return await self._read(read)

    async def update_session(self, tenant: str, session_id: str, update: SessionUpdate, now: int) -> SessionInfo:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> SessionInfo:
            info, drafts = await self._update_attributes(db, s, tenant, session_id, update, now)
            await self._append_events(db, s, tenant, drafts, now)
            return info

        return await self._write(tenant, tx)

    # -- metadata ------------------------------------------------------------
    async def save_metadata(
        self, tenant: str, namespace: str, key: str, data: dict[str, Any], now: int
    ) -> MetadataEntry:
        record = {"tenant": tenant, "namespace": namespace, "key": key}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> MetadataEntry:
            # A replacement (not $set) stores `data` verbatim, whatever its field names.
            await db[METADATA].replace_one(record, {**record, "data": data, "update_time": now}, upsert=True, session=s)
            await self._append_events(db, s, tenant, ev.metadata_changed(namespace, key, deleted=False), now)
            return MetadataEntry(namespace, key, data, now)

        return await self._write(tenant, tx)

    async def get_metadata(self, tenant: str, namespace: str, key: str) -> MetadataEntry | None:
        async def read(db: AsyncDatabase) -> MetadataEntry | None:
            doc = await db[METADATA].find_one({"tenant": tenant, "namespace": namespace, "key": key})
            return MetadataEntry(namespace, key, doc["data"], doc["update_time"]) if doc else None

        return await self._read(read)

    async def list_metadata(
        self, tenant: str, namespace: str, after_key: str | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]:
        if limit <= 0:
            return []

        def build(doc: dict[str, Any], size: int) -> MetadataEntry:
            return MetadataEntry(namespace, doc["key"], doc["data"], doc["update_time"], size)

        async def read(db: AsyncDatabase) -> list[MetadataEntry]:
            cursor = (
                raw_collection(db, METADATA)
                .find({"tenant": tenant, "namespace": namespace, "key": {"$gt": after_key or ""}})
                .sort("key", pymongo.ASCENDING)
            )
            return await read_sized(cursor, limit, max_bytes, build)

        return await self._read(read)

    async def delete_metadata(self, tenant: str, namespace: str, key: str, now: int) -> bool:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> bool:
            result = await db[METADATA].delete_one({"tenant": tenant, "namespace": namespace, "key": key}, session=s)
            if result.deleted_count:
                await self._append_events(db, s, tenant, ev.metadata_changed(namespace, key, deleted=True), now)
            return bool(result.deleted_count)

        return await self._write(tenant, tx)

    async def list_metadata_by_prefix(
        self, tenant: str, prefix: str, after: tuple[str, str] | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]:
        if limit <= 0:
            return []

        def build(doc: dict[str, Any], size: int) -> MetadataEntry:
            return MetadataEntry(doc["namespace"], doc["key"], doc["data"], doc["update_time"], size)

        async def read(db: AsyncDatabase) -> list[MetadataEntry]:
            cursor = (
                raw_collection(db, METADATA)
                .find(metadata_prefix_filter(tenant, prefix, after))
                .sort([("namespace", pymongo.ASCENDING), ("key", pymongo.ASCENDING)])
                .hint("metadata_id")
            )
            return await read_sized(cursor, limit, max_bytes, build)

        return await self._read(read)

    async def list_namespaces(self, tenant: str, prefix: str, after: str | None, limit: int) -> list[str]:
        async def read(db: AsyncDatabase) -> list[str]:
            walk = prefixes.namespace_walk(prefix, after, limit)
            try:
                bound, inclusive = next(walk)
                while True:
                    doc = await db[METADATA].find_one(
                        {"tenant": tenant, "namespace": {"$gte" if inclusive else "$gt": bound}},
                        {"_id": 0, "namespace": 1},
                        sort=[("namespace", pymongo.ASCENDING)],
                    )
                    bound, inclusive = walk.send(doc["namespace"] if doc else None)
            except StopIteration as page:
                return page.value

        return await self._read(read)

    # -- events --------------------------------------------------------------
    async def publish(self, tenant: str, draft: EventDraft, now: int) -> Event:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> Event:
            return (await self._append_events(db, s, tenant, [draft], now))[0]

        return await self._write(tenant, tx)

    async def redact_events(self, tenant: str, redaction: UserRedaction, limit: int) -> int:
        selects: list[dict[str, Any]] = []
        for prefix in redaction.namespace_prefixes:
            upper = prefixes.upper_bound(prefix)
            selects.append({"type": 8, "payload.namespace": {"$gte": prefix, **({"$lt": upper} if upper else {})}})
        selects += [{"type": 8, "payload.namespace": name} for name in redaction.namespaces]
        selects += [{"type": 8, "payload.namespace": n, "payload.key": k} for n, k in redaction.records]
        selects += [{"type": 13, "payload.scope": scope} for scope in redaction.entry_scopes]
        if redaction.memory_user:
            memory = [int(t) for t in erasure.MEMORY_EVENT_TYPES]
            selects.append({"type": {"$in": memory}, "payload.user_id": redaction.memory_user})

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> int:
            docs: dict[int, dict[str, Any]] = {}
            for select in selects:
                if len(docs) >= limit:
                    break
                found = (
                    db[EVENTS]
                    .find({"tenant": tenant, **select}, {"_id": 0, "seq": 1, "type": 1, "payload": 1}, session=s)
                    .limit(limit - len(docs))
                )
                docs.update({d["seq"]: d async for d in found})
            await _write_redacted(db, s, tenant, list(docs.values()))
            return len(docs)

        return await self._write(tenant, tx)

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
        if limit <= 0:
            return []
        seq: dict[str, int] = {"$gt": after_seq}
        if through_seq is not None:
            seq["$lte"] = through_seq
        query: dict[str, Any] = {"tenant": tenant, "seq": seq}
        if types:
            query["type"] = {"$in": [int(t) for t in types]}

        async def read(db: AsyncDatabase) -> list[Event]:
            cursor = db[EVENTS].find(query, {"_id": 0}).sort("seq", pymongo.ASCENDING).limit(limit)
            return [
                Event(
                    d["seq"],
                    d["time"],
                    tenant,
                    d["session_id"],
                    EventType(d["type"]),
                    d["payload"],
                    d.get("user_id", ""),
                )
                async for d in cursor
            ]

        return await self._read(read)

    async def event_bounds(self, tenant: str) -> tuple[int, int]:
        async def read(db: AsyncDatabase) -> tuple[int, int]:
            doc = await db[EVENT_LOG].find_one({"tenant": tenant})
            return (doc.get("compacted_through", 0), doc["last_seq"]) if doc else (0, 0)

        return await self._read(read)

    async def event_tenants(self) -> list[str]:
        return sorted(await self._read(lambda db: db[EVENT_LOG].distinct("tenant")))

    async def compact_events(self, *, older_than: int | None, keep_last: int | None) -> int:
        tenants = await self.event_tenants()
        removed = 0
        for tenant in tenants:
            removed += await self._transaction(
                tenant,
                functools.partial(self._compact_tenant, tenant=tenant, older_than=older_than, keep_last=keep_last),
                bulk=True,
            )
        return removed

    @staticmethod
    async def _compact_tenant(
        db: AsyncDatabase, s: AsyncClientSession, tenant: str, older_than: int | None, keep_last: int | None
    ) -> int:
        # Raising the floor and deleting below it commit together: a reader never sees a
        # gap without also seeing the new floor.
        log_doc = await db[EVENT_LOG].find_one({"tenant": tenant}, session=s)
        if log_doc is None:
            return 0
        floor = log_doc.get("compacted_through", 0)
        aged = None
        if older_than is not None:
            aged = await db[EVENTS].find_one(
                {"tenant": tenant, "time": {"$lt": older_than}},
                {"_id": 0, "seq": 1},
                sort=[("seq", DESCENDING)],
                session=s,
            )
        new_floor = store_rules.compaction_floor(floor, log_doc["last_seq"], keep_last, aged and aged["seq"])
        if new_floor <= floor:
            return 0
        result = await db[EVENTS].delete_many({"tenant": tenant, "seq": {"$lte": new_floor}}, session=s)
        await db[EVENT_LOG].update_one({"tenant": tenant}, {"$set": {"compacted_through": new_floor}}, session=s)
        return result.deleted_count

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

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> bool:
            # Each guarded record is among `writes`: a writer that read the same guard value
            # conflicts on it, and its retried transaction sees the new value and fails the guard.
            for check in checks:
                doc = await db[METADATA].find_one(
                    {"tenant": tenant, "namespace": check.namespace, "key": check.key}, {"_id": 0, "data": 1}, session=s
                )
                if not check.holds(None if doc is None else doc["data"]):
                    return False
            drafts: list[EventDraft] = []
            for write in writes:
                record = {"tenant": tenant, "namespace": write.namespace, "key": write.key}
                if write.data is None:
                    if not (await db[METADATA].delete_one(record, session=s)).deleted_count:
                        continue
                else:
                    await db[METADATA].replace_one(
                        record, {**record, "data": write.data, "update_time": now}, upsert=True, session=s
                    )
                drafts += ev.metadata_changed(write.namespace, write.key, deleted=write.data is None)
            await self._append_events(db, s, tenant, [*drafts, *events], now)
            return True

        return await self._write(tenant, tx)

    async def write_metadata_counted(
        self, tenant: str, write: MetadataWrite, capacity: int, replace: bool, events: Sequence[EventDraft], now: int
    ) -> CountedOutcome:
        record = {"tenant": tenant, "namespace": write.namespace, "key": write.key}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> CountedOutcome:
            # A snapshot transaction: writers in this process take turns (_transaction), and
            # one in another replica conflicts on the event log and runs this again.
            doc = await db[METADATA].find_one(record, {"_id": 0, "data": 1}, session=s)
            previous = None if doc is None else doc["data"]
            count = await db[METADATA].count_documents({"tenant": tenant, "namespace": write.namespace}, session=s)
            written, after = store_rules.counted_write(previous, count, write.data is not None, capacity, replace)
            if not written:
                return CountedOutcome(False, previous, count)
            if write.data is None:
                await db[METADATA].delete_one(record, session=s)
            else:
                await db[METADATA].replace_one(
                    record, {**record, "data": write.data, "update_time": now}, upsert=True, session=s
                )
            drafts = ev.metadata_changed(write.namespace, write.key, deleted=write.data is None)
            await self._append_events(db, s, tenant, [*drafts, *events], now)
            return CountedOutcome(True, previous, after)

        return await self._write(tenant, tx)

    async def messages_by_seq(
        self, tenant: str, session_id: str, from_seq: int, to_seq: int, limit: int, *, newest_first: bool = False
    ) -> list[Message]:
        if limit <= 0:
            return []
        where = {"tenant": tenant, "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        order = DESCENDING if newest_first else pymongo.ASCENDING

        async def read(db: AsyncDatabase) -> list[Message]:
            cursor = db[MESSAGES].find(where, MESSAGE_FIELDS).sort("seq", order).limit(limit)
            messages = [doc_to_message(d) async for d in cursor]
            return messages[::-1] if newest_first else messages

        return await self._read(read)

    async def count_by_seq(self, tenant: str, session_id: str, from_seq: int, to_seq: int) -> tuple[int, int]:
        pipeline: list[dict[str, Any]] = [
            {"$match": {"tenant": tenant, "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}},
            {"$group": {"_id": None, "stored": {"$sum": 1}, "archived": {"$sum": {"$cond": ["$archived", 1, 0]}}}},
        ]

        async def read(db: AsyncDatabase) -> tuple[int, int]:
            rows = await (await db[MESSAGES].aggregate(pipeline)).to_list()
            return (rows[0]["stored"], rows[0]["archived"]) if rows else (0, 0)

        return await self._read(read)

    async def last_seq(self, tenant: str, session_id: str) -> int:
        async def read(db: AsyncDatabase) -> int:
            doc = await db[SESSIONS].find_one({"tenant": tenant, "session_id": session_id}, {"_id": 0, "last_seq": 1})
            return doc["last_seq"] if doc else 0

        return await self._read(read)

    # -- export and import (domain/transfer.py) ---------------------------------
    def snapshot(self) -> MongoSnapshot:
        return MongoSnapshot(self.db)

    async def import_session(self, tenant: str, record: SessionRecord, now: int) -> bool:
        sid = record.session_id
        where = {"tenant": tenant, "session_id": sid}

        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> bool:
            doc = await db[SESSIONS].find_one_and_update(
                where,
                {"$setOnInsert": {"last_seq": 0, "message_count": 0, "unarchived_count": 0, "last_activity": 0,
                                  "last_timestamp": 0, "owner": None}},  # a new row: no owner yet
                upsert=True,
                return_document=ReturnDocument.AFTER,
                projection={"_id": 0},
                session=s,
            )  # fmt: skip
            assert doc is not None  # upserted: the document after
            current = _doc_to_session(doc)
            attributes, drafts = store_rules.imported_attributes(sid, current.attributes, record.attributes)
            marks = {
                "last_seq": max(doc.get("last_seq", 0), record.last_seq),
                "last_timestamp": max(doc.get("last_timestamp", 0), record.last_timestamp),
                "last_activity": max(current.last_activity, record.last_activity),
            }
            changed = any(doc.get(name, 0) != value for name, value in marks.items())
            if drafts or changed:
                await db[SESSIONS].update_one(where, {"$set": {**_attributes_fields(attributes), **marks}}, session=s)
            owner = store_rules.imported_owner(sid, current.owner, attributes, record)
            if owner != current.owner:
                await self._store_owner(db, s, tenant, sid, owner)
            await self._append_events(db, s, tenant, drafts, now)
            return bool(drafts or changed or owner != current.owner)

        return await self._write(tenant, tx)

    async def import_messages(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> list[Message]:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> list[Message]:
            new = await _importable(db, s, tenant, session_id, messages)
            if not new:
                return []
            docs = [_message_to_doc(tenant, session_id, m) for m in new]  # archived as exported
            await db[MESSAGES].insert_many(docs, ordered=True, session=s)
            total, unarchived = store_rules.message_counts(new)
            await db[SESSIONS].update_one(
                {"tenant": tenant, "session_id": session_id},
                {
                    "$inc": {"message_count": total, "unarchived_count": unarchived},
                    "$max": {"last_seq": max(m.seq for m in new), "last_timestamp": max(m.timestamp for m in new)},
                    "$setOnInsert": {"last_activity": 0},
                },
                upsert=True,
                session=s,
            )
            await self._append_events(db, s, tenant, ev.appended(session_id, new), now)
            return new

        return await self._write(tenant, tx, bulk=True)

    async def importable_messages(self, tenant: str, session_id: str, messages: Sequence[Message]) -> list[Message]:
        return await self._read(lambda db: _importable(db, None, tenant, session_id, messages))

    async def import_metadata(self, tenant: str, records: Sequence[MetadataEntry], now: int) -> int:
        async def tx(db: AsyncDatabase, s: AsyncClientSession) -> int:
            drafts: list[EventDraft] = []
            for record in records:
                key = {"tenant": tenant, "namespace": record.namespace, "key": record.key}
                held = await db[METADATA].find_one(key, {"_id": 0, "data": 1, "update_time": 1}, session=s)
                if held is not None and held["data"] == record.data and held["update_time"] == record.update_time:
                    continue
                await db[METADATA].replace_one(
                    key, {**key, "data": record.data, "update_time": record.update_time}, upsert=True, session=s
                )
                drafts += ev.metadata_changed(record.namespace, record.key, deleted=False)
            await self._append_events(db, s, tenant, drafts, now, touch=False)
            return len(drafts)

        return await self._write(tenant, tx, bulk=True)


async def _importable(
    db: AsyncDatabase, s: AsyncClientSession | None, tenant: str, session_id: str, messages: Sequence[Message]
) -> list[Message]:
    """store_rules.importable of `messages`, given where the target holds their ids and seqs."""
    held_ids: dict[str, tuple[str, int]] = {}
    held_seqs: dict[int, str] = {}
    projection = {"_id": 0, "id": 1, "session_id": 1, "seq": 1}
    for start in range(0, len(messages), IN_CHUNK):
        chunk = messages[start : start + IN_CHUNK]
        async for doc in db[MESSAGES].find(
            {"tenant": tenant, "id": {"$in": [m.id for m in chunk]}}, projection, session=s
        ):
            held_ids[doc["id"]] = (doc["session_id"], doc["seq"])
        where = {"tenant": tenant, "session_id": session_id, "seq": {"$in": [m.seq for m in chunk]}}
        async for doc in db[MESSAGES].find(where, projection, session=s):
            held_seqs[doc["seq"]] = doc["id"]
    return store_rules.importable(session_id, messages, held_ids, held_seqs)
