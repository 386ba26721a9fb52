"""The one table that turns domain errors into gRPC statuses with google.rpc details (AIP-193).

Clients read `ErrorInfo.reason` and the typed details, never the message text.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from memoryd.domain import errors

ERROR_DOMAIN = "memoryd"

# Domain error class -> (gRPC status code, google.rpc code).
STATUS_TABLE: dict[type[errors.MemorydError], tuple[grpc.StatusCode, int]] = {
    errors.InvalidArgument: (grpc.StatusCode.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT),
    errors.MalformedRequest: (grpc.StatusCode.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT),
    errors.NotFound: (grpc.StatusCode.NOT_FOUND, code_pb2.NOT_FOUND),
    errors.FailedPrecondition: (grpc.StatusCode.FAILED_PRECONDITION, code_pb2.FAILED_PRECONDITION),
    errors.OutOfRange: (grpc.StatusCode.OUT_OF_RANGE, code_pb2.OUT_OF_RANGE),
    errors.Aborted: (grpc.StatusCode.ABORTED, code_pb2.ABORTED),
    errors.ResourceExhausted: (grpc.StatusCode.RESOURCE_EXHAUSTED, code_pb2.RESOURCE_EXHAUSTED),
    errors.StorageUnavailable: (grpc.StatusCode.UNAVAILABLE, code_pb2.UNAVAILABLE),
    errors.DeadlineExceeded: (grpc.StatusCode.DEADLINE_EXCEEDED, code_pb2.DEADLINE_EXCEEDED),
    errors.Unauthenticated: (grpc.StatusCode.UNAUTHENTICATED, code_pb2.UNAUTHENTICATED),
    errors.PermissionDenied: (grpc.StatusCode.PERMISSION_DENIED, code_pb2.PERMISSION_DENIED),
}

RETRY_DELAY_SECONDS = 1

# Longest field name or description a BadRequest carries (they are server-written, but a
# description may quote part of the input).
MAX_VIOLATION_TEXT = 200

# Longest status message (the text of a domain error; InvalidArgument's already repeats
# only its first few violations).
MAX_MESSAGE_TEXT = 1000

_INTERNAL = (grpc.StatusCode.INTERNAL, code_pb2.INTERNAL)


def status_codes(error: errors.MemorydError) -> tuple[grpc.StatusCode, int]:
    """(gRPC code, google.rpc code) of a domain error: the entry of its nearest class in STATUS_TABLE.

    Walks the class hierarchy, so a subclass (EmbedderUnavailable(StorageUnavailable))
    answers as its parent does (UNAVAILABLE, retryable).
    """
    for cls in type(error).__mro__:
        if cls in STATUS_TABLE:
            return STATUS_TABLE[cls]
    return _INTERNAL


def _pack(message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def to_status(error: errors.MemorydError) -> grpc.Status:
    """The gRPC status of a domain error: code, message, ErrorInfo, BadRequest (at most
    MAX_LISTED_VIOLATIONS entries; ErrorInfo.metadata["violation_count"] has the total), RetryInfo."""
    code, rpc_code = status_codes(error)
    details = [_pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata))]
    if isinstance(error, errors.InvalidArgument):
        details.append(
            _pack(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(
                            field=v.field[:MAX_VIOLATION_TEXT], description=v.description[:MAX_VIOLATION_TEXT]
                        )
                        for v in error.violations
                    ]
                )
            )
        )
    if isinstance(error, (errors.StorageUnavailable, errors.Aborted)):
        details.append(
            _pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=RETRY_DELAY_SECONDS)))
        )
    return rpc_status.to_status(
        status_pb2.Status(code=rpc_code, message=str(error)[:MAX_MESSAGE_TEXT], details=details)
    )


def internal_status() -> grpc.Status:
    # The cause is logged server-side; clients get no internals.
    return rpc_status.to_status(
        status_pb2.Status(
            code=code_pb2.INTERNAL,
            message="internal error",
            details=[_pack(error_details_pb2.ErrorInfo(reason="INTERNAL", domain=ERROR_DOMAIN))],
        )
    )
