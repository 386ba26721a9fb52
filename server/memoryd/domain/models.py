"""Plain data types shared by the domain and the storage adapters."""

from __future__ import annotations

import enum
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TENANT = "default"

# Metadata namespaces memoryd keeps its own records in (summaries, cursors, entries).
# Callers may read them; only memoryd writes them, through its own services.
RESERVED_NAMESPACE_PREFIX = "memoryd."

# Roles GetRecentAcrossSessions uses when the caller names none.
DEFAULT_RECENT_ROLES = ("user", "assistant")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def new_message_id() -> str:
    # Opaque to callers; uuid4 keeps ids unique across replicas without coordination.
    return uuid.uuid4().hex


@dataclass(slots=True)
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

    @property
    def platform(self) -> str | None:
        value = self.metadata.get("platform") if self.metadata else None
        return value if isinstance(value, str) else None

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


@dataclass(frozen=True, slots=True)
class AppendResult:
    messages: list[Message]
    deduplicated: bool = False


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    message_count: int
    unarchived_count: int
    last_activity: int


@dataclass(frozen=True, slots=True)
class MetadataEntry:
    namespace: str
    key: str
    data: dict[str, Any]
    update_time: int


class ClearTarget(enum.IntEnum):
    # Values mirror memory.v1.ClearTarget.
    MESSAGES = 1
    VECTORS = 2
    METADATA = 3


class ClearOutcome(enum.IntEnum):
    # Values mirror memory.v1.ClearOutcome.
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
    # Values mirror memory.v1.EventType; payload keys mirror the Event oneof.
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

    @property
    def payload_field(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class EventDraft:
    """An event before the store gives it a seq (written in the change's transaction)."""

    type: EventType
    session_id: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    time: int
    tenant: str
    session_id: str
    type: EventType
    payload: dict[str, Any]
