from memoryd.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_TYPE_UNSPECIFIED: _ClassVar[EventType]
    EVENT_TYPE_MESSAGES_APPENDED: _ClassVar[EventType]
    EVENT_TYPE_MESSAGES_DELETED: _ClassVar[EventType]
    EVENT_TYPE_MESSAGES_REWRITTEN: _ClassVar[EventType]
    EVENT_TYPE_HISTORY_TRIMMED: _ClassVar[EventType]
    EVENT_TYPE_HISTORY_REPLACED: _ClassVar[EventType]
    EVENT_TYPE_SESSION_CLEARED: _ClassVar[EventType]
    EVENT_TYPE_ALL_CLEARED: _ClassVar[EventType]
    EVENT_TYPE_METADATA_CHANGED: _ClassVar[EventType]
    EVENT_TYPE_HISTORY_CHANGED: _ClassVar[EventType]
    EVENT_TYPE_COMPRESS_REQUESTED: _ClassVar[EventType]
    EVENT_TYPE_COMPRESS_PROGRESS: _ClassVar[EventType]
    EVENT_TYPE_SUMMARY_SAVED: _ClassVar[EventType]
    EVENT_TYPE_ENTRY_CHANGED: _ClassVar[EventType]
    EVENT_TYPE_SESSION_UPDATED: _ClassVar[EventType]
    EVENT_TYPE_MEMORY_FORMED: _ClassVar[EventType]
    EVENT_TYPE_MEMORY_SUPERSEDED: _ClassVar[EventType]
    EVENT_TYPE_MEMORY_REMOVED: _ClassVar[EventType]
EVENT_TYPE_UNSPECIFIED: EventType
EVENT_TYPE_MESSAGES_APPENDED: EventType
EVENT_TYPE_MESSAGES_DELETED: EventType
EVENT_TYPE_MESSAGES_REWRITTEN: EventType
EVENT_TYPE_HISTORY_TRIMMED: EventType
EVENT_TYPE_HISTORY_REPLACED: EventType
EVENT_TYPE_SESSION_CLEARED: EventType
EVENT_TYPE_ALL_CLEARED: EventType
EVENT_TYPE_METADATA_CHANGED: EventType
EVENT_TYPE_HISTORY_CHANGED: EventType
EVENT_TYPE_COMPRESS_REQUESTED: EventType
EVENT_TYPE_COMPRESS_PROGRESS: EventType
EVENT_TYPE_SUMMARY_SAVED: EventType
EVENT_TYPE_ENTRY_CHANGED: EventType
EVENT_TYPE_SESSION_UPDATED: EventType
EVENT_TYPE_MEMORY_FORMED: EventType
EVENT_TYPE_MEMORY_SUPERSEDED: EventType
EVENT_TYPE_MEMORY_REMOVED: EventType

class Event(_message.Message):
    __slots__ = ("seq", "time", "tenant", "session_id", "type", "messages_appended", "messages_deleted", "messages_rewritten", "history_trimmed", "history_replaced", "session_cleared", "all_cleared", "metadata_changed", "history_changed", "compress_requested", "compress_progress", "summary_saved", "entry_changed", "session_updated", "memory_formed", "memory_superseded", "memory_removed")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_APPENDED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_DELETED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_REWRITTEN_FIELD_NUMBER: _ClassVar[int]
    HISTORY_TRIMMED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_REPLACED_FIELD_NUMBER: _ClassVar[int]
    SESSION_CLEARED_FIELD_NUMBER: _ClassVar[int]
    ALL_CLEARED_FIELD_NUMBER: _ClassVar[int]
    METADATA_CHANGED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_CHANGED_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_SAVED_FIELD_NUMBER: _ClassVar[int]
    ENTRY_CHANGED_FIELD_NUMBER: _ClassVar[int]
    SESSION_UPDATED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FORMED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_REMOVED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: int
    tenant: str
    session_id: str
    type: EventType
    messages_appended: MessagesAppended
    messages_deleted: MessagesDeleted
    messages_rewritten: MessagesRewritten
    history_trimmed: HistoryTrimmed
    history_replaced: HistoryReplaced
    session_cleared: SessionCleared
    all_cleared: AllCleared
    metadata_changed: MetadataChanged
    history_changed: HistoryChanged
    compress_requested: CompressRequested
    compress_progress: CompressProgress
    summary_saved: SummarySaved
    entry_changed: EntryChanged
    session_updated: SessionUpdated
    memory_formed: MemoryChanged
    memory_superseded: MemoryChanged
    memory_removed: MemoryChanged
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[int] = ..., tenant: _Optional[str] = ..., session_id: _Optional[str] = ..., type: _Optional[_Union[EventType, str]] = ..., messages_appended: _Optional[_Union[MessagesAppended, _Mapping]] = ..., messages_deleted: _Optional[_Union[MessagesDeleted, _Mapping]] = ..., messages_rewritten: _Optional[_Union[MessagesRewritten, _Mapping]] = ..., history_trimmed: _Optional[_Union[HistoryTrimmed, _Mapping]] = ..., history_replaced: _Optional[_Union[HistoryReplaced, _Mapping]] = ..., session_cleared: _Optional[_Union[SessionCleared, _Mapping]] = ..., all_cleared: _Optional[_Union[AllCleared, _Mapping]] = ..., metadata_changed: _Optional[_Union[MetadataChanged, _Mapping]] = ..., history_changed: _Optional[_Union[HistoryChanged, _Mapping]] = ..., compress_requested: _Optional[_Union[CompressRequested, _Mapping]] = ..., compress_progress: _Optional[_Union[CompressProgress, _Mapping]] = ..., summary_saved: _Optional[_Union[SummarySaved, _Mapping]] = ..., entry_changed: _Optional[_Union[EntryChanged, _Mapping]] = ..., session_updated: _Optional[_Union[SessionUpdated, _Mapping]] = ..., memory_formed: _Optional[_Union[MemoryChanged, _Mapping]] = ..., memory_superseded: _Optional[_Union[MemoryChanged, _Mapping]] = ..., memory_removed: _Optional[_Union[MemoryChanged, _Mapping]] = ...) -> None: ...

class MessagesAppended(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.MessageRef]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.MessageRef, _Mapping]]] = ...) -> None: ...

class MessagesDeleted(_message.Message):
    __slots__ = ("timestamps", "ids", "cause")
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    timestamps: _containers.RepeatedScalarFieldContainer[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    cause: EventType
    def __init__(self, timestamps: _Optional[_Iterable[int]] = ..., ids: _Optional[_Iterable[str]] = ..., cause: _Optional[_Union[EventType, str]] = ...) -> None: ...

class MessagesRewritten(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.MessageRef]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.MessageRef, _Mapping]]] = ...) -> None: ...

class HistoryTrimmed(_message.Message):
    __slots__ = ("archived_count", "keep_recent")
    ARCHIVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    KEEP_RECENT_FIELD_NUMBER: _ClassVar[int]
    archived_count: int
    keep_recent: int
    def __init__(self, archived_count: _Optional[int] = ..., keep_recent: _Optional[int] = ...) -> None: ...

class HistoryReplaced(_message.Message):
    __slots__ = ("removed_count", "messages")
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    removed_count: int
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.MessageRef]
    def __init__(self, removed_count: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.MessageRef, _Mapping]]] = ...) -> None: ...

class SessionCleared(_message.Message):
    __slots__ = ("removed_count", "targets")
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    removed_count: int
    targets: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, removed_count: _Optional[int] = ..., targets: _Optional[_Iterable[str]] = ...) -> None: ...

class AllCleared(_message.Message):
    __slots__ = ("removed_count", "targets")
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    removed_count: int
    targets: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, removed_count: _Optional[int] = ..., targets: _Optional[_Iterable[str]] = ...) -> None: ...

class MetadataChanged(_message.Message):
    __slots__ = ("namespace", "key", "deleted")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    key: str
    deleted: bool
    def __init__(self, namespace: _Optional[str] = ..., key: _Optional[str] = ..., deleted: _Optional[bool] = ...) -> None: ...

class HistoryChanged(_message.Message):
    __slots__ = ("cause",)
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    cause: EventType
    def __init__(self, cause: _Optional[_Union[EventType, str]] = ...) -> None: ...

class CompressRequested(_message.Message):
    __slots__ = ("requested_by", "reason")
    REQUESTED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    requested_by: str
    reason: str
    def __init__(self, requested_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CompressProgress(_message.Message):
    __slots__ = ("phase", "progress", "done", "error")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    phase: str
    progress: float
    done: bool
    error: str
    def __init__(self, phase: _Optional[str] = ..., progress: _Optional[float] = ..., done: _Optional[bool] = ..., error: _Optional[str] = ...) -> None: ...

class SummarySaved(_message.Message):
    __slots__ = ("summary_id", "from_seq", "to_seq")
    SUMMARY_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    summary_id: str
    from_seq: int
    to_seq: int
    def __init__(self, summary_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., to_seq: _Optional[int] = ...) -> None: ...

class EntryChanged(_message.Message):
    __slots__ = ("scope", "entry_id", "deleted")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    scope: str
    entry_id: str
    deleted: bool
    def __init__(self, scope: _Optional[str] = ..., entry_id: _Optional[str] = ..., deleted: _Optional[bool] = ...) -> None: ...

class SessionUpdated(_message.Message):
    __slots__ = ("attributes",)
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    attributes: _message_pb2.SessionAttributes
    def __init__(self, attributes: _Optional[_Union[_message_pb2.SessionAttributes, _Mapping]] = ...) -> None: ...

class MemoryChanged(_message.Message):
    __slots__ = ("kind", "id", "user_id", "superseded_by", "reason")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    kind: str
    id: str
    user_id: str
    superseded_by: str
    reason: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[str] = ..., user_id: _Optional[str] = ..., superseded_by: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
