from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCOPE_UNSPECIFIED: _ClassVar[Scope]
    SCOPE_MEMORY_READ: _ClassVar[Scope]
    SCOPE_MEMORY_WRITE: _ClassVar[Scope]
    SCOPE_MEMORY_ADMIN: _ClassVar[Scope]

class UserAccess(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    USER_ACCESS_UNSPECIFIED: _ClassVar[UserAccess]
    USER_ACCESS_SESSION: _ClassVar[UserAccess]
    USER_ACCESS_NEW_SESSION: _ClassVar[UserAccess]
    USER_ACCESS_OWN_SESSIONS: _ClassVar[UserAccess]
    USER_ACCESS_ENTRY_SCOPE: _ClassVar[UserAccess]
    USER_ACCESS_NAMESPACE: _ClassVar[UserAccess]
    USER_ACCESS_DENIED: _ClassVar[UserAccess]
SCOPE_UNSPECIFIED: Scope
SCOPE_MEMORY_READ: Scope
SCOPE_MEMORY_WRITE: Scope
SCOPE_MEMORY_ADMIN: Scope
USER_ACCESS_UNSPECIFIED: UserAccess
USER_ACCESS_SESSION: UserAccess
USER_ACCESS_NEW_SESSION: UserAccess
USER_ACCESS_OWN_SESSIONS: UserAccess
USER_ACCESS_ENTRY_SCOPE: UserAccess
USER_ACCESS_NAMESPACE: UserAccess
USER_ACCESS_DENIED: UserAccess
ACCESS_FIELD_NUMBER: _ClassVar[int]
access: _descriptor.FieldDescriptor

class Access(_message.Message):
    __slots__ = ("scope", "user_access", "user_fields")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    USER_ACCESS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELDS_FIELD_NUMBER: _ClassVar[int]
    scope: Scope
    user_access: UserAccess
    user_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scope: _Optional[_Union[Scope, str]] = ..., user_access: _Optional[_Union[UserAccess, str]] = ..., user_fields: _Optional[_Iterable[str]] = ...) -> None: ...
