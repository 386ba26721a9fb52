from memoryd.v1 import access_pb2 as _access_pb2
from memoryd.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClearTarget(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLEAR_TARGET_UNSPECIFIED: _ClassVar[ClearTarget]
    CLEAR_TARGET_MESSAGES: _ClassVar[ClearTarget]
    CLEAR_TARGET_VECTORS: _ClassVar[ClearTarget]
    CLEAR_TARGET_METADATA: _ClassVar[ClearTarget]

class ClearOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLEAR_OUTCOME_UNSPECIFIED: _ClassVar[ClearOutcome]
    CLEAR_OUTCOME_CLEARED: _ClassVar[ClearOutcome]
    CLEAR_OUTCOME_SKIPPED: _ClassVar[ClearOutcome]
    CLEAR_OUTCOME_DEFERRED: _ClassVar[ClearOutcome]
    CLEAR_OUTCOME_FAILED: _ClassVar[ClearOutcome]
CLEAR_TARGET_UNSPECIFIED: ClearTarget
CLEAR_TARGET_MESSAGES: ClearTarget
CLEAR_TARGET_VECTORS: ClearTarget
CLEAR_TARGET_METADATA: ClearTarget
CLEAR_OUTCOME_UNSPECIFIED: ClearOutcome
CLEAR_OUTCOME_CLEARED: ClearOutcome
CLEAR_OUTCOME_SKIPPED: ClearOutcome
CLEAR_OUTCOME_DEFERRED: ClearOutcome
CLEAR_OUTCOME_FAILED: ClearOutcome

class ClearResult(_message.Message):
    __slots__ = ("target", "outcome", "removed_count", "error")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    target: ClearTarget
    outcome: ClearOutcome
    removed_count: int
    error: str
    def __init__(self, target: _Optional[_Union[ClearTarget, str]] = ..., outcome: _Optional[_Union[ClearOutcome, str]] = ..., removed_count: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class SaveMessageRequest(_message.Message):
    __slots__ = ("session_id", "message", "idempotency_key", "session_attributes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    message: _message_pb2.Message
    idempotency_key: str
    session_attributes: _message_pb2.SessionAttributes
    def __init__(self, session_id: _Optional[str] = ..., message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., idempotency_key: _Optional[str] = ..., session_attributes: _Optional[_Union[_message_pb2.SessionAttributes, _Mapping]] = ...) -> None: ...

class SaveMessageResponse(_message.Message):
    __slots__ = ("message", "deduplicated", "body_omitted", "event_seq")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    BODY_OMITTED_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.Message
    deduplicated: bool
    body_omitted: bool
    event_seq: int
    def __init__(self, message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., deduplicated: _Optional[bool] = ..., body_omitted: _Optional[bool] = ..., event_seq: _Optional[int] = ...) -> None: ...

class SaveMessagesRequest(_message.Message):
    __slots__ = ("session_id", "messages", "idempotency_key", "session_attributes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    idempotency_key: str
    session_attributes: _message_pb2.SessionAttributes
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., idempotency_key: _Optional[str] = ..., session_attributes: _Optional[_Union[_message_pb2.SessionAttributes, _Mapping]] = ...) -> None: ...

class SaveMessagesResponse(_message.Message):
    __slots__ = ("messages", "deduplicated", "omitted_bodies", "event_seq")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    OMITTED_BODIES_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    deduplicated: bool
    omitted_bodies: int
    event_seq: int
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., deduplicated: _Optional[bool] = ..., omitted_bodies: _Optional[int] = ..., event_seq: _Optional[int] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ("session_id", "limit")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    limit: int
    def __init__(self, session_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ("messages", "truncated")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    truncated: bool
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class GetFullHistoryRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetFullHistoryResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListMessagesInRangeRequest(_message.Message):
    __slots__ = ("session_id", "from_ts", "to_ts", "roles", "exclude_kinds", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_TS_FIELD_NUMBER: _ClassVar[int]
    TO_TS_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_KINDS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    from_ts: int
    to_ts: int
    roles: _containers.RepeatedScalarFieldContainer[str]
    exclude_kinds: _containers.RepeatedScalarFieldContainer[str]
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., from_ts: _Optional[int] = ..., to_ts: _Optional[int] = ..., roles: _Optional[_Iterable[str]] = ..., exclude_kinds: _Optional[_Iterable[str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMessagesInRangeResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetRecentAcrossSessionsRequest(_message.Message):
    __slots__ = ("limit", "since_ts", "platform", "exclude_session_ids", "roles", "kinds", "exclude_kinds")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SINCE_TS_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_KINDS_FIELD_NUMBER: _ClassVar[int]
    limit: int
    since_ts: int
    platform: str
    exclude_session_ids: _containers.RepeatedScalarFieldContainer[str]
    roles: _containers.RepeatedScalarFieldContainer[str]
    kinds: _containers.RepeatedScalarFieldContainer[str]
    exclude_kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, limit: _Optional[int] = ..., since_ts: _Optional[int] = ..., platform: _Optional[str] = ..., exclude_session_ids: _Optional[_Iterable[str]] = ..., roles: _Optional[_Iterable[str]] = ..., kinds: _Optional[_Iterable[str]] = ..., exclude_kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class GetRecentAcrossSessionsResponse(_message.Message):
    __slots__ = ("messages", "truncated")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.SessionMessage]
    truncated: bool
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.SessionMessage, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class TrimHistoryRequest(_message.Message):
    __slots__ = ("session_id", "keep_recent")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KEEP_RECENT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    keep_recent: int
    def __init__(self, session_id: _Optional[str] = ..., keep_recent: _Optional[int] = ...) -> None: ...

class TrimHistoryResponse(_message.Message):
    __slots__ = ("archived_count",)
    ARCHIVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    archived_count: int
    def __init__(self, archived_count: _Optional[int] = ...) -> None: ...

class ReplaceHistoryRequest(_message.Message):
    __slots__ = ("session_id", "messages")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class ReplaceHistoryResponse(_message.Message):
    __slots__ = ("messages", "removed_count", "omitted_bodies", "event_seq")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    OMITTED_BODIES_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    removed_count: int
    omitted_bodies: int
    event_seq: int
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., removed_count: _Optional[int] = ..., omitted_bodies: _Optional[int] = ..., event_seq: _Optional[int] = ...) -> None: ...

class UpdateMessageContentRequest(_message.Message):
    __slots__ = ("session_id", "old_text", "new_text", "recent_limit")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    OLD_TEXT_FIELD_NUMBER: _ClassVar[int]
    NEW_TEXT_FIELD_NUMBER: _ClassVar[int]
    RECENT_LIMIT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    old_text: str
    new_text: str
    recent_limit: int
    def __init__(self, session_id: _Optional[str] = ..., old_text: _Optional[str] = ..., new_text: _Optional[str] = ..., recent_limit: _Optional[int] = ...) -> None: ...

class UpdateMessageContentResponse(_message.Message):
    __slots__ = ("changed_count", "event_seq")
    CHANGED_COUNT_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    changed_count: int
    event_seq: int
    def __init__(self, changed_count: _Optional[int] = ..., event_seq: _Optional[int] = ...) -> None: ...

class DeleteMessagesByTimestampsRequest(_message.Message):
    __slots__ = ("session_id", "timestamps")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    timestamps: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, session_id: _Optional[str] = ..., timestamps: _Optional[_Iterable[int]] = ...) -> None: ...

class DeleteMessagesByTimestampsResponse(_message.Message):
    __slots__ = ("deleted_count", "event_seq")
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    event_seq: int
    def __init__(self, deleted_count: _Optional[int] = ..., event_seq: _Optional[int] = ...) -> None: ...

class DeleteMessagesRequest(_message.Message):
    __slots__ = ("session_id", "ids")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_id: _Optional[str] = ..., ids: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteMessagesResponse(_message.Message):
    __slots__ = ("deleted_count", "event_seq")
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    event_seq: int
    def __init__(self, deleted_count: _Optional[int] = ..., event_seq: _Optional[int] = ...) -> None: ...

class ClearSessionRequest(_message.Message):
    __slots__ = ("session_id", "targets")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    targets: _containers.RepeatedScalarFieldContainer[ClearTarget]
    def __init__(self, session_id: _Optional[str] = ..., targets: _Optional[_Iterable[_Union[ClearTarget, str]]] = ...) -> None: ...

class ClearSessionResponse(_message.Message):
    __slots__ = ("results", "event_seq")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ClearResult]
    event_seq: int
    def __init__(self, results: _Optional[_Iterable[_Union[ClearResult, _Mapping]]] = ..., event_seq: _Optional[int] = ...) -> None: ...

class ClearAllRequest(_message.Message):
    __slots__ = ("targets",)
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    targets: _containers.RepeatedScalarFieldContainer[ClearTarget]
    def __init__(self, targets: _Optional[_Iterable[_Union[ClearTarget, str]]] = ...) -> None: ...

class ClearAllResponse(_message.Message):
    __slots__ = ("results", "event_seq")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ClearResult]
    event_seq: int
    def __init__(self, results: _Optional[_Iterable[_Union[ClearResult, _Mapping]]] = ..., event_seq: _Optional[int] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session_id", "message_count", "unarchived_count", "last_activity", "attributes")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    UNARCHIVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVITY_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    message_count: int
    unarchived_count: int
    last_activity: int
    attributes: _message_pb2.SessionAttributes
    def __init__(self, session_id: _Optional[str] = ..., message_count: _Optional[int] = ..., unarchived_count: _Optional[int] = ..., last_activity: _Optional[int] = ..., attributes: _Optional[_Union[_message_pb2.SessionAttributes, _Mapping]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "user_id", "agent_id", "labels", "active_since", "active_before")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_SINCE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    user_id: str
    agent_id: str
    labels: _containers.ScalarMap[str, str]
    active_since: int
    active_before: int
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., user_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., active_since: _Optional[int] = ..., active_before: _Optional[int] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    next_page_token: str
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMemoryStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SessionRetention(_message.Message):
    __slots__ = ("days", "action", "labelled_sessions")
    DAYS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    LABELLED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    days: float
    action: str
    labelled_sessions: int
    def __init__(self, days: _Optional[float] = ..., action: _Optional[str] = ..., labelled_sessions: _Optional[int] = ...) -> None: ...

class EventRetention(_message.Message):
    __slots__ = ("max_age_seconds", "max_events")
    MAX_AGE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MAX_EVENTS_FIELD_NUMBER: _ClassVar[int]
    max_age_seconds: int
    max_events: int
    def __init__(self, max_age_seconds: _Optional[int] = ..., max_events: _Optional[int] = ...) -> None: ...

class GetMemoryStatsResponse(_message.Message):
    __slots__ = ("sessions", "messages", "unarchived_messages", "session_retention", "event_retention")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    UNARCHIVED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SESSION_RETENTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_RETENTION_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    messages: int
    unarchived_messages: int
    session_retention: SessionRetention
    event_retention: EventRetention
    def __init__(self, sessions: _Optional[int] = ..., messages: _Optional[int] = ..., unarchived_messages: _Optional[int] = ..., session_retention: _Optional[_Union[SessionRetention, _Mapping]] = ..., event_retention: _Optional[_Union[EventRetention, _Mapping]] = ...) -> None: ...

class PopMessagesRequest(_message.Message):
    __slots__ = ("session_id", "n")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    n: int
    def __init__(self, session_id: _Optional[str] = ..., n: _Optional[int] = ...) -> None: ...

class PopMessagesResponse(_message.Message):
    __slots__ = ("messages", "truncated", "event_seq")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    truncated: bool
    event_seq: int
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., truncated: _Optional[bool] = ..., event_seq: _Optional[int] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ("found", "session")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    found: bool
    session: SessionInfo
    def __init__(self, found: _Optional[bool] = ..., session: _Optional[_Union[SessionInfo, _Mapping]] = ...) -> None: ...

class UpdateSessionRequest(_message.Message):
    __slots__ = ("session_id", "attributes", "remove_labels")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    REMOVE_LABELS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    attributes: _message_pb2.SessionAttributes
    remove_labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_id: _Optional[str] = ..., attributes: _Optional[_Union[_message_pb2.SessionAttributes, _Mapping]] = ..., remove_labels: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: SessionInfo
    def __init__(self, session: _Optional[_Union[SessionInfo, _Mapping]] = ...) -> None: ...

class ForgetUserRequest(_message.Message):
    __slots__ = ("user_id",)
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    def __init__(self, user_id: _Optional[str] = ...) -> None: ...

class ForgetUserResponse(_message.Message):
    __slots__ = ("sessions_forgotten", "messages_deleted", "metadata_deleted", "entries_deleted", "vectors", "complete", "event_seq")
    SESSIONS_FORGOTTEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_DELETED_FIELD_NUMBER: _ClassVar[int]
    METADATA_DELETED_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_DELETED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    sessions_forgotten: int
    messages_deleted: int
    metadata_deleted: int
    entries_deleted: int
    vectors: ClearResult
    complete: bool
    event_seq: int
    def __init__(self, sessions_forgotten: _Optional[int] = ..., messages_deleted: _Optional[int] = ..., metadata_deleted: _Optional[int] = ..., entries_deleted: _Optional[int] = ..., vectors: _Optional[_Union[ClearResult, _Mapping]] = ..., complete: _Optional[bool] = ..., event_seq: _Optional[int] = ...) -> None: ...

class GetCallerRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCallerResponse(_message.Message):
    __slots__ = ("tenant", "scopes", "user_id", "authentication")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHENTICATION_FIELD_NUMBER: _ClassVar[int]
    tenant: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    user_id: str
    authentication: bool
    def __init__(self, tenant: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., user_id: _Optional[str] = ..., authentication: _Optional[bool] = ...) -> None: ...
