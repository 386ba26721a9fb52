"""memoryd_client: an idiomatic async Python client for memoryd (memoryd.v1).

    from memoryd_client import MemoryClient, message, EventType

    async with MemoryClient("127.0.0.1:50051", token="...") as client:
        saved = await client.save_message("s1", message("user", "hello"))
        history = await client.get_history("s1")
        async with client.watch(["s1"], [EventType.EVENT_TYPE_MESSAGES_DELETED]) as events:
            async for event in events:
                ...
"""

from memoryd.v1.event_pb2 import CompressProgress, CompressRequested, Event, EventType
from memoryd.v1.memory_service_pb2 import ClearOutcome, ClearTarget
from memoryd.v1.message_pb2 import Message, Segment, SessionMessage, ToolCall

from .client import DEFAULT_RETRY, DEFAULT_TIMEOUT, MemoryClient, retry_service_config
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
from .messages import message, segment, to_dict, to_struct, tool_call
from .watch import EventWatch

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
    "ResourceExhaustedError",
    "RpcError",
    "Segment",
    "SessionMessage",
    "ToolCall",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "from_rpc_error",
    "message",
    "retry_service_config",
    "segment",
    "to_dict",
    "to_struct",
    "tool_call",
]
