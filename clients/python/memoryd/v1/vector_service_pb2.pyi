from memoryd.v1 import access_pb2 as _access_pb2
from memoryd.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecallScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_SCOPE_UNSPECIFIED: _ClassVar[RecallScope]
    RECALL_SCOPE_SESSION: _ClassVar[RecallScope]
    RECALL_SCOPE_USER: _ClassVar[RecallScope]
    RECALL_SCOPE_PLATFORM: _ClassVar[RecallScope]
    RECALL_SCOPE_ALL: _ClassVar[RecallScope]

class RecallRoles(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_ROLES_UNSPECIFIED: _ClassVar[RecallRoles]
    RECALL_ROLES_ALL: _ClassVar[RecallRoles]
    RECALL_ROLES_OTHERS_ONLY: _ClassVar[RecallRoles]

class RecallFusion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_FUSION_UNSPECIFIED: _ClassVar[RecallFusion]
    RECALL_FUSION_RELATIVE_SCORE: _ClassVar[RecallFusion]
    RECALL_FUSION_RECIPROCAL_RANK: _ClassVar[RecallFusion]

class RecallRetrieval(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_RETRIEVAL_UNSPECIFIED: _ClassVar[RecallRetrieval]
    RECALL_RETRIEVAL_SEMANTIC: _ClassVar[RecallRetrieval]
    RECALL_RETRIEVAL_KEYWORD: _ClassVar[RecallRetrieval]
    RECALL_RETRIEVAL_HYBRID: _ClassVar[RecallRetrieval]

class RecallSlices(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_SLICES_UNSPECIFIED: _ClassVar[RecallSlices]
    RECALL_SLICES_OFF: _ClassVar[RecallSlices]
    RECALL_SLICES_FUSED: _ClassVar[RecallSlices]
    RECALL_SLICES_FIRST: _ClassVar[RecallSlices]
RECALL_SCOPE_UNSPECIFIED: RecallScope
RECALL_SCOPE_SESSION: RecallScope
RECALL_SCOPE_USER: RecallScope
RECALL_SCOPE_PLATFORM: RecallScope
RECALL_SCOPE_ALL: RecallScope
RECALL_ROLES_UNSPECIFIED: RecallRoles
RECALL_ROLES_ALL: RecallRoles
RECALL_ROLES_OTHERS_ONLY: RecallRoles
RECALL_FUSION_UNSPECIFIED: RecallFusion
RECALL_FUSION_RELATIVE_SCORE: RecallFusion
RECALL_FUSION_RECIPROCAL_RANK: RecallFusion
RECALL_RETRIEVAL_UNSPECIFIED: RecallRetrieval
RECALL_RETRIEVAL_SEMANTIC: RecallRetrieval
RECALL_RETRIEVAL_KEYWORD: RecallRetrieval
RECALL_RETRIEVAL_HYBRID: RecallRetrieval
RECALL_SLICES_UNSPECIFIED: RecallSlices
RECALL_SLICES_OFF: RecallSlices
RECALL_SLICES_FUSED: RecallSlices
RECALL_SLICES_FIRST: RecallSlices

class VectorPoint(_message.Message):
    __slots__ = ("model_id", "vector", "session_id", "message_id", "timestamp", "role", "platform", "sender_id", "mentioned_ids", "speaker_label", "text", "legacy")
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    MENTIONED_IDS_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_LABEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LEGACY_FIELD_NUMBER: _ClassVar[int]
    model_id: str
    vector: _containers.RepeatedScalarFieldContainer[float]
    session_id: str
    message_id: str
    timestamp: int
    role: str
    platform: str
    sender_id: str
    mentioned_ids: _containers.RepeatedScalarFieldContainer[str]
    speaker_label: str
    text: str
    legacy: bool
    def __init__(self, model_id: _Optional[str] = ..., vector: _Optional[_Iterable[float]] = ..., session_id: _Optional[str] = ..., message_id: _Optional[str] = ..., timestamp: _Optional[int] = ..., role: _Optional[str] = ..., platform: _Optional[str] = ..., sender_id: _Optional[str] = ..., mentioned_ids: _Optional[_Iterable[str]] = ..., speaker_label: _Optional[str] = ..., text: _Optional[str] = ..., legacy: _Optional[bool] = ...) -> None: ...

class UpsertVectorsRequest(_message.Message):
    __slots__ = ("points",)
    POINTS_FIELD_NUMBER: _ClassVar[int]
    points: _containers.RepeatedCompositeFieldContainer[VectorPoint]
    def __init__(self, points: _Optional[_Iterable[_Union[VectorPoint, _Mapping]]] = ...) -> None: ...

class UpsertVectorsResponse(_message.Message):
    __slots__ = ("point_ids",)
    POINT_IDS_FIELD_NUMBER: _ClassVar[int]
    point_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, point_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchMemoryRequest(_message.Message):
    __slots__ = ("query_vector", "query_text", "model_id", "top_k", "min_score", "time_weight", "scope", "session_id", "platform", "speaker_ids", "user_priority_boost", "recall_roles", "context_window", "expand_cross_session", "per_item_max_chars", "exclude_message_ids", "control_kinds", "keyword_weight", "fusion", "reference_time", "half_life_hours", "keep_repeated_texts", "neighbor_weight", "date_weight", "slices", "wait_for_event_seq")
    QUERY_VECTOR_FIELD_NUMBER: _ClassVar[int]
    QUERY_TEXT_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TIME_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_IDS_FIELD_NUMBER: _ClassVar[int]
    USER_PRIORITY_BOOST_FIELD_NUMBER: _ClassVar[int]
    RECALL_ROLES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    EXPAND_CROSS_SESSION_FIELD_NUMBER: _ClassVar[int]
    PER_ITEM_MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    CONTROL_KINDS_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_TIME_FIELD_NUMBER: _ClassVar[int]
    HALF_LIFE_HOURS_FIELD_NUMBER: _ClassVar[int]
    KEEP_REPEATED_TEXTS_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOR_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DATE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SLICES_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    query_vector: _containers.RepeatedScalarFieldContainer[float]
    query_text: str
    model_id: str
    top_k: int
    min_score: float
    time_weight: float
    scope: RecallScope
    session_id: str
    platform: str
    speaker_ids: _containers.RepeatedScalarFieldContainer[str]
    user_priority_boost: float
    recall_roles: RecallRoles
    context_window: int
    expand_cross_session: bool
    per_item_max_chars: int
    exclude_message_ids: _containers.RepeatedScalarFieldContainer[str]
    control_kinds: _containers.RepeatedScalarFieldContainer[str]
    keyword_weight: float
    fusion: RecallFusion
    reference_time: int
    half_life_hours: float
    keep_repeated_texts: bool
    neighbor_weight: float
    date_weight: float
    slices: RecallSlices
    wait_for_event_seq: int
    def __init__(self, query_vector: _Optional[_Iterable[float]] = ..., query_text: _Optional[str] = ..., model_id: _Optional[str] = ..., top_k: _Optional[int] = ..., min_score: _Optional[float] = ..., time_weight: _Optional[float] = ..., scope: _Optional[_Union[RecallScope, str]] = ..., session_id: _Optional[str] = ..., platform: _Optional[str] = ..., speaker_ids: _Optional[_Iterable[str]] = ..., user_priority_boost: _Optional[float] = ..., recall_roles: _Optional[_Union[RecallRoles, str]] = ..., context_window: _Optional[int] = ..., expand_cross_session: _Optional[bool] = ..., per_item_max_chars: _Optional[int] = ..., exclude_message_ids: _Optional[_Iterable[str]] = ..., control_kinds: _Optional[_Iterable[str]] = ..., keyword_weight: _Optional[float] = ..., fusion: _Optional[_Union[RecallFusion, str]] = ..., reference_time: _Optional[int] = ..., half_life_hours: _Optional[float] = ..., keep_repeated_texts: _Optional[bool] = ..., neighbor_weight: _Optional[float] = ..., date_weight: _Optional[float] = ..., slices: _Optional[_Union[RecallSlices, str]] = ..., wait_for_event_seq: _Optional[int] = ...) -> None: ...

class ContextMessage(_message.Message):
    __slots__ = ("message", "truncated_chars")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_CHARS_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.Message
    truncated_chars: int
    def __init__(self, message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., truncated_chars: _Optional[int] = ...) -> None: ...

class MemoryHit(_message.Message):
    __slots__ = ("score", "semantic_score", "point_id", "model_id", "session_id", "message_id", "timestamp", "role", "platform", "sender_id", "mentioned_ids", "speaker_label", "text", "truncated_chars", "before", "after", "boosted", "keyword_score", "relevance", "semantic_match", "keyword_match", "in_context_of", "repeats", "neighbor_lift", "date_lift", "slice_lift")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_SCORE_FIELD_NUMBER: _ClassVar[int]
    POINT_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    MENTIONED_IDS_FIELD_NUMBER: _ClassVar[int]
    SPEAKER_LABEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_CHARS_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    BOOSTED_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_MATCH_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_MATCH_FIELD_NUMBER: _ClassVar[int]
    IN_CONTEXT_OF_FIELD_NUMBER: _ClassVar[int]
    REPEATS_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOR_LIFT_FIELD_NUMBER: _ClassVar[int]
    DATE_LIFT_FIELD_NUMBER: _ClassVar[int]
    SLICE_LIFT_FIELD_NUMBER: _ClassVar[int]
    score: float
    semantic_score: float
    point_id: str
    model_id: str
    session_id: str
    message_id: str
    timestamp: int
    role: str
    platform: str
    sender_id: str
    mentioned_ids: _containers.RepeatedScalarFieldContainer[str]
    speaker_label: str
    text: str
    truncated_chars: int
    before: _containers.RepeatedCompositeFieldContainer[ContextMessage]
    after: _containers.RepeatedCompositeFieldContainer[ContextMessage]
    boosted: bool
    keyword_score: float
    relevance: float
    semantic_match: bool
    keyword_match: bool
    in_context_of: int
    repeats: int
    neighbor_lift: float
    date_lift: float
    slice_lift: float
    def __init__(self, score: _Optional[float] = ..., semantic_score: _Optional[float] = ..., point_id: _Optional[str] = ..., model_id: _Optional[str] = ..., session_id: _Optional[str] = ..., message_id: _Optional[str] = ..., timestamp: _Optional[int] = ..., role: _Optional[str] = ..., platform: _Optional[str] = ..., sender_id: _Optional[str] = ..., mentioned_ids: _Optional[_Iterable[str]] = ..., speaker_label: _Optional[str] = ..., text: _Optional[str] = ..., truncated_chars: _Optional[int] = ..., before: _Optional[_Iterable[_Union[ContextMessage, _Mapping]]] = ..., after: _Optional[_Iterable[_Union[ContextMessage, _Mapping]]] = ..., boosted: _Optional[bool] = ..., keyword_score: _Optional[float] = ..., relevance: _Optional[float] = ..., semantic_match: _Optional[bool] = ..., keyword_match: _Optional[bool] = ..., in_context_of: _Optional[int] = ..., repeats: _Optional[int] = ..., neighbor_lift: _Optional[float] = ..., date_lift: _Optional[float] = ..., slice_lift: _Optional[float] = ...) -> None: ...

class SearchMemoryResponse(_message.Message):
    __slots__ = ("hits", "model_id", "excluded_other_models", "retrieval", "semantic_weight")
    HITS_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_OTHER_MODELS_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[MemoryHit]
    model_id: str
    excluded_other_models: int
    retrieval: RecallRetrieval
    semantic_weight: float
    def __init__(self, hits: _Optional[_Iterable[_Union[MemoryHit, _Mapping]]] = ..., model_id: _Optional[str] = ..., excluded_other_models: _Optional[int] = ..., retrieval: _Optional[_Union[RecallRetrieval, str]] = ..., semantic_weight: _Optional[float] = ...) -> None: ...

class DeleteVectorsRequest(_message.Message):
    __slots__ = ("session", "timestamps", "model", "all")
    class BySession(_message.Message):
        __slots__ = ("session_id",)
        SESSION_ID_FIELD_NUMBER: _ClassVar[int]
        session_id: str
        def __init__(self, session_id: _Optional[str] = ...) -> None: ...
    class ByTimestamps(_message.Message):
        __slots__ = ("session_id", "timestamps")
        SESSION_ID_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
        session_id: str
        timestamps: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, session_id: _Optional[str] = ..., timestamps: _Optional[_Iterable[int]] = ...) -> None: ...
    class ByModel(_message.Message):
        __slots__ = ("model_id",)
        MODEL_ID_FIELD_NUMBER: _ClassVar[int]
        model_id: str
        def __init__(self, model_id: _Optional[str] = ...) -> None: ...
    class All(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    SESSION_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ALL_FIELD_NUMBER: _ClassVar[int]
    session: DeleteVectorsRequest.BySession
    timestamps: DeleteVectorsRequest.ByTimestamps
    model: DeleteVectorsRequest.ByModel
    all: DeleteVectorsRequest.All
    def __init__(self, session: _Optional[_Union[DeleteVectorsRequest.BySession, _Mapping]] = ..., timestamps: _Optional[_Union[DeleteVectorsRequest.ByTimestamps, _Mapping]] = ..., model: _Optional[_Union[DeleteVectorsRequest.ByModel, _Mapping]] = ..., all: _Optional[_Union[DeleteVectorsRequest.All, _Mapping]] = ...) -> None: ...

class DeleteVectorsResponse(_message.Message):
    __slots__ = ("deleted_count", "keyword_points_deleted")
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_POINTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    keyword_points_deleted: int
    def __init__(self, deleted_count: _Optional[int] = ..., keyword_points_deleted: _Optional[int] = ...) -> None: ...

class GetVectorStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelVectorCount(_message.Message):
    __slots__ = ("model_id", "count", "dimension")
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    model_id: str
    count: int
    dimension: int
    def __init__(self, model_id: _Optional[str] = ..., count: _Optional[int] = ..., dimension: _Optional[int] = ...) -> None: ...

class CollectionVectorCount(_message.Message):
    __slots__ = ("collection", "dimension", "count")
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    collection: str
    dimension: int
    count: int
    def __init__(self, collection: _Optional[str] = ..., dimension: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class GetVectorStatsResponse(_message.Message):
    __slots__ = ("models", "collections", "legacy_model", "embedder_configured", "index_queue_length", "index_dropped", "outbox_pending", "keyword_points", "indexed_through_seq", "event_seq", "rebuilding")
    MODELS_FIELD_NUMBER: _ClassVar[int]
    COLLECTIONS_FIELD_NUMBER: _ClassVar[int]
    LEGACY_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_CONFIGURED_FIELD_NUMBER: _ClassVar[int]
    INDEX_QUEUE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    INDEX_DROPPED_FIELD_NUMBER: _ClassVar[int]
    OUTBOX_PENDING_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_POINTS_FIELD_NUMBER: _ClassVar[int]
    INDEXED_THROUGH_SEQ_FIELD_NUMBER: _ClassVar[int]
    EVENT_SEQ_FIELD_NUMBER: _ClassVar[int]
    REBUILDING_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[ModelVectorCount]
    collections: _containers.RepeatedCompositeFieldContainer[CollectionVectorCount]
    legacy_model: str
    embedder_configured: bool
    index_queue_length: int
    index_dropped: int
    outbox_pending: int
    keyword_points: int
    indexed_through_seq: int
    event_seq: int
    rebuilding: bool
    def __init__(self, models: _Optional[_Iterable[_Union[ModelVectorCount, _Mapping]]] = ..., collections: _Optional[_Iterable[_Union[CollectionVectorCount, _Mapping]]] = ..., legacy_model: _Optional[str] = ..., embedder_configured: _Optional[bool] = ..., index_queue_length: _Optional[int] = ..., index_dropped: _Optional[int] = ..., outbox_pending: _Optional[int] = ..., keyword_points: _Optional[int] = ..., indexed_through_seq: _Optional[int] = ..., event_seq: _Optional[int] = ..., rebuilding: _Optional[bool] = ...) -> None: ...
