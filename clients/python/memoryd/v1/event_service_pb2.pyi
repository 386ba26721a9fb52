from memoryd.v1 import access_pb2 as _access_pb2
from memoryd.v1 import event_pb2 as _event_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WatchRequest(_message.Message):
    __slots__ = ("session_ids", "types", "after_seq")
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    types: _containers.RepeatedScalarFieldContainer[_event_pb2.EventType]
    after_seq: int
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ..., types: _Optional[_Iterable[_Union[_event_pb2.EventType, str]]] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchProgress(_message.Message):
    __slots__ = ("latest_seq", "head_seq")
    LATEST_SEQ_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    latest_seq: int
    head_seq: int
    def __init__(self, latest_seq: _Optional[int] = ..., head_seq: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event", "progress")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    progress: WatchProgress
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., progress: _Optional[_Union[WatchProgress, _Mapping]] = ...) -> None: ...

class PublishEventRequest(_message.Message):
    __slots__ = ("session_id", "compress_requested", "compress_progress")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    compress_requested: _event_pb2.CompressRequested
    compress_progress: _event_pb2.CompressProgress
    def __init__(self, session_id: _Optional[str] = ..., compress_requested: _Optional[_Union[_event_pb2.CompressRequested, _Mapping]] = ..., compress_progress: _Optional[_Union[_event_pb2.CompressProgress, _Mapping]] = ...) -> None: ...

class PublishEventResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...
