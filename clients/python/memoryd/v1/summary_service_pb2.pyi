from memoryd.v1 import access_pb2 as _access_pb2
from memoryd.v1 import formation_service_pb2 as _formation_service_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from memoryd.v1 import message_pb2 as _message_pb2
from memoryd.v1 import vector_service_pb2 as _vector_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SummaryCoverage(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUMMARY_COVERAGE_UNSPECIFIED: _ClassVar[SummaryCoverage]
    SUMMARY_COVERAGE_INTACT: _ClassVar[SummaryCoverage]
    SUMMARY_COVERAGE_PARTIALLY_DELETED: _ClassVar[SummaryCoverage]
    SUMMARY_COVERAGE_DELETED: _ClassVar[SummaryCoverage]

class ContextPart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTEXT_PART_UNSPECIFIED: _ClassVar[ContextPart]
    CONTEXT_PART_SUMMARY: _ClassVar[ContextPart]
    CONTEXT_PART_TAIL: _ClassVar[ContextPart]
    CONTEXT_PART_RECENT: _ClassVar[ContextPart]
    CONTEXT_PART_RECALL: _ClassVar[ContextPart]

class CutReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CUT_REASON_UNSPECIFIED: _ClassVar[CutReason]
    CUT_REASON_BUDGET: _ClassVar[CutReason]
    CUT_REASON_ORPHAN_TOOL_RESULT: _ClassVar[CutReason]
    CUT_REASON_TAIL_LIMIT: _ClassVar[CutReason]

class RecallStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_STATUS_UNSPECIFIED: _ClassVar[RecallStatus]
    RECALL_STATUS_OK: _ClassVar[RecallStatus]
    RECALL_STATUS_UNAVAILABLE: _ClassVar[RecallStatus]
    RECALL_STATUS_SKIPPED: _ClassVar[RecallStatus]
SUMMARY_COVERAGE_UNSPECIFIED: SummaryCoverage
SUMMARY_COVERAGE_INTACT: SummaryCoverage
SUMMARY_COVERAGE_PARTIALLY_DELETED: SummaryCoverage
SUMMARY_COVERAGE_DELETED: SummaryCoverage
CONTEXT_PART_UNSPECIFIED: ContextPart
CONTEXT_PART_SUMMARY: ContextPart
CONTEXT_PART_TAIL: ContextPart
CONTEXT_PART_RECENT: ContextPart
CONTEXT_PART_RECALL: ContextPart
CUT_REASON_UNSPECIFIED: CutReason
CUT_REASON_BUDGET: CutReason
CUT_REASON_ORPHAN_TOOL_RESULT: CutReason
CUT_REASON_TAIL_LIMIT: CutReason
RECALL_STATUS_UNSPECIFIED: RecallStatus
RECALL_STATUS_OK: RecallStatus
RECALL_STATUS_UNAVAILABLE: RecallStatus
RECALL_STATUS_SKIPPED: RecallStatus

class Summary(_message.Message):
    __slots__ = ("id", "session_id", "from_seq", "to_seq", "text", "metadata", "create_time", "saved_message_count", "present_message_count", "archived_message_count", "coverage")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    SAVED_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    PRESENT_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    COVERAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    from_seq: int
    to_seq: int
    text: str
    metadata: _struct_pb2.Struct
    create_time: int
    saved_message_count: int
    present_message_count: int
    archived_message_count: int
    coverage: SummaryCoverage
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., to_seq: _Optional[int] = ..., text: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[int] = ..., saved_message_count: _Optional[int] = ..., present_message_count: _Optional[int] = ..., archived_message_count: _Optional[int] = ..., coverage: _Optional[_Union[SummaryCoverage, str]] = ...) -> None: ...

class SaveSummaryRequest(_message.Message):
    __slots__ = ("session_id", "from_seq", "to_seq", "text", "metadata", "vector", "model_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    from_seq: int
    to_seq: int
    text: str
    metadata: _struct_pb2.Struct
    vector: _containers.RepeatedScalarFieldContainer[float]
    model_id: str
    def __init__(self, session_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., to_seq: _Optional[int] = ..., text: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., vector: _Optional[_Iterable[float]] = ..., model_id: _Optional[str] = ...) -> None: ...

class SaveSummaryResponse(_message.Message):
    __slots__ = ("summary", "cursor", "deduplicated")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    summary: Summary
    cursor: int
    deduplicated: bool
    def __init__(self, summary: _Optional[_Union[Summary, _Mapping]] = ..., cursor: _Optional[int] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class ListSummariesRequest(_message.Message):
    __slots__ = ("session_id", "page_size", "page_token")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    page_size: int
    page_token: str
    def __init__(self, session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSummariesResponse(_message.Message):
    __slots__ = ("summaries", "next_page_token")
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    summaries: _containers.RepeatedCompositeFieldContainer[Summary]
    next_page_token: str
    def __init__(self, summaries: _Optional[_Iterable[_Union[Summary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetSummaryCursorRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetSummaryCursorResponse(_message.Message):
    __slots__ = ("cursor", "summary_count", "latest", "last_seq")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_COUNT_FIELD_NUMBER: _ClassVar[int]
    LATEST_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    cursor: int
    summary_count: int
    latest: Summary
    last_seq: int
    def __init__(self, cursor: _Optional[int] = ..., summary_count: _Optional[int] = ..., latest: _Optional[_Union[Summary, _Mapping]] = ..., last_seq: _Optional[int] = ...) -> None: ...

class ContextCut(_message.Message):
    __slots__ = ("part", "reason", "id", "cut_chars", "truncated")
    PART_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CUT_CHARS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    part: ContextPart
    reason: CutReason
    id: str
    cut_chars: int
    truncated: bool
    def __init__(self, part: _Optional[_Union[ContextPart, str]] = ..., reason: _Optional[_Union[CutReason, str]] = ..., id: _Optional[str] = ..., cut_chars: _Optional[int] = ..., truncated: _Optional[bool] = ...) -> None: ...

class AssembledMessage(_message.Message):
    __slots__ = ("message", "part", "truncated")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PART_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.Message
    part: ContextPart
    truncated: bool
    def __init__(self, message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., part: _Optional[_Union[ContextPart, str]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class RecalledMemory(_message.Message):
    __slots__ = ("id", "session_id", "text", "score", "timestamp", "role", "truncated")
    ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    id: str
    session_id: str
    text: str
    score: float
    timestamp: int
    role: str
    truncated: bool
    def __init__(self, id: _Optional[str] = ..., session_id: _Optional[str] = ..., text: _Optional[str] = ..., score: _Optional[float] = ..., timestamp: _Optional[int] = ..., role: _Optional[str] = ..., truncated: _Optional[bool] = ...) -> None: ...

class AssembleContextRequest(_message.Message):
    __slots__ = ("session_id", "budget_chars", "recent_raw_n", "include_recall", "recall_top_k", "recall_query_vector", "recall_model_id", "recall_slices")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    BUDGET_CHARS_FIELD_NUMBER: _ClassVar[int]
    RECENT_RAW_N_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RECALL_FIELD_NUMBER: _ClassVar[int]
    RECALL_TOP_K_FIELD_NUMBER: _ClassVar[int]
    RECALL_QUERY_VECTOR_FIELD_NUMBER: _ClassVar[int]
    RECALL_MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    RECALL_SLICES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    budget_chars: int
    recent_raw_n: int
    include_recall: bool
    recall_top_k: int
    recall_query_vector: _containers.RepeatedScalarFieldContainer[float]
    recall_model_id: str
    recall_slices: _vector_service_pb2.RecallSlices
    def __init__(self, session_id: _Optional[str] = ..., budget_chars: _Optional[int] = ..., recent_raw_n: _Optional[int] = ..., include_recall: _Optional[bool] = ..., recall_top_k: _Optional[int] = ..., recall_query_vector: _Optional[_Iterable[float]] = ..., recall_model_id: _Optional[str] = ..., recall_slices: _Optional[_Union[_vector_service_pb2.RecallSlices, str]] = ...) -> None: ...

class AssembleContextResponse(_message.Message):
    __slots__ = ("summary", "summary_truncated", "messages", "recalled", "recall_status", "recall_detail", "cursor", "used_chars", "cuts", "deduplicated_count", "profile")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    RECALLED_FIELD_NUMBER: _ClassVar[int]
    RECALL_STATUS_FIELD_NUMBER: _ClassVar[int]
    RECALL_DETAIL_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    USED_CHARS_FIELD_NUMBER: _ClassVar[int]
    CUTS_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_COUNT_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    summary: Summary
    summary_truncated: bool
    messages: _containers.RepeatedCompositeFieldContainer[AssembledMessage]
    recalled: _containers.RepeatedCompositeFieldContainer[RecalledMemory]
    recall_status: RecallStatus
    recall_detail: str
    cursor: int
    used_chars: int
    cuts: _containers.RepeatedCompositeFieldContainer[ContextCut]
    deduplicated_count: int
    profile: _formation_service_pb2.UserProfile
    def __init__(self, summary: _Optional[_Union[Summary, _Mapping]] = ..., summary_truncated: _Optional[bool] = ..., messages: _Optional[_Iterable[_Union[AssembledMessage, _Mapping]]] = ..., recalled: _Optional[_Iterable[_Union[RecalledMemory, _Mapping]]] = ..., recall_status: _Optional[_Union[RecallStatus, str]] = ..., recall_detail: _Optional[str] = ..., cursor: _Optional[int] = ..., used_chars: _Optional[int] = ..., cuts: _Optional[_Iterable[_Union[ContextCut, _Mapping]]] = ..., deduplicated_count: _Optional[int] = ..., profile: _Optional[_Union[_formation_service_pb2.UserProfile, _Mapping]] = ...) -> None: ...

class SearchSummariesRequest(_message.Message):
    __slots__ = ("query_vector", "query_text", "model_id", "top_k", "scope", "session_id", "keyword_weight", "fusion", "include_messages", "max_messages_per_hit")
    QUERY_VECTOR_FIELD_NUMBER: _ClassVar[int]
    QUERY_TEXT_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGES_PER_HIT_FIELD_NUMBER: _ClassVar[int]
    query_vector: _containers.RepeatedScalarFieldContainer[float]
    query_text: str
    model_id: str
    top_k: int
    scope: _vector_service_pb2.RecallScope
    session_id: str
    keyword_weight: float
    fusion: _vector_service_pb2.RecallFusion
    include_messages: bool
    max_messages_per_hit: int
    def __init__(self, query_vector: _Optional[_Iterable[float]] = ..., query_text: _Optional[str] = ..., model_id: _Optional[str] = ..., top_k: _Optional[int] = ..., scope: _Optional[_Union[_vector_service_pb2.RecallScope, str]] = ..., session_id: _Optional[str] = ..., keyword_weight: _Optional[float] = ..., fusion: _Optional[_Union[_vector_service_pb2.RecallFusion, str]] = ..., include_messages: _Optional[bool] = ..., max_messages_per_hit: _Optional[int] = ...) -> None: ...

class SummaryHit(_message.Message):
    __slots__ = ("summary", "score", "semantic_score", "keyword_score", "semantic_match", "keyword_match", "messages", "messages_truncated")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_SCORE_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_MATCH_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_MATCH_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    summary: Summary
    score: float
    semantic_score: float
    keyword_score: float
    semantic_match: bool
    keyword_match: bool
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    messages_truncated: bool
    def __init__(self, summary: _Optional[_Union[Summary, _Mapping]] = ..., score: _Optional[float] = ..., semantic_score: _Optional[float] = ..., keyword_score: _Optional[float] = ..., semantic_match: _Optional[bool] = ..., keyword_match: _Optional[bool] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., messages_truncated: _Optional[bool] = ...) -> None: ...

class SearchSummariesResponse(_message.Message):
    __slots__ = ("hits", "retrieval", "model_id")
    HITS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SummaryHit]
    retrieval: _vector_service_pb2.RecallRetrieval
    model_id: str
    def __init__(self, hits: _Optional[_Iterable[_Union[SummaryHit, _Mapping]]] = ..., retrieval: _Optional[_Union[_vector_service_pb2.RecallRetrieval, str]] = ..., model_id: _Optional[str] = ...) -> None: ...
