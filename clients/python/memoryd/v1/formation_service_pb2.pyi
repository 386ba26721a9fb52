from google.protobuf import struct_pb2 as _struct_pb2
from memoryd.v1 import access_pb2 as _access_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FormationStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FORMATION_STRATEGY_UNSPECIFIED: _ClassVar[FormationStrategy]
    FORMATION_STRATEGY_SUMMARY: _ClassVar[FormationStrategy]
    FORMATION_STRATEGY_FACTS: _ClassVar[FormationStrategy]
    FORMATION_STRATEGY_PROFILE: _ClassVar[FormationStrategy]
    FORMATION_STRATEGY_CUSTOM: _ClassVar[FormationStrategy]
FORMATION_STRATEGY_UNSPECIFIED: FormationStrategy
FORMATION_STRATEGY_SUMMARY: FormationStrategy
FORMATION_STRATEGY_FACTS: FormationStrategy
FORMATION_STRATEGY_PROFILE: FormationStrategy
FORMATION_STRATEGY_CUSTOM: FormationStrategy

class FactSource(_message.Message):
    __slots__ = ("session_id", "message_id", "seq")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    message_id: str
    seq: int
    def __init__(self, session_id: _Optional[str] = ..., message_id: _Optional[str] = ..., seq: _Optional[int] = ...) -> None: ...

class Fact(_message.Message):
    __slots__ = ("id", "user_id", "text", "category", "event_time", "keywords", "sources", "create_time", "update_time", "valid_to", "superseded_by", "corrected")
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_FIELD_NUMBER: _ClassVar[int]
    id: str
    user_id: str
    text: str
    category: str
    event_time: int
    keywords: _containers.RepeatedScalarFieldContainer[str]
    sources: _containers.RepeatedCompositeFieldContainer[FactSource]
    create_time: int
    update_time: int
    valid_to: int
    superseded_by: str
    corrected: bool
    def __init__(self, id: _Optional[str] = ..., user_id: _Optional[str] = ..., text: _Optional[str] = ..., category: _Optional[str] = ..., event_time: _Optional[int] = ..., keywords: _Optional[_Iterable[str]] = ..., sources: _Optional[_Iterable[_Union[FactSource, _Mapping]]] = ..., create_time: _Optional[int] = ..., update_time: _Optional[int] = ..., valid_to: _Optional[int] = ..., superseded_by: _Optional[str] = ..., corrected: _Optional[bool] = ...) -> None: ...

class ListFactsRequest(_message.Message):
    __slots__ = ("user_id", "session_id", "include_superseded", "page_size", "page_token")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    session_id: str
    include_superseded: bool
    page_size: int
    page_token: str
    def __init__(self, user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., include_superseded: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListFactsResponse(_message.Message):
    __slots__ = ("facts", "next_page_token")
    FACTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    next_page_token: str
    def __init__(self, facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UserProfile(_message.Message):
    __slots__ = ("user_id", "text", "fact_ids", "update_time")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FACT_IDS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    text: str
    fact_ids: _containers.RepeatedScalarFieldContainer[str]
    update_time: int
    def __init__(self, user_id: _Optional[str] = ..., text: _Optional[str] = ..., fact_ids: _Optional[_Iterable[str]] = ..., update_time: _Optional[int] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("user_id",)
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    def __init__(self, user_id: _Optional[str] = ...) -> None: ...

class GetProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: UserProfile
    def __init__(self, profile: _Optional[_Union[UserProfile, _Mapping]] = ...) -> None: ...

class UpdateFactRequest(_message.Message):
    __slots__ = ("user_id", "fact_id", "text", "category", "keywords", "event_time")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    fact_id: str
    text: str
    category: str
    keywords: _containers.RepeatedScalarFieldContainer[str]
    event_time: int
    def __init__(self, user_id: _Optional[str] = ..., fact_id: _Optional[str] = ..., text: _Optional[str] = ..., category: _Optional[str] = ..., keywords: _Optional[_Iterable[str]] = ..., event_time: _Optional[int] = ...) -> None: ...

class UpdateFactResponse(_message.Message):
    __slots__ = ("fact",)
    FACT_FIELD_NUMBER: _ClassVar[int]
    fact: Fact
    def __init__(self, fact: _Optional[_Union[Fact, _Mapping]] = ...) -> None: ...

class DeleteFactRequest(_message.Message):
    __slots__ = ("user_id", "fact_id")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    fact_id: str
    def __init__(self, user_id: _Optional[str] = ..., fact_id: _Optional[str] = ...) -> None: ...

class DeleteFactResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class WaitForFormationRequest(_message.Message):
    __slots__ = ("event_seq", "timeout_ms")
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    event_seq: int
    timeout_ms: int
    def __init__(self, event_seq: _Optional[int] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class WaitForFormationResponse(_message.Message):
    __slots__ = ("strategies",)
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    strategies: _containers.RepeatedCompositeFieldContainer[StrategyStatus]
    def __init__(self, strategies: _Optional[_Iterable[_Union[StrategyStatus, _Mapping]]] = ...) -> None: ...

class GetFormationStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StrategyStatus(_message.Message):
    __slots__ = ("strategy", "position", "latest", "lag", "last_error", "llm_calls", "llm_failures", "prompt_tokens", "completion_tokens")
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    LAG_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    LLM_CALLS_FIELD_NUMBER: _ClassVar[int]
    LLM_FAILURES_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    strategy: FormationStrategy
    position: int
    latest: int
    lag: int
    last_error: str
    llm_calls: int
    llm_failures: int
    prompt_tokens: int
    completion_tokens: int
    def __init__(self, strategy: _Optional[_Union[FormationStrategy, str]] = ..., position: _Optional[int] = ..., latest: _Optional[int] = ..., lag: _Optional[int] = ..., last_error: _Optional[str] = ..., llm_calls: _Optional[int] = ..., llm_failures: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ...) -> None: ...

class GetFormationStatusResponse(_message.Message):
    __slots__ = ("enabled", "model", "strategies", "tokens_left")
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_LEFT_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    model: str
    strategies: _containers.RepeatedCompositeFieldContainer[StrategyStatus]
    tokens_left: int
    def __init__(self, enabled: _Optional[bool] = ..., model: _Optional[str] = ..., strategies: _Optional[_Iterable[_Union[StrategyStatus, _Mapping]]] = ..., tokens_left: _Optional[int] = ...) -> None: ...

class FormationSettings(_message.Message):
    __slots__ = ("summary_enabled", "summary_max_messages", "summary_max_chars", "summary_idle_seconds", "facts_enabled", "profile_enabled", "profile_max_chars", "custom_strategies")
    SUMMARY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_MAX_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_IDLE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FACTS_ENABLED_FIELD_NUMBER: _ClassVar[int]
    PROFILE_ENABLED_FIELD_NUMBER: _ClassVar[int]
    PROFILE_MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    summary_enabled: bool
    summary_max_messages: int
    summary_max_chars: int
    summary_idle_seconds: int
    facts_enabled: bool
    profile_enabled: bool
    profile_max_chars: int
    custom_strategies: CustomStrategies
    def __init__(self, summary_enabled: _Optional[bool] = ..., summary_max_messages: _Optional[int] = ..., summary_max_chars: _Optional[int] = ..., summary_idle_seconds: _Optional[int] = ..., facts_enabled: _Optional[bool] = ..., profile_enabled: _Optional[bool] = ..., profile_max_chars: _Optional[int] = ..., custom_strategies: _Optional[_Union[CustomStrategies, _Mapping]] = ...) -> None: ...

class CustomStrategies(_message.Message):
    __slots__ = ("strategies",)
    STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    strategies: _containers.RepeatedCompositeFieldContainer[CustomStrategy]
    def __init__(self, strategies: _Optional[_Iterable[_Union[CustomStrategy, _Mapping]]] = ...) -> None: ...

class CustomStrategy(_message.Message):
    __slots__ = ("name", "prompt", "json_schema", "enabled")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    name: str
    prompt: str
    json_schema: str
    enabled: bool
    def __init__(self, name: _Optional[str] = ..., prompt: _Optional[str] = ..., json_schema: _Optional[str] = ..., enabled: _Optional[bool] = ...) -> None: ...

class CustomRecord(_message.Message):
    __slots__ = ("id", "user_id", "strategy", "value", "sources", "create_time", "update_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    user_id: str
    strategy: str
    value: _struct_pb2.Struct
    sources: _containers.RepeatedCompositeFieldContainer[FactSource]
    create_time: int
    update_time: int
    def __init__(self, id: _Optional[str] = ..., user_id: _Optional[str] = ..., strategy: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., sources: _Optional[_Iterable[_Union[FactSource, _Mapping]]] = ..., create_time: _Optional[int] = ..., update_time: _Optional[int] = ...) -> None: ...

class ListCustomRecordsRequest(_message.Message):
    __slots__ = ("user_id", "strategy", "session_id", "page_size", "page_token")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    strategy: str
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, user_id: _Optional[str] = ..., strategy: _Optional[str] = ..., session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListCustomRecordsResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[CustomRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[CustomRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteCustomRecordRequest(_message.Message):
    __slots__ = ("user_id", "record_id")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    RECORD_ID_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    record_id: str
    def __init__(self, user_id: _Optional[str] = ..., record_id: _Optional[str] = ...) -> None: ...

class DeleteCustomRecordResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class GetFormationSettingsRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetFormationSettingsResponse(_message.Message):
    __slots__ = ("stored", "effective")
    STORED_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_FIELD_NUMBER: _ClassVar[int]
    stored: FormationSettings
    effective: FormationSettings
    def __init__(self, stored: _Optional[_Union[FormationSettings, _Mapping]] = ..., effective: _Optional[_Union[FormationSettings, _Mapping]] = ...) -> None: ...

class SetFormationSettingsRequest(_message.Message):
    __slots__ = ("session_id", "settings")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    settings: FormationSettings
    def __init__(self, session_id: _Optional[str] = ..., settings: _Optional[_Union[FormationSettings, _Mapping]] = ...) -> None: ...

class SetFormationSettingsResponse(_message.Message):
    __slots__ = ("effective",)
    EFFECTIVE_FIELD_NUMBER: _ClassVar[int]
    effective: FormationSettings
    def __init__(self, effective: _Optional[_Union[FormationSettings, _Mapping]] = ...) -> None: ...
