"""The storage contract every adapter (SQLite, MongoDB) fulfils.

Adapters own queries and transactions; the domain owns defaults, limits and paging, and
`memoryd.domain.store_rules` holds what every adapter's transactions compute.
Every mutation writes the events built by `memoryd.domain.events` in the same
transaction as the change, and wakes local watchers through `notifier` after commit.
The conformance suite in tests/conformance runs the same cases against every adapter.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from memoryd.domain.erasure import UserRedaction
from memoryd.domain.models import (
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
from memoryd.domain.notifier import EventNotifier
from memoryd.domain.sessions import SessionFilter, SessionTotals, SessionUpdate
from memoryd.domain.windows import Window, WindowRequest, read_windows


def check_event_filter(types: Sequence[EventType], through_seq: int | None) -> None:
    """A typed event read must say where it ends (see Store.read_events)."""
    if types and through_seq is None:
        raise ValueError("read_events: a type filter needs through_seq")


class SessionChanged(Exception):
    """A guarded session clear found the session other than its guard expects (another owner,
    a write within the retention window); the transaction wrote nothing."""


class SnapshotLost(Exception):
    """The store could not hold a snapshot for as long as it was read (Store.snapshot); the
    message says what to do."""


@dataclass(frozen=True, slots=True)
class SessionGuard:
    """What a clear of one session checks inside its transaction before it removes anything,
    so that a decision taken on an earlier read never applies to a session that changed since:
    the owner is still `user_id` (ForgetUser), the last write is before `idle_before` (retention)."""

    user_id: str | None = None
    idle_before: int | None = None

    def check(self, session: SessionInfo | None) -> None:
        """Raise SessionChanged unless `session` (None: no row) is as the guard expects."""
        if session is None:
            raise SessionChanged("the session has no row")
        if self.user_id is not None and session.attributes.user_id != self.user_id:
            raise SessionChanged("the session has another owner")
        if self.idle_before is not None and session.last_activity >= self.idle_before:
            raise SessionChanged("the session was written to within the window")


@dataclass(frozen=True, slots=True)
class Clearing:
    """What ClearSession / ClearAll remove from the store (vectors are cleared elsewhere)."""

    messages: bool
    metadata: bool
    # The request's targets by name, as the session-cleared / all-cleared events report them.
    targets: Sequence[str]
    # ClearSession: memoryd's own per-session records, as (namespace, key), or (namespace,
    # None) for a whole namespace (summaries).
    session_records: Sequence[tuple[str, str | None]] = ()
    # A session clear checks it first (SessionGuard.check); None: unconditional.
    guard: SessionGuard | None = None
    # Forgetting the session (ForgetUser, retention): its owner goes too, so that its id
    # may be written anew by anyone (store_rules.cleared_attributes); every other clear
    # keeps the owner (domain/sessions.py "Ownership").
    release_owner: bool = False
    # Forgetting (ForgetUser, retention): the session's earlier events are redacted in the
    # same transaction (domain/erasure.py: those erasure.session_event_erasable selects).
    redact_events: bool = False


@dataclass(frozen=True, slots=True)
class MetadataWrite:
    """One record of a guarded metadata write: an upsert, or a delete when data is None."""

    namespace: str
    key: str
    data: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class MetadataGuard:
    """Holds when the record exists and data[field] == value, or (value None) when it is absent."""

    namespace: str
    key: str
    field: str
    value: int | str | None

    def holds(self, data: dict[str, Any] | None) -> bool:
        """Whether the guard holds for the record's current data (None: no record)."""
        if data is None or self.value is None:
            return data is None and self.value is None
        return data.get(self.field) == self.value


@dataclass(frozen=True, slots=True)
class CountedOutcome:
    """What Store.write_metadata_counted did (store_rules.counted_write decided it)."""

    written: bool  # the write was applied (with its events)
    previous: dict[str, Any] | None  # the record under the key before the call
    count: int  # records in the namespace after the call


class Snapshot(abc.ABC):
    """A read view of the whole store at one instant (Store.snapshot): what `memoryd export`
    reads (domain/transfer.py). Every read returns rows in its key order after `after`."""

    @abc.abstractmethod
    async def tenants(self) -> list[str]:
        """Every tenant that has written (it has an event log), sorted; not SYSTEM_TENANT."""

    @abc.abstractmethod
    async def position(self, tenant: str) -> int:
        """The tenant's newest event seq as this view sees it (0: no events)."""

    @abc.abstractmethod
    async def sessions(self, tenant: str, after: str | None, limit: int) -> list[SessionRecord]:
        """Every session row (listed or not: an emptied session still holds its marks), by id."""

    @abc.abstractmethod
    async def messages(self, tenant: str, session_id: str, after_seq: int, limit: int, max_bytes: int) -> list[Message]:
        """The session's messages whole, archived included, by seq; byte-bounded like Store's reads."""

    @abc.abstractmethod
    async def metadata(
        self, tenant: str, after: tuple[str, str] | None, limit: int, max_bytes: int
    ) -> list[MetadataEntry]:
        """Every record of the tenant (memoryd's own: summaries, cursors, entries, too), by
        (namespace, key); byte-bounded."""


class Store(abc.ABC):
    """Messages, metadata and the event log of every tenant."""

    def __init__(self) -> None:
        self.notifier = EventNotifier()

    # -- lifecycle -------------------------------------------------------
    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and create schema/indexes idempotently."""

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def ping(self) -> None:
        """Raise StorageUnavailable when the store cannot serve."""

    @abc.abstractmethod
    async def server_secret(self, name: str, candidate: str) -> str:
        """The deployment-wide value `name`, stored as `candidate` if it has none yet.

        Idempotent across replicas and restarts: every caller gets the first stored value.
        Kept as a metadata record of SYSTEM_TENANT in SERVER_NAMESPACE.
        """

    # -- messages --------------------------------------------------------
    @abc.abstractmethod
    async def append(
        self,
        tenant: str,
        session_id: str,
        messages: Sequence[Message],
        idempotency_key: str | None,
        now: int,
        attributes: SessionUpdate | None = None,
    ) -> AppendResult:
        """Store messages atomically, assigning id and seq (and timestamp when 0).

        A server-assigned timestamp is max(now, the session's newest assigned timestamp), read
        and raised in the same transaction as the seqs (store_rules.server_timestamp): for callers that
        let the server stamp, (timestamp, seq) order is insertion order, whatever the clocks
        of the replicas that wrote.

        `attributes` are merged into the session's (memoryd.domain.sessions.apply) in the
        same transaction, after the idempotency check: a refused merge stores nothing.
        """

    # Reads with a byte bound (`max_bytes`, RangeQuery.max_bytes, RecentQuery.max_bytes) read
    # rows one at a time in their read order and stop after the row that takes the bytes read
    # past the bound (paging.ReadBudget), setting each row's `stored_bytes`; the domain cuts
    # the page (paging.fit). They never load a whole `limit` of large rows.
    @abc.abstractmethod
    async def history(self, tenant: str, session_id: str, limit: int, max_bytes: int | None = None) -> list[Message]:
        """Newest `limit` unarchived messages by (timestamp, seq), oldest first (read newest first)."""

    @abc.abstractmethod
    async def range(self, tenant: str, query: RangeQuery) -> list[Message]:
        """Messages in (timestamp, seq) order after `query.after`, archived included."""

    async def context_windows(self, tenant: str, requests: Sequence[WindowRequest]) -> list[Window]:
        """The context window of each request (domain/windows.py), in order. This default reads
        them with `range`; an adapter may answer in fewer reads with the same result."""

        async def read(query: RangeQuery) -> list[Message]:
            return await self.range(tenant, query)

        return await read_windows(read, requests)

    @abc.abstractmethod
    async def recent_across_sessions(self, tenant: str, query: RecentQuery) -> list[SessionMessage]:
        """Newest `limit` matches by (timestamp, session_id, seq), oldest first (read newest first)."""

    @abc.abstractmethod
    async def trim(
        self, tenant: str, session_id: str, keep_recent: int, now: int, guard: SessionGuard | None = None
    ) -> int:
        """Archive all but the newest `keep_recent` unarchived messages; returns how many.
        With `guard`, as Clearing.guard: SessionChanged and nothing written when it fails."""

    @abc.abstractmethod
    async def replace_history(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> tuple[list[Message], list[Message]]:
        """Swap the unarchived history; returns (stored, removed)."""

    @abc.abstractmethod
    async def update_content(
        self, tenant: str, session_id: str, old_text: str, new_text: str, recent_limit: int, now: int
    ) -> list[Message]:
        """Rewrite within the newest `recent_limit` messages; returns the changed messages."""

    async def delete_by_timestamps(
        self, tenant: str, session_id: str, timestamps: Sequence[int], now: int
    ) -> list[Message]:
        """Delete one bounded batch; returns the removed messages (content not loaded)."""
        return await self.delete_in(tenant, session_id, "timestamp", timestamps, now)

    async def delete_by_ids(self, tenant: str, session_id: str, ids: Sequence[str], now: int) -> list[Message]:
        return await self.delete_in(tenant, session_id, "id", ids, now)

    @abc.abstractmethod
    async def delete_in(
        self, tenant: str, session_id: str, field: str, values: Sequence[Any], now: int
    ) -> list[Message]:
        """Delete the session's messages whose `field` ("timestamp" or "id") is among `values`,
        with a deletion's events, in one transaction; returns them (content not loaded)."""

    @abc.abstractmethod
    async def clear_session(self, tenant: str, session_id: str, clearing: Clearing, now: int) -> tuple[int, int]:
        """Returns (messages removed, metadata records removed).

        A session's metadata is every record keyed by the session id, plus
        `clearing.session_records` (store_rules.session_record_selectors). With
        `clearing.guard`, the transaction first reads the session's row and raises
        SessionChanged (writing nothing) when the guard does not hold.
        """

    @abc.abstractmethod
    async def clear_all(self, tenant: str, clearing: Clearing, now: int) -> tuple[int, int]: ...

    @abc.abstractmethod
    async def list_sessions(
        self,
        tenant: str,
        after_session_id: str | None,
        limit: int,
        where: SessionFilter = SessionFilter(),
        max_bytes: int | None = None,
    ) -> list[SessionInfo]:
        """Listed sessions (memoryd.domain.sessions.listed) matching `where`, by session id,
        byte-bounded (each SessionInfo's stored_bytes: its attributes)."""

    @abc.abstractmethod
    async def session_totals(self, tenant: str) -> SessionTotals:
        """The tenant's listed sessions (sessions.listed) added up from their counters, in one
        read of the session records (no message is read)."""

    # -- retention (domain/retention.py) ---------------------------------------
    @abc.abstractmethod
    async def idle_sessions(
        self, tenant: str, idle_before: int, after: tuple[int, str] | None, limit: int, *, unarchived: bool
    ) -> list[SessionInfo]:
        """Listed sessions (sessions.listed) last written before `idle_before` that do not carry
        the retention label (retention.RETENTION_LABEL; with `unarchived`, only those holding
        unarchived messages), by (last_activity, session_id) after `after`: an index walk of
        the idle sessions only."""

    @abc.abstractmethod
    async def touch_sessions(self, tenant: str, session_ids: Sequence[str], now: int) -> None:
        """Record a write keyed by these sessions that the store does not hold (caller vectors):
        each existing one's last write becomes `now` (never earlier), as the stores do inside
        their transactions for the events retention.active_sessions names."""

    @abc.abstractmethod
    async def retention_labelled(self, tenant: str, after: tuple[str, str] | None, limit: int) -> list[SessionInfo]:
        """Sessions carrying the retention label, whatever its value, by (value, session_id)
        after `after`: an index walk of those sessions only."""

    # -- session attributes and pops (added with the framework integrations) --
    @abc.abstractmethod
    async def pop_newest(
        self, tenant: str, session_id: str, n: int, now: int, max_bytes: int | None = None
    ) -> tuple[list[Message], bool]:
        """Delete the newest of the messages `history(n)` would return that paging.fit keeps
        within `max_bytes`, with a deletion's events, in one transaction; returns them whole,
        oldest first, and whether the bound kept fewer than `n` of those there were."""

    @abc.abstractmethod
    async def get_session(self, tenant: str, session_id: str) -> SessionInfo | None:
        """The session's row (listed or not), None when it was never written."""

    @abc.abstractmethod
    async def update_session(self, tenant: str, session_id: str, update: SessionUpdate, now: int) -> SessionInfo:
        """Merge `update` (memoryd.domain.sessions.apply), creating the session if needed,
        with a session-updated event when the attributes changed."""

    # -- metadata --------------------------------------------------------
    @abc.abstractmethod
    async def save_metadata(
        self, tenant: str, namespace: str, key: str, data: dict[str, Any], now: int
    ) -> MetadataEntry: ...

    @abc.abstractmethod
    async def get_metadata(self, tenant: str, namespace: str, key: str) -> MetadataEntry | None: ...

    @abc.abstractmethod
    async def list_metadata(
        self, tenant: str, namespace: str, after_key: str | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]: ...

    @abc.abstractmethod
    async def delete_metadata(self, tenant: str, namespace: str, key: str, now: int) -> bool: ...

    @abc.abstractmethod
    async def list_metadata_by_prefix(
        self, tenant: str, prefix: str, after: tuple[str, str] | None, limit: int, max_bytes: int | None = None
    ) -> list[MetadataEntry]:
        """Records of namespaces starting with `prefix`, after (namespace, key), in that order.
        Bounded by memoryd.domain.prefixes.upper_bound so the scan stays in the index range."""

    @abc.abstractmethod
    async def list_namespaces(self, tenant: str, prefix: str, after: str | None, limit: int) -> list[str]:
        """Distinct namespaces starting with `prefix` after `after`, ascending: the store drives
        memoryd.domain.prefixes.namespace_walk with one index seek per namespace, never a scan
        of their records."""

    # -- events ----------------------------------------------------------
    @abc.abstractmethod
    async def publish(self, tenant: str, draft: EventDraft, now: int) -> Event:
        """Append a caller-originated event on its own."""

    @abc.abstractmethod
    async def read_events(
        self,
        tenant: str,
        after_seq: int,
        limit: int,
        *,
        types: Sequence[EventType] = (),
        through_seq: int | None = None,
    ) -> list[Event]:
        """Events with seq > after_seq in seq order; with `types`, only those types and
        never past `through_seq` (the filter may skip many rows, so the scan needs an end)."""

    @abc.abstractmethod
    async def event_bounds(self, tenant: str) -> tuple[int, int]:
        """(compacted_through, latest_seq): seqs <= compacted_through are gone."""

    @abc.abstractmethod
    async def compact_events(self, *, older_than: int | None, keep_last: int | None) -> int:
        """Delete events by age and per-tenant count; returns events removed."""

    @abc.abstractmethod
    async def event_tenants(self) -> list[str]:
        """Every tenant that has an event log, sorted."""

    @abc.abstractmethod
    async def redact_events(self, tenant: str, redaction: UserRedaction, limit: int) -> int:
        """Redact in place (erasure.redacted) up to `limit` of the tenant-wide events that
        `redaction` matches, by index, in one transaction; returns how many (0: none is
        left, as a redacted event matches no redaction). Seqs and types stay."""

    # -- guarded metadata writes and seq reads (summaries, long-term entries) --
    # Added for SummaryService/EntryService; kept together at the end of the class.
    @abc.abstractmethod
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
        """Apply `writes` atomically, with a metadata-changed event per write and then
        `events`, only when `guard` and every one of `guards` hold (each read in the write's
        transaction: `MetadataGuard.holds`); otherwise write nothing and return False.

        Each guarded record must be among `writes` (a compare-and-set), so two writers
        that read the same guard value can never both commit (formation: an extraction's
        batch is guarded on the version of every fact it changes, so a caller's correction
        written meanwhile by another process fails it instead of being overwritten).
        """

    @abc.abstractmethod
    async def write_metadata_counted(
        self, tenant: str, write: MetadataWrite, capacity: int, replace: bool, events: Sequence[EventDraft], now: int
    ) -> CountedOutcome:
        """In one transaction: read the record under `write`'s key, count the records of its
        namespace, and apply `write` only as store_rules.counted_write allows (a new record
        only while the namespace holds fewer than `capacity`; over an existing one only with
        `replace`; a delete only of an existing one), with a metadata-changed event and then
        `events` when applied.

        Concurrent calls never fail for each other: each sees the one before it (the
        adapters serialize a tenant's writers), so a namespace written only this way never
        holds more than `capacity` records and one key is always one record (long-term
        entries, memoryd.domain.entries).
        """

    @abc.abstractmethod
    async def messages_by_seq(
        self, tenant: str, session_id: str, from_seq: int, to_seq: int, limit: int, *, newest_first: bool = False
    ) -> list[Message]:
        """Messages with from_seq <= seq <= to_seq, archived included, in seq order
        (the newest `limit` when newest_first, still returned oldest first)."""

    @abc.abstractmethod
    async def count_by_seq(self, tenant: str, session_id: str, from_seq: int, to_seq: int) -> tuple[int, int]:
        """(stored, archived) messages with from_seq <= seq <= to_seq."""

    @abc.abstractmethod
    async def last_seq(self, tenant: str, session_id: str) -> int:
        """The newest seq ever assigned in the session (0 when none); seqs are never reused."""

    # -- export and import (domain/transfer.py) ---------------------------------
    @abc.abstractmethod
    def snapshot(self) -> AbstractAsyncContextManager[Snapshot]:
        """`async with store.snapshot() as view`: reads of every tenant at one instant, however
        long they take (SQLite: one read transaction; MongoDB: a snapshot read session)."""

    @abc.abstractmethod
    async def import_session(self, tenant: str, record: SessionRecord, now: int) -> bool:
        """Create or update the session's row from an export (store_rules.imported_session: the
        marks and the last write only move forward, attributes merge, a different owner raises
        FailedPrecondition), with a session-updated event when its attributes changed; in one
        transaction. Returns whether anything changed."""

    @abc.abstractmethod
    async def import_messages(
        self, tenant: str, session_id: str, messages: Sequence[Message], now: int
    ) -> list[Message]:
        """Store exported messages as they are (ids, seqs, timestamps, archived, bodies) in one
        transaction, with a messages-appended event of those inserted: a message whose id the
        session already holds at its seq is skipped (an import run again), any other clash of
        id or seq raises store_rules.ImportConflict (nothing written). Counts follow; the
        session's last write does not move. Returns the messages inserted."""

    @abc.abstractmethod
    async def importable_messages(self, tenant: str, session_id: str, messages: Sequence[Message]) -> list[Message]:
        """What import_messages would insert now, read without writing: the same lookups and
        store_rules.importable (ImportConflict alike). `memoryd import --input FILE` asks it of
        every batch before it writes anything."""

    @abc.abstractmethod
    async def import_metadata(self, tenant: str, records: Sequence[MetadataEntry], now: int) -> int:
        """Write exported records as they are (their update_time too) in one transaction, with a
        metadata-changed event each; a record already holding that data and time is skipped.
        Returns how many were written."""
