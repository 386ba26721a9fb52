from memoryd.v1 import access_pb2 as _access_pb2
from memoryd.v1 import vector_service_pb2 as _vector_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Entry(_message.Message):
    __slots__ = ("id", "scope", "text", "tags", "create_time", "model_id", "key")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    id: str
    scope: str
    text: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    create_time: int
    model_id: str
    key: str
    def __init__(self, id: _Optional[str] = ..., scope: _Optional[str] = ..., text: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., create_time: _Optional[int] = ..., model_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class SaveEntryRequest(_message.Message):
    __slots__ = ("scope", "text", "tags", "embedding", "model_id", "key")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    scope: str
    text: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    model_id: str
    key: str
    def __init__(self, scope: _Optional[str] = ..., text: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., embedding: _Optional[_Iterable[float]] = ..., model_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class SaveEntryResponse(_message.Message):
    __slots__ = ("entry", "deduplicated", "scope_count", "scope_capacity", "replaced")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    SCOPE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    deduplicated: bool
    scope_count: int
    scope_capacity: int
    replaced: bool
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ..., deduplicated: _Optional[bool] = ..., scope_count: _Optional[int] = ..., scope_capacity: _Optional[int] = ..., replaced: _Optional[bool] = ...) -> None: ...

class SearchEntriesRequest(_message.Message):
    __slots__ = ("scope", "query", "limit", "query_embedding", "model_id", "keyword_weight", "fusion")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    scope: str
    query: str
    limit: int
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    model_id: str
    keyword_weight: float
    fusion: _vector_service_pb2.RecallFusion
    def __init__(self, scope: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., query_embedding: _Optional[_Iterable[float]] = ..., model_id: _Optional[str] = ..., keyword_weight: _Optional[float] = ..., fusion: _Optional[_Union[_vector_service_pb2.RecallFusion, str]] = ...) -> None: ...

class EntryHit(_message.Message):
    __slots__ = ("entry", "score", "keyword_score", "semantic_score")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_SCORE_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_SCORE_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    score: float
    keyword_score: float
    semantic_score: float
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ..., score: _Optional[float] = ..., keyword_score: _Optional[float] = ..., semantic_score: _Optional[float] = ...) -> None: ...

class SearchEntriesResponse(_message.Message):
    __slots__ = ("hits", "semantic")
    HITS_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[EntryHit]
    semantic: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[EntryHit, _Mapping]]] = ..., semantic: _Optional[bool] = ...) -> None: ...

class ForgetEntryRequest(_message.Message):
    __slots__ = ("scope", "entry_id", "key")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    scope: str
    entry_id: str
    key: str
    def __init__(self, scope: _Optional[str] = ..., entry_id: _Optional[str] = ..., key: _Optional[str] = ...) -> None: ...

class ForgetEntryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ListEntriesRequest(_message.Message):
    __slots__ = ("scope", "page_size", "page_token")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    scope: str
    page_size: int
    page_token: str
    def __init__(self, scope: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEntriesResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
