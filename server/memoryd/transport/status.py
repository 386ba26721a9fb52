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
    errors.NotFound: (grpc.StatusCode.NOT_FOUND, code_pb2.NOT_FOUND),
    errors.FailedPrecondition: (grpc.StatusCode.FAILED_PRECONDITION, code_pb2.FAILED_PRECONDITION),
    errors.OutOfRange: (grpc.StatusCode.OUT_OF_RANGE, code_pb2.OUT_OF_RANGE),
    errors.ResourceExhausted: (grpc.StatusCode.RESOURCE_EXHAUSTED, code_pb2.RESOURCE_EXHAUSTED),
    errors.StorageUnavailable: (grpc.StatusCode.UNAVAILABLE, code_pb2.UNAVAILABLE),
    errors.Unauthenticated: (grpc.StatusCode.UNAUTHENTICATED, code_pb2.UNAUTHENTICATED),
}

RETRY_DELAY_SECONDS = 1


def _pack(message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def to_status(error: errors.MemorydError) -> grpc.Status:
    code, rpc_code = STATUS_TABLE.get(type(error), (grpc.StatusCode.INTERNAL, code_pb2.INTERNAL))
    details = [_pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata))]
    if isinstance(error, errors.InvalidArgument):
        details.append(
            _pack(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                        for v in error.violations
                    ]
                )
            )
        )
    if isinstance(error, errors.StorageUnavailable):
        details.append(
            _pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=RETRY_DELAY_SECONDS)))
        )
    return rpc_status.to_status(status_pb2.Status(code=rpc_code, message=str(error), details=details))


def internal_status() -> grpc.Status:
    # The cause is logged server-side; clients get no internals.
    return rpc_status.to_status(
        status_pb2.Status(
            code=code_pb2.INTERNAL,
            message="internal error",
            details=[_pack(error_details_pb2.ErrorInfo(reason="INTERNAL", domain=ERROR_DOMAIN))],
        )
    )
