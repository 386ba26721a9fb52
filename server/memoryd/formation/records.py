"""Formed facts, custom records and profiles, stored once for every adapter: metadata records
written with the Store's guarded (compare-and-set) write, so SQLite and MongoDB behave the same
(tests/conformance/test_formation_records.py runs these rules against both).

    "memoryd.facts/<user>"          key = fact id           -> one fact (sources = provenance)
    "memoryd.fact-sources/<session>" key = "<message id>\\t<fact id>" -> {"user": user}
    "memoryd.formation-progress/facts" key = session id     -> {"seq", "version", "event"}
    "memoryd.custom/<user>"         key = record id         -> one custom record (with its strategy)
    "memoryd.custom-sources/<session>" key = "<message id>\\t<record id>" -> {"user": user}
    "memoryd.formation-progress/custom/<strategy>" key = session id -> as the facts' progress
    "memoryd.profiles"              key = user id           -> one profile

Facts and custom records are both *sourced* records (a `Kind` says where each lives;
`SourcedRecords` reads and writes them the same way). The sources index answers "which records
came from this message" (forgetting: every deleted message id reaches its records). A record
and its index entries are always written in the same transaction (`sourced_writes`). The
progress record of a session (per custom strategy: its own) is the last seq whose messages
were given to extraction; every extraction writes it guarded on its `version`, in the
transaction of the records it formed, so a batch is stored once or not at all (a crash
between the model's answer and the write leaves the batch to do again, never half of it).

Record ids start with the inverted creation time, so key order is newest first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from memoryd.domain import events as ev
from memoryd.domain.models import EventDraft, EventType
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store

FACTS_NAMESPACE = "memoryd.facts/"
SOURCES_NAMESPACE = "memoryd.fact-sources/"
PROGRESS_NAMESPACE = "memoryd.formation-progress/facts"
CUSTOM_NAMESPACE = "memoryd.custom/"
CUSTOM_SOURCES_NAMESPACE = "memoryd.custom-sources/"
CUSTOM_PROGRESS_NAMESPACE = "memoryd.formation-progress/custom/"
PROFILES_NAMESPACE = "memoryd.profiles"
SEPARATOR = "\t"  # message ids never hold control characters (transport validation)
# A user's records read at most, for recall before extraction and for the profile.
MAX_FACTS_READ = 2000
_PAGE = 500


def facts_namespace(user_id: str) -> str:
    return FACTS_NAMESPACE + user_id


def sources_namespace(session_id: str) -> str:
    return SOURCES_NAMESPACE + session_id


def source_key(message_id: str, record_id: str) -> str:
    return message_id + SEPARATOR + record_id


def new_fact_id(create_time: int, *parts: object) -> str:
    inverted = (1 << 48) - 1 - max(0, create_time)
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=6).hexdigest()
    return f"{inverted:012x}{digest}"


@dataclass(frozen=True, slots=True)
class Kind:
    """Where one kind of sourced record lives: its records per user, its sources index per
    session, and its extraction progress (one namespace, or one per lane: a custom strategy)."""

    what: str  # the kind in memory events: "fact", "custom"
    records: str
    sources: str
    progress: str

    def progress_namespace(self, lane: str = "") -> str:
        return self.progress + lane


@dataclass(frozen=True, slots=True)
class Source:
    session_id: str
    message_id: str
    seq: int

    def record(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "message_id": self.message_id, "seq": self.seq}


def _sources(data: dict[str, Any]) -> tuple[Source, ...]:
    return tuple(Source(s["session_id"], s["message_id"], int(s.get("seq") or 0)) for s in data.get("sources") or ())


class Sourced(Protocol):
    """A record derived from messages: its provenance (`sources`) is indexed by message."""

    KIND: ClassVar[Kind]

    @property
    def id(self) -> str: ...

    @property
    def user_id(self) -> str: ...

    @property
    def sources(self) -> tuple[Source, ...]: ...

    @property
    def version(self) -> int: ...

    def record(self) -> dict[str, Any]: ...

    def changed(self, now: int, **values: Any) -> Self: ...


FACT_KIND = Kind("fact", FACTS_NAMESPACE, SOURCES_NAMESPACE, PROGRESS_NAMESPACE)
CUSTOM_KIND = Kind("custom", CUSTOM_NAMESPACE, CUSTOM_SOURCES_NAMESPACE, CUSTOM_PROGRESS_NAMESPACE)


@dataclass(frozen=True, slots=True)
class Fact:
    KIND: ClassVar[Kind] = FACT_KIND

    id: str
    user_id: str
    text: str
    category: str
    event_time: int
    keywords: tuple[str, ...]
    sources: tuple[Source, ...]
    create_time: int
    update_time: int
    valid_to: int = 0
    superseded_by: str = ""
    corrected: bool = False
    version: int = 1

    @property
    def current(self) -> bool:
        return not self.superseded_by

    def record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "category": self.category,
            "event_time": self.event_time,
            "keywords": list(self.keywords),
            "sources": [s.record() for s in self.sources],
            "create_time": self.create_time,
            "update_time": self.update_time,
            "valid_to": self.valid_to,
            "superseded_by": self.superseded_by,
            "corrected": self.corrected,
            "version": self.version,
        }

    @classmethod
    def from_record(cls, user_id: str, fact_id: str, data: dict[str, Any]) -> Fact:
        return cls(
            id=fact_id,
            user_id=user_id,
            text=data["text"],
            category=data.get("category", "other"),
            event_time=int(data.get("event_time") or 0),
            keywords=tuple(data.get("keywords") or ()),
            sources=_sources(data),
            create_time=int(data.get("create_time") or 0),
            update_time=int(data.get("update_time") or 0),
            valid_to=int(data.get("valid_to") or 0),
            superseded_by=data.get("superseded_by") or "",
            corrected=bool(data.get("corrected")),
            version=int(data.get("version") or 1),
        )

    def changed(self, now: int, **values: Any) -> Fact:
        return replace(self, update_time=now, version=self.version + 1, **values)


def canonical_json(value: Any) -> str:
    """One text per JSON value (sorted keys, no spaces): what "the same value" means."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class CustomRecord:
    """A record of a custom strategy: the caller's JSON value, kept as its canonical JSON text
    (any key a model may write is safe in every adapter; numbers keep their digits)."""

    KIND: ClassVar[Kind] = CUSTOM_KIND

    id: str
    user_id: str
    strategy: str
    value_json: str
    sources: tuple[Source, ...]
    create_time: int
    update_time: int
    version: int = 1

    @property
    def value(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.value_json)
        return loaded

    def record(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "value": self.value_json,
            "sources": [s.record() for s in self.sources],
            "create_time": self.create_time,
            "update_time": self.update_time,
            "version": self.version,
        }

    @classmethod
    def from_record(cls, user_id: str, record_id: str, data: dict[str, Any]) -> CustomRecord:
        return cls(
            id=record_id,
            user_id=user_id,
            strategy=data["strategy"],
            value_json=data["value"],
            sources=_sources(data),
            create_time=int(data.get("create_time") or 0),
            update_time=int(data.get("update_time") or 0),
            version=int(data.get("version") or 1),
        )

    def changed(self, now: int, **values: Any) -> CustomRecord:
        return replace(self, update_time=now, version=self.version + 1, **values)


@dataclass(frozen=True, slots=True)
class Profile:
    user_id: str
    text: str
    fact_ids: tuple[str, ...]
    update_time: int
    fingerprint: str = ""
    version: int = 1

    def record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "fact_ids": list(self.fact_ids),
            "update_time": self.update_time,
            "fingerprint": self.fingerprint,
            "version": self.version,
        }

    @classmethod
    def from_record(cls, user_id: str, data: dict[str, Any]) -> Profile:
        return cls(
            user_id,
            data["text"],
            tuple(data.get("fact_ids") or ()),
            int(data.get("update_time") or 0),
            data.get("fingerprint", ""),
            int(data.get("version") or 1),
        )


def memory_event(
    kind: EventType,
    what: str,
    record_id: str,
    user_id: str,
    session_id: str = "",
    *,
    superseded_by: str = "",
    reason: str = "",
) -> EventDraft:
    return ev.memory_changed(kind, what, record_id, user_id, session_id, superseded_by=superseded_by, reason=reason)


def sourced_writes(before: Sourced | None, after: Sourced | None) -> list[MetadataWrite]:
    """The record and sources-index writes that turn `before` into `after` (None: absent)."""
    rec = after or before
    assert rec is not None
    kind = rec.KIND
    old = {(s.session_id, s.message_id) for s in before.sources} if before else set()
    new = {(s.session_id, s.message_id) for s in after.sources} if after else set()
    writes = [MetadataWrite(kind.records + rec.user_id, rec.id, after.record() if after else None)]
    for session_id, message_id in sorted(new - old):
        writes.append(MetadataWrite(kind.sources + session_id, source_key(message_id, rec.id), {"user": rec.user_id}))
    for session_id, message_id in sorted(old - new):
        writes.append(MetadataWrite(kind.sources + session_id, source_key(message_id, rec.id), None))
    return writes


@dataclass(slots=True)
class Change:
    """Sourced records to write in one transaction (before -> after), guarded, with their
    events."""

    records: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    extra: list[MetadataWrite] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)

    def put(self, before: Sourced | None, after: Sourced | None) -> None:
        rec = after or before
        assert rec is not None
        first = self.records.get(rec.id, (before, after))[0]
        self.records[rec.id] = (first, after)

    def writes(self) -> list[MetadataWrite]:
        out: list[MetadataWrite] = []
        for before, after in self.records.values():
            if before is None and after is None:
                continue
            out += sourced_writes(before, after)
        return out + self.extra

    def guards(self) -> list[MetadataGuard]:
        """One guard per record the change writes: its version as read (`before`), or its
        absence (a new record). The write happens only while every one holds, so a record
        changed meanwhile by any process (a caller's UpdateFact or DeleteFact, another
        extraction) is never overwritten with what was derived from its old version: the
        batch is read and decided again."""
        out = []
        for before, after in self.records.values():
            rec = before or after
            if rec is None:
                continue
            version = before.version if before is not None else None
            out.append(MetadataGuard(rec.KIND.records + rec.user_id, rec.id, "version", version))
        return out


R = TypeVar("R", bound=Sourced)


class SourcedRecords(Generic[R]):
    """One kind of sourced record in the store: reads, the sources index, the progress of
    extraction per session (and lane), and the guarded writes."""

    def __init__(self, store: Store, kind: Kind, load: Callable[[str, str, dict[str, Any]], R]) -> None:
        self.store = store
        self.kind = kind
        self.load = load

    # -- reads -----------------------------------------------------------------
    async def get(self, tenant: str, user_id: str, record_id: str) -> R | None:
        entry = await self.store.get_metadata(tenant, self.kind.records + user_id, record_id)
        return self.load(user_id, record_id, entry.data) if entry else None

    async def all(self, tenant: str, user_id: str, keep: Callable[[R], bool] = lambda r: True) -> list[R]:
        """The user's records that `keep`, newest first, at most MAX_FACTS_READ read."""
        found, _ = await self.scan(tenant, user_id, None, MAX_FACTS_READ, keep)
        return found

    async def scan(
        self, tenant: str, user_id: str, after: str | None, size: int, keep: Callable[[R], bool] = lambda r: True
    ) -> tuple[list[R], str | None]:
        """Up to `size` records that `keep` after the key `after`, newest first; and the key to
        go on after (None: the last page). Reads at most MAX_FACTS_READ records for one page."""
        found: list[R] = []
        read = 0
        while read < MAX_FACTS_READ:
            rows = await self.store.list_metadata(tenant, self.kind.records + user_id, after, _PAGE)
            read += len(rows)
            for row in rows:
                rec = self.load(user_id, row.key, row.data)
                after = row.key
                if not keep(rec):
                    continue
                found.append(rec)
                if len(found) == size:
                    return found, after
            if len(rows) < _PAGE:
                return found, None
        return found, after

    async def by_message(self, tenant: str, session_id: str, message_id: str) -> list[tuple[str, str]]:
        """(user, record id) of the records with this message among their sources."""
        prefix = message_id + SEPARATOR
        found: list[tuple[str, str]] = []
        after = prefix[:-1] + chr(ord(SEPARATOR) - 1) + "\U0010ffff"  # just below every "<id>\t..." key
        while True:
            rows = await self.store.list_metadata(tenant, self.kind.sources + session_id, after, _PAGE)
            for row in rows:
                if not row.key.startswith(prefix):
                    return found
                found.append((row.data.get("user", ""), row.key[len(prefix) :]))
            if len(rows) < _PAGE:
                return found
            after = rows[-1].key

    async def sources_of_session(self, tenant: str, session_id: str) -> list[tuple[str, str, str]]:
        """(message id, user, record id) of every index entry of the session."""
        found: list[tuple[str, str, str]] = []
        after: str | None = None
        while True:
            rows = await self.store.list_metadata(tenant, self.kind.sources + session_id, after, _PAGE)
            for row in rows:
                message_id, _, record_id = row.key.partition(SEPARATOR)
                found.append((message_id, row.data.get("user", ""), record_id))
            if len(rows) < _PAGE:
                return found
            after = rows[-1].key

    async def indexed_sessions(self, tenant: str) -> list[str]:
        return await self._namespaces(tenant, self.kind.sources)

    async def _namespaces(self, tenant: str, prefix: str) -> list[str]:
        found: list[str] = []
        after: str | None = None
        while True:
            names = await self.store.list_namespaces(tenant, prefix, after, _PAGE)
            found += [n[len(prefix) :] for n in names]
            if len(names) < _PAGE:
                return found
            after = names[-1]

    async def progress(self, tenant: str, session_id: str, lane: str = "") -> dict[str, Any] | None:
        entry = await self.store.get_metadata(tenant, self.kind.progress_namespace(lane), session_id)
        return dict(entry.data) if entry else None

    # -- writes ----------------------------------------------------------------
    async def commit_progress(
        self,
        tenant: str,
        session_id: str,
        before: dict[str, Any] | None,
        seq: int,
        event: int,
        change: Change,
        now: int,
        lane: str = "",
    ) -> bool:
        """Write `change` with the session's progress (of the lane) moved to (seq, event),
        guarded on the progress version read as `before` and on the version of every record
        the change writes (Change.guards); False (nothing written) when one moved meanwhile."""
        namespace = self.kind.progress_namespace(lane)
        version = int(before["version"]) if before else None
        record = {"seq": seq, "event": event, "version": (version or 0) + 1}
        writes = [*change.writes(), MetadataWrite(namespace, session_id, record)]
        guard = MetadataGuard(namespace, session_id, "version", version)
        return await self.store.write_metadata_guarded(
            tenant, writes, guard, change.events, now, guards=change.guards()
        )

    async def commit_one(self, tenant: str, before: R, after: R | None, events: Sequence[EventDraft], now: int) -> bool:
        """Replace one record (None: delete it) guarded on the version read as `before`."""
        guard = MetadataGuard(self.kind.records + before.user_id, before.id, "version", before.version)
        return await self.store.write_metadata_guarded(tenant, sourced_writes(before, after), guard, list(events), now)

    async def commit(self, tenant: str, change: Change, now: int) -> bool:
        """Write `change` guarded on the version of every record it writes (Change.guards);
        False (nothing written) when one moved meanwhile (in another process: the tenant's
        formation lock holds this one's writers apart)."""
        writes = change.writes()
        if not writes and not change.events:
            return True
        return await self.store.write_metadata_guarded(tenant, writes, None, change.events, now, guards=change.guards())


class FactRecords(SourcedRecords[Fact]):
    def __init__(self, store: Store) -> None:
        super().__init__(store, FACT_KIND, Fact.from_record)

    async def facts(self, tenant: str, user_id: str, *, include_superseded: bool = False) -> list[Fact]:
        """The user's facts, newest first, at most MAX_FACTS_READ read."""
        return await self.all(tenant, user_id, lambda f: include_superseded or f.current)

    async def page(
        self, tenant: str, user_id: str, after: str | None, size: int, *, session_id: str = "", include_superseded: bool
    ) -> tuple[list[Fact], str | None]:
        def keep(fact: Fact) -> bool:
            if not include_superseded and not fact.current:
                return False
            return not session_id or any(s.session_id == session_id for s in fact.sources)

        return await self.scan(tenant, user_id, after, size, keep)

    async def commit_fact(
        self, tenant: str, before: Fact, after: Fact | None, events: Sequence[EventDraft], now: int
    ) -> bool:
        return await self.commit_one(tenant, before, after, events, now)

    async def profile(self, tenant: str, user_id: str) -> Profile | None:
        entry = await self.store.get_metadata(tenant, PROFILES_NAMESPACE, user_id)
        return Profile.from_record(user_id, entry.data) if entry else None

    async def save_profile(
        self, tenant: str, before: Profile | None, after: Profile | None, events: Sequence[EventDraft], now: int
    ) -> bool:
        user = (after or before).user_id  # type: ignore[union-attr]
        version = before.version if before else None
        data = None
        if after is not None:
            data = replace(after, version=(version or 0) + 1).record()
        guard = MetadataGuard(PROFILES_NAMESPACE, user, "version", version)
        return await self.store.write_metadata_guarded(
            tenant, [MetadataWrite(PROFILES_NAMESPACE, user, data)], guard, list(events), now
        )


class CustomRecords(SourcedRecords[CustomRecord]):
    def __init__(self, store: Store) -> None:
        super().__init__(store, CUSTOM_KIND, CustomRecord.from_record)

    async def of_strategy(self, tenant: str, user_id: str, strategy: str) -> list[CustomRecord]:
        return await self.all(tenant, user_id, lambda r: r.strategy == strategy)

    async def listed(
        self, tenant: str, user_id: str, after: str | None, size: int, *, strategy: str = "", session_id: str = ""
    ) -> tuple[list[CustomRecord], str | None]:
        def keep(rec: CustomRecord) -> bool:
            if strategy and rec.strategy != strategy:
                return False
            return not session_id or any(s.session_id == session_id for s in rec.sources)

        return await self.scan(tenant, user_id, after, size, keep)


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
