"""Plain data types shared by the domain and the storage adapters."""

from __future__ import annotations

import enum
import functools
import os
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd.domain.sessions import SessionAttributes

DEFAULT_TENANT = "default"

# The tenant of memoryd's own deployment-wide records (the page-token key, the log
# consumers' cursors and leases). Tenant names have no spaces, so no caller can ever be it.
SYSTEM_TENANT = "memoryd system"
# Its namespace for settings created once per deployment (Store.server_secret).
SERVER_NAMESPACE = "memoryd.server"

# Metadata namespaces memoryd keeps its own records in (summaries, cursors, entries).
# Callers may read them; only memoryd writes them, through its own services.
RESERVED_NAMESPACE_PREFIX = "memoryd."

# Roles GetRecentAcrossSessions uses when the caller names none.
DEFAULT_RECENT_ROLES = ("user", "assistant")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def new_message_id() -> str:
    """uuid.uuid4().hex, without building a UUID object (one per stored message).

    Opaque to callers; uuid4 keeps ids unique across replicas without coordination."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def platform_of(metadata: dict[str, Any] | None) -> str | None:
    """A message's platform: its metadata's `platform`, when that is a string."""
    value = metadata.get("platform") if metadata else None
    return value if isinstance(value, str) else None


@dataclass(slots=True, eq=False)
class Message:
    role: str
    content: str = ""
    kind: str | None = None
    timestamp: int = 0
    segments: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    reasoning_content: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str = ""
    # Server-assigned.
    id: str = ""
    seq: int = 0
    archived: bool = False
    # Bytes the store read for this message (0 when not read from a store); the byte
    # bound of responses counts these (memoryd.domain.paging.fit).
    stored_bytes: int = 0

    def __eq__(self, other: object) -> bool:
        # By value across subclasses: a message read back lazily equals the one saved.
        if not isinstance(other, Message):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable: not hashable

    @property
    def encoded_body(self) -> bytes | None:
        """The body fields in a store's encoding, while nobody has read them (EncodedBodyMessage)."""
        return None

    def stored_as(self, msg_id: str, seq: int, timestamp: int) -> Message:
        """A copy with the fields a store assigns (id, seq, timestamp; unarchived). The body
        is shared, not copied, and an encoded body stays encoded."""
        copy = object.__new__(type(self))
        cls: type = type(self)  # (a class whose instances are unhashable is itself hashable)
        for slot in _slot_descriptors(cls):
            try:
                slot.__set__(copy, slot.__get__(self))
            except AttributeError:  # an EncodedBodyMessage's body slots while still encoded
                pass
        copy.id, copy.seq, copy.timestamp, copy.archived = msg_id, seq, timestamp, False
        return copy

    @property
    def platform(self) -> str | None:
        return platform_of(self.metadata)

    def body(self) -> dict[str, Any]:
        """The fields no query filters on, stored together as one document/JSON blob."""
        return {
            "segments": self.segments,
            "metadata": self.metadata,
            "reasoning_content": self.reasoning_content,
            "tool_calls": self.tool_calls,
            "tool_call_id": self.tool_call_id,
        }

    def ref(self) -> dict[str, Any]:
        """Event payload reference (proto MessageRef in JSON field names)."""
        return {"id": self.id, "seq": self.seq, "timestamp": self.timestamp, "role": self.role}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "kind": self.kind,
            "timestamp": self.timestamp,
            "archived": self.archived,
            **self.body(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content", ""),
            kind=data.get("kind"),
            timestamp=data.get("timestamp", 0),
            segments=data.get("segments") or [],
            metadata=data.get("metadata") or {},
            reasoning_content=data.get("reasoning_content", ""),
            tool_calls=data.get("tool_calls") or [],
            tool_call_id=data.get("tool_call_id", ""),
            id=data.get("id", ""),
            seq=data.get("seq", 0),
            archived=bool(data.get("archived", False)),
        )


@functools.cache
def _slot_descriptors(cls: type) -> tuple[types.MemberDescriptorType, ...]:
    """Every slot of `cls` as its raw descriptor: read and set without decoding anything."""
    return tuple(
        klass.__dict__[name]
        for klass in cls.__mro__
        for name in klass.__dict__.get("__slots__", ())
        if isinstance(klass.__dict__.get(name), types.MemberDescriptorType)
    )


BODY_FIELDS = ("segments", "metadata", "reasoning_content", "tool_calls", "tool_call_id")
_SLOTS = {name: Message.__dict__[name] for name in BODY_FIELDS}


def _decoded_on_access(name: str) -> property:
    slot = _SLOTS[name]

    def get(self: EncodedBodyMessage) -> Any:
        if getattr(self, "_encoded", None) is not None:
            self._materialize()
        return slot.__get__(self, Message)

    def set_(self: EncodedBodyMessage, value: Any) -> None:
        if getattr(self, "_encoded", None) is not None:
            self._materialize()
        slot.__set__(self, value)

    return property(get, set_)


# EncodedBodyMessage._platform when nobody has looked at metadata.platform yet.
_UNKNOWN: Any = object()


class EncodedBodyMessage(Message):
    """A message whose body fields are still in the contract's encoding (memoryd.wire).

    Written messages arrive like this from the transport and stored ones are read like
    this by the SQLite store. The body is decoded (by `decode`) on first access; until
    then `encoded_body` lets a store write the bytes and the transport copy them into a
    response as they are, which is most of what a write or a history read costs otherwise.
    Reading or setting any body field drops the encoded form for good, since the caller
    may change what it got. `platform` (a column of its own in the SQLite store) can be
    known without decoding (`incoming`).
    """

    __slots__ = ("_encoded", "_decode", "_platform")
    _encoded: bytes | None
    _decode: Callable[[bytes], dict[str, Any]]
    _platform: str | None

    segments = _decoded_on_access("segments")
    metadata = _decoded_on_access("metadata")
    reasoning_content = _decoded_on_access("reasoning_content")
    tool_calls = _decoded_on_access("tool_calls")
    tool_call_id = _decoded_on_access("tool_call_id")

    @classmethod
    def stored(
        cls,
        msg_id: str,
        seq: int,
        role: str,
        content: str,
        kind: str | None,
        timestamp: int,
        archived: bool,
        encoded_body: bytes,
        decode: Callable[[bytes], dict[str, Any]],
    ) -> EncodedBodyMessage:
        msg = cls.__new__(cls)
        msg.id, msg.seq, msg.role, msg.content, msg.kind, msg.timestamp, msg.archived = (
            msg_id,
            seq,
            role,
            content,
            kind,
            timestamp,
            archived,
        )
        msg._encoded, msg._decode, msg._platform = encoded_body, decode, _UNKNOWN
        msg.stored_bytes = utf8_len(content) + len(encoded_body)
        return msg

    @classmethod
    def incoming(
        cls,
        role: str,
        content: str,
        kind: str | None,
        timestamp: int,
        encoded_body: bytes,
        decode: Callable[[bytes], dict[str, Any]],
        platform: str | None,
    ) -> EncodedBodyMessage:
        """A message to store; `platform` is what metadata.platform holds (None: no string)."""
        msg = cls.stored("", 0, role, content, kind, timestamp, False, encoded_body, decode)
        msg._platform = platform
        return msg

    def stored_as(self, msg_id: str, seq: int, timestamp: int) -> Message:
        encoded = getattr(self, "_encoded", None)
        if encoded is None:
            return super().stored_as(msg_id, seq, timestamp)
        # Still encoded (every written message from a transport): the head and the bytes.
        copy = EncodedBodyMessage.stored(
            msg_id, seq, self.role, self.content, self.kind, timestamp, False, encoded, self._decode
        )
        copy._platform = self._platform
        return copy

    @property
    def encoded_body(self) -> bytes | None:
        return getattr(self, "_encoded", None)

    @property
    def platform(self) -> str | None:
        if getattr(self, "_encoded", None) is not None and self._platform is not _UNKNOWN:
            return self._platform
        return super().platform

    def _materialize(self) -> None:
        encoded, self._encoded = self._encoded, None
        if encoded is not None:
            for name, value in self._decode(encoded).items():
                _SLOTS[name].__set__(self, value)


@dataclass(frozen=True, slots=True)
class SessionMessage:
    session_id: str
    message: Message


@dataclass(frozen=True, slots=True)
class Position:
    """A point in a session's (timestamp, seq) order; used by page tokens."""

    timestamp: int
    seq: int


@dataclass(frozen=True, slots=True)
class RangeQuery:
    """Messages of one session in (timestamp, seq) order, archived included."""

    session_id: str
    limit: int
    after: Position | None = None
    from_ts: int | None = None
    to_ts: int | None = None
    roles: tuple[str, ...] = ()
    exclude_kinds: tuple[str, ...] = ()
    # Stop reading once the rows read hold more than this many bytes (None: no bound).
    max_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class RecentQuery:
    """GetRecentAcrossSessions filters after defaults have been applied."""

    limit: int
    since_ts: int | None = None
    platform: str | None = None
    exclude_session_ids: tuple[str, ...] = ()
    roles: tuple[str, ...] = DEFAULT_RECENT_ROLES
    kinds: tuple[str, ...] = ()
    exclude_kinds: tuple[str, ...] = ()
    max_bytes: int | None = None  # as RangeQuery.max_bytes
    # Only these sessions (a user-bound caller's own); None: every session of the tenant.
    session_ids: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class AppendResult:
    messages: list[Message]
    deduplicated: bool = False
    # The seq of the write's last event in the tenant's log (0: not known, a deduplicated write).
    event_seq: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    message_count: int
    unarchived_count: int
    last_activity: int
    attributes: SessionAttributes = SessionAttributes()
    stored_bytes: int = field(default=0, compare=False)  # as Message.stored_bytes
    # Who the session belongs to for good (domain/sessions.py "Ownership"): a user id,
    # sessions.TENANT (""), or None when it has no owner (forgotten: its id may be taken).
    owner: str | None = ""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A session's row as export and import carry it: its attributes, its last write, and the
    marks that keep its seqs and server stamps moving forward (never reused, even past
    deleted messages). Its message counts follow from the messages themselves."""

    session_id: str
    last_seq: int
    last_timestamp: int
    last_activity: int
    attributes: SessionAttributes = SessionAttributes()
    # Its owner (sessions "Ownership": a user id, sessions.TENANT, None for no owner), as the
    # store holds it; owner_stated False: not known (an export written before exports carried
    # owners), so an import derives it from the attributes as a write would.
    owner: str | None = None
    owner_stated: bool = False


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    namespace: str
    key: str
    data: dict[str, Any]
    update_time: int
    stored_bytes: int = field(default=0, compare=False)  # as Message.stored_bytes


class ClearTarget(enum.IntEnum):
    # Values mirror memoryd.v1.ClearTarget.
    MESSAGES = 1
    VECTORS = 2
    METADATA = 3


class ClearOutcome(enum.IntEnum):
    # Values mirror memoryd.v1.ClearOutcome.
    CLEARED = 1
    SKIPPED = 2
    DEFERRED = 3
    FAILED = 4


@dataclass(frozen=True, slots=True)
class ClearResult:
    target: ClearTarget
    outcome: ClearOutcome
    removed_count: int = 0
    error: str = ""


class EventType(enum.IntEnum):
    # Values mirror memoryd.v1.EventType; payload keys mirror the Event oneof.
    MESSAGES_APPENDED = 1
    MESSAGES_DELETED = 2
    MESSAGES_REWRITTEN = 3
    HISTORY_TRIMMED = 4
    HISTORY_REPLACED = 5
    SESSION_CLEARED = 6
    ALL_CLEARED = 7
    METADATA_CHANGED = 8
    HISTORY_CHANGED = 9
    COMPRESS_REQUESTED = 10
    COMPRESS_PROGRESS = 11
    SUMMARY_SAVED = 12
    ENTRY_CHANGED = 13
    SESSION_UPDATED = 14
    MEMORY_FORMED = 15
    MEMORY_SUPERSEDED = 16
    MEMORY_REMOVED = 17

    @property
    def payload_field(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class EventDraft:
    """An event before the store gives it a seq (written in the change's transaction)."""

    type: EventType
    session_id: str
    payload: dict[str, Any]
    # The end user an event of no session is about (memory formation's fact and profile
    # events): stamped as its Event.user_id, so a Watch by that user's token delivers it.
    # An event of a session is stamped with the session's owner instead.
    user_id: str = ""


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    time: int
    tenant: str
    session_id: str
    type: EventType
    payload: dict[str, Any]
    # The end user who owned the session when the event was written ("" for none, and for
    # tenant-wide events): a Watch by a token bound to a user delivers that user's events.
    user_id: str = ""
