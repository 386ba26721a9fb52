"""Formed facts and profiles, stored once for every adapter: metadata records written with the
Store's guarded (compare-and-set) write, so SQLite and MongoDB behave the same
(tests/conformance/test_formation_records.py runs these rules against both).

    "memoryd.facts/<user>"          key = fact id           -> one fact (sources = provenance)
    "memoryd.fact-sources/<session>" key = "<message id>\\t<fact id>" -> {"user": user}
    "memoryd.formation-progress/facts" key = session id     -> {"seq", "version", "event"}
    "memoryd.profiles"              key = user id           -> one profile

The sources index answers "which facts came from this message" (forgetting: every deleted
message id reaches its facts). A fact's record and its index entries are always written in
the same transaction (`fact_writes`). The progress record of a session is the last seq whose
messages were given to extraction; every extraction writes it guarded on its `version`, in the
transaction of the facts it formed, so a batch is stored once or not at all (a crash between
the model's answer and the write leaves the batch to do again, never half of it).

Fact ids start with the inverted creation time, so key order is newest first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memoryd.domain import events as ev
from memoryd.domain.models import EventDraft, EventType
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store

FACTS_NAMESPACE = "memoryd.facts/"
SOURCES_NAMESPACE = "memoryd.fact-sources/"
PROGRESS_NAMESPACE = "memoryd.formation-progress/facts"
PROFILES_NAMESPACE = "memoryd.profiles"
SEPARATOR = "\t"  # message ids never hold control characters (transport validation)
# A user's facts read at most, for recall before extraction and for the profile.
MAX_FACTS_READ = 2000
_PAGE = 500


def facts_namespace(user_id: str) -> str:
    return FACTS_NAMESPACE + user_id


def sources_namespace(session_id: str) -> str:
    return SOURCES_NAMESPACE + session_id


def source_key(message_id: str, fact_id: str) -> str:
    return message_id + SEPARATOR + fact_id


def new_fact_id(create_time: int, *parts: object) -> str:
    inverted = (1 << 48) - 1 - max(0, create_time)
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=6).hexdigest()
    return f"{inverted:012x}{digest}"


@dataclass(frozen=True, slots=True)
class Source:
    session_id: str
    message_id: str
    seq: int

    def record(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "message_id": self.message_id, "seq": self.seq}


@dataclass(frozen=True, slots=True)
class Fact:
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
            sources=tuple(
                Source(s["session_id"], s["message_id"], int(s.get("seq") or 0)) for s in data.get("sources") or ()
            ),
            create_time=int(data.get("create_time") or 0),
            update_time=int(data.get("update_time") or 0),
            valid_to=int(data.get("valid_to") or 0),
            superseded_by=data.get("superseded_by") or "",
            corrected=bool(data.get("corrected")),
            version=int(data.get("version") or 1),
        )

    def changed(self, now: int, **values: Any) -> Fact:
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


def fact_writes(before: Fact | None, after: Fact | None) -> list[MetadataWrite]:
    """The record and sources-index writes that turn `before` into `after` (None: absent)."""
    fact = after or before
    assert fact is not None
    old = {(s.session_id, s.message_id) for s in before.sources} if before else set()
    new = {(s.session_id, s.message_id) for s in after.sources} if after else set()
    writes = [MetadataWrite(facts_namespace(fact.user_id), fact.id, after.record() if after else None)]
    for session_id, message_id in sorted(new - old):
        writes.append(
            MetadataWrite(sources_namespace(session_id), source_key(message_id, fact.id), {"user": fact.user_id})
        )
    for session_id, message_id in sorted(old - new):
        writes.append(MetadataWrite(sources_namespace(session_id), source_key(message_id, fact.id), None))
    return writes


@dataclass(slots=True)
class Change:
    """Facts to write in one transaction (before -> after), guarded, with their events."""

    facts: dict[str, tuple[Fact | None, Fact | None]] = field(default_factory=dict)
    extra: list[MetadataWrite] = field(default_factory=list)
    events: list[EventDraft] = field(default_factory=list)

    def put(self, before: Fact | None, after: Fact | None) -> None:
        fact = after or before
        assert fact is not None
        first = self.facts.get(fact.id, (before, after))[0]
        self.facts[fact.id] = (first, after)

    def writes(self) -> list[MetadataWrite]:
        out: list[MetadataWrite] = []
        for before, after in self.facts.values():
            if before is None and after is None:
                continue
            out += fact_writes(before, after)
        return out + self.extra


class FactRecords:
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- reads -----------------------------------------------------------------
    async def get(self, tenant: str, user_id: str, fact_id: str) -> Fact | None:
        entry = await self.store.get_metadata(tenant, facts_namespace(user_id), fact_id)
        return Fact.from_record(user_id, fact_id, entry.data) if entry else None

    async def facts(self, tenant: str, user_id: str, *, include_superseded: bool = False) -> list[Fact]:
        """The user's facts, newest first, at most MAX_FACTS_READ read."""
        found: list[Fact] = []
        after: str | None = None
        read = 0
        while read < MAX_FACTS_READ:
            rows = await self.store.list_metadata(tenant, facts_namespace(user_id), after, _PAGE)
            read += len(rows)
            for row in rows:
                fact = Fact.from_record(user_id, row.key, row.data)
                if include_superseded or fact.current:
                    found.append(fact)
            if len(rows) < _PAGE:
                break
            after = rows[-1].key
        return found

    async def page(
        self, tenant: str, user_id: str, after: str | None, size: int, *, session_id: str = "", include_superseded: bool
    ) -> tuple[list[Fact], str | None]:
        """Up to `size` facts after the key `after`, newest first; and the key to go on after
        (None: the last page). Reads at most MAX_FACTS_READ records for one page."""
        found: list[Fact] = []
        read = 0
        while read < MAX_FACTS_READ:
            rows = await self.store.list_metadata(tenant, facts_namespace(user_id), after, _PAGE)
            read += len(rows)
            for row in rows:
                fact = Fact.from_record(user_id, row.key, row.data)
                after = row.key
                if not include_superseded and not fact.current:
                    continue
                if session_id and all(s.session_id != session_id for s in fact.sources):
                    continue
                found.append(fact)
                if len(found) == size:
                    return found, after
            if len(rows) < _PAGE:
                return found, None
        return found, after

    async def by_message(self, tenant: str, session_id: str, message_id: str) -> list[tuple[str, str]]:
        """(user, fact id) of the facts with this message among their sources."""
        prefix = message_id + SEPARATOR
        found: list[tuple[str, str]] = []
        after = prefix[:-1] + chr(ord(SEPARATOR) - 1) + "\U0010ffff"  # just below every "<id>\t..." key
        while True:
            rows = await self.store.list_metadata(tenant, sources_namespace(session_id), after, _PAGE)
            for row in rows:
                if not row.key.startswith(prefix):
                    return found
                found.append((row.data.get("user", ""), row.key[len(prefix) :]))
            if len(rows) < _PAGE:
                return found
            after = rows[-1].key

    async def sources_of_session(self, tenant: str, session_id: str) -> list[tuple[str, str, str]]:
        """(message id, user, fact id) of every index entry of the session."""
        found: list[tuple[str, str, str]] = []
        after: str | None = None
        while True:
            rows = await self.store.list_metadata(tenant, sources_namespace(session_id), after, _PAGE)
            for row in rows:
                message_id, _, fact_id = row.key.partition(SEPARATOR)
                found.append((message_id, row.data.get("user", ""), fact_id))
            if len(rows) < _PAGE:
                return found
            after = rows[-1].key

    async def indexed_sessions(self, tenant: str) -> list[str]:
        sessions: list[str] = []
        after: str | None = None
        while True:
            names = await self.store.list_namespaces(tenant, SOURCES_NAMESPACE, after, _PAGE)
            sessions += [n[len(SOURCES_NAMESPACE) :] for n in names]
            if len(names) < _PAGE:
                return sessions
            after = names[-1]

    async def progress(self, tenant: str, session_id: str) -> dict[str, Any] | None:
        entry = await self.store.get_metadata(tenant, PROGRESS_NAMESPACE, session_id)
        return dict(entry.data) if entry else None

    async def profile(self, tenant: str, user_id: str) -> Profile | None:
        entry = await self.store.get_metadata(tenant, PROFILES_NAMESPACE, user_id)
        return Profile.from_record(user_id, entry.data) if entry else None

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
    ) -> bool:
        """Write `change` with the session's progress moved to (seq, event), guarded on the
        progress version read as `before`; False (nothing written) when it moved meanwhile."""
        version = int(before["version"]) if before else None
        record = {"seq": seq, "event": event, "version": (version or 0) + 1}
        writes = [*change.writes(), MetadataWrite(PROGRESS_NAMESPACE, session_id, record)]
        guard = MetadataGuard(PROGRESS_NAMESPACE, session_id, "version", version)
        return await self.store.write_metadata_guarded(tenant, writes, guard, change.events, now)

    async def commit_fact(
        self, tenant: str, before: Fact, after: Fact | None, events: Sequence[EventDraft], now: int
    ) -> bool:
        """Replace one fact (None: delete it) guarded on the version read as `before`."""
        guard = MetadataGuard(facts_namespace(before.user_id), before.id, "version", before.version)
        return await self.store.write_metadata_guarded(tenant, fact_writes(before, after), guard, list(events), now)

    async def commit(self, tenant: str, change: Change, now: int) -> None:
        """Write `change` unguarded (the caller holds the tenant's formation lock)."""
        writes = change.writes()
        if writes or change.events:
            await self.store.write_metadata_guarded(tenant, writes, None, change.events, now)

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


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
