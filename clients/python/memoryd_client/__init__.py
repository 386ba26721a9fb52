"""memoryd_client: idiomatic Python clients for memoryd (memoryd.v1), async and sync.

from memoryd_client import MemoryClient, SyncMemoryClient, message, EventType

async with MemoryClient("127.0.0.1:50051", token="...") as client:
    saved = await client.save_message("s1", message("user", "hello"))
    history = await client.get_history("s1")
    async with client.watch(["s1"], [EventType.EVENT_TYPE_MESSAGES_DELETED]) as events:
        async for event in events:
            ...

with SyncMemoryClient("127.0.0.1:50051") as client:   # the same methods, blocking
    history = client.get_history("s1")
"""

from memoryd.v1.event_pb2 import CompressProgress, CompressRequested, Event, EventType
from memoryd.v1.memory_service_pb2 import ClearOutcome, ClearTarget, SessionInfo
from memoryd.v1.message_pb2 import Message, Segment, SessionAttributes, SessionMessage, ToolCall
from memoryd.v1.vector_service_pb2 import RecallRoles, RecallScope, VectorPoint

from .client import MemoryClient
from .connection import DEFAULT_TIMEOUT, TokenProvider
from .errors import (
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    DataLossError,
    DeadlineExceededError,
    EventsCompactedError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    RpcError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
    from_rpc_error,
)
from .messages import message, segment, session_attributes, to_dict, to_struct, tool_call
from .service_config import DEFAULT_RETRY, contract_service_config, retried_methods, retry_service_config
from .sync import SyncMemoryClient
from .watch import EventWatch, SyncEventWatch

__all__ = [
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUT",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "ClearOutcome",
    "ClearTarget",
    "CompressProgress",
    "CompressRequested",
    "DataLossError",
    "DeadlineExceededError",
    "Event",
    "EventType",
    "EventWatch",
    "EventsCompactedError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "MemoryClient",
    "Message",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "RecallRoles",
    "RecallScope",
    "ResourceExhaustedError",
    "RpcError",
    "Segment",
    "SessionAttributes",
    "SessionInfo",
    "SessionMessage",
    "SyncEventWatch",
    "SyncMemoryClient",
    "TokenProvider",
    "ToolCall",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "VectorPoint",
    "contract_service_config",
    "from_rpc_error",
    "message",
    "retried_methods",
    "retry_service_config",
    "segment",
    "session_attributes",
    "to_dict",
    "to_struct",
    "tool_call",
]
